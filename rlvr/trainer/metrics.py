"""Per-step metrics: the batch statistics GRPO users watch, and an append-only metrics.jsonl that
can be rolled back to a checkpoint (so a resumed run neither loses nor duplicates a step)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr.core.flags import exploit_flags, flag_name
from rlvr.core.types import Verdict


def distinct_n(token_rows: Sequence[Sequence[int]], n: int) -> float:
    """Distinct n-grams / all n-grams over a batch of completions (1.0 = no repetition)."""
    total, seen = 0, set()
    for row in token_rows:
        for i in range(len(row) - n + 1):
            seen.add(tuple(row[i : i + n]))
            total += 1
    return len(seen) / total if total else 0.0


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def verdict_metrics(verdicts: Sequence[Verdict]) -> dict[str, float]:
    """Reward mean/std overall and per component, pass rate, grading errors."""
    out: dict[str, float] = {}
    out["reward_mean"], out["reward_std"] = _mean_std([v.reward for v in verdicts])
    out["pass_rate"] = sum(v.passed for v in verdicts) / max(len(verdicts), 1)
    out["grading_errors"] = float(sum(v.error is not None for v in verdicts))
    shown = [v for v in verdicts if v.visible_passed is not None]
    if shown:  # visible-example pass rate minus hidden pass rate: rises when the policy hard-codes
        out["hacking_gap"] = (
            sum(bool(v.visible_passed) for v in shown) - sum(v.passed for v in shown)
        ) / len(shown)
    for flag in sorted({flag_name(f) for v in verdicts for f in exploit_flags(v.flags)}):
        carrying = sum(any(flag_name(f) == flag for f in exploit_flags(v.flags)) for v in verdicts)
        out[f"exploit/{flag}"] = carrying / max(len(verdicts), 1)
    names = sorted({name for v in verdicts for name in v.components})
    for name in names:
        scores = [v.components[name].fraction for v in verdicts if name in v.components]
        out[f"reward/{name}_mean"], out[f"reward/{name}_std"] = _mean_std(scores)
    return out


def completion_metrics(
    token_rows: Sequence[Sequence[int]], truncated: Sequence[bool], passed: Sequence[bool]
) -> dict[str, float]:
    """Length, truncation, diversity and tokens spent per correct answer."""
    lengths = [len(row) for row in token_rows]
    correct = sum(passed)
    return {
        "completion_length_mean": sum(lengths) / max(len(lengths), 1),
        "completion_length_max": float(max(lengths, default=0)),
        "truncated_ratio": sum(truncated) / max(len(truncated), 1),
        "distinct_1": distinct_n(token_rows, 1),
        "distinct_2": distinct_n(token_rows, 2),
        "tokens_per_correct": sum(lengths) / correct if correct else float("nan"),
    }


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN: "not measurable this step"
    return value


class MetricsLog:
    """metrics.jsonl: one JSON object per step, flushed at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)

    def line_count(self) -> int:
        return self.path.read_bytes().count(b"\n")

    def truncate(self, lines: int) -> None:
        """Keep only the first `lines` complete lines (those a checkpoint accounted for)."""
        data = self.path.read_bytes()
        end = 0
        for _ in range(lines):
            end = data.index(b"\n", end) + 1
        with open(self.path, "r+b") as handle:
            handle.truncate(end)

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps({k: _clean(v) for k, v in record.items()}, sort_keys=False)
        with open(self.path, "a") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def read(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
