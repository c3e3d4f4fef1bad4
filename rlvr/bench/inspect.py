"""`rlvr inspect`: the most suspicious samples of a bench results directory or a training run.

Reads only what runs already write: a bench directory's `samples.jsonl`, a training run's
`flagged_samples.jsonl` (both lines with `task_id`, `completion`, `reward`, `passed`, `flags`). A
sample is suspicious when it carries an exploit flag (see `rlvr.core.flags`); hard-coding of the
visible examples ranks first, then other exploit flags, then higher reward (a flagged sample that
still scored is a hole in the verifier, not just an attempt).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.core.flags import EXPLOIT_FLAGS, exploit_flags, flag_name
from rlvr.core.jsonl import json_lines
from rlvr.core.stored_text import read_text

SAMPLE_FILES = ("samples.jsonl", "flagged_samples.jsonl")
FIRST = ("special_cases_visible", "forged_output", "protected_path_edit", "test_tamper")


class InspectError(ValueError):
    """A path that holds no samples; the message says what was expected."""


@dataclass(frozen=True)
class Suspicious:
    task_id: str
    reward: float
    passed: bool
    flags: list[str]
    reason: str
    completion: str
    source: str
    step: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "reward": self.reward,
            "passed": self.passed,
            "flags": self.flags,
            "reason": self.reason,
            "step": self.step,
            "source": self.source,
            "completion": self.completion,
        }


def _records(root: Path) -> list[tuple[str, dict[str, Any]]]:
    files = [root / name for name in SAMPLE_FILES if (root / name).is_file()]
    if not files:
        raise InspectError(
            f"{root} holds no {' or '.join(SAMPLE_FILES)}: pass a bench --out or a train run directory"
        )
    out = []
    for path in files:  # a bad line is one cut short by a killed run: skipped
        out += [(f"{path.name}:{e.number}", e.value) for e in json_lines(path) if not e.problem]
    return out


def _rank(flags: list[str], reward: float) -> tuple[int, float]:
    names = [flag_name(f) for f in flags]
    tier = min((FIRST.index(n) for n in names if n in FIRST), default=len(FIRST))
    return tier, -reward


def suspicious_samples(root: str | Path, top: int = 20) -> list[Suspicious]:
    found = []
    for source, record in _records(Path(root)):
        flags = exploit_flags(str(f) for f in record.get("flags") or [])
        if not flags:
            continue
        reward = float(record.get("reward") or 0.0)
        reasons = "; ".join(EXPLOIT_FLAGS[flag_name(f)] for f in dict.fromkeys(flags))
        if reward > 0 and record.get("passed"):
            reasons = "PASSED despite: " + reasons
        elif reward >= 0.5:  # a weak verifier paid for it although the hidden tests failed
            reasons = f"REWARDED ({reward:.2f}) despite: " + reasons
        found.append(
            Suspicious(
                task_id=str(record.get("task_id")),
                reward=reward,
                passed=bool(record.get("passed")),
                flags=flags,
                reason=reasons,
                completion=str(read_text(record, "completion") or ""),
                source=source,
                step=record.get("step"),
            )
        )
    found.sort(key=lambda s: _rank(s.flags, s.reward))
    return found[:top]


def flag_rates(records: list[dict[str, Any]]) -> dict[str, float]:
    """Per exploit-flag name: the fraction of samples that carry it (only names that occur)."""
    if not records:
        return {}
    counts: dict[str, int] = {}
    for record in records:
        for name in {flag_name(f) for f in exploit_flags(str(f) for f in record.get("flags") or [])}:
            counts[name] = counts.get(name, 0) + 1
    return {name: round(count / len(records), 6) for name, count in sorted(counts.items())}
