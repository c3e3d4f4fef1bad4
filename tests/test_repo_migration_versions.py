"""Migrations are checked from every earlier schema version the reference's migration passes through."""

from __future__ import annotations

from rlvr.core.types import Task
from rlvr.graders.repo.checks import earlier_version_checks
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import module_grader, repo_task

SCHEMA = '''import sqlite3

MIGRATIONS = [
    ["CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"],
    ["ALTER TABLE notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0"],
    ["ALTER TABLE notes ADD COLUMN tag TEXT NOT NULL DEFAULT ''"],
]


def migrate(connection: sqlite3.Connection) -> int:
    """Run every migration not yet applied (`PRAGMA user_version` counts those that ran)."""
    version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    for index in range(START, len(MIGRATIONS)):
        with connection:
            for statement in MIGRATIONS[index]:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {index + 1}")
    return int(connection.execute("PRAGMA user_version").fetchone()[0])
'''
BASE = SCHEMA.replace("START", "0")  # ignores the version: a second run fails
REFERENCE = SCHEMA.replace("START", "version")
# handles a fresh and an up-to-date database, but skips the steps between from an intermediate one
WRONG = SCHEMA.replace("START", "0 if version == 0 else len(MIGRATIONS)")
SCENARIOS = [
    {
        "kind": "sqlite",
        "target": "notes.schema:migrate",
        "seed_sql": [],
        "queries": ["PRAGMA user_version", "SELECT name FROM pragma_table_info('notes') ORDER BY cid"],
    }
]


def _task() -> Task:
    states = {
        name: {"notes/__init__.py": "", "notes/schema.py": text}
        for name, text in (("base", BASE), ("reference", REFERENCE))
    }
    return repo_task(
        "notes-migrate",
        "migrate fails on a database it already migrated: it must run only the migrations not yet applied.",
        states,
        SCENARIOS,
    )


TASK = _task()


grader = module_grader(TASK, "notes")


def _reward(grader: RepoGrader, text: str) -> float:
    return grader.grade_state(TASK, {**TASK.hidden["reference"], "notes/schema.py": text}).reward


def test_the_reference_trace_is_cut_at_each_version_before_the_last() -> None:
    trace = ["BEGIN ", "CREATE TABLE t (a)", "PRAGMA user_version = 1", "COMMIT", "ALTER TABLE t ADD b"]
    trace += ["PRAGMA user_version = 2"]
    checks = earlier_version_checks(SCENARIOS[0], trace)
    assert [c["seed_sql"] for c in checks] == [["CREATE TABLE t (a)", "PRAGMA user_version = 1"]]


def test_a_migration_that_skips_intermediate_versions_fails(grader: RepoGrader) -> None:
    derived = [s.get("derived") for s in grader.checks(TASK).scenarios]
    assert derived.count("migration-earlier") == 2  # from version 1 and from version 2
    assert _reward(grader, REFERENCE) == 1.0
    assert _reward(grader, WRONG) < 1.0
    assert _reward(grader, BASE) < 1.0
