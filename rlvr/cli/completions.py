"""Reading a completions JSONL file: one `{id, text}` object a line, every bad line reported by number."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from rlvr.core.jsonl import json_lines


def _names(keys: tuple[str, ...]) -> str:
    return keys[0] + "".join(f" (or {key})" for key in keys[1:])


def read_completions(
    path: Path, id_keys: tuple[str, ...] = ("task_id",), text_keys: tuple[str, ...] = ("completion",)
) -> Iterator[tuple[int, str | None, str | None, str | None]]:
    """(line number, id, text, error) for every non-blank line; never raises on content. The id and
    the text are read from the first of `id_keys` / `text_keys` a line has."""
    for entry in json_lines(path):
        number, record = entry.number, entry.value
        if entry.problem:
            yield number, None, None, f"line {number}: {entry.problem.message}"
            continue
        id_key = next((k for k in id_keys if k in record), id_keys[0])
        text_key = next((k for k in text_keys if k in record), text_keys[0])
        item_id, text = record.get(id_key), record.get(text_key)
        if not isinstance(item_id, str) or not item_id:
            yield number, None, None, f"line {number}: missing or non-string {_names(id_keys)}"
        elif not isinstance(text, str):
            yield number, item_id, None, f"line {number}: missing or non-string {_names(text_keys)}"
        else:
            yield number, item_id, text, None
