"""Reading a completions JSONL file: one `{id, text}` object a line, every bad line reported by number."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from rlvr.core.codec import json_problem


def _names(keys: tuple[str, ...]) -> str:
    return keys[0] + "".join(f" (or {key})" for key in keys[1:])


def read_completions(
    path: Path, id_keys: tuple[str, ...] = ("task_id",), text_keys: tuple[str, ...] = ("completion",)
) -> Iterator[tuple[int, str | None, str | None, str | None]]:
    """(line number, id, text, error) for every non-blank line; never raises on content. The id and
    the text are read from the first of `id_keys` / `text_keys` a line has."""
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError) as exc:  # also: nested too deeply, an int too long
                yield number, None, None, f"line {number}: not valid JSON ({json_problem(exc)})"
                continue
            if not isinstance(record, dict):
                yield number, None, None, f"line {number}: expected a JSON object"
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
