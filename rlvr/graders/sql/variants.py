"""Hidden database variants: same schema, different rows, so a query must be right, not memorised.

Each variant resamples every column from the visible column's own values (so filters on real names, cities
and categories still select something), perturbs numbers, and changes table sizes. Integer primary keys stay
a dense 1..n range that covers the visible ids, so foreign keys keep pointing at real rows. Seeded: the
variants of a task are the same on every run.
"""

from __future__ import annotations

import random
import re
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


# ---------------------------------------------------------------- boundary variants

_LITERAL = r"(-?\d+(?:\.\d+)?|'(?:[^']|'')*')"
_COLUMN = r"(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)"
_OPERATOR = r"(<=|>=|<>|!=|==|=|<|>)"
_COLUMN_FIRST = re.compile(rf"{_COLUMN}\s*{_OPERATOR}\s*{_LITERAL}")
_LITERAL_FIRST = re.compile(rf"{_LITERAL}\s*{_OPERATOR}\s*{_COLUMN}")
_BETWEEN = re.compile(rf"{_COLUMN}\s+(?:NOT\s+)?BETWEEN\s+{_LITERAL}\s+AND\s+{_LITERAL}", re.IGNORECASE)
MAX_BOUNDARY_ROWS = 200


def _literal(text: str) -> Any:
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    return float(text) if "." in text else int(text)


def comparisons(sql: str) -> list[tuple[str, Any]]:
    """(column, constant) for every comparison of a column with a literal in `sql` (BETWEEN gives two)."""
    found = [(column, _literal(value)) for column, _op, value in _COLUMN_FIRST.findall(sql)]
    found += [(column, _literal(value)) for value, _op, column in _LITERAL_FIRST.findall(sql)]
    for column, low, high in _BETWEEN.findall(sql):
        found += [(column, _literal(low)), (column, _literal(high))]
    return list(dict.fromkeys(found))


def _near(constant: Any, declared: str) -> list[Any]:
    """The constant itself and its neighbours in the column's type: c, c - 1, c + 1 (or +-0.01 for REAL)."""
    if isinstance(constant, str):
        return [
            constant,
            constant + " ",
            constant.lower() if constant != constant.lower() else constant.upper(),
        ]
    if "INT" in declared:
        return [int(constant), int(constant) - 1, int(constant) + 1]
    step = 0.01 if any(word in declared for word in ("REAL", "FLOA", "DOUB", "NUM", "DEC")) else 1
    return [constant, round(constant - step, 6), round(constant + step, 6)]


def boundary_variants(
    visible_rows: dict[str, list[list[Any]]], schema: str, reference: str
) -> list[dict[str, list[list[Any]]]]:
    """Hidden datasets that put the data on every comparison boundary of the reference: rows whose column
    equals the constant and its neighbours, ties (several rows on the constant), a duplicated row and NULLs.
    `<=` written for `<` (or an off-by-one constant) gives a different answer on them. Empty if the reference
    compares no column with a literal."""
    found = comparisons(reference)
    if not found:
        return []
    connection = sqlite3.connect(":memory:")
    try:
        connection.executescript(schema)
        layout = {table: _columns(connection, table) for table in table_names(connection)}
        not_null = {
            (table, row[1])
            for table in layout
            for row in connection.execute(f'PRAGMA table_info("{table}")').fetchall()
            if row[3]
        }
    finally:
        connection.close()
    on_values = {table: [list(r) for r in visible_rows.get(table) or []] for table in layout}
    with_extras = {table: [list(r) for r in rows] for table, rows in on_values.items()}
    for column, constant in found:
        for table, columns in layout.items():
            names = [name for name, _t, _k in columns]
            if column not in names or not on_values[table]:
                continue
            position = names.index(column)
            declared = columns[position][1]
            values = _near(constant, declared)
            values = [values[0], *values, values[0]]  # the constant twice: a tie on the boundary
            for index, value in enumerate(values):
                on_values[table][index % len(on_values[table])][position] = value
                with_extras[table][index % len(with_extras[table])][position] = value
            key = next((i for i, (_n, _t, is_key) in enumerate(columns) if is_key), None)
            template = list(with_extras[table][0])
            extras = [list(template)]  # a duplicate row
            if (table, column) not in not_null:
                extras.append([*template[:position], None, *template[position + 1 :]])
            for value in _near(constant, declared):  # rows on the boundary with NULL in every other column
                extras.append(
                    [
                        value
                        if i == position
                        else (None if i != key and (table, name) not in not_null else cell)
                        for i, ((name, _t, _k), cell) in enumerate(zip(columns, template, strict=True))
                    ]
                )
            for extra in extras:
                if key is not None:
                    extra[key] = 1 + max(int(r[key]) for r in with_extras[table] if isinstance(r[key], int))
                if len(with_extras[table]) < MAX_BOUNDARY_ROWS:
                    with_extras[table].append(extra)
    return [on_values, with_extras]


