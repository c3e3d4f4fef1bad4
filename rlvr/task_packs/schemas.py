"""Directory-pack task schemas of the math (its settings), tool, SQL and proof families
(`register_family_schema`).

Each checker returns (field, message) problems for one tasks.jsonl line, explaining what is wrong; each
hidden builder keeps everything but the public fields, which becomes the task's hidden spec. These are
checks of the format only: proving a line's reference solves its task needs the family's grader
(`rlvr packs validate` runs those provers, e.g. rlvr/graders/tool/validation.py).
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import rlvr.task_packs.tool_pack  # noqa: F401  (tool directories: the worlds a pack declares itself)
from rlvr.specs.math_settings import MathSettings
from rlvr.specs.reasoning_gym_scorers import scorer_problem
from rlvr.task_packs.directory import (
    HIDDEN_BUILDERS,
    PUBLIC_FIELDS,
    TASK_CHECKERS,
    need_str,
    register_family_schema,
)

Problems = list[tuple[str, str]]


def _hidden(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in PUBLIC_FIELDS}


# ---------------------------------------------------------------- math (extends the core answer check)

_core_math_checker = TASK_CHECKERS.get("math")


def check_math(line: dict[str, Any]) -> Problems:
    """`answer` plus the comparison settings of rlvr/specs/math_settings.py and an allow-listed
    `reasoning_gym` scorer; any other key is an error (a misspelled setting must not be ignored)."""
    problems = _core_math_checker(line) if _core_math_checker else []
    settings = {
        k: v for k, v in line.items() if k not in PUBLIC_FIELDS and k not in ("answer", "reasoning_gym")
    }
    problems += MathSettings.problems(settings)
    if "reasoning_gym" in line:
        problem = scorer_problem(line["reasoning_gym"])
        if problem:
            problems.append(("reasoning_gym", problem))
    return problems


if "math" in HIDDEN_BUILDERS:
    register_family_schema("math", check_math, HIDDEN_BUILDERS["math"])


# ---------------------------------------------------------------- sql


def _check_rows(rows: Any) -> Problems:
    if not isinstance(rows, dict) or not all(
        isinstance(t, str) and isinstance(r, list) and all(isinstance(row, list) for row in r)
        for t, r in rows.items()
    ):
        return [("rows", 'must be an object like {"table": [[1, "a"], [2, "b"]]}')]
    return []


def check_sql(line: dict[str, Any]) -> Problems:
    problems = need_str(line, "schema") + need_str(line, "reference")
    if "rows" in line:
        problems += _check_rows(line["rows"])
    for name in ("variant_rows", "boundary_rows"):
        datasets = line.get(name)
        if datasets is not None and (not isinstance(datasets, list) or any(_check_rows(d) for d in datasets)):
            problems.append((name, 'must be a list of datasets like [{"table": [[1, "a"]]}]'))
    kind = line.get("kind", "query")
    if kind not in ("query", "dml"):
        problems.append(("kind", 'must be "query" or "dml"'))
    for name in ("ordered",):
        if name in line and not isinstance(line[name], bool):
            problems.append((name, "must be true or false"))
    variants = line.get("variants")
    if variants is not None and (
        not isinstance(variants, int) or isinstance(variants, bool) or not 0 <= variants <= 50
    ):
        problems.append(("variants", "must be an integer from 0 to 50"))
    for name in ("check", "writable"):
        value = line.get(name)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            problems.append((name, "must be a list of strings"))
    if problems:
        return problems
    return _try_sql(line, kind)


def _try_sql(line: dict[str, Any], kind: str) -> Problems:
    """Build the visible database and run the reference on it: a broken task fails here, not in training."""
    connection = sqlite3.connect(":memory:")
    try:
        try:
            connection.executescript(line["schema"])
        except sqlite3.Error as exc:
            return [("schema", f"does not run in SQLite: {exc}")]
        for table, rows in (line.get("rows") or {}).items():
            for number, row in enumerate(rows, start=1):
                try:
                    connection.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" for _ in row)})', row)
                except (sqlite3.Error, sqlite3.ProgrammingError) as exc:
                    return [("rows", f"table {table!r} row {number}: {exc}")]
        try:
            if kind == "query":
                cursor = connection.execute(line["reference"])
                if cursor.description is None:
                    return [("reference", "a query task's reference must be a SELECT that returns rows")]
            else:
                connection.executescript(line["reference"])
            for check in line.get("check") or []:
                connection.execute(check)
        except sqlite3.Error as exc:
            return [("reference", f"fails on the visible database: {exc}")]
    finally:
        connection.close()
    return []


register_family_schema("sql", check_sql, _hidden)


# ---------------------------------------------------------------- tool


def check_tool(line: dict[str, Any]) -> Problems:
    from rlvr.specs.tool_worlds import WORLDS, WorldDefinitionError, task_world

    world = line.get("world")
    try:
        world_class = task_world(line)
    except WorldDefinitionError:
        return [
            ("world", f"must be one of {', '.join(WORLDS)} or a world the pack's `worlds` modules define")
        ]
    problems: Problems = []
    goal, policy = line.get("goal"), line.get("policy", {})
    if not isinstance(line.get("state", {}), dict):
        problems.append(("state", "must be an object (the world's initial state)"))
    if not isinstance(goal, dict) or not goal or set(goal) - {"state", "absent", "answer"}:
        problems.append(("goal", 'must be an object with any of "state", "absent", "answer"'))
    elif "absent" in goal and not (
        isinstance(goal["absent"], list) and all(isinstance(p, list) for p in goal["absent"])
    ):
        problems.append(("goal.absent", 'must be a list of key paths like [["files", "/tmp/a.txt"]]'))
    if not isinstance(policy, dict) or set(policy) - {"forbidden_tools", "read_only", "budget"}:
        problems.append(("policy", 'must be an object with any of "forbidden_tools", "read_only", "budget"'))
    else:
        unknown = set(policy.get("forbidden_tools") or []) - set(world_class.tools())
        if unknown:
            problems.append(
                ("policy.forbidden_tools", f"unknown tool(s) {sorted(unknown)} for world {world}")
            )
    for name in ("optimal_calls", "max_turns"):
        value = line.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            problems.append((name, "must be a positive integer"))
    if "answer_needs_world" in line and not isinstance(line["answer_needs_world"], bool):
        problems.append(("answer_needs_world", "must be true or false"))
    if "expected_state" in line and not isinstance(line["expected_state"], dict):
        problems.append(("expected_state", "must be an object (the whole world state a solution leaves)"))
    allowed = line.get("allowed_changes", [])
    if not isinstance(allowed, list) or not all(
        isinstance(path, list) and path and all(isinstance(step, str) for step in path) for path in allowed
    ):
        problems.append(("allowed_changes", 'must be a list of key-path patterns like [["files", "/tmp/*"]]'))
    prompt = line.get("prompt")
    if isinstance(prompt, str):
        missing = [name for name in world_class.tools() if name not in prompt]
        if missing:
            problems.append(
                (
                    "prompt",
                    f"does not show tool(s) {missing}; build it with rlvr.specs.tool_worlds.tool_prompt",
                )
            )
    reference = line.get("reference")
    if (
        reference is not None
        and not isinstance(reference, str)
        and not (isinstance(reference, list) and _turns_list(reference))
    ):
        problems.append(
            (
                "reference",
                'must be a list of turns (each a list of {"name", "arguments"} calls, or the final answer '
                "as a string) or a transcript string (assistant messages as JSON)",
            )
        )
    return problems


def _turns_list(reference: list[object]) -> bool:
    return all(
        isinstance(turn, str)
        or (
            isinstance(turn, list)
            and all(
                isinstance(c, dict)
                and isinstance(c.get("name"), str)
                and isinstance(c.get("arguments", {}), dict)
                for c in turn
            )
        )
        for turn in reference
    )


register_family_schema("tool", check_tool, _hidden)


# ---------------------------------------------------------------- proof


def check_proof_line(line: dict[str, Any]) -> Problems:
    problems = need_str(line, "goal")
    assumptions = line.get("assumptions", {})
    kinds = ("real", "positive", "nonnegative")
    if not isinstance(assumptions, dict) or not all(v in kinds for v in assumptions.values()):
        problems.append(("assumptions", f"must map symbol names to one of {', '.join(kinds)}"))
    if problems:
        return problems
    parts = [p.strip() for p in re.split(r"\\leq|\\geq|\\le|\\ge|<=|>=|≤|≥|=|<|>", line["goal"])]
    if len(parts) != 2 or not all(parts):
        return [("goal", "must be `left RELATION right` with exactly one of = <= < >= >")]
    return []


register_family_schema("proof", check_proof_line, _hidden)
