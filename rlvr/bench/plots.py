"""PNG plots for the reports, drawn with matplotlib's object API on the Agg canvas (no pyplot, so no
global backend or figure state is touched)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


def _grouped_bars(
    path: Path, title: str, categories: list[str], series: dict[str, list[float | None]], ylabel: str
) -> Path:
    figure = Figure(figsize=(max(5.0, 0.9 * len(categories) * max(1, len(series)) + 2), 3.6))
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(series))
    positions = np.arange(len(categories))
    for index, (name, values) in enumerate(series.items()):
        heights = [np.nan if v is None else v for v in values]
        bars = axes.bar(positions + index * width - 0.4 + width / 2, heights, width, label=name)
        axes.bar_label(bars, labels=["n/a" if v is None else f"{v:.2f}" for v in values], fontsize=7)
    axes.set_xticks(
        positions,
        categories,
        rotation=30 if len(categories) > 6 else 0,
        ha="right" if len(categories) > 6 else "center",
    )
    axes.set_ylim(0, 1.05)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    if len(series) > 1:
        axes.legend(fontsize="small")
    return _save(figure, path)


def reward_distribution(path: Path, rewards: dict[str, list[float]]) -> Path:
    figure = Figure(figsize=(6, 3.6))
    axes = figure.add_subplot()
    bins = [i / 20 for i in range(21)]
    for name, values in rewards.items():
        axes.hist(
            values, bins=bins, histtype="step" if len(rewards) > 1 else "bar", label=name, linewidth=1.5
        )
    axes.set_xlabel("reward")
    axes.set_ylabel("samples")
    axes.set_title("Reward distribution")
    if len(rewards) > 1:
        axes.legend(fontsize="small")
    return _save(figure, path)


def pass_rate_by_difficulty(path: Path, per_pack: dict[str, dict[str, Any]]) -> Path:
    levels = sorted({level for m in per_pack.values() for level in m["by_difficulty"]})
    series = {
        name: [m["by_difficulty"].get(level, {}).get("pass_rate") for level in levels]
        for name, m in per_pack.items()
    }
    return _grouped_bars(
        path, "Pass rate by difficulty", [f"difficulty {x}" for x in levels], series, "pass rate"
    )


def component_breakdown(path: Path, per_pack: dict[str, dict[str, Any]]) -> Path:
    names = list(dict.fromkeys(c for m in per_pack.values() for c in m["components"]))
    series = {pack: [m["components"].get(c) for c in names] for pack, m in per_pack.items()}
    return _grouped_bars(path, "Mean score by verifier component", names or ["(none)"], series, "score / max")


def metric_by_cell(path: Path, title: str, labels: list[str], series: dict[str, list[float | None]]) -> Path:
    return _grouped_bars(path, title, labels, series, "value")


def metric_vs_setting(
    path: Path, title: str, xlabel: str, lines: dict[str, list[tuple[float, float | None]]], ylabel: str
) -> Path:
    figure = Figure(figsize=(6, 3.6))
    axes = figure.add_subplot()
    for name, points in lines.items():
        ordered = sorted(points)
        axes.plot(
            [x for x, _ in ordered], [np.nan if y is None else y for _, y in ordered], marker="o", label=name
        )
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_ylim(0, 1.05)
    axes.set_title(title)
    axes.legend(fontsize="small")
    return _save(figure, path)
