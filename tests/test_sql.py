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
    tasks = [t for t in pack.tasks() if not t.meta.get("procedural")]  # the original 30; all: the slow test
    assert len(tasks) == 30
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


# ---------------------------------------------------------------- boundaries, whole-database DML, stored data


def test_comparisons_are_found_in_the_reference() -> None:
    from rlvr.graders.sql.variants import comparisons

    found = comparisons("SELECT a FROM t WHERE t.score >= 4 AND 'x' = name AND p BETWEEN 1.5 AND 3")
    assert found == [("score", 4), ("name", "x"), ("p", 1.5), ("p", 3)]
    assert comparisons("SELECT c.name FROM c JOIN o ON o.cid = c.id") == []


@pytest.mark.parametrize(
    ("reference", "off_by_one"),
    [
        ("SELECT name FROM t WHERE score > 4", "SELECT name FROM t WHERE score >= 4"),
        ("SELECT name FROM t WHERE score < 6", "SELECT name FROM t WHERE score <= 6"),
        ("SELECT name FROM t WHERE score <= 7", "SELECT name FROM t WHERE score < 7"),
        ("SELECT name FROM t WHERE score = 5", "SELECT name FROM t WHERE score >= 5 AND score < 7"),
        ("SELECT COUNT(*) FROM t WHERE score > 4", "SELECT COUNT(name) FROM t WHERE score > 4"),
        ("SELECT name FROM t WHERE name = 'b'", "SELECT name FROM t WHERE name LIKE 'b'"),
    ],
)
def test_boundary_variants_catch_off_by_one_comparisons(reference: str, off_by_one: str) -> None:
    schema = "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INTEGER);"
    rows = {"t": [[1, "a", 5], [2, "b", 9], [3, "c", 1], [4, "d", 8]]}
    pack = StaticPack(
        "b", [Task("b", "p", "sql", hidden={"schema": schema, "rows": rows, "reference": reference})]
    )
    pack.family = "sql"
    grader = SQLGrader(pack)
    assert grader.grade("b", reference).passed
    verdict = grader.grade("b", off_by_one)
    assert verdict.components["visible"].score == 1.0 and not verdict.passed and "hidden" in verdict.gates


TWO_TABLES = "CREATE TABLE t (id INTEGER PRIMARY KEY, score INTEGER);\nCREATE TABLE audit (id INTEGER PRIMARY KEY, note TEXT);"
TWO_ROWS = {"t": [[1, 5], [2, 9]], "audit": [[1, "keep"], [2, "me"]]}


@pytest.fixture(scope="module")
def dml_grader() -> SQLGrader:
    hidden = {
        "schema": TWO_TABLES,
        "rows": TWO_ROWS,
        "reference": "UPDATE t SET score = score + 1",
        "kind": "dml",
    }
    checked = {**hidden, "check": ["SELECT sum(score) FROM t"]}
    tasks = [Task("bump", "p", "sql", hidden=hidden), Task("bump_checked", "p", "sql", hidden=checked)]
    return SQLGrader(StaticPack("d", tasks, family="sql"))


@pytest.mark.parametrize("task_id", ["bump", "bump_checked"])
def test_dml_is_judged_on_every_table_and_other_tables_are_read_only(
    dml_grader: SQLGrader, task_id: str
) -> None:
    assert dml_grader.grade(task_id, "UPDATE t SET score = 1 + score;").passed
    for extra in [
        "DELETE FROM audit WHERE id = 2",
        "UPDATE audit SET note = 'x'",
        "INSERT INTO audit VALUES (9, 'x')",
    ]:
        verdict = dml_grader.grade(task_id, f"UPDATE t SET score = score + 1; {extra};")
        assert not verdict.passed and verdict.error is None
        assert {"sql_denied", "unauthorized_side_effect"} <= set(verdict.flags)
    extra_row = dml_grader.grade(task_id, "UPDATE t SET score = score + 1; INSERT INTO t VALUES (99, 0);")
    assert not extra_row.passed and extra_row.error is None


