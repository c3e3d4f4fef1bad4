"""Shipped method sequences for the class katas of the default sample.

Generating a class kata's operation sequences runs hypothesis' stateful engine (about 0.7 s a task),
which made loading `kata` take ~15 s. The sequences of the default sample are data: they are stored
in `class_sequences.json` (plain-data wire format) keyed by task id, with a fingerprint of everything the
generation reads (reference source, method names, count, steps, seed). A task whose fingerprint does
not match, or that is not in the file, is generated as before; `tests/test_kata.py` checks that the
file matches fresh generation. Regenerate with `python scripts/write_kata_sequences.py`.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from rlvr.core.codec import CodecError, dumps, loads

CACHE_PATH = Path(__file__).with_name("class_sequences.json")


def fingerprint(reference: str, methods: list[str], count: int, steps: int, seed: int) -> str:
    text = json.dumps([reference, methods, count, steps, seed], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@cache
def _shipped() -> dict[str, Any]:
    try:
        return json.loads(CACHE_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def cached_sequences(task_id: str, key: str) -> list[list[list[Any]]] | None:
    """The shipped sequences of `task_id` if their fingerprint is `key`, else None."""
    entry = _shipped().get(task_id)
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    try:
        sequences = loads(entry["sequences"])
    except (CodecError, KeyError, TypeError):
        return None
    return sequences if isinstance(sequences, list) else None


def write_cache(entries: dict[str, tuple[str, list[list[list[Any]]]]], path: Path = CACHE_PATH) -> None:
    """Store `{task_id: (fingerprint, sequences)}` in the wire format (tuples and sets survive)."""
    doc = {tid: {"key": key, "sequences": dumps(seqs)} for tid, (key, seqs) in sorted(entries.items())}
    path.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    _shipped.cache_clear()
