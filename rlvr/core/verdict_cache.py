"""The verdict cache: the one place a verdict is reused instead of graded again.

The same completion for the same task, graded by the same grader with the same options, always earns
the same verdict, so a repeat (common within a GRPO group, in Gymnasium's determinism check and among
a reward server's clients) is served from here. Two pieces:

- `VerdictCache`, a bounded, thread-safe LRU keyed by `VerdictKey` (the pack and grader, the options
  that decide verdicts, the task and the completion, as digests). It keeps only what `cacheable`
  allows and hands out copies, so a caller that edits a verdict (the receipt, the feedback) never
  changes the stored one or another caller's.
- `grade_once_each`, for one batch: each distinct item is graded once and every repeat gets its own
  copy of that verdict.

The keys are built by the grader that owns the verdicts (`rlvr.graders.base.Grader.verdict_key`).
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple, TypeVar

from rlvr.core.types import Verdict

# failures that depend on the machine's load as much as on the completion
UNSTABLE_FLAG_PREFIXES = ("timeout", "crash:")

Item = TypeVar("Item", bound=Hashable)


class VerdictKey(NamedTuple):
    """What a verdict was computed from. Two equal keys mean the same inputs to the same grader."""

    grader: str  # the pack's name and version and the grader's version
    options: str  # digest of the options that decide verdicts
    task_id: str
    task: str  # digest of the task's whole content (an edited task with the same id is another task)
    completion: str  # digest of the completion text


def cacheable(verdict: Verdict) -> bool:
    """Only a verdict that the completion alone decided may be reused: never a grading error of any
    fault (a grader, task or sandbox fault is disrupted; an input error costs nothing to redo), and
    never a timeout or crash, which may not repeat on a less loaded machine."""
    if verdict.error is not None:  # every fault, `disrupted` ones included, comes with an error
        return False
    return not any(flag.startswith(UNSTABLE_FLAG_PREFIXES) for flag in verdict.flags)


class VerdictCache:
    """A bounded LRU of verdicts by `VerdictKey`; `capacity` 0 keeps nothing. Thread-safe."""

    def __init__(self, capacity: int = 4096) -> None:
        if capacity < 0:
            raise ValueError("a verdict cache's capacity must be 0 (keep nothing) or more")
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[VerdictKey, Verdict] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: VerdictKey | None) -> Verdict | None:
        """A copy of the verdict stored under `key` (None: no key, or not stored)."""
        if key is None:
            return None
        with self._lock:
            verdict = self._entries.get(key)
            if verdict is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
        return copy.deepcopy(verdict)

    def put(self, key: VerdictKey | None, verdict: Verdict) -> bool:
        """Store a copy of `verdict` if `cacheable` allows it; True if it was kept."""
        if key is None or self.capacity == 0 or not cacheable(verdict):
            return False
        kept = copy.deepcopy(verdict)
        with self._lock:
            self._entries[key] = kept
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return True


def grade_once_each(items: Sequence[Item], grade: Callable[[list[Item]], list[Verdict]]) -> list[Verdict]:
    """One verdict per item, in order, with `grade` called once on the distinct items (first
    occurrences, in order). A repeat gets its own copy: no two positions share a verdict object."""
    distinct = list(dict.fromkeys(items))
    graded = grade(distinct)
    if len(graded) != len(distinct):
        raise RuntimeError(f"grading returned {len(graded)} verdicts for {len(distinct)} items")
    first = dict(zip(distinct, graded, strict=True))
    out: list[Verdict] = []
    handed_out: set[Hashable] = set()
    for item in items:
        verdict = first[item]
        out.append(copy.deepcopy(verdict) if item in handed_out else verdict)
        handed_out.add(item)
    return out
