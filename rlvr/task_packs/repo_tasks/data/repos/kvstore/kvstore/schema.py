"""Schema migrations: an ordered list of SQL scripts; `PRAGMA user_version` records how many ran."""

import sqlite3

MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE entries (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
    [
        "ALTER TABLE entries ADD COLUMN updated INTEGER NOT NULL DEFAULT 0",
        "CREATE TABLE history (key TEXT NOT NULL, value TEXT NOT NULL, at INTEGER NOT NULL)",
    ],
]


def schema_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection) -> int:
    """Run every migration not yet applied, in order, each in its own transaction; returns the new version."""
    version = schema_version(connection)
    for index in range(version, len(MIGRATIONS)):
        with connection:
            for statement in MIGRATIONS[index]:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {index + 1}")
    return schema_version(connection)
