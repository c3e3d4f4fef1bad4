"""SQL grader: the candidate's query (or DML) must do what the reference does, on the visible database and
on hidden variants of it (test-suite accuracy: a hard-coded result fails the variants).

Task hidden spec: `schema` (CREATE statements), `rows` (table -> list of rows, the visible data), `reference`
(trusted SQL), `kind` ("query" or "dml"), optional `ordered` (row order matters), `variants` (how many hidden
databases, default 4), `variant_rows` (explicit hidden datasets, used instead of generated ones),
`boundary_rows` (more hidden datasets a task adds, e.g. a group whose total is exactly a HAVING threshold), and
for DML `check` (extra trusted SELECTs over the resulting state) and `writable` (tables the DML may change;
default: the tables the reference writes).

An orphan-group dataset is always added too when tables reference each other: one group of each referenced
table (e.g. a category) loses all its child rows, so an INNER JOIN written as a LEFT JOIN (or the reverse) fails.

Boundary datasets are always added: for every comparison of a column with a literal in the reference, rows on
the constant, next to it, tied on it, duplicated, and NULL (rlvr/graders/sql/variants.py), so `<=` written for
`<` fails. A DML answer is judged on the whole database: every table in full (plus the task's checks) must
equal the reference's database after its statements, and a write to a table outside `writable` is refused.

Components: `executes` (ran without error on the visible database), `visible` (right result there) and
`hidden` (fraction of hidden variants right). Passing = right everywhere, reward 1.0; otherwise the reward is
half the fraction of databases right (< 0.5), so no failing candidate ever reaches a passing one. Only
*informative* databases count towards that fraction: one where the right answer is no rows (a query) or no
change (DML) is matched by an answer that does nothing, so matching it earns nothing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.core.verdict_cache import VerdictCache
from rlvr.graders.base import Grader
from rlvr.graders.options import GraderOptions, no_sandbox
from rlvr.graders.sql.execute import (
    STEP_BUDGET,
    Result,
    SQLRunError,
    build_database,
    open_copy,
    read_state,
    results_match,
    run_query,
    run_script,
    run_trusted,
    table_names,
)
from rlvr.graders.sql.variants import boundary_variants, make_variant, orphan_group_variants

DEFAULT_VARIANTS = 4
# Wall-clock seconds one candidate's SQL may spend over all the databases (each run is also stopped
# at the executor's WALL_TIMEOUT): grading is serial, so this bounds how long one candidate can hold
# up the verdicts of the others. Honest queries take milliseconds on every database together.
CANDIDATE_WALL_SECONDS = 8.0
# SQLRunError kind -> the verdict's flags (names from rlvr.core.flags where one fits)
FAILURE_FLAGS = {
    "denied": ["sql_denied"],
    "side_effect": ["sql_denied", "unauthorized_side_effect"],
    "budget": ["sql_budget", "timeout:sql"],
    "rows": ["output_limit"],
    "size": ["oversized:database"],
    "state": ["oversized:stored_data"],
}
_WRITE_TARGET = re.compile(
    r"\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+[\"`\[]?(\w+)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```[ \t]*([A-Za-z]*)[^\n]*\n(.*?)```", re.DOTALL)


def extract_sql(completion: str) -> str:
    """The last ```sql fenced block, else the last fenced block, else the whole text."""
    blocks = _FENCE.findall(completion)
    for language, body in reversed(blocks):
        if language.lower() in ("sql", "sqlite"):
            return body.strip()
    if blocks:
        return blocks[-1][1].strip()
    return completion.strip()


@dataclass
class PreparedTask:
    """Trusted data for one task: database bytes and the reference outcome on each."""

    databases: list[bytes]  # [visible, hidden variants...]
    expected: list[Result]
    kind: str
    ordered: bool
    checks: list[str]
    writable: frozenset[str]
    # per database: does the right answer differ from doing nothing (some rows; a changed state)?
    informative: list[bool]


def _tables(database: bytes) -> list[str]:
    connection = open_copy(database)
    try:
        return table_names(connection)
    finally:
        connection.close()


def written_tables(reference: str, tables: list[str]) -> frozenset[str]:
    """The tables a DML reference writes (INSERT INTO / REPLACE INTO / UPDATE / DELETE FROM targets)."""
    by_name = {name.lower(): name for name in tables}
    return frozenset(by_name[m.lower()] for m in _WRITE_TARGET.findall(reference) if m.lower() in by_name)


def _state(database: bytes, checks: list[str]) -> Result:
    """The state a DML task is judged on: every check query's rows, concatenated and tagged."""
    return Result(columns=-1, rows=read_state(database, checks))


def prepare(task: Task) -> PreparedTask:
    hidden = task.hidden
    schema, rows, reference = hidden["schema"], hidden.get("rows") or {}, hidden["reference"]
    kind = hidden.get("kind", "query")
    if kind not in ("query", "dml"):
        raise ValueError(f"kind must be 'query' or 'dml', got {kind!r}")
    datasets = [rows]
    if hidden.get("variant_rows"):
        datasets += list(hidden["variant_rows"])
    else:
        count = int(hidden.get("variants", DEFAULT_VARIANTS))
        datasets += [make_variant(rows, schema, seed=f"{task.id}/{i}") for i in range(count)]
    datasets += boundary_variants(rows, schema, reference)
    datasets += orphan_group_variants(rows, schema)
    datasets += list(hidden.get("boundary_rows") or [])
    databases = [build_database(schema, data) for data in datasets]
    tables = _tables(databases[0])
    checks = [f'SELECT * FROM "{name}"' for name in tables] + list(hidden.get("check") or [])
    writable = frozenset(hidden.get("writable") or written_tables(reference, tables))
    ordered = bool(hidden.get("ordered", False))
    if kind == "query":
        expected = [run_trusted(db, reference) for db in databases]
        informative = [bool(result.rows) for result in expected]
    else:
        expected = [_state(run_script(db, reference, writable), checks) for db in databases]
        informative = [
            not results_match(_state(db, checks), result, ordered=True)[0]
            for db, result in zip(databases, expected, strict=True)
        ]
    return PreparedTask(databases, expected, kind, ordered, checks, writable, informative)


@dataclass(frozen=True, kw_only=True)
class SQLOptions(GraderOptions):
    """The SQL grader has no settings of its own, and takes none of the shared ones it would ignore."""

    not_honoured: ClassVar[Mapping[str, str]] = {
        "weights": "its reward is fixed (1.0 when right on every database, else half the fraction right)",
        "timeout": f"a query is stopped by a deterministic budget of {STEP_BUDGET:,} sqlite steps, not a clock",
        **no_sandbox("SQL runs in the grader's own sqlite under an authorizer, with no sandbox to configure"),
    }


class SQLGrader(Grader):
    family = "sql"
    options_class = SQLOptions

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        self._prepared: dict[str, PreparedTask | str] = {}
        self._cache = VerdictCache()

    def _prepared_task(self, task: Task) -> PreparedTask | str:
        if task.id not in self._prepared:
            try:
                self._prepared[task.id] = prepare(task)
            except Exception as exc:  # a broken task is the pack's fault: flag it, don't crash
                self._prepared[task.id] = f"task could not be prepared: {type(exc).__name__}: {exc}"
        return self._prepared[task.id]

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return self.grade_each(tasks, completions, self._grade_one, self._cache)

    def _outcome(self, prepared: PreparedTask, database: bytes, sql: str, wall: float) -> Result:
        if prepared.kind == "query":
            return run_query(database, sql, wall)
        return _state(run_script(database, sql, prepared.writable, wall), prepared.checks)

    def _grade_one(self, task: Task, completion: str) -> Verdict:
        started = time.perf_counter()
        prepared = self._prepared_task(task)
        if isinstance(prepared, str):
            return Verdict.failure(task.id, prepared, fault="task")
        sql = extract_sql(completion)
        matches: list[bool] = []
        first_problem = ""
        flags: list[str] = []
        deadline = time.monotonic() + CANDIDATE_WALL_SECONDS
        for index, (database, expected) in enumerate(zip(prepared.databases, prepared.expected, strict=True)):
            try:
                got = self._outcome(prepared, database, sql, deadline - time.monotonic())
            except SQLRunError as exc:
                if index == 0:
                    return self._failed_to_run(task.id, exc, started)
                matches.append(False)
                first_problem = first_problem or f"fails on a hidden database ({exc.kind})"
                flags += [f for f in FAILURE_FLAGS.get(exc.kind, []) if f not in flags]
                if exc.kind == "budget":  # out of budget once: the databases left count as failed
                    matches += [False] * (len(prepared.databases) - len(matches))
                    break
                continue
            same, why = results_match(got, expected, ordered=prepared.ordered)
            matches.append(same)
            if not same and not first_problem:
                first_problem = (
                    f"wrong result on the visible database: {why}" if index == 0 else "wrong on hidden data"
                )
        visible, hidden = matches[0], matches[1:]
        hidden_fraction = sum(hidden) / len(hidden) if hidden else float(visible)
        passed = all(matches)
        counted = [same for same, informs in zip(matches, prepared.informative, strict=True) if informs]
        return Verdict(
            task_id=task.id,
            reward=1.0 if passed else 0.5 * sum(counted) / max(1, len(counted)),
            passed=passed,
            components={
                "executes": Component(1.0, 1.0),
                "visible": Component(float(visible), 1.0),
                "hidden": Component(hidden_fraction, 1.0, f"{sum(hidden)}/{len(hidden)} hidden databases"),
            },
            gates=[] if passed else ["visible"] * (not visible) + ["hidden"] * (not all(hidden)),
            feedback="Correct on every database." if passed else first_problem,
            timings={"grade": time.perf_counter() - started},
            flags=flags,
        )

    def _failed_to_run(self, task_id: str, exc: SQLRunError, started: float) -> Verdict:
        return Verdict(
            task_id=task_id,
            reward=0.0,
            passed=False,
            components={
                "executes": Component(0.0, 1.0, exc.kind),
                "visible": Component(0.0, 1.0),
                "hidden": Component(0.0, 1.0),
            },
            gates=["executes"],
            feedback=f"SQL {exc.kind}: {str(exc)[:300]}",
            timings={"grade": time.perf_counter() - started},
            flags=FAILURE_FLAGS.get(exc.kind, []),
        )
