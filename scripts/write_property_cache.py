#!/usr/bin/env python
"""Regenerate the shipped hidden-test cache of a code pack: `scripts/write_property_cache.py humaneval`.

Run it after changing the property generator (its version is part of every cache key); a test
fails on a stale cache.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rlvr.core.pack import TaskPack
from rlvr.graders.code.oracle import CodeOracle, OracleError
from rlvr.graders.code.properties.suite import CACHE_DIR, PropertyTests, cache_record, generate_tests
from rlvr.task_packs.registry import load_pack


def write_cache(pack: TaskPack) -> Path:
    """Generate the tests of every task of a pack and write them as its shipped cache file."""
    generator = PropertyTests()
    lines = []
    for task in pack.tasks():
        try:
            oracle = CodeOracle(task)
        except OracleError:
            continue
        generated = generate_tests(task, oracle, generator.config)
        record = cache_record(generator.cache_key(task), task.id, generated)
        lines.append(json.dumps(record, separators=(",", ":")))
    path = CACHE_DIR / f"cache_{pack.name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: scripts/write_property_cache.py PACK", file=sys.stderr)
        raise SystemExit(2)
    print(write_cache(load_pack(sys.argv[1])))