# ---------------------------------------------------------------- a group without child rows


def orphan_group_variants(
    visible_rows: dict[str, list[list[Any]]], schema: str
) -> list[dict[str, list[list[Any]]]]:
    """One hidden dataset in which, for every table that other tables reference by foreign key, one value of
    its grouping column (the TEXT column with the fewest distinct values, at least two) loses every row that
    references it: a category with products but no orders, a city whose customers placed none. An INNER JOIN
    and a LEFT JOIN from the parent then differ, as they can on real data. Only child rows are removed, so the
    data stays valid. Empty if nothing is referenced or no row would be removed."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.executescript(schema)
        tables = table_names(connection)
        layout = {table: _columns(connection, table) for table in tables}
        references = [
            (child, row[3], row[2], row[4])  # child table, its column, parent table, parent column
            for child in tables
            for row in connection.execute(f'PRAGMA foreign_key_list("{child}")').fetchall()
        ]
    finally:
        connection.close()
    data = {table: [list(r) for r in visible_rows.get(table) or []] for table in layout}
    removed = False
    for parent in dict.fromkeys(p for _c, _f, p, _t in references):
        if parent not in layout or not data[parent]:
            continue
        names = [name for name, _t, _k in layout[parent]]
        text_columns = [
            i
            for i, (_n, declared, _k) in enumerate(layout[parent])
            if "CHAR" in declared or "TEXT" in declared
        ]
        distinct = {i: {row[i] for row in data[parent]} for i in text_columns}
        grouping = sorted((len(values), i) for i, values in distinct.items() if len(values) >= 2)
        if not grouping:
            continue
        column = grouping[0][1]
        links = [
            (
                child,
                [n for n, _t, _k in layout[child]].index(source),
                names.index(target or _key_name(layout[parent])),
            )
            for child, source, table, target in references
            if table == parent and child in data
        ]
        counts = sorted((_children(data, parent, column, links, v), str(v), v) for v in distinct[column])
        chosen = next((v for count, _s, v in counts if count > 0), None)
        if chosen is None:
            continue
        for child, source, key in links:
            keys = {row[key] for row in data[parent] if row[column] == chosen}
            kept = [row for row in data[child] if row[source] not in keys]
            removed = removed or len(kept) < len(data[child])
            data[child] = kept
    return [data] if removed else []


def _children(
    data: dict[str, list[list[Any]]], parent: str, column: int, links: list[tuple[str, int, int]], value: Any
) -> int:
    """How many child rows reference a parent row whose `column` is `value`."""
    keys = {row[key] for row in data[parent] if row[column] == value for _c, _s, key in links}
    return sum(1 for child, source, _k in links for row in data[child] if row[source] in keys)


def _key_name(columns: list[tuple[str, str, bool]]) -> str:
    return next((name for name, _t, is_key in columns if is_key), columns[0][0])
