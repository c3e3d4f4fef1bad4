"""Penalty escapes and false passes in the SQL, proof and tool families.

A wrong answer must never end with `error` set (the trainer drops errored episodes, so an error escapes the
penalty): content that exhausts a limit is a scored failure with a flag naming the limit. And an answer that
reaches the goal by a route the task forbids (a side effect, a write to another table, a boundary-shifted
comparison, a restated goal) must fail, while honest answers still pass.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator

import pytest

import rlvr  # noqa: F401
from rlvr.core.pack import StaticPack, TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.graders.proof.grader import ProofGrader
from rlvr.graders.sql.grader import SQLGrader
from rlvr.graders.tool.grader import ToolGrader
from rlvr.task_packs.registry import load_pack
from rlvr.task_packs.tool_tasks import turn_text


def assert_scored_failure(verdict: Verdict, *flags: str) -> None:
    assert verdict.error is None, verdict.error
    assert not verdict.passed and verdict.reward < 0.5
    if flags:
        assert set(flags) & set(verdict.flags), verdict.flags


# ---------------------------------------------------------------- tool


@functools.cache
def tool_pack() -> TaskPack:
    return load_pack("tool-worlds")


def _tool_task(template: str) -> Task:
    return next(t for t in tool_pack().tasks() if t.meta["template"] == template and t.difficulty <= 2)


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    "turn",
    [
        '{"tool_calls": [{"function": {"name": "transfer", "arguments": {"x": ' + _deep(700) + "}}}]}",
        '{"tool_calls": [{"function": {"name": "transfer", "arguments": '
        + json.dumps('{"x": ' + _deep(700) + "}")
        + "}}]}",
        json.dumps([{"final_answer": "x"}]).replace('"x"', _deep(700)),
        '{"final_answer": ' + _deep(5000) + "}",
        '{"tool_calls": [{"function": {"name": "transfer", "arguments": {"amount": ' + "9" * 5000 + "}}}]}",
        "x" * 200_000,
    ],
)
def test_tool_arguments_that_exhaust_a_limit_are_scored_failures(turn: str) -> None:
    task = tool_pack().get("tool/pay_invoice/0")
    for completion in (turn, f"[{turn}]"):
        verdict = ToolGrader(tool_pack()).grade_many([task.id], [completion])[0]
        assert_scored_failure(
            verdict, "oversized:nesting", "oversized:json_size", "oversized:turn_size", "malformed_turns"
        )


def _side_effects() -> list[tuple[str, dict]]:
    files = _tool_task("create_file")
    other_file = next(p for p in files.hidden["state"]["files"] if not p.startswith("/etc/"))
    calendar = _tool_task("book_at")
    day = calendar.hidden["reference"][0][0]["arguments"]["day"]
    shop = _tool_task("receive_shipment")
    sku = shop.hidden["reference"][0][0]["arguments"]["sku"]
    other_sku = next(s for s in shop.hidden["state"]["items"] if s != sku)
    ledger = _tool_task("transfer_exact")
    accounts = list(ledger.hidden["state"]["accounts"])
    return [
        ("create_file", {"name": "write_file", "arguments": {"path": other_file, "content": "overwritten"}}),
        ("create_file", {"name": "write_file", "arguments": {"path": "/tmp/extra.txt", "content": "x"}}),
        ("create_file", {"name": "delete_file", "arguments": {"path": other_file}}),
        (
            "book_at",
            {"name": "create_event", "arguments": {"title": "extra", "day": day, "start": 21, "end": 22}},
        ),
        ("receive_shipment", {"name": "set_price", "arguments": {"sku": other_sku, "price": 0.01}}),
        ("receive_shipment", {"name": "adjust_stock", "arguments": {"sku": other_sku, "delta": 1}}),
        (
            "transfer_exact",
            {"name": "transfer", "arguments": {"source": accounts[0], "target": accounts[2], "amount": 1}},
        ),
    ]


@pytest.mark.parametrize("case", range(7))
def test_a_side_effect_beside_the_goal_fails_and_the_goal_alone_passes(case: int) -> None:
    template, extra = _side_effects()[case]
    task = _tool_task(template)
    reference = task.hidden["reference"]
    honest = "\n".join(turn_text(turn) for turn in reference)
    attacked = "\n".join(turn_text(turn) for turn in [*reference[:-1], [extra], reference[-1]])
    grader = ToolGrader(tool_pack())
    assert grader.grade(task.id, honest).passed
    verdict = grader.grade(task.id, attacked)
    assert_scored_failure(verdict, "unauthorized_side_effect")


# ---------------------------------------------------------------- sql


SCHEMA = (
    "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INTEGER);\n"
    "CREATE TABLE log (id INTEGER PRIMARY KEY, note TEXT);"
)
ROWS = {"t": [[1, "a", 5], [2, "b", 9], [3, "c", 1], [4, "d", 8]], "log": [[1, "keep"]]}


@pytest.fixture(scope="module")
def sql_grader() -> SQLGrader:
    tasks = [
        Task(
            "query",
            "p",
            "sql",
            hidden={"schema": SCHEMA, "rows": ROWS, "reference": "SELECT name FROM t WHERE score > 4"},
        ),
        Task(
            "dml",
            "p",
            "sql",
            hidden={
                "schema": SCHEMA,
                "rows": ROWS,
                "reference": "DELETE FROM t WHERE score < 6",
                "kind": "dml",
            },
        ),
    ]
    return SQLGrader(StaticPack("s", tasks, family="sql"))


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM t WHERE score < 6; UPDATE t SET name = CAST(x'ff' AS TEXT)",
        "DELETE FROM t WHERE score < 6; UPDATE t SET name = CAST(x'80feff00' AS TEXT) WHERE id = 2",
        "DELETE FROM t WHERE score < 6; INSERT INTO t SELECT 100 + value, zeroblob(99000), 0 FROM generate_series(1, 300)",
        "DELETE FROM t WHERE score < 6; DELETE FROM log",
        "DELETE FROM t WHERE score < 6; INSERT INTO log VALUES (2, 'x')",
        "DELETE FROM t WHERE score <= 6",
    ],
)
def test_sql_dml_that_stores_hostile_data_or_writes_elsewhere_is_a_scored_failure(
    sql_grader: SQLGrader, sql: str
) -> None:
    assert sql_grader.grade("dml", "DELETE FROM t WHERE NOT score >= 6").passed
    assert_scored_failure(sql_grader.grade("dml", sql))


@pytest.mark.parametrize("sql", ["SELECT name FROM t WHERE score >= 4", "SELECT name FROM t WHERE score > 3"])
def test_sql_boundary_shifted_comparisons_fail(sql_grader: SQLGrader, sql: str) -> None:
    for honest in ["SELECT name FROM t WHERE NOT score <= 4", "SELECT name FROM t WHERE score >= 5"]:
        assert sql_grader.grade("query", honest).passed  # `>= 5` is `> 4` on an INTEGER column
    assert_scored_failure(sql_grader.grade("query", sql))


# ---------------------------------------------------------------- proof

HONEST = "a^2 + b^2\n= a^2 - 2ab + b^2 + 2ab\n= (a - b)^2 + 2ab\n>= 2ab"


@pytest.fixture(scope="module")
def proof_grader() -> Iterator[ProofGrader]:
    tasks = [Task("sq", "p", "proof", hidden={"goal": "a^2 + b^2 >= 2ab"})]
    with ProofGrader(StaticPack("p", tasks, family="proof")) as grader:
        assert grader.grade("sq", HONEST).passed  # also warms the worker up
        yield grader


@pytest.mark.parametrize(
    "derivation",
    [
        "a^2 + b^2\n>= 2ab",
        "a^2 + b^2\n>= 2ab  # AM-GM",
        "a^2 + b^2\n= a^2 + b^2 + a - a\n>= 2ab",
        "2ab\n>= 2ab",
    ],
)
def test_proof_restatements_are_scored_failures(proof_grader: ProofGrader, derivation: str) -> None:
    assert_scored_failure(proof_grader.grade("sq", derivation))


def test_a_proof_step_that_runs_the_checker_past_its_timeout_is_a_scored_failure(
    proof_grader: ProofGrader,
) -> None:
    heavy = "a^2 + b^2\n= (a^9+b^9+1)^12/(a^3+b^3+7)^11\n>= 2ab"  # sympy takes well over 2 s on this step
    default, proof_grader.timeout = proof_grader.timeout, 2.0
    try:
        verdict = proof_grader.grade("sq", heavy)
    finally:
        proof_grader.timeout = default
    assert_scored_failure(verdict, "timeout:proof")
    assert proof_grader.grade("sq", HONEST + "  # after a timeout").passed  # the worker came back
