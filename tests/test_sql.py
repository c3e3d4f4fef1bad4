"""SQLGrader: visible + hidden databases, order sensitivity, DML state tasks, the sqlite fences, the
sql-shop pack, directory SQL packs, and rlvr/SQL-v0."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import rlvr  # noqa: F401
from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.sql.execute import SQLRunError, build_database, run_query, run_trusted, split_statements
from rlvr.graders.sql.grader import SQLGrader, extract_sql
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack

EXAMPLE = Path(__file__).parents[1] / "examples" / "packs" / "sql-library"
SCHEMA = "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INTEGER);"
ROWS = {"t": [[1, "a", 5], [2, "b", 9], [3, "c", 1], [4, "d", 7]]}


def task(task_id: str, reference: str, **extra: object) -> Task:
    return Task(task_id, "p", "sql", hidden={"schema": SCHEMA, "rows": ROWS, "reference": reference, **extra})


@pytest.fixture(scope="module")
def grader() -> SQLGrader:
    return SQLGrader(
        StaticPack(
            "t",
            [
                task("high", "SELECT name FROM t WHERE score > 4"),
                task("sorted", "SELECT name FROM t ORDER BY score DESC", ordered=True),
                task("bump", "UPDATE t SET score = score + 1 WHERE score < 6", kind="dml"),
            ],
            family="sql",
        )
    )


def test_equivalent_queries_pass_in_any_row_order(grader: SQLGrader) -> None:
    for query in [
        "SELECT name FROM t WHERE score > 4",
        "SELECT name FROM t WHERE NOT score <= 4 ORDER BY name DESC",
    ]:
        verdict = grader.grade("high", f"```sql\n{query}\n```")
        assert verdict.passed and verdict.reward == 1.0


def test_hard_coded_results_fail_the_hidden_variants(grader: SQLGrader) -> None:
    verdict = grader.grade("high", "SELECT 'a' UNION ALL SELECT 'b' UNION ALL SELECT 'd'")
    assert verdict.components["visible"].score == 1.0
    assert not verdict.passed and "hidden" in verdict.gates and verdict.reward < 0.5


def test_order_matters_only_when_asked(grader: SQLGrader) -> None:
    assert grader.grade("sorted", "SELECT name FROM t ORDER BY score DESC").passed
    assert not grader.grade("sorted", "SELECT name FROM t ORDER BY score").passed


def test_wrong_column_count_fails(grader: SQLGrader) -> None:
    verdict = grader.grade("high", "SELECT name, score FROM t WHERE score > 4")
    assert not verdict.passed and "column" in verdict.feedback


def test_dml_tasks_compare_the_resulting_state(grader: SQLGrader) -> None:
    assert grader.grade("bump", "UPDATE t SET score = score + 1 WHERE NOT score >= 6;").passed
    assert not grader.grade("bump", "UPDATE t SET score = score + 1").passed
    denied = grader.grade("bump", "DROP TABLE t")
    assert not denied.passed and "sql_denied" in denied.flags


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("ATTACH DATABASE ':memory:' AS other", "denied"),
        ("PRAGMA query_only = OFF", "denied"),
        ("DELETE FROM t", "denied"),
        ("CREATE TABLE x (a)", "denied"),
        ("SELECT load_extension('libc')", "denied"),
        ("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r", "budget"),
        ("SELECT randomblob(100000000)", "error"),
        (  # a sort of 1 GB of blobs: sqlite's heap limit stops it, no disk or RAM blow-up
            "WITH RECURSIVE r(i, s) AS (SELECT 1, zeroblob(50000) UNION ALL SELECT i + 1, zeroblob(50000) FROM r "
            "WHERE i < 20000) SELECT s FROM r ORDER BY random()",
            "error",
        ),
        (
            "WITH RECURSIVE r(i, s) AS (SELECT 1, zeroblob(50000) UNION ALL SELECT i + 1, zeroblob(50000) FROM r "
            "WHERE i < 5000) SELECT s FROM r",
            "rows",
        ),
        ("SELECT 1; SELECT 2", "syntax"),
        ("SELEC name FROM t", "syntax"),
        ("SELECT '\x00'", "syntax"),
        ("SELECT '\ud800'", "syntax"),
    ],
)
def test_fences_turn_hostile_sql_into_verdicts(grader: SQLGrader, sql: str, kind: str) -> None:
    database = build_database(SCHEMA, ROWS)
    with pytest.raises(SQLRunError) as caught:
        run_query(database, sql)
    assert caught.value.kind == kind
    verdict = grader.grade("high", sql)
    assert not verdict.passed and verdict.reward == 0.0 and verdict.gates == ["executes"]


def test_a_query_never_changes_the_database() -> None:
    database = build_database(SCHEMA, ROWS)
    with pytest.raises(SQLRunError):
        run_query(database, "UPDATE t SET score = 0")
    assert run_trusted(database, "SELECT sum(score) FROM t").rows == [(22,)]


def test_extract_and_split() -> None:
    assert extract_sql("text\n```sql\nSELECT 1\n```\nmore ```\nSELECT 2\n```") == "SELECT 1"
    assert extract_sql("SELECT 3") == "SELECT 3"
    assert split_statements("SELECT ';'; SELECT 2;") == ["SELECT ';';", "SELECT 2;"]


def test_sql_shop_references_pass_and_variants_are_deterministic() -> None:
    pack = load_pack("sql-shop")
    tasks = pack.tasks()
    assert {t.split for t in tasks} == {"train", "test"} and {t.meta["kind"] for t in tasks} == {
        "query",
        "dml",
    }
    first, second = SQLGrader(pack), SQLGrader(pack)
    completions = [f"```sql\n{t.hidden['reference']}\n```" for t in tasks]
    assert all(v.passed for v in first.grade_many([t.id for t in tasks], completions))
    hard_coded = "SELECT 3"
    one, two = first.grade(tasks[0].id, hard_coded).to_json(), second.grade(tasks[0].id, hard_coded).to_json()
    assert {**one, "timings": {}} == {**two, "timings": {}}  # same variants in a fresh grader


def test_broken_task_is_flagged_not_raised() -> None:
    broken = SQLGrader(StaticPack("b", [task("x", "SELECT nope FROM t")], family="sql"))
    verdict = broken.grade("x", "SELECT 1")
    assert verdict.error and "could not be prepared" in verdict.error


def test_directory_pack_validates_and_grades() -> None:
    assert validate_directory(EXAMPLE) == []
    pack = load_pack(str(EXAMPLE))
    verdicts = SQLGrader(pack).grade_many(
        [t.id for t in pack.tasks()], [t.hidden["reference"] for t in pack.tasks()]
    )
    assert all(v.passed for v in verdicts)


def test_directory_pack_errors_are_explained(tmp_path: Path) -> None:
    (tmp_path / "pack.toml").write_text('name = "bad"\nfamily = "sql"\n')
    lines = [
        {"id": "1", "prompt": "p", "schema": "CREATE TABLE", "reference": "SELECT 1"},
        {"id": "2", "prompt": "p", "schema": SCHEMA, "reference": "SELECT nope FROM t"},
        {"id": "3", "prompt": "p", "schema": SCHEMA, "reference": "SELECT 1", "kind": "merge", "rows": [1]},
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    problems = [str(p) for p in validate_directory(tmp_path)]
    assert any(":1: schema: does not run in SQLite" in p for p in problems)
    assert any(":2: reference: fails on the visible database" in p for p in problems)
    assert any(":3: kind:" in p for p in problems) and any(":3: rows:" in p for p in problems)


def test_sql_env_step() -> None:
    env = gym.make("rlvr/SQL-v0")
    observation, _ = env.reset(options={"task_id": "sql/count_in_city/0"})
    assert "CREATE TABLE customers" in observation and "SELECT COUNT" not in observation
    reference = env.unwrapped.task.hidden["reference"]
    _, reward, terminated, _, info = env.step(f"```sql\n{reference}\n```")
    assert terminated and reward == 1.0 and info["verdict"]["components"]["hidden"] == 1.0
    env.close()
