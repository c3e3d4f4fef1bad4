"""Writes tasks.jsonl for this pack: `python examples/packs/tool-tickets/make_tasks.py`.

Each task is one line: the prompt (the task text, the world's tool schemas and the reply format, built by
`tool_prompt`), the world's name, its initial `state`, the `goal`, an optional `policy`, and a `reference`
solution as a list of turns: each turn a list of `{"name", "arguments"}` calls, or the final answer as a
string (the warm-start teacher of `rlvr train` plays these turns). `rlvr packs validate` replays
every reference and checks that the goal is reached and that an episode doing nothing fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from world import Tickets  # noqa: E402

from rlvr.specs.tool_worlds import tool_prompt  # noqa: E402

MAX_TURNS = 8


def ticket(
    title: str, status: str = "open", assignee: str | None = None, labels: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {"title": title, "status": status, "assignee": assignee, "labels": sorted(labels)}


STATE: dict[str, Any] = {
    "users": ["ana", "bob", "chen", "dana"],
    "comments": [{"ticket": "T-2", "text": "customer confirmed the fix"}],
    "tickets": {
        "T-1": ticket("Invoice shows the wrong VAT", labels=("billing",)),
        "T-2": ticket("Login loop on Safari", "in_progress", "bob", ("auth",)),
        "T-3": ticket("Refund not received", labels=("billing", "urgent")),
        "T-4": ticket("Dark mode contrast", "in_progress", "chen", ("ui",)),
        "T-5": ticket("Export to CSV times out", "open", "bob", ("reports",)),
        "T-6": ticket("Card declined twice", "closed", "ana", ("billing",)),
        "SEC-1": ticket("Password reset tokens in logs", "open", None, ("billing",)),
    },
}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def turn(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return list(calls)


def answer(text: str) -> str:
    return text


TASKS: list[dict[str, Any]] = [
    {
        "id": "tickets/assign-billing",
        "text": "Assign every open billing ticket that nobody owns to dana.",
        "goal": {"state": {"tickets": {"T-1": {"assignee": "dana"}, "T-3": {"assignee": "dana"}}}},
        "reference": [
            turn(call("search_tickets", status="open", assignee="", label="billing")),
            turn(call("assign", ticket_id="T-1", user="dana"), call("assign", ticket_id="T-3", user="dana")),
            answer("done"),
        ],
        "optimal_calls": 3,
        "split": "train",
    },
    {
        "id": "tickets/close-login-loop",
        "text": "The Safari login loop is fixed: close its ticket.",
        "goal": {"state": {"tickets": {"T-2": {"status": "closed"}}}},
        "reference": [
            turn(call("search_tickets", label="auth")),
            turn(call("set_status", ticket_id="T-2", status="closed")),
            answer("closed T-2"),
        ],
        "optimal_calls": 2,
        "split": "train",
    },
    {
        "id": "tickets/close-with-comment",
        "text": "Close ticket T-4 with the comment 'contrast fixed in 2.1'.",
        "goal": {
            "state": {
                "tickets": {"T-4": {"status": "closed"}},
                "comments": [{"ticket": "T-4", "text": "contrast fixed in 2.1"}],
            }
        },
        "reference": [
            turn(call("add_comment", ticket_id="T-4", text="contrast fixed in 2.1")),
            turn(call("set_status", ticket_id="T-4", status="closed")),
            answer("done"),
        ],
        "optimal_calls": 2,
        "split": "train",
    },
    {
        "id": "tickets/count-bob",
        "text": "How many tickets that are not closed does bob have? Answer with the number.",
        "goal": {"answer": "2"},
        "reference": [turn(call("search_tickets", assignee="bob")), answer("2")],
        "optimal_calls": 1,
        "split": "train",
    },
    {
        "id": "tickets/label-urgent",
        "text": "Mark the CSV export ticket as urgent, keeping its other labels.",
        "goal": {"state": {"tickets": {"T-5": {"labels": ["reports", "urgent"]}}}},
        "reference": [
            turn(call("search_tickets", label="reports")),
            turn(call("set_labels", ticket_id="T-5", labels=["reports", "urgent"])),
            answer("done"),
        ],
        "optimal_calls": 2,
        "split": "test",
    },
    {
        "id": "tickets/triage-billing",
        "text": "Every billing ticket that is still open goes to ana and becomes in_progress. Security tickets are handled elsewhere: leave them alone.",
        "goal": {
            "state": {
                "tickets": {
                    "T-1": {"assignee": "ana", "status": "in_progress"},
                    "T-3": {"assignee": "ana", "status": "in_progress"},
                }
            }
        },
        "reference": [
            turn(call("search_tickets", status="open", label="billing")),
            turn(
                call("assign", ticket_id="T-1", user="ana"),
                call("set_status", ticket_id="T-1", status="in_progress"),
                call("assign", ticket_id="T-3", user="ana"),
                call("set_status", ticket_id="T-3", status="in_progress"),
            ),
            answer("done"),
        ],
        "optimal_calls": 5,
        "split": "test",
    },
]


def main() -> None:
    with (HERE / "tasks.jsonl").open("w", encoding="utf-8") as out:
        for spec in TASKS:
            line = {
                "id": spec["id"],
                "prompt": tool_prompt(spec["text"], Tickets, MAX_TURNS),
                "world": Tickets.name,
                "state": STATE,
                "goal": spec["goal"],
                "reference": spec["reference"],
                "optimal_calls": spec["optimal_calls"],
                "max_turns": MAX_TURNS,
                "difficulty": 1 + len(spec["reference"]) // 2,
                "split": spec["split"],
            }
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
