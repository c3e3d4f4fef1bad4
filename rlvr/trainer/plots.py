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
}


def plot_metrics(records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per panel plus overview.png; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    steps = [r["step"] for r in records]
    written: list[Path] = []
    tool_keys = sorted({k for r in records for k in r if k.startswith("tool_calls/")})
    panels = {name: keys or (tool_keys if name == "tool_calls" else []) for name, keys in PANELS.items()}
    rows = math.ceil(len(panels) / 4)
    figure, axes = plt.subplots(rows, 4, figsize=(20, 3.5 * rows))
    for axis, (panel, keys) in zip(axes.flat, panels.items(), strict=False):
        single, single_axis = plt.subplots(figsize=(6, 4))
        for target in (axis, single_axis):
            for key in keys:
                points = [(s, r[key]) for s, r in zip(steps, records, strict=True) if r.get(key) is not None]
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
