"""Red team 6, SQL: one candidate held the grader far past its time limit.

The executor's wall-clock deadline was read only by the progress handler, every 10,000 sqlite
steps, and one step can be one costly function call: `instr` of a 99 kB and a 49 kB string takes
tens of milliseconds, and a recursive CTE of 300 rows calling it once each ran 14 s on one database
(past the 5 s deadline, under the 20M-step budget), on each of the task's ~10 databases in turn.
SQL is graded serially in the grader's own process, so every other candidate of the batch (every
client of `rlvr serve`) waited. And a candidate that ran out of budget on a hidden database carried
no `timeout:sql` flag. Now a timer interrupts the connection at the deadline, a candidate has one
wall budget over all its databases (`CANDIDATE_WALL_SECONDS`) and stops at its first budget
failure, flagged.
"""

from __future__ import annotations

import time

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.sql.execute import WALL_TIMEOUT, SQLRunError, build_database, run_query
from rlvr.graders.sql.grader import CANDIDATE_WALL_SECONDS
from rlvr.task_packs.registry import load_pack

SLOW = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) "
    "SELECT sum(instr(printf('%.*c', 99000 - x % 2, 'a'), printf('%.*c', 49000, 'a') || 'b')) FROM c"
)
TASK = "sql/count_in_city/0"  # SELECT COUNT(*) FROM customers WHERE city = 'Lisbon'
HONEST = "SELECT COUNT(*) FROM customers WHERE city = 'Lisbon'"
SLACK = 3.0  # seconds for a loaded machine: one costly step past the deadline, and the rest


def test_a_run_stops_at_its_wall_deadline_even_inside_costly_steps() -> None:
    database = build_database("CREATE TABLE t (a INTEGER);", {"t": [[1]]})
    started = time.monotonic()
    with pytest.raises(SQLRunError) as raised:
        run_query(database, SLOW.format(rows=3000))
    assert raised.value.kind == "budget" and "time limit" in str(raised.value)
    assert time.monotonic() - started < WALL_TIMEOUT + SLACK


def test_a_slow_candidate_holds_the_batch_only_its_own_budget_and_is_flagged() -> None:
    with make_grader(load_pack("sql-shop")) as grader:
        started = time.monotonic()
        slow, honest = grader.grade_many([TASK, TASK], [SLOW.format(rows=3000), HONEST])
        seconds = time.monotonic() - started
    assert honest.passed and honest.reward == 1.0 and honest.error is None
    assert not slow.passed and slow.error is None and "timeout:sql" in slow.flags, slow
    assert seconds < CANDIDATE_WALL_SECONDS + SLACK, seconds


def test_a_candidate_slow_only_on_hidden_databases_is_bounded_and_flagged() -> None:
    # right and fast on the visible database (12 customers there), slow everywhere else
    visible_count = "(SELECT COUNT(*) FROM customers)"
    with make_grader(load_pack("sql-shop")) as grader:
        task = grader.pack.get(TASK)
        database = grader._prepared_task(task).databases[0]  # type: ignore[attr-defined]
        (count,) = run_query(database, f"SELECT {visible_count}").rows[0]
        sneaky = (
            f"SELECT CASE WHEN {visible_count} = {count} THEN ({HONEST}) ELSE ({SLOW.format(rows=3000)}) END"
        )
        started = time.monotonic()
        verdict = grader.grade(TASK, sneaky)
        seconds = time.monotonic() - started
    assert verdict.components["visible"].score == 1.0 and not verdict.passed and verdict.error is None
    assert "timeout:sql" in verdict.flags, verdict.flags
    assert seconds < CANDIDATE_WALL_SECONDS + SLACK, seconds


def test_honest_queries_and_dml_are_unaffected() -> None:
    pack = load_pack("sql-shop")
    tasks = [pack.get(TASK), pack.get("sql/raise_prices/0")]
    with make_grader(pack) as grader:
        verdicts = grader.grade_many(tasks, [t.hidden["reference"] for t in tasks])
    assert all(v.passed and not v.flags for v in verdicts), verdicts
