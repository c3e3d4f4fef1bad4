"""PNG plots of hacking measurements (matplotlib's object API on the Agg canvas: no display)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def _save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


def regrade_curves(path: Path, report: dict[str, Any]) -> Path:
    """Pass rate and mean reward before/after the regrade: per step (lines) or per pack (bars)."""
    rows = report["curves"]
    figure = Figure(figsize=(9, 3.6))
    for position, metric in enumerate(("pass_rate", "reward_mean"), start=1):
        axes = figure.add_subplot(1, 2, position)
        before = [r[f"{metric}_before"] for r in rows]
        after = [r[f"{metric}_after"] for r in rows]
        if report["kind"] == "train":
            steps = [r["step"] for r in rows]
            axes.plot(steps, before, label=f"before ({report['before']})")
            axes.plot(steps, after, label=f"after ({report['after']})", linestyle="--")
            axes.set_xlabel("step")
        else:
            xs = range(len(rows))
            axes.bar([x - 0.2 for x in xs], before, width=0.4, label=f"before ({report['before']})")
            axes.bar([x + 0.2 for x in xs], after, width=0.4, label=f"after ({report['after']})")
            axes.set_xticks(list(xs), [str(r["pack"]) for r in rows])
        axes.set_title(metric.replace("_", " "))
        axes.set_ylim(0, 1.05)
        axes.legend(fontsize=7)
    figure.suptitle(f"regrade: {report['flip_count']} flips", fontsize=10)
    return _save(figure, path)
