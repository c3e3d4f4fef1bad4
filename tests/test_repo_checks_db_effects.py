"""What a call leaves in a sqlite database it opens itself is part of its outcome (issue 31): a wrong
fix that writes another status than the issue text says, where no return value shows the status,
passed before; a fix written otherwise that leaves the same rows still passes.
"""

from __future__ import annotations

from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

REFERENCE = '''"""Items in a sqlite store; closing an item marks it 'closed'."""

import sqlite3


class Store:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        connection.execute(
            "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, status TEXT NOT NULL DEFAULT 'open')"
        )

    def add(self) -> int:
        cursor = self.connection.execute("INSERT INTO items DEFAULT VALUES")
        return int(cursor.lastrowid or 0)

    def close_item(self, item: int) -> bool:
        """Mark an open item 'closed'; True if there was one."""
        cursor = self.connection.execute(
            "UPDATE items SET status = 'closed' WHERE id = ? AND status = 'open'", (item,)
        )
        return cursor.rowcount > 0


def run(commands: list[str]) -> list[object]:
    """Apply "add" and "close <id>" to a fresh in-memory store; each command's result."""
    store = Store(sqlite3.connect(":memory:"))
    out: list[object] = []
    for command in commands:
        verb, _, rest = command.partition(" ")
        out.append(store.add() if verb == "add" else store.close_item(int(rest)))
    return out
'''
CLOSE = """        cursor = self.connection.execute(
            "UPDATE items SET status = 'closed' WHERE id = ? AND status = 'open'", (item,)
        )
        return cursor.rowcount > 0
"""
BASE = REFERENCE.replace(CLOSE, '        raise NotImplementedError("close_item is not implemented yet")\n')
TASK = one_module_task(
    "store-effects",
    "Feature request: `shop.store.Store.close_item` raises NotImplementedError; implement it as its"
    " docstring says (closed items are marked 'closed').",
    "shop/store.py",
    BASE,
    REFERENCE,
    [{"kind": "call", "target": "shop.store:run", "args": [["add", "add", "close 1", "close 1", "close 9"]]}],
)

grader = module_grader(TASK, "store")


def test_reference_passes(grader: RepoGrader) -> None:
    assert_full_reward(grader, TASK, TASK.hidden["reference"])


def test_another_status_written_fails(grader: RepoGrader) -> None:
    wrong = edited_reference(TASK, "shop/store.py", ("SET status = 'closed'", "SET status = 'done'"))
    assert_fails(grader, TASK, wrong, "another status written")


def test_same_rows_written_otherwise_pass(grader: RepoGrader) -> None:
    right = edited_reference(
        TASK,
        "shop/store.py",
        (
            CLOSE,
            "        found = self.connection.execute(\n"
            '            "SELECT 1 FROM items WHERE id = ? AND status = ?", (item, "open")\n'
            "        ).fetchone()\n"
            "        if found is None:\n            return False\n"
            '        self.connection.execute("UPDATE items SET status = ? WHERE id = ?", ("closed", item))\n'
            "        return True\n",
        ),
    )
    assert_full_reward(grader, TASK, right)
