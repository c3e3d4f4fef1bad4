"""`tool-worlds`: multi-turn tool-use tasks over simulated worlds (files, ledger, calendar, inventory).

Two kinds of tasks, both kept stable:
- the original hand-written templates (`tool/<template>/<index>`, 33 tasks; `HELD_OUT` ones are `test`);
- procedural tasks (`tool/<template>/d<difficulty>/<index>`, rlvr/task_packs/tool_templates.py): worlds,
  goals, policies and distractors drawn per seed at difficulty 1-4; held-out templates in held-out worlds
  (a disjoint vocabulary) form the `test` split; the training templates drawn from a second seed stream,
  with no instruction that occurs in training, form the `test_worlds` split (what was learnt, in worlds
  never seen: generalisation within the trained skills, which `test` does not measure).

Every task's hidden spec holds its reference solution (`reference`: a list of turns, each a list of
`{"name", "arguments"}` calls or the final answer), `optimal_calls` (the reference's number of calls, behind
the efficiency component), and `expected_state`: the whole world state the reference leaves, which the
grader compares with the agent's final state. `meta["instruction"]` is the task text without the tool
schemas (for compact prompts). Tests replay every reference to prove every task is solvable.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.specs.tool_worlds import DEFAULT_MAX_TURNS, replay_calls, tool_prompt
from rlvr.task_packs import tool_templates

TASKS_PER_TEMPLATE = 3  # the original templates
# per template and difficulty: 19 templates x 2 levels x 200 = 7,600 train tasks
PROCEDURAL_TRAIN_PER_CELL = 200
PROCEDURAL_TEST_PER_CELL = 12  # 7 held-out templates x 2 levels x 12 = 168 test tasks
# training templates in unseen worlds: up to 19 x 2 levels x 6 = 228 test_worlds tasks
PROCEDURAL_TEST_WORLDS_PER_CELL = 6
Spec = dict[str, Any]  # text, world, state, goal, policy, reference (list of turns: list of calls | answer)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def turn_text(turn: list[dict[str, Any]] | str) -> str:
    """A reference turn as the JSON an agent would send."""
    if isinstance(turn, str):
        return json.dumps({"final_answer": turn})
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
        }
        for i, c in enumerate(turn)
    ]
    return json.dumps({"role": "assistant", "content": None, "tool_calls": calls})


# ---------------------------------------------------------------- files

WORDS = ["alpha", "beacon", "cedar", "delta", "ember", "fjord", "garnet", "harbor"]


def archive_text_files(rng: random.Random) -> Spec:
    names = rng.sample(WORDS, 5)
    inbox = {
        f"/inbox/{n}.{'txt' if i % 2 == 0 else 'log'}": f"{n} notes {rng.randint(1, 99)}"
        for i, n in enumerate(names)
    }
    state = {"files": {**inbox, "/etc/app.conf": "mode=prod"}}
    moves = [(p, p.replace("/inbox/", "/archive/")) for p in sorted(inbox) if p.endswith(".txt")]
    return {
        "text": "Move every .txt file in /inbox to /archive, keeping its file name. Leave other files alone.",
        "world": "files",
        "state": state,
        "goal": {
            "state": {"files": {target: inbox[source] for source, target in moves}},
            "absent": [["files", source] for source, _ in moves],
        },
        "policy": {"read_only": ["/etc/*"], "forbidden_tools": ["delete_file"]},
        "reference": [
            [call("list_files", directory="/inbox")],
            [call("move_file", source=s, target=t) for s, t in moves],
        ],
    }


def turn_off_debug(rng: random.Random) -> Spec:
    port = rng.randint(3000, 9000)
    before = f"[server]\nport={port}\ndebug=true\nworkers={rng.randint(1, 8)}\n"
    after = before.replace("debug=true", "debug=false")
    return {
        "text": "In /app/settings.ini, switch debug off (debug=false). Keep every other line exactly as it is.",
        "world": "files",
        "state": {"files": {"/app/settings.ini": before, "/app/README": "service"}},
        "goal": {"state": {"files": {"/app/settings.ini": after, "/app/README": "service"}}},
        "policy": {"budget": 4},
        "reference": [
            [call("read_file", path="/app/settings.ini")],
            [call("write_file", path="/app/settings.ini", content=after)],
        ],
    }


def count_todo_lines(rng: random.Random) -> Spec:
    lines = [f"- {rng.choice(WORDS)} {rng.randint(1, 50)}" for _ in range(rng.randint(3, 9))]
    return {
        "text": "How many lines does /notes/todo.md contain? Answer with the number only. Do not change any file.",
        "world": "files",
        "state": {"files": {"/notes/todo.md": "\n".join(lines), "/notes/done.md": "- nothing"}},
        "goal": {"answer": str(len(lines))},
        "policy": {"read_only": ["*"]},
        "reference": [[call("read_file", path="/notes/todo.md")], str(len(lines))],
    }


# ---------------------------------------------------------------- ledger


def pay_invoice(rng: random.Random) -> Spec:
    checking, amount = rng.randint(50_00, 200_00), rng.randint(5_00, 40_00)
    vendor = rng.choice(["acme", "globex", "initech"])
    accounts = {"checking": checking, "savings": rng.randint(100_00, 900_00), vendor: 0}
    return {
        "text": f"Pay the {vendor} invoice of {amount} cents from the checking account. Never touch savings.",
        "world": "ledger",
        "state": {"accounts": accounts, "transfers": []},
        "goal": {
            "state": {
                "accounts": {"checking": checking - amount, vendor: amount, "savings": accounts["savings"]}
            }
        },
        "policy": {"read_only": ["savings"], "budget": 3},
        "reference": [[call("transfer", source="checking", target=vendor, amount=amount)]],
    }


def total_balance(rng: random.Random) -> Spec:
    accounts = {
        name: rng.randint(0, 5000_00) for name in rng.sample(["rent", "food", "travel", "tax", "gifts"], 3)
    }
    return {
        "text": "What is the total balance, in cents, across all accounts? Answer with the number only.",
        "world": "ledger",
        "state": {"accounts": accounts, "transfers": []},
        "goal": {"answer": str(sum(accounts.values()))},
        "policy": {"forbidden_tools": ["transfer"]},
        "reference": [
            [call("list_accounts")],
            [call("get_balance", account=a) for a in sorted(accounts)],
            str(sum(accounts.values())),
        ],
    }


def top_up(rng: random.Random) -> Spec:
    current, target = rng.randint(0, 30_00), rng.randint(40_00, 90_00)
    savings = rng.randint(100_00, 300_00)
    return {
        "text": f"Make sure the 'bills' account holds exactly {target} cents by moving the shortfall from 'savings'.",
        "world": "ledger",
        "state": {"accounts": {"bills": current, "savings": savings}, "transfers": []},
        "goal": {"state": {"accounts": {"bills": target, "savings": savings - (target - current)}}},
        "policy": {"budget": 4},
        "reference": [
            [call("get_balance", account="bills")],
            [call("transfer", source="savings", target="bills", amount=target - current)],
        ],
    }


# ---------------------------------------------------------------- calendar


def _busy_day(rng: random.Random, day: str) -> list[dict[str, Any]]:
    events, hour, next_id = [], 9, 1
    while hour < 15:
        length = rng.randint(1, 2)
        if rng.random() < 0.6:
            events.append(
                {
                    "id": next_id,
                    "title": rng.choice(["standup", "1:1", "lunch", "review"]),
                    "day": day,
                    "start": hour,
                    "end": hour + length,
                }
            )
            next_id += 1
        hour += length
    return events


def schedule_meeting(rng: random.Random) -> Spec:
    day = f"2026-03-{rng.randint(10, 28)}"
    events = _busy_day(rng, day)
    duration = rng.randint(1, 2)
    start = next(
        h
        for h in range(9, 18 - duration)
        if all(not (h < e["end"] and e["start"] < h + duration) for e in events)
    )
    return {
        "text": f"Book a {duration}-hour 'Design review' on {day} at the earliest time between 9 and 17 that is free.",
        "world": "calendar",
        "state": {"events": events},
        "goal": {
            "state": {
                "events": [
                    {"title": "Design review", "day": day, "start": start, "end": start + duration},
                    *events,
                ]
            }
        },
        "policy": {"forbidden_tools": ["delete_event"]},
        "reference": [
            [call("list_events", day=day)],
            [call("create_event", title="Design review", day=day, start=start, end=start + duration)],
        ],
    }


def cancel_event(rng: random.Random) -> Spec:
    day = f"2026-04-{rng.randint(10, 28)}"
    events = _busy_day(rng, day) or [{"id": 1, "title": "review", "day": day, "start": 9, "end": 10}]
    victim = rng.choice(events)
    events.append({"id": 99, "title": "Dentist", "day": day, "start": 17, "end": 18})
    victim = events[-1] if rng.random() < 0.5 else victim
    keep = [e for e in events if e is not victim]
    return {
        "text": f"Cancel the '{victim['title']}' event that starts at {victim['start']}:00 on {day}. Keep everything else.",
        "world": "calendar",
        "state": {"events": events},
        "goal": {"state": {"events": keep}, "absent": [["events", len(keep)]]},
        "policy": {"budget": 4},
        "reference": [[call("list_events", day=day)], [call("delete_event", event_id=victim["id"])]],
    }


# ---------------------------------------------------------------- inventory

ITEMS = ["bolt", "nut", "washer", "hinge", "bracket", "spring"]


def _stock(rng: random.Random) -> dict[str, dict[str, Any]]:
    return {
        f"SKU-{i + 100}": {"name": name, "qty": rng.randint(0, 20), "price": round(rng.uniform(0.1, 9.0), 2)}
        for i, name in enumerate(rng.sample(ITEMS, 4))
    }


def restock_low(rng: random.Random) -> Spec:
    items = _stock(rng)
    low = sorted(sku for sku, item in items.items() if item["qty"] < 5)
    if not low:
        first = sorted(items)[0]
        items[first]["qty"], low = 2, [first]
    return {
        "text": "Every item with fewer than 5 units in stock must be restocked to exactly 10 units. Do not change prices.",
        "world": "inventory",
        "state": {"items": items},
        "goal": {
            "state": {
                "items": {
                    sku: {"qty": 10 if sku in low else item["qty"], "price": item["price"]}
                    for sku, item in items.items()
                }
            }
        },
        "policy": {"forbidden_tools": ["set_price"]},
        "reference": [
            [call("list_items")],
            [call("adjust_stock", sku=sku, delta=10 - items[sku]["qty"]) for sku in low],
        ],
    }


def reprice(rng: random.Random) -> Spec:
    items = _stock(rng)
    sku = rng.choice(sorted(items))
    price = round(rng.uniform(1, 20), 2)
    return {
        "text": f"Set the price of {sku} to {price}. Do not change any stock levels.",
        "world": "inventory",
        "state": {"items": items},
        "goal": {"state": {"items": {sku: {"price": price, "qty": items[sku]["qty"]}}}},
        "policy": {"forbidden_tools": ["adjust_stock"], "budget": 2},
        "reference": [[call("set_price", sku=sku, price=price)]],
    }


def units_of(rng: random.Random) -> Spec:
    items = _stock(rng)
    sku = rng.choice(sorted(items))
    name = items[sku]["name"]
    return {
        "text": f"How many units of '{name}' are in stock? Answer with the number only. Change nothing.",
        "world": "inventory",
        "state": {"items": items},
        "goal": {"answer": str(items[sku]["qty"])},
        "policy": {"read_only": ["*"], "forbidden_tools": ["adjust_stock", "set_price"]},
        "reference": [[call("list_items")], str(items[sku]["qty"])],
    }


TRAIN_TEMPLATES: dict[str, tuple[int, Callable[[random.Random], Spec]]] = {
    "archive_text_files": (3, archive_text_files),
    "turn_off_debug": (2, turn_off_debug),
    "pay_invoice": (1, pay_invoice),
    "total_balance": (2, total_balance),
    "schedule_meeting": (3, schedule_meeting),
    "restock_low": (3, restock_low),
    "reprice": (1, reprice),
}
HELD_OUT: dict[str, tuple[int, Callable[[random.Random], Spec]]] = {
    "count_todo_lines": (1, count_todo_lines),
    "top_up": (2, top_up),
    "cancel_event": (2, cancel_event),
    "units_of": (2, units_of),
}


def reference_transcript(task: Task) -> str:
    """The reference solution as a transcript the ToolGrader accepts (one turn a line)."""
    return "\n".join(turn_text(turn) for turn in task.hidden["reference"])


def _reference_calls(reference: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], c["arguments"]) for turn in reference if isinstance(turn, list) for c in turn]


def _task(
    task_id: str, spec: Spec, difficulty: int, split: str, meta: dict[str, Any], max_turns: int
) -> Task:
    reference = spec["reference"]
    hidden = {
        "world": spec["world"],
        "state": spec["state"],
        "goal": spec["goal"],
        "policy": spec["policy"],
        "reference": reference,
        "optimal_calls": sum(len(turn) for turn in reference if isinstance(turn, list)),
        "max_turns": max_turns,
        "expected_state": replay_calls(spec["world"], spec["state"], _reference_calls(reference)),
    }
    if spec.get("allowed_changes"):
        hidden["allowed_changes"] = spec["allowed_changes"]
    return Task(
        id=task_id,
        prompt=tool_prompt(spec["text"], spec["world"], max_turns),
        family="tool",
        difficulty=difficulty,
        split=split,
        hidden=hidden,
        meta={**meta, "world": spec["world"], "instruction": spec["text"]},
    )


def generate(template: str, index: int) -> Task:
    """One of the original hand-written tasks."""
    difficulty, function = TRAIN_TEMPLATES.get(template) or HELD_OUT[template]
    spec = function(random.Random(f"tool/{template}/{index}"))
    split = "test" if template in HELD_OUT else "train"
    return _task(
        f"tool/{template}/{index}", spec, difficulty, split, {"template": template}, DEFAULT_MAX_TURNS
    )


def generate_procedural(template: str, difficulty: int, index: int, unseen_world: bool = False) -> Task:
    """One procedural task: a reference of k turns gets k + 2 turns (at most the default limit).
    `unseen_world`: a training template in a world of the `test_worlds` split (id `.../w<index>`)."""
    spec = tool_templates.draw_spec(template, difficulty, index, unseen_world)
    if unseen_world:
        split, task_id = "test_worlds", f"tool/{template}/d{difficulty}/w{index}"
    else:
        split = "test" if template in tool_templates.HELD_OUT_TEMPLATES else "train"
        task_id = f"tool/{template}/d{difficulty}/{index}"
    max_turns = min(DEFAULT_MAX_TURNS, len(spec["reference"]) + 2)
    meta = {"template": template, "procedural": True}
    return _task(task_id, spec, difficulty, split, meta, max_turns)


def procedural_tasks(
    template: str,
    difficulty: int,
    count: int,
    unseen_world: bool = False,
    trained: frozenset[str] = frozenset(),
) -> Iterable[Task]:
    """`count` distinct tasks of one template and difficulty (indices that repeat an earlier world are
    skipped, and so is any task whose instruction is in `trained`)."""
    seen: set[str] = set()
    index = 0
    while len(seen) < count and index < 20 * count:
        task = generate_procedural(template, difficulty, index, unseen_world)
        index += 1
        key = json.dumps([task.prompt, task.hidden["state"]], sort_keys=True)
        if key not in seen and task.meta["instruction"] not in trained:
            seen.add(key)
            yield task


class ToolWorldsPack(TaskPack):
    name = "tool-worlds"
    family = "tool"
    version = "3"
    description = (
        "Multi-turn tool use (OpenAI function calling) over simulated files, ledger, calendar and inventory, with "
        "permission policies, whole-state checks against the reference's final state and an efficiency "
        "component; 33 hand-written tasks plus procedural ones at difficulty 1-4 (7,600 train); test split = "
        "held-out templates in held-out worlds; test_worlds = training templates in unseen worlds."
    )

    def _load(self) -> Iterable[Task]:
        trained: set[str] = set()
        for template in [*TRAIN_TEMPLATES, *HELD_OUT]:
            for index in range(TASKS_PER_TEMPLATE):
                task = generate(template, index)
                if task.split == "train":
                    trained.add(task.meta["instruction"])
                yield task
        cells = [
            (name, PROCEDURAL_TRAIN_PER_CELL, base)
            for name, (base, _) in tool_templates.TRAIN_TEMPLATES.items()
        ]
        cells += [
            (name, PROCEDURAL_TEST_PER_CELL, base)
            for name, (base, _) in tool_templates.HELD_OUT_TEMPLATES.items()
        ]
        for template, count, base in cells:
            for difficulty in (base, base + 1):
                for task in procedural_tasks(template, difficulty, count):
                    if task.split == "train":
                        trained.add(task.meta["instruction"])
                    yield task
        # the skills trained on in worlds never trained on: not one instruction seen in training
        for name, (base, _) in tool_templates.TRAIN_TEMPLATES.items():
            for difficulty in (base, base + 1):
                yield from procedural_tasks(
                    name, difficulty, PROCEDURAL_TEST_WORLDS_PER_CELL, True, frozenset(trained)
                )