@pytest.mark.parametrize(
    "hostile",
    [
        "UPDATE t SET score = CAST(x'ff' AS TEXT) WHERE id = 1",
        "UPDATE t SET score = CAST(x'c328' AS TEXT)",
        "INSERT INTO t SELECT 100 + value, zeroblob(90000) FROM generate_series(1, 400)",
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 300) "
        "INSERT INTO t SELECT 100 + i, zeroblob(99000) FROM r",
    ],
)
def test_stored_data_never_makes_the_trusted_check_raise(dml_grader: SQLGrader, hostile: str) -> None:
    verdict = dml_grader.grade("bump", f"UPDATE t SET score = score + 1; {hostile};")
    assert verdict.error is None and not verdict.passed and verdict.reward < 0.5


# ---------------------------------------------------------------- the procedural generator


def test_procedural_sql_pack_has_enough_distinct_tasks_and_held_out_templates() -> None:
    from rlvr.task_packs import sql_templates

    tasks = [t for t in load_pack("sql-shop").tasks() if t.meta.get("procedural")]
    train = [t for t in tasks if t.split == "train"]
    test = [t for t in tasks if t.split == "test"]
    assert len({t.prompt for t in train}) >= 1000
    assert {t.meta["template"] for t in test} == set(sql_templates.HELD_OUT_TEMPLATES)
    assert {t.meta["domain"] for t in tasks} == {d.key for d in sql_templates.DOMAINS}
    assert {t.difficulty for t in tasks} == {1, 2, 3, 4}
    assert all(t.hidden["reference"] not in t.prompt for t in tasks)


def _sample(per_cell: int) -> list[Task]:
    cells: dict[tuple[str, str], list[Task]] = {}
    for t in load_pack("sql-shop").tasks():
        if t.meta.get("procedural"):
            cells.setdefault((t.meta["template"], t.meta["domain"]), []).append(t)
    return [t for tasks in cells.values() for t in tasks[:per_cell]]


def test_procedural_references_pass_and_their_boundary_mutants_fail() -> None:
    import re

    flip = {"<=": "<", ">=": ">", "<": "<=", ">": ">="}
    tasks = _sample(2)
    grader = SQLGrader(load_pack("sql-shop"))
    assert all(grader.grade(t.id, t.hidden["reference"]).passed for t in tasks)
    mutants = 0
    for t in tasks:
        reference = t.hidden["reference"]
        for match in re.finditer(r"<=|>=|<|>", reference):
            mutants += 1
            mutant = reference[: match.start()] + flip[match.group()] + reference[match.end() :]
            assert not grader.grade(t.id, mutant).passed, (t.id, mutant)
    assert mutants >= 30


@pytest.mark.slow
def test_every_procedural_reference_passes() -> None:
    pack = load_pack("sql-shop")
    tasks = pack.tasks()
    verdicts = SQLGrader(pack).grade_many([t.id for t in tasks], [t.hidden["reference"] for t in tasks])
    assert [t.id for t, v in zip(tasks, verdicts, strict=True) if not v.passed] == []


def test_numbers_equal_to_nine_digits_match_whole_or_not() -> None:
    """A product rounding to a whole number (50 * 1.1 = 55.00000000000001) equals 55.0 in every mode: the
    canonical form rounds first and only then decides int vs float (before, unordered/DML comparison saw
    '55.0' against '55' and failed a correct `price + price * 10 / 100.0`)."""
    from rlvr.graders.sql.execute import Result, results_match

    for ordered in (False, True):
        assert results_match(Result(1, [(50 * 1.1,)]), Result(1, [(55.0,)]), ordered=ordered)[0]
        assert results_match(Result(1, [(55,)]), Result(1, [(54.99999999999999,)]), ordered=ordered)[0]
        assert not results_match(Result(1, [(55.001,)]), Result(1, [(55.0,)]), ordered=ordered)[0]
    bump = Task(
        "tenth",
        "p",
        "sql",
        hidden={
            "schema": SCHEMA,
            "rows": {"t": [[1, "a", 50.0]]},
            "reference": "UPDATE t SET score = score * 1.1",
            "kind": "dml",
        },
    )
    verdict = SQLGrader(StaticPack("t", [bump], family="sql")).grade(
        "tenth", "```sql\nUPDATE t SET score = score + score * 10 / 100.0;\n```"
    )
    assert verdict.passed, verdict.feedback


