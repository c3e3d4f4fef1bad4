import sqlite3

from kvstore.schema import MIGRATIONS, migrate, schema_version
from kvstore.store import Store, run_script


def test_migrate_is_idempotent() -> None:
    connection = sqlite3.connect(":memory:")
    assert migrate(connection) == len(MIGRATIONS)
    assert migrate(connection) == len(MIGRATIONS)
    assert schema_version(connection) == len(MIGRATIONS)


def test_store() -> None:
    store = Store(sqlite3.connect(":memory:"))
    store.put("a", "1", now=5)
    store.put("a", "2", now=6)
    assert store.get("a") == "2"
    assert store.history("a") == [("1", 5), ("2", 6)]
    assert store.delete("a") is True
    assert store.get("a") is None


def test_script() -> None:
    assert run_script([["put", "x", "1", "0"], ["keys", "x"], ["delete", "y"]]) == [None, ["x"], False]
