"""Command-line grading flags (`--jobs`, `--sandbox`, `--runtime`) a pack's family cannot honour.

Every grading command takes them for every pack; a family that runs no candidate code in a sandbox
(math, proof, tool, sql) cannot use them, so they are dropped with a note on stderr rather than
refused (the grader API refuses them: there a caller asked for something it will not get).
"""

from __future__ import annotations

import sys
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.graders.base import pack_grader_class

FLAGS = ("jobs", "sandbox", "runtime")


def honoured(pack: TaskPack, options: dict[str, Any], command: str) -> dict[str, Any]:
    """`options` without the command-line flags `pack`'s grader cannot honour (a note for each set)."""
    not_honoured = pack_grader_class(pack).options_class.not_honoured
    kept = dict(options)
    for key in [k for k in kept if k in FLAGS and k in not_honoured]:
        value = kept.pop(key)
        if value not in (None, "local"):
            print(
                f"{command}: --{key} has no effect on {pack.family} packs: {not_honoured[key]}",
                file=sys.stderr,
            )
    return kept
