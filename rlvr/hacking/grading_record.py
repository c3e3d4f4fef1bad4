"""`grading.json` in a bench or training run directory: how each pack was graded (its reference, the
grader's options as plain data, the grader's version and the digests its receipts carry), so `rlvr
regrade` can rebuild the same grader - or a deliberately different one - for the stored candidates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlvr.graders.base import Grader

GRADING_FILE = "grading.json"


def grading_entry(pack_ref: str | None, grader: Grader) -> dict[str, Any]:
    from rlvr.graders.receipts import plain_options

    book = grader.receipt_book()
    return {
        "pack": pack_ref,
        "pack_version": book.pack_version,
        "family": grader.pack.family,
        "grader": book.grader,
        "options_digest": book.options,
        "options": plain_options(grader.options),
    }


def write_grading_record(run_dir: Path, entries: dict[str, dict[str, Any]]) -> None:
    """Merge `entries` (pack name -> `grading_entry`) into RUN_DIR/grading.json."""
    path = run_dir / GRADING_FILE
    current = read_grading_record(run_dir)
    current.update(entries)
    path.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_grading_record(run_dir: Path) -> dict[str, dict[str, Any]]:
    path = run_dir / GRADING_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
