#!/usr/bin/env python
"""Regenerate the shipped hidden-test cache of a code pack: `scripts/write_property_cache.py humaneval`.

Run it after changing the property generator (its version is part of every cache key); a test
fails on a stale cache.
"""

from __future__ import annotations

import sys

from rlvr.graders.code.properties.suite import write_cache
from rlvr.task_packs.registry import load_pack

if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: scripts/write_property_cache.py PACK", file=sys.stderr)
        raise SystemExit(2)
    print(write_cache(load_pack(sys.argv[1])))
