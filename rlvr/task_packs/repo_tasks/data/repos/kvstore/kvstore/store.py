"""The store: put/get/delete with a history of every value written."""

import sqlite3

from kvstore.schema import migrate


class Store:
    """Keys and values are text; `now` is an explicit integer timestamp (deterministic tests)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        migrate(connection)

    def put(self, key: str, value: str, now: int) -> None:
        with self.connection:
            self.connection.execute(
                "INSERT INTO entries (key, value, updated) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
                (key, value, now),
            )
            self.connection.execute("INSERT INTO history (key, value, at) VALUES (?, ?, ?)", (key, value, now))

    def get(self, key: str) -> str | None:
        row = self.connection.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def delete(self, key: str) -> bool:
        """Remove a key; True if it existed."""
        with self.connection:
            cursor = self.connection.execute("DELETE FROM entries WHERE key = ?", (key,))
        return cursor.rowcount > 0

    def keys(self, prefix: str = "") -> list[str]:
        """Keys starting with `prefix`, sorted."""
        rows = self.connection.execute("SELECT key FROM entries ORDER BY key").fetchall()
        return [str(row[0]) for row in rows if str(row[0]).startswith(prefix)]

    def history(self, key: str) -> list[tuple[str, int]]:
        """Every (value, time) written for `key`, oldest first."""
        rows = self.connection.execute("SELECT value, at FROM history WHERE key = ? ORDER BY at, rowid", (key,))
        return [(str(value), int(at)) for value, at in rows.fetchall()]


def open_memory_store() -> Store:
    return Store(sqlite3.connect(":memory:"))


def run_script(commands: list[list[str]]) -> list[object]:
    """Apply commands to a fresh in-memory store: ["put", k, v, t], ["get", k], ["delete", k],
    ["keys", prefix], ["history", k]; returns each command's result."""
    store = open_memory_store()
    results: list[object] = []
    for command in commands:
        verb, args = command[0], command[1:]
        if verb == "put":
            store.put(args[0], args[1], int(args[2]))
            results.append(None)
        elif verb == "get":
            results.append(store.get(args[0]))
        elif verb == "delete":
            results.append(store.delete(args[0]))
        elif verb == "keys":
            results.append(store.keys(args[0] if args else ""))
        elif verb == "history":
            results.append(store.history(args[0]))
        else:
            raise ValueError(f"unknown command {verb}")
    return results
