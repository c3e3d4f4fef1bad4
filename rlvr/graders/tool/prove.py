"""`rlvr packs validate` for tool tasks (built-in worlds and worlds a pack declares).

Every tool of the task's world must have a well-formed JSON Schema and a description; the reference is
replayed and must reach the goal with no side effect and no policy violation (reward 1.0); trivial
episodes must stay below the trivial-reward limit: an empty completion, an episode that takes no action
(`{"final_answer": ""}`), and, for a task whose goal is an answer read from the world, that very answer
given without a single tool call (unless the task sets `answer_needs_world: false`).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.core.validation import ValidationReport
from rlvr.graders.prove import Trials, grader_for, prove_with_grader
from rlvr.specs.tool_worlds import WorldDefinitionError, task_world, world_problems

_world_problems = functools.cache(world_problems)  # once per world class, not once per task


def reference_transcript(reference: Any) -> str | None:
    """A reference as the transcript a grader replays: a string as given, or a list of turns (each a list
    of `{"name", "arguments"}` calls, or a final answer string) as a JSON list of assistant messages."""
    if isinstance(reference, str):
        return reference
    if not isinstance(reference, list):
        return None
    messages: list[dict[str, Any]] = []
    for number, turn in enumerate(reference):
        if isinstance(turn, str):
            messages.append({"final_answer": turn})
        elif isinstance(turn, list):
            calls = [
                {
                    "id": f"r{number}_{index}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c.get("arguments") or {}},
                }
                for index, c in enumerate(turn)
                if isinstance(c, dict) and isinstance(c.get("name"), str)
            ]
            messages.append({"role": "assistant", "tool_calls": calls})
        elif isinstance(turn, dict) and "final_answer" in turn:
            messages.append({"final_answer": str(turn["final_answer"])})
    return json.dumps(messages)


def task_trials(task: Task) -> Trials:
    hidden = task.hidden
    problems: list[tuple[str | None, str]] = []
    try:
        problems += [("world", p) for p in _world_problems(task_world(hidden))]
    except WorldDefinitionError as exc:
        problems.append(("world", str(exc)))
    trivial = {"empty": "", "no-action": json.dumps({"final_answer": ""})}
    goal = hidden.get("goal") or {}
    if "answer" in goal and hidden.get("answer_needs_world", True):
        trivial["answer-only"] = json.dumps({"final_answer": str(goal["answer"])})
    reference = reference_transcript(hidden.get("reference"))
    if reference is None and "expected_state" not in hidden:
        problems.append(("reference", "missing: a reference transcript proves the task can be solved"))
    return Trials(reference, trivial, tuple(problems))


def prove_tool_tasks(
    where: str, tasks: list[Task], *, pack: TaskPack | None = None, **options: Any
) -> ValidationReport:
    grader = grader_for(where, tasks, "tool", pack, options)
    try:
        return prove_with_grader(where, tasks, grader, task_trials)
    finally:
        grader.close()
