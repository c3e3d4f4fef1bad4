"""Regenerate the shipped class-kata sequences: `python scripts/write_kata_sequences.py`."""

from __future__ import annotations

from rlvr.task_packs.kata import KataPack, class_sequences
from rlvr.task_packs.kata.sequence_cache import CACHE_PATH, write_cache


def main() -> None:
    entries = {}
    for tid in KataPack().default_ids():
        generated = class_sequences(tid, use_cache=False)
        if generated is not None:
            entries[tid] = generated
    write_cache(entries)
    print(f"wrote {len(entries)} class katas' sequences to {CACHE_PATH}")


if __name__ == "__main__":
    main()
