"""Per-step metrics: the batch statistics GRPO users watch, the run's append-only logs (metrics.jsonl,
grading_errors.jsonl, flagged_samples.jsonl) that roll back to a checkpoint (so a resumed run neither
loses nor duplicates a step), and the run's summary.json."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from rlvr.core.flags import exploit_flags, flag_name
from rlvr.core.types import Verdict

MAX_FLAGGED_PER_STEP = 64  # flagged samples kept per step in flagged_samples.jsonl
MAX_FLAGGED_CHARS = 4000  # characters of each flagged completion kept


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


class RunLogs:
    """The three append-only logs of a run; a checkpoint records how many lines of each it covers."""

    def __init__(self, metrics: Path, grading_errors: Path, flagged_samples: Path) -> None:
        self.metrics = MetricsLog(metrics)
        self.grading_errors = MetricsLog(grading_errors)
        self.flagged = MetricsLog(flagged_samples)  # what `rlvr inspect RUN_DIR` reads

    def line_counts(self) -> dict[str, int]:
        return {
            "metrics_lines": self.metrics.line_count(),
            "grading_error_lines": self.grading_errors.line_count(),
            "flagged_lines": self.flagged.line_count(),
        }

    def rewind(self, state: dict[str, Any]) -> None:
        """Back to what a checkpoint's `state` accounted for (an empty state: a fresh run)."""
        self.metrics.truncate(state.get("metrics_lines", 0))
        self.grading_errors.truncate(state.get("grading_error_lines", 0))
        self.flagged.truncate(state.get("flagged_lines", 0))

    def faults_and_exploits(
        self, step: int, verdicts: Sequence[Verdict], completions: Callable[[int], str]
    ) -> None:
        """Every faulted episode (dropped or kept), and the exploit attempts (bounded per step) with
        their completion text, `completions(row)`."""
        for v in verdicts:
            if v.error is not None:
                self.grading_errors.append(
                    {
                        "step": step,
                        "task_id": v.task_id,
                        "error": v.error,
                        "fault": v.fault,
                        "dropped": v.disrupted,
                    }
                )
        attempts = [row for row, v in enumerate(verdicts) if exploit_flags(v.flags)]
        for row in attempts[:MAX_FLAGGED_PER_STEP]:
            v = verdicts[row]
            self.flagged.append(
                {
                    "step": step,
                    "task_id": v.task_id,
                    "reward": v.reward,
                    "passed": v.passed,
                    "flags": v.flags,
                    "completion": completions(row)[:MAX_FLAGGED_CHARS],
                }
            )


def build_summary(
    config: dict[str, Any],
    state: dict[str, Any],
    records: list[dict[str, Any]],
    wall: float,
    this_session: float,
) -> dict[str, Any]:
    """summary.json: held-out before/after and their gain, the training curve's ends, the warm
    start, the machine it ran on, and the config."""
    before, after = state["heldout_before"], state["heldout_after"]

    def window(key: str, part: slice) -> float | None:
        values = [rec[key] for rec in records[part] if rec.get(key) is not None]
        return sum(values) / len(values) if values else None

    return {
        "heldout": {"before": before, "after": after},
        "heldout_gain": {
            "pass_rate": after["pass_rate"] - before["pass_rate"],
            "greedy_pass_rate": after["greedy"]["pass_rate"] - before["greedy"]["pass_rate"],
        },
        "wall_seconds": wall,
        "this_session_seconds": this_session,
        "steps": state["step"],
        "train": {
            "pass_rate_first_5": window("pass_rate", slice(0, 5)),
            "pass_rate_last_5": window("pass_rate", slice(-5, None)),
            "reward_first_5": window("reward_mean", slice(0, 5)),
            "reward_last_5": window("reward_mean", slice(-5, None)),
            "grading_errors": sum(rec.get("grading_errors", 0) for rec in records),
            "final_difficulty_level": records[-1].get("difficulty_level") if records else None,
        },
        "sft": state.get("sft", {}),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average": list(os.getloadavg()),
            "torch_threads": torch.get_num_threads(),
        },
        "config": config,
    }