def test_a_group_without_child_rows_separates_inner_from_left_join() -> None:
    """Hidden data always holds a category with products but no orders, so an answer that keeps
    categories without orders (LEFT JOIN from the parent) fails where the task asks for categories with
    orders; the right INNER JOIN / EXISTS answers still pass."""
    schema = (
        "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL);"
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products(id),"
        " quantity INTEGER NOT NULL);"
    )
    rows = {
        "products": [[1, "pen", "office"], [2, "mug", "kitchen"], [3, "pad", "office"], [4, "pot", "garden"]],
        "orders": [[1, 1, 2], [2, 2, 1], [3, 4, 5], [4, 3, 1], [5, 2, 3]],
    }
    reference = "SELECT p.category, SUM(o.quantity) FROM orders o JOIN products p ON p.id = o.product_id GROUP BY p.category"
    totals = Task(
        "totals", "p", "sql", hidden={"schema": schema, "rows": rows, "reference": reference, "variants": 0}
    )
    grader = SQLGrader(StaticPack("t", [totals], family="sql"))
    left = "SELECT p.category, SUM(o.quantity) FROM products p LEFT JOIN orders o ON o.product_id = p.id GROUP BY 1"
    exists = (
        "SELECT category, (SELECT SUM(quantity) FROM orders JOIN products x ON x.id = orders.product_id"
        " WHERE x.category = p.category) FROM (SELECT DISTINCT category FROM products) p"
        " WHERE EXISTS (SELECT 1 FROM orders o JOIN products y ON y.id = o.product_id WHERE y.category = p.category)"
    )
    assert not grader.grade("totals", f"```sql\n{left}\n```").passed
    assert grader.grade("totals", f"```sql\n{exists}\n```").passed
    assert grader.grade("totals", f"```sql\n{reference}\n```").passed


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM t WHERE score > 4; -- done",
        "SELECT name FROM t WHERE score > 4;\n-- trailing; comment\n",
        "SELECT name FROM t WHERE score > 4; /* a; b */",
        "-- first; line\nSELECT name FROM t WHERE score > 4;",
    ],
)
def test_comments_around_the_one_statement_are_not_statements(grader: SQLGrader, sql: str) -> None:
    """sqlite runs a query followed by a comment after its ';' unchanged; so does the grader (before, the
    trailing comment counted as a second statement and a correct query failed)."""
    assert len(split_statements(sql)) == 1
    verdict = grader.grade("high", f"```sql\n{sql}\n```")
    assert verdict.passed, verdict.feedback


def test_comment_only_pieces_never_hide_a_second_statement() -> None:
    assert len(split_statements("SELECT 1; -- x\nSELECT 2;")) == 2
    assert len(split_statements("SELECT ';--'; SELECT 2")) == 2
    assert split_statements("SELECT '-- not a comment;' AS s") == ["SELECT '-- not a comment;' AS s;"]
    assert split_statements("-- only a comment;") == []


def test_count_in_group_counts_differ_across_databases_so_a_constant_fails() -> None:
    from rlvr.graders.sql.grader import prepare

    tasks = [t for t in load_pack("sql-shop").tasks() if t.meta.get("template") == "count_in_group"]
    grader = SQLGrader(StaticPack("count", tasks, family="sql"))
    try:
        for task in tasks:
            counts = [result.rows[0][0] for result in prepare(task).expected]
            assert counts[0] != 1 and 0 in counts and len(set(counts)) >= 3, (task.id, counts)
            constant = grader.grade(task.id, "```sql\nSELECT 1\n```")
            assert constant.reward < 0.2, (task.id, constant.reward)
    finally:
        grader.close()
