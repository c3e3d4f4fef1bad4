"""A small LRU cache of verdicts for deterministic graders (math, SQL, proof).

The same completion for the same task always earns the same verdict, so a repeat (common within a GRPO
group, and in Gymnasium's determinism check) is served from here: it costs nothing and its `info` — timings
included — is identical to the first time.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict

from rlvr.core.types import Verdict

# failures that depend on the machine's load as much as on the completion
_UNSTABLE_FLAGS = frozenset({"timeout:answer", "crash:answer"})


class VerdictCache:
    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, bytes], Verdict] = OrderedDict()

    @staticmethod
    def _key(task_id: str, completion: str) -> tuple[str, bytes]:
        return task_id, hashlib.sha256(completion.encode("utf-8", "surrogatepass")).digest()

    def get(self, task_id: str, completion: str) -> Verdict | None:
        key = self._key(task_id, completion)
        verdict = self._entries.get(key)
        if verdict is None:
            return None
        self._entries.move_to_end(key)
        return copy.deepcopy(verdict)

    def put(self, task_id: str, completion: str, verdict: Verdict) -> None:
        if verdict.error is not None or any(flag in _UNSTABLE_FLAGS for flag in verdict.flags):
            return  # a grading error, a timeout or a crash may not repeat: never pin it
        self._entries[self._key(task_id, completion)] = copy.deepcopy(verdict)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
