"""Reading JSON Lines files the one way: every line decoded, or the problem with it, never a crash.

`json.loads` has more failure modes than `JSONDecodeError`: an integer longer than Python's int/str
digit limit is a plain `ValueError`, deep nesting a `RecursionError`, and bytes that are not UTF-8 a
`UnicodeDecodeError` before parsing starts. A reader of files someone else wrote (task packs, dataset
imports, recorded completions, SWE-bench instances) reports each of those as a `Problem` with file and
line and goes on to the next line, so one bad line costs that line, not the run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.core.pack import Problem


class JsonProblem(ValueError):
    """Why a text is not a JSON document this reader accepts, in words (`str(exc)`)."""


def json_problem(exc: BaseException) -> str:
    """Why `json.loads` (or the UTF-8 decode before it) refused a text, in words."""
    if isinstance(exc, JsonProblem):
        return str(exc)
    if isinstance(exc, json.JSONDecodeError):
        where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        return f"{exc.msg} ({where})"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 (byte 0x{exc.object[exc.start]:02x} at column {exc.start + 1})"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return f"an integer longer than {sys.get_int_max_str_digits()} digits"
    return str(exc).split(":", 1)[0][:120] or type(exc).__name__


def decode_json(text: str | bytes) -> Any:
    """The value of one JSON document; JsonProblem (a ValueError) says why there is none."""
    try:
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise JsonProblem(json_problem(exc)) from None


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line: its number from 1 and its value, or the problem that stands for it."""

    number: int
    value: Any = None
    problem: Problem | None = None


def json_lines(path: Path, *, objects: bool = True) -> Iterator[JsonLine]:
    """Every non-blank line of a JSONL file, in order. With `objects`, a line that is not a JSON object
    is a problem too. A file that cannot be opened is one problem with no line number."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        yield JsonLine(0, problem=Problem(str(path), None, None, f"cannot read: {exc.strerror or exc}"))
        return
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark some editors write
            if not raw.strip():
                continue
            try:
                value = decode_json(raw)
            except JsonProblem as exc:
                yield JsonLine(number, problem=Problem(str(path), number, None, f"not valid JSON: {exc}"))
                continue
            if objects and not isinstance(value, dict):
                message = f"expected a JSON object, found {_json_kind(value)}"
                yield JsonLine(number, problem=Problem(str(path), number, None, message))
                continue
            yield JsonLine(number, value)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else type(value).__name__
