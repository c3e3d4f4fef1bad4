"""One figure for a demo run at several seeds: the training pass rate per GRPO step (one curve per
seed), and the held-out pass rate before and after GRPO (sampled, at the training temperature) per
seed, against the target. Reads each run directory's metrics.jsonl and summary.json; a seed whose
run did not finish is left out and named on stdout, never drawn as an empty panel.

    .venv/bin/python benchmarks/plot_demo_seeds.py OUT.png --title TITLE --target 0.80 RUN_DIR...
    (--gain: the target is on the held-out gain, after - before, as for configs/tool.toml)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--title", required=True)
    parser.add_argument("--target", type=float, required=True)
    parser.add_argument("--gain", action="store_true", help="the target is a held-out gain, not a pass rate")
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = []
    for run in args.runs:
        summary_path = run / "summary.json"
        if not summary_path.is_file():
            print(f"{run}: no summary.json (the run did not finish); left out")
            continue
        summary = json.loads(summary_path.read_text())
        records = [
            json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()
        ]
        runs.append((summary["config"]["run"]["seed"], summary, records))
    if not runs:
        raise SystemExit("no finished run to plot")
    runs.sort(key=lambda item: item[0])
    figure, (curves, heldout) = plt.subplots(1, 2, figsize=(12, 4.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (seed, summary, records) in enumerate(runs):
        colour = colours[index % len(colours)]
        curves.plot(
            [r["step"] for r in records],
            [r["pass_rate"] for r in records],
            color=colour,
            label=f"seed {seed}: training tasks, pass rate of the step's samples",
        )
        before, after = summary["heldout"]["before"]["pass_rate"], summary["heldout"]["after"]["pass_rate"]
        heldout.plot(
            [0, 1],
            [before, after],
            marker="o",
            color=colour,
            label=f"seed {seed}: {before:.3f} -> {after:.3f}",
        )
        if args.gain:
            heldout.annotate(
                f"{after - before:+.3f}", (1, after), textcoords="offset points", xytext=(6, 0), color=colour
            )
    curves.set_xlabel("GRPO step")
    curves.set_ylabel("pass rate (fraction of samples passed)")
    curves.set_ylim(0, 1)
    curves.set_title("training curve per seed")
    curves.legend(fontsize=8, loc="lower right")
    heldout.set_xticks([0, 1], ["before GRPO (warm start)", "after GRPO"])
    heldout.set_xlim(-0.3, 1.5)
    heldout.set_ylim(0, 1)
    heldout.set_ylabel("held-out pass rate (fraction of samples passed)")
    if args.gain:
        heldout.set_title(f"held-out pass rate per seed (target: gain >= {args.target:+.2f})")
    else:
        heldout.axhline(
            args.target, color="grey", linestyle="--", label=f"target after GRPO: {args.target:.2f}"
        )
        heldout.set_title("held-out pass rate per seed")
    heldout.legend(fontsize=8, loc="lower right")
    figure.suptitle(args.title)
    figure.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
