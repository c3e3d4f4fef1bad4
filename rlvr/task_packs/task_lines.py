"""Reading `tasks.jsonl`: one JSON object a line, the fields every family shares (`id`, `prompt`,
`difficulty`, `split`, `meta`) checked here, the family's own fields by the checker it passes in.
Every problem is reported with file, line and field; a line with a problem yields no task."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlvr.core.jsonl import json_lines
from rlvr.core.pack import Problem
from rlvr.core.types import Task

LineChecker = Callable[[dict[str, Any]], list[tuple[str, str]]]
LineBuilder = Callable[[dict[str, Any]], dict[str, Any]]


def need_str(line: dict[str, Any], name: str) -> list[tuple[str, str]]:
    """A (field, message) problem unless `line[name]` is a non-empty string."""
    value = line.get(name)
    if not isinstance(value, str) or not value.strip():
        return [(name, "missing or not a non-empty string (required)")]
    return []


def _common_problems(line: dict[str, Any], seen: dict[str, int]) -> list[tuple[str, str]]:
    found = need_str(line, "id") + need_str(line, "prompt")
    difficulty = line.get("difficulty", 1)
    if not isinstance(difficulty, int) or isinstance(difficulty, bool) or not 1 <= difficulty <= 5:
        found.append(("difficulty", "must be an integer from 1 to 5"))
    if line.get("split", "test") not in ("train", "test"):
        found.append(("split", 'must be "train" or "test"'))
    if not isinstance(line.get("meta", {}), dict):
        found.append(("meta", "must be a JSON object"))
    task_id = line.get("id")
    if isinstance(task_id, str) and task_id in seen:
        found.append(("id", f"duplicate of line {seen[task_id]}"))
    return found


def read_task_lines(
    path: Path,
    family: str,
    check: LineChecker,
    hidden: LineBuilder,
    public_meta: LineBuilder | None = None,
) -> tuple[list[Task], list[Problem]]:
    """The tasks of one `tasks.jsonl` and every problem found in it. `check` returns the family's
    (field, message) problems for a line, `hidden` builds its hidden spec, `public_meta` (default:
    the line's `meta`) what observations may show."""
    if not path.is_file():
        return [], [Problem(str(path), None, None, "missing: a pack directory needs tasks.jsonl")]
    tasks: list[Task] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for entry in json_lines(path):
        if entry.problem:
            problems.append(entry.problem)
            continue
        number, line = entry.number, entry.value
        found = _common_problems(line, seen) + check(line)
        problems += [Problem(str(path), number, field, message) for field, message in found]
        if found:
            continue
        seen[line["id"]] = number
        tasks.append(
            Task(
                id=line["id"],
                prompt=line["prompt"],
                family=family,
                difficulty=line.get("difficulty", 1),
                split=line.get("split", "test"),
                hidden=hidden(line),
                meta=public_meta(line) if public_meta else dict(line.get("meta") or {}),
            )
        )
    if not tasks and not problems:
        problems.append(Problem(str(path), None, None, "holds no tasks"))
    return tasks, problems
