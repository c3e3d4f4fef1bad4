"""The verdict cache: a small LRU of verdicts for deterministic graders (math, SQL, proof) and for the
reward server's repeated items (rlvr/integrations/batcher.py).

The same completion for the same task always earns the same verdict, so a repeat (common within a GRPO
group, and in Gymnasium's determinism check) is served from here: it costs nothing and its `info` — timings
included — is identical to the first time. One rule says what may be kept (`cacheable`).
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict

from rlvr.core.types import Verdict

# failures that depend on the machine's load as much as on the completion
_UNSTABLE_PREFIXES = ("timeout", "crash:")


def cacheable(verdict: Verdict) -> bool:
    """A grading error, a timeout or a crash may not repeat: such a verdict is never pinned."""
    return verdict.error is None and not any(flag.startswith(_UNSTABLE_PREFIXES) for flag in verdict.flags)


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
        if not cacheable(verdict):
            return
        self._entries[self._key(task_id, completion)] = copy.deepcopy(verdict)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
