"""Schema migrations: an ordered list of SQL scripts; `PRAGMA user_version` records how many ran."""

import sqlite3

MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE rooms (name TEXT PRIMARY KEY, rate INTEGER NOT NULL)",
        "CREATE TABLE stays (id INTEGER PRIMARY KEY AUTOINCREMENT, room TEXT NOT NULL, guest TEXT NOT NULL, "
        "start INTEGER NOT NULL, end INTEGER NOT NULL)",
    ],
    [
        "ALTER TABLE stays ADD COLUMN status TEXT NOT NULL DEFAULT 'active'",
        "CREATE INDEX stays_room ON stays (room, start)",
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
