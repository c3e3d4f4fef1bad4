"""PNG plots of metrics.jsonl (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

PANELS: dict[str, list[str]] = {
    "reward": ["reward_mean", "reward_std"],
    "reward_components": ["reward/syntax_mean", "reward/types_mean", "reward/tests_mean", "reward/perf_mean"],
    "pass_rate": ["pass_rate"],
    "zero_std_groups": ["zero_std_group_fraction"],
    "kl": ["kl"],
    "clip_ratio": ["clip_ratio/low", "clip_ratio/high"],
    "entropy": ["entropy"],
    "completion_length": ["completion_length_mean", "completion_length_max"],
    "truncated": ["truncated_ratio"],
    "diversity": ["distinct_1", "distinct_2"],
    "tokens_per_correct": ["tokens_per_correct"],
    "step_time": ["step_seconds", "rollout_seconds", "update_seconds"],
    # multi-turn episodes (not measured in single-turn runs)
    "agent": ["turns_per_episode", "tool_calls_per_episode", "malformed_turn_rate"],
    "tool_calls": [],  # one line per tool name (the `tool_calls/<name>` keys)
    "episode_length": ["episode_tokens_passed", "episode_tokens_failed", "tokens_per_turn"],
    "episode_end": ["ended_by_token_budget", "ended_by_turn_limit"],
    # reward hacking: the hacking gap and one line per exploit flag seen (the `exploit/<flag>` keys)
    "hacking": [],
}


def panel_keys(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each panel's metric keys; the tool-call and hacking panels take theirs from the records."""
    tool_keys = sorted({k for r in records for k in r if k.startswith("tool_calls/")})
    exploit_keys = sorted({k for r in records for k in r if k.startswith("exploit/")})
    dynamic = {"tool_calls": tool_keys, "hacking": ["hacking_gap", *exploit_keys]}
    return {name: keys or dynamic.get(name, []) for name, keys in PANELS.items()}


def series(records: list[dict[str, Any]], key: str) -> list[tuple[int, float]]:
    """(step, value) where measured; a step where no sample carried an exploit flag has rate 0
    (the trainer logs only the flags that occur)."""
    values = [r.get(key, 0.0 if key.startswith("exploit/") else None) for r in records]
    return [(r["step"], v) for r, v in zip(records, values, strict=True) if v is not None]


def plot_metrics(records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per panel plus overview.png; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    panels = panel_keys(records)
    rows = math.ceil(len(panels) / 4)
    figure, axes = plt.subplots(rows, 4, figsize=(20, 3.5 * rows))
    for axis, (panel, keys) in zip(axes.flat, panels.items(), strict=False):
        single, single_axis = plt.subplots(figsize=(6, 4))
        for target in (axis, single_axis):
            for key in keys:
                points = series(records, key)
                if points:
                    target.plot([p[0] for p in points], [p[1] for p in points], label=key, marker=".")
            target.set_title(panel)
            target.set_xlabel("step")
            if target.lines:
                target.legend(fontsize=7)
            else:  # e.g. kl when beta = 0: no reference policy, nothing measured
                target.text(
                    0.5, 0.5, "not measured in this run", ha="center", va="center", transform=target.transAxes
                )
        path = out_dir / f"{panel}.png"
        single.tight_layout()
        single.savefig(path, dpi=80)
        plt.close(single)
        written.append(path)
    figure.tight_layout()
    overview = out_dir / "overview.png"
    figure.savefig(overview, dpi=70)
    plt.close(figure)
    written.append(overview)
    return written
