"""Run untrusted SQL against a private in-memory sqlite copy, fenced in.

Every run gets a fresh connection deserialised from the database bytes, so nothing persists between
candidates. The fences:
- an authorizer that allows reading (and, for DML tasks, INSERT/UPDATE/DELETE on the task's own tables) and
  denies everything else: ATTACH/DETACH, PRAGMA, schema changes, transactions, triggers, views;
- `PRAGMA query_only` for query tasks (set before the authorizer, which then forbids turning it off);
- a progress handler that aborts after a deterministic budget of virtual-machine steps, and, as a backstop,
  a wall-clock deadline enforced by a timer that interrupts the connection (a single step may be one
  costly function call), so a runaway recursive CTE, cross join or string search ends with a verdict;
- sqlite limits on string/blob length, SQL length and attached databases; temporary storage in memory under
  sqlite's hard heap limit (a huge sort fails with "out of memory" instead of filling the disk or the
  grader's RAM); a cap on returned rows and bytes, and on the size of the database a DML script leaves.

Text is read with invalid UTF-8 kept as surrogate escapes, so stored bytes can never make a trusted read
raise; a trusted read of a database the candidate produced (`read_state`) turns any sqlite error into a
SQLRunError, a scored failure.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

STEP_BUDGET = 20_000_000  # sqlite VM instructions per run
PROGRESS_EVERY = 10_000
WALL_TIMEOUT = 5.0
MAX_ROWS = 10_000
MAX_RESULT_BYTES = 8 * 1024 * 1024
MAX_VALUE_BYTES = 100_000
SQLITE_HEAP_LIMIT = 256 * 1024 * 1024  # process-wide cap on sqlite's own allocations
MAX_SQL_CHARS = 20_000
MAX_DATABASE_BYTES = 16 * 1024 * 1024  # the database a DML script may leave behind

_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}
_WRITE_ACTIONS = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


class SQLRunError(Exception):
    """The candidate's SQL failed; `kind` is one of syntax, denied, side_effect, budget, rows, size, state,
    error."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Result:
    columns: int
    rows: list[tuple[Any, ...]]


