"""Directory-pack task schemas of the tool, SQL and proof families (`register_family_schema`).

Each checker returns (field, message) problems for one tasks.jsonl line, explaining what is wrong; each
hidden builder keeps everything but the public fields, which becomes the task's hidden spec.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from rlvr.task_packs.directory import PUBLIC_FIELDS, register_family_schema

Problems = list[tuple[str, str]]


def _hidden(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in PUBLIC_FIELDS}


def _need_text(line: dict[str, Any], name: str) -> Problems:
    value = line.get(name)
    if value is None:
        return [(name, "missing (required)")]
    if not isinstance(value, str) or not value.strip():
        return [(name, f"must be a non-empty string, got {type(value).__name__}")]
    return []


# ---------------------------------------------------------------- sql


def _check_rows(rows: Any) -> Problems:
    if not isinstance(rows, dict) or not all(
        isinstance(t, str) and isinstance(r, list) and all(isinstance(row, list) for row in r)
        for t, r in rows.items()
    ):
        return [("rows", 'must be an object like {"table": [[1, "a"], [2, "b"]]}')]
    return []


def check_sql(line: dict[str, Any]) -> Problems:
    problems = _need_text(line, "schema") + _need_text(line, "reference")
    if "rows" in line:
        problems += _check_rows(line["rows"])
    kind = line.get("kind", "query")
    if kind not in ("query", "dml"):
        problems.append(("kind", 'must be "query" or "dml"'))
    for name in ("ordered",):
        if name in line and not isinstance(line[name], bool):
            problems.append((name, "must be true or false"))
    variants = line.get("variants")
    if variants is not None and (
        not isinstance(variants, int) or isinstance(variants, bool) or not 0 <= variants <= 50
    ):
        problems.append(("variants", "must be an integer from 0 to 50"))
    for name in ("check", "writable"):
        value = line.get(name)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            problems.append((name, "must be a list of strings"))
    if problems:
        return problems
    return _try_sql(line, kind)


def _try_sql(line: dict[str, Any], kind: str) -> Problems:
    """Build the visible database and run the reference on it: a broken task fails here, not in training."""
    connection = sqlite3.connect(":memory:")
    try:
        try:
            connection.executescript(line["schema"])
        except sqlite3.Error as exc:
            return [("schema", f"does not run in SQLite: {exc}")]
        for table, rows in (line.get("rows") or {}).items():
            for number, row in enumerate(rows, start=1):
                try:
                    connection.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" for _ in row)})', row)
                except (sqlite3.Error, sqlite3.ProgrammingError) as exc:
                    return [("rows", f"table {table!r} row {number}: {exc}")]
        try:
            if kind == "query":
                cursor = connection.execute(line["reference"])
                if cursor.description is None:
                    return [("reference", "a query task's reference must be a SELECT that returns rows")]
            else:
                connection.executescript(line["reference"])
            for check in line.get("check") or []:
                connection.execute(check)
        except sqlite3.Error as exc:
            return [("reference", f"fails on the visible database: {exc}")]
    finally:
        connection.close()
    return []


register_family_schema("sql", check_sql, _hidden)
