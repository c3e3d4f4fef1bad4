"""Hidden database variants: same schema, different rows, so a query must be right, not memorised.

Each variant resamples every column from the visible column's own values (so filters on real names, cities
and categories still select something), perturbs numbers, and changes table sizes. Integer primary keys stay
a dense 1..n range that covers the visible ids, so foreign keys keep pointing at real rows. Seeded: the
variants of a task are the same on every run.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from rlvr.graders.sql.execute import table_names


def _columns(connection: sqlite3.Connection, table: str) -> list[tuple[str, str, bool]]:
    """(name, declared type, is the integer primary key) for each column."""
    info = connection.execute(f'PRAGMA table_info("{table}")').fetchall()
    return [(row[1], str(row[2]).upper(), bool(row[5]) and "INT" in str(row[2]).upper()) for row in info]


def _perturb(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or rng.random() < 0.5:
        return value
    if isinstance(value, int):
        return max(0, value + rng.randint(-3, 3)) if value >= 0 else value + rng.randint(-3, 3)
    return round(value * rng.uniform(0.7, 1.3), 2)


def make_variant(
    visible_rows: dict[str, list[list[Any]]], schema: str, seed: int | str
) -> dict[str, list[list[Any]]]:
    rng = random.Random(seed)
    connection = sqlite3.connect(":memory:")
    try:
        connection.executescript(schema)
        tables = table_names(connection)
        variant: dict[str, list[list[Any]]] = {}
        for table in tables:
            columns = _columns(connection, table)
            original = visible_rows.get(table) or []
            if not original or not columns:
                variant[table] = [list(r) for r in original]
                continue
            has_key = any(is_key for _n, _t, is_key in columns)
            smallest = len(original) if has_key else max(1, len(original) // 2)  # keep visible ids valid
            size = max(2, rng.randint(smallest, len(original) * 2))
            pools = [[row[i] for row in original if i < len(row)] for i in range(len(columns))]
            rows = []
            for index in range(size):
                row = []
                for position, (_name, _type, is_key) in enumerate(columns):
                    if is_key:
                        row.append(index + 1)
                    else:
                        pool = pools[position]
                        row.append(_perturb(rng.choice(pool), rng) if pool else None)
                rows.append(row)
            variant[table] = rows
        return variant
    finally:
        connection.close()
