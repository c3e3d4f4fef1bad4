"""SQL grader: the candidate's query (or DML) must do what the reference does, on the visible database and
on hidden variants of it (test-suite accuracy: a hard-coded result fails the variants).

Task hidden spec: `schema` (CREATE statements), `rows` (table -> list of rows, the visible data), `reference`
(trusted SQL), `kind` ("query" or "dml"), optional `ordered` (row order matters), `variants` (how many hidden
databases, default 4), `variant_rows` (explicit hidden datasets, used instead of generated ones), and for DML
`check` (trusted SELECTs that read the resulting state; default: every table in full) and `writable` (tables
the DML may change; default: all).

Components: `executes` (ran without error on the visible database), `visible` (right result there) and
`hidden` (fraction of hidden variants right). Passing = right everywhere, reward 1.0; otherwise the reward is
half the fraction of databases right (< 0.5), so no failing candidate ever reaches a passing one.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.base import Grader
from rlvr.graders.cache import VerdictCache
from rlvr.graders.sql.execute import (
    Result,
    SQLRunError,
    build_database,
    open_copy,
    results_match,
    run_query,
    run_script,
    run_trusted,
    table_names,
)
from rlvr.graders.sql.variants import make_variant

DEFAULT_VARIANTS = 4
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


def _tables(database: bytes) -> list[str]:
    connection = open_copy(database)
    try:
        return table_names(connection)
    finally:
        connection.close()


def _state(database: bytes, checks: list[str]) -> Result:
    """The state a DML task is judged on: every check query's rows, concatenated and tagged."""
    rows: list[tuple[Any, ...]] = []
    for index, check in enumerate(checks):
        result = run_trusted(database, check)
        rows += [(index, *row) for row in result.rows]
    return Result(columns=-1, rows=rows)


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
    databases = [build_database(schema, data) for data in datasets]
    tables = _tables(databases[0])
    checks = list(hidden.get("check") or [f'SELECT * FROM "{name}" ORDER BY 1' for name in tables])
    writable = frozenset(hidden.get("writable") or tables)
    if kind == "query":
        expected = [run_trusted(db, reference) for db in databases]
    else:
        expected = [_state(run_script(db, reference, writable), checks) for db in databases]
    return PreparedTask(databases, expected, kind, bool(hidden.get("ordered", False)), checks, writable)


class SQLGrader(Grader):
    family = "sql"

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

    def _outcome(self, prepared: PreparedTask, database: bytes, sql: str) -> Result:
        if prepared.kind == "query":
            return run_query(database, sql)
        return _state(run_script(database, sql, prepared.writable), prepared.checks)

    def _grade_one(self, task: Task, completion: str) -> Verdict:
        started = time.perf_counter()
        prepared = self._prepared_task(task)
        if isinstance(prepared, str):
            return Verdict.failure(task.id, prepared, fault="task")
        sql = extract_sql(completion)
        matches: list[bool] = []
        first_problem = ""
        for index, (database, expected) in enumerate(zip(prepared.databases, prepared.expected, strict=True)):
            try:
                got = self._outcome(prepared, database, sql)
            except SQLRunError as exc:
                if index == 0:
                    return self._failed_to_run(task.id, exc, started)
                matches.append(False)
                first_problem = first_problem or "fails on a hidden database"
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
        return Verdict(
            task_id=task.id,
            reward=1.0 if passed else 0.5 * sum(matches) / len(matches),
            passed=passed,
            components={
                "executes": Component(1.0, 1.0),
                "visible": Component(float(visible), 1.0),
                "hidden": Component(hidden_fraction, 1.0, f"{sum(hidden)}/{len(hidden)} hidden databases"),
            },
            gates=[] if passed else ["visible"] * (not visible) + ["hidden"] * (not all(hidden)),
            feedback="Correct on every database." if passed else first_problem,
            timings={"grade": time.perf_counter() - started},
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
            flags=[f"sql_{exc.kind}"] if exc.kind in ("denied", "budget") else [],
        )