def build_database(schema: str, rows: dict[str, list[list[Any]]]) -> bytes:
    """Trusted: the serialised database for a schema and its rows (table -> list of row values)."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.executescript(schema)
        for table, table_rows in rows.items():
            if not table_rows:
                continue
            marks = ", ".join("?" for _ in table_rows[0])
            connection.executemany(f'INSERT OR IGNORE INTO "{table}" VALUES ({marks})', table_rows)
        connection.commit()
        return connection.serialize()
    finally:
        connection.close()


def table_names(connection: sqlite3.Connection) -> list[str]:
    found = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    return [row[0] for row in found]


def read_text(raw: bytes) -> str:
    """sqlite TEXT as Python text; bytes that are not UTF-8 become surrogate escapes (equal bytes, equal text)."""
    return raw.decode("utf-8", "surrogateescape")


def open_copy(database: bytes) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    connection.text_factory = read_text
    connection.deserialize(database)
    return connection


def _authorizer(writable: frozenset[str], state: dict[str, float]) -> Any:
    def decide(
        action: int, arg1: str | None, arg2: str | None, database: str | None, trigger: str | None
    ) -> int:
        if action == sqlite3.SQLITE_FUNCTION:
            return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _DENIED_FUNCTIONS else sqlite3.SQLITE_OK
        if action in _READ_ACTIONS:
            return sqlite3.SQLITE_OK
        if action in _WRITE_ACTIONS and (arg1 or "") in writable and database in (None, "main"):
            return sqlite3.SQLITE_OK
        if action in _WRITE_ACTIONS and writable:
            state["other_table_writes"] += 1  # a DML task writing a table it may not touch
        return sqlite3.SQLITE_DENY

    return decide


def _fence(connection: sqlite3.Connection, writable: frozenset[str], wall: float) -> dict[str, float]:
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS)
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 50)
    connection.execute("PRAGMA temp_store = MEMORY")
    connection.execute(f"PRAGMA hard_heap_limit = {SQLITE_HEAP_LIMIT}")
    if not writable:
        connection.execute("PRAGMA query_only = ON")
    state = {"steps": 0.0, "deadline": time.monotonic() + wall, "other_table_writes": 0.0}
    connection.set_authorizer(_authorizer(writable, state))

    def progress() -> int:
        state["steps"] += PROGRESS_EVERY
        return int(state["steps"] > STEP_BUDGET or time.monotonic() > state["deadline"])

    connection.set_progress_handler(progress, PROGRESS_EVERY)
    return state


def _check_text(sql: str) -> None:
    if len(sql) > MAX_SQL_CHARS:
        raise SQLRunError("error", f"SQL longer than {MAX_SQL_CHARS} characters")
    if "\x00" in sql:
        raise SQLRunError("syntax", "SQL contains a NUL character")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:
        raise SQLRunError("syntax", "SQL is not valid Unicode text (lone surrogate)") from None


def _has_code(text: str) -> bool:
    """Whether `text` holds anything besides whitespace, `;` and SQL comments (`-- ...`, `/* ... */`)."""
    index = 0
    while index < len(text):
        if text.startswith("--", index):
            end = text.find("\n", index)
            index = len(text) if end < 0 else end + 1
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            index = len(text) if end < 0 else end + 2
        elif text[index].isspace() or text[index] == ";":
            index += 1
        else:
            return True  # the first character of code (a quote opens code too)
    return False


def split_statements(sql: str) -> list[str]:
    """Split a script on `;` at statement ends (sqlite decides where a statement is complete). Pieces holding
    only comments are not statements: `SELECT ...; -- done` is one statement, as sqlite runs it."""
    _check_text(sql)
    statements, current = [], ""
    for piece in sql.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            if _has_code(current):
                statements.append(current.strip())
            current = ""
    if _has_code(current):
        statements.append(current.strip().rstrip(";"))
    return statements


def _classify(exc: sqlite3.Error, state: dict[str, float]) -> SQLRunError:
    message = str(exc)
    if "interrupted" in message:
        over = "step budget" if state["steps"] > STEP_BUDGET else "time limit"
        return SQLRunError("budget", f"query stopped: exceeded the {over}")
    if state.get("other_table_writes"):
        return SQLRunError("side_effect", f"writes a table this task does not allow: {message}")
    if "not authorized" in message or "prohibited" in message or "readonly" in message.lower():
        return SQLRunError("denied", f"not allowed here: {message}")
    if "syntax error" in message or "incomplete input" in message:
        return SQLRunError("syntax", message)
    return SQLRunError("error", message)


def _fetch_bounded(cursor: sqlite3.Cursor) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    size = 0
    while batch := cursor.fetchmany(256):
        rows += batch
        size += sum(len(v) if isinstance(v, str | bytes) else 8 for row in batch for v in row)
        if len(rows) > MAX_ROWS:
            raise SQLRunError("rows", f"more than {MAX_ROWS} rows returned")
        if size > MAX_RESULT_BYTES:
            raise SQLRunError("rows", f"result larger than {MAX_RESULT_BYTES // (1024 * 1024)} MiB")
    return rows


def _interrupter(connection: sqlite3.Connection, lock: threading.Lock) -> Callable[[], None]:
    def interrupt() -> None:
        with lock:  # never after the connection is closed
            try:
                connection.interrupt()
            except sqlite3.Error:
                pass

    return interrupt


@contextmanager
def _fenced_copy(
    database: bytes, writable: frozenset[str], wall: float = WALL_TIMEOUT
) -> Iterator[sqlite3.Connection]:
    """A fenced private copy of `database`, closed afterwards; sqlite and resource errors raised in
    the block become SQLRunError.

    The wall-clock deadline is enforced from outside the run: the progress handler sees the clock
    only every PROGRESS_EVERY steps, and a step can be one call of a function doing much work
    (`instr` of two 100 kB strings: a tenth of a second), so 10,000 such steps ran minutes past the
    deadline while grading stood still for every other candidate. A timer interrupts the
    connection at the deadline instead (sqlite stops at the next step)."""
    connection = open_copy(database)
    wall = min(WALL_TIMEOUT, max(0.0, wall))
    state = _fence(connection, writable, wall)
    lock = threading.Lock()
    timer = threading.Timer(wall, _interrupter(connection, lock))
    timer.daemon = True
    timer.start()
    try:
        yield connection
    except sqlite3.Error as exc:
        raise _classify(exc, state) from None
    except (OverflowError, MemoryError, ValueError) as exc:
        raise SQLRunError("error", f"{type(exc).__name__}: {exc}") from None
    finally:
        timer.cancel()
        with lock:
            connection.close()


def run_query(database: bytes, sql: str, wall: float = WALL_TIMEOUT) -> Result:
    """Run one read-only SELECT on a private copy, stopped after `wall` seconds (at most
    WALL_TIMEOUT); raises SQLRunError."""
    statements = split_statements(sql)
    if len(statements) != 1:
        raise SQLRunError("syntax", f"expected exactly one SQL statement, got {len(statements)}")
    with _fenced_copy(database, frozenset(), wall) as connection:
        cursor = connection.execute(statements[0])
        if cursor.description is None:
            raise SQLRunError("denied", "the statement returns no rows (a query task needs a SELECT)")
        return Result(len(cursor.description), _fetch_bounded(cursor))


def run_script(database: bytes, sql: str, writable: frozenset[str], wall: float = WALL_TIMEOUT) -> bytes:
    """Apply DML statements to a private copy, stopped after `wall` seconds (at most WALL_TIMEOUT);
    the resulting database bytes. Raises SQLRunError."""
    statements = split_statements(sql)
    if not statements:
        raise SQLRunError("syntax", "no SQL statement found")
    with _fenced_copy(database, writable, wall) as connection:
        for statement in statements:
            cursor = connection.execute(statement)
            _fetch_bounded(cursor)
        connection.set_authorizer(None)
        connection.set_progress_handler(None, 0)
        result = connection.serialize()
    if len(result) > MAX_DATABASE_BYTES:
        raise SQLRunError("size", f"the database grew past {MAX_DATABASE_BYTES // (1024 * 1024)} MiB")
    return result


def run_trusted(database: bytes, sql: str) -> Result:
    """Trusted SQL (reference queries, state checks) on a copy, without fences."""
    connection = open_copy(database)
    try:
        cursor = connection.execute(sql)
        return Result(len(cursor.description or ()), cursor.fetchall())
    finally:
        connection.close()


def read_state(database: bytes, checks: list[str]) -> list[tuple[Any, ...]]:
    """Trusted check queries on a database a candidate produced: every row, tagged with its check's index.
    Whatever the stored data, a failure here is a SQLRunError (the candidate's doing), never an exception."""
    rows: list[tuple[Any, ...]] = []
    connection = open_copy(database)
    try:
        for index, check in enumerate(checks):
            rows += [(index, *row) for row in connection.execute(check).fetchall()]
    except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:
        raise SQLRunError(
            "state", f"the resulting database cannot be read: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        connection.close()
    return rows


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        rounded = float(f"{value:.9g}")  # round first: 55.00000000000001 is the whole number 55
        return int(rounded) if rounded.is_integer() else rounded
    if isinstance(value, bytes):
        return "x'" + value.hex() + "'"
    return value


def _canonical_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_canonical(v) for v in row)


def results_match(candidate: Result, expected: Result, *, ordered: bool) -> tuple[bool, str]:
    """Same rows (as a multiset unless `ordered`) and the same number of columns; names are ignored."""
    if candidate.columns != expected.columns:
        return False, f"expected {expected.columns} column(s), got {candidate.columns}"
    got = [_canonical_row(r) for r in candidate.rows]
    want = [_canonical_row(r) for r in expected.rows]
    if len(got) != len(want):
        return False, f"expected {len(want)} row(s), got {len(got)}"
    if ordered:
        return (got == want), "rows differ or are in the wrong order" if got != want else "match"
    same = Counter(map(repr, got)) == Counter(map(repr, want))
    return same, "match" if same else "rows differ"
