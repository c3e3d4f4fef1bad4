"""Tool packs as directories, with worlds of their own.

`pack.toml` may list `worlds = ["world.py", ...]`: Python modules in the pack defining `World` subclasses
(rlvr/specs/tool_worlds.py). A task line names one of them in `world`; its hidden spec then carries the
module's absolute path as `world_module`, which the episode loads (trusted pack code, like a grader). A
module that fails to import, a world that shadows a built-in one, or a tool whose JSON Schema cannot be
built is a problem of `pack.toml`'s `worlds` field; the lines are checked by the tool family's schema.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from rlvr.core.pack import Problem
from rlvr.core.types import Task
from rlvr.specs.tool_worlds import WORLDS, WorldDefinitionError, load_world_module, world_problems
from rlvr.task_packs.directory import DIRECTORY_READERS, HIDDEN_BUILDERS, TASK_CHECKERS, Checker
from rlvr.task_packs.task_lines import read_task_lines


def pack_worlds(root: Path) -> tuple[dict[str, str], list[Problem]]:
    """World name -> module path for the worlds `pack.toml` declares, and what is wrong with them."""
    manifest_path = root / "pack.toml"
    try:
        declared: Any = tomllib.loads(manifest_path.read_text(encoding="utf-8")).get("worlds", [])
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}, []  # read_manifest reports an unreadable pack.toml
    where = str(manifest_path)
    if not isinstance(declared, list) or not all(isinstance(p, str) for p in declared):
        return {}, [Problem(where, None, "worlds", 'must be a list of module paths like ["world.py"]')]
    found: dict[str, str] = {}
    problems: list[Problem] = []
    for relative in declared:
        path = (root / relative).resolve()
        if not path.is_relative_to(root.resolve()) or path.suffix != ".py" or not path.is_file():
            problems.append(Problem(where, None, "worlds", f"{relative}: no such .py file inside the pack"))
            continue
        try:
            worlds = load_world_module(path)
        except WorldDefinitionError as exc:
            problems.append(Problem(where, None, "worlds", str(exc)))
            continue
        for name, cls in worlds.items():
            if name in WORLDS or name in found:
                problems.append(Problem(where, None, "worlds", f"{relative}: world name {name!r} is taken"))
                continue
            broken = world_problems(cls)
            problems += [Problem(where, None, "worlds", f"{relative}: world {name}: {p}") for p in broken]
            if not broken:  # a world that cannot be offered is not offered: its tasks are refused too
                found[name] = str(path)
    return found, problems


def read_tool_tasks(root: Path, prover: Checker | None = None) -> tuple[list[Task], list[Problem]]:
    """The tasks; `prover` (a grader-side line check, e.g. replaying the reference) runs on sound lines."""
    worlds, problems = pack_worlds(root)
    check_line, build_hidden = TASK_CHECKERS["tool"], HIDDEN_BUILDERS["tool"]

    def check(line: dict[str, Any]) -> list[tuple[str, str]]:
        if "world_module" in line:
            return [("world_module", "is set by the pack: list world modules in pack.toml `worlds`")]
        if isinstance(line.get("world"), str) and line["world"] in worlds:
            line["world_module"] = worlds[line["world"]]  # read by the checker and kept in the hidden spec
        return check_line(line) or (prover(line) if prover is not None else [])

    tasks, line_problems = read_task_lines(root / "tasks.jsonl", "tool", check, build_hidden)
    return tasks, problems + line_problems


DIRECTORY_READERS["tool"] = read_tool_tasks
