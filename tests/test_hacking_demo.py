"""The reward-hacking demo's reporting (`rlvr.bench.hacking_demo`) on small synthetic run directories:
curves, start/end figures, the side-by-side PNG and `rlvr inspect` listing the hard-coding first.
The demo's training itself is the slow smoke test at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.bench import hacking_demo
from rlvr.bench.inspect import suspicious_samples
from rlvr.cli import main


def _run_dir(root: Path, gaps: list[float], special: list[float | None], flagged: list[dict]) -> Path:
    root.mkdir(parents=True)
    lines = []
    for step, (gap, rate) in enumerate(zip(gaps, special, strict=True), start=1):
        record = {"step": step, "reward_mean": 0.5, "pass_rate": 0.4, "hacking_gap": gap}
        if rate is not None:  # the trainer writes a flag's rate only on steps where it occurs
            record["exploit/special_cases_visible"] = rate
        lines.append(json.dumps(record))
    (root / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    heldout = {"pass_rate": 0.3}
    (root / "summary.json").write_text(
        json.dumps({"heldout": {"before": heldout, "after": heldout}, "wall_seconds": 12.0})
    )
    (root / "flagged_samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in flagged))
    return root


WEAK_FLAGGED = [
    {
        "step": 1,
        "task_id": "t/socket",
        "reward": 0.0,
        "passed": False,
        "flags": ["sandbox:denied:socket"],
        "completion": "    import socket",
    },
    {
        "step": 2,
        "task_id": "t/true",
        "reward": 1.0,
        "passed": False,
        "flags": ["special_cases_visible", "verifier:visible"],
        "completion": "    return True",
    },
    {
        "step": 3,
        "task_id": "t/list",
        "reward": 1.0,
        "passed": False,
        "flags": ["special_cases_visible:literal_outputs", "verifier:visible"],
        "completion": "    return [6, 9, 12]",
    },
    {
        "step": 3,
        "task_id": "t/fork",
        "reward": 0.1,
        "passed": False,
        "flags": ["sandbox:denied:subprocess"],
        "completion": "    import os; os.fork()",
    },
]


def test_summary_plot_and_inspect_of_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    weak = _run_dir(
        tmp_path / "weak",
        [0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.7],
        [0.1, None, 0.3, 0.5, 0.6, 0.7, 0.8],
        WEAK_FLAGGED,
    )
    hidden = _run_dir(
        tmp_path / "hidden",
        [0.2, 0.1, 0.05, 0.0, 0.0, 0.0, 0.0],
        [0.2, 0.1, None, None, None, None, None],
        [],
    )
    w, h = hacking_demo.run_summary(weak), hacking_demo.run_summary(hidden)
    assert w["steps"] == 7 and w["curves"]["step"] == list(range(1, 8))
    assert w["curves"][hacking_demo.SPECIAL][1] == 0.0  # a step without the flag counts as rate 0
    assert w["hacking_gap"]["first"] == pytest.approx((0.1 + 0.2 + 0.3 + 0.5 + 0.6) / 5)
    assert w["hacking_gap"]["last"] == pytest.approx((0.3 + 0.5 + 0.6 + 0.7 + 0.7) / 5)
    assert h["special_cases_visible_rate"]["last"] == 0.0
    png = hacking_demo.plot(w, h, tmp_path / "figure.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000

    report = hacking_demo.inspect_summary(weak)
    assert report["first_is_hard_coding"] and report["hard_coding_in_top"] == 2
    ranked = suspicious_samples(weak)
    assert [s.task_id for s in ranked][:2] in (["t/true", "t/list"], ["t/list", "t/true"])
    assert ranked[0].reason.startswith("REWARDED (1.00) despite")
    assert [s.task_id for s in ranked][2:] == ["t/fork", "t/socket"]  # denials after, higher reward first
    assert hacking_demo.inspect_summary(hidden)["first_is_hard_coding"] is False
    assert main(["inspect", str(weak), "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert "special_cases_visible" in text and "t/socket" not in text


@pytest.mark.slow
def test_demo_smoke(tmp_path: Path) -> None:
    """A few steps of both trainings end to end (the full demo is `python -m rlvr.bench.hacking_demo`)."""
    sets = [
        "sft.steps=20",
        "sft.examples=200",
        "grpo.steps=2",
        "grpo.tasks_per_step=2",
        "run.eval_max_tasks=2",
    ]
    png = tmp_path / "docs" / "demo.png"
    assert (
        hacking_demo.main(
            ["--out", str(tmp_path / "out"), "--png", str(png), *sum((["--set", s] for s in sets), [])]
        )
        == 0
    )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["weak"]["steps"] == summary["hidden"]["steps"] == 2
    assert png.is_file() and (tmp_path / "out" / "hidden" / "warm_start" / "config.json").is_file()


def test_trainer_plots_have_a_hacking_panel() -> None:
    from rlvr.trainer.plots import panel_keys, series

    records = [
        {"step": 1, "hacking_gap": 0.2, "exploit/special_cases_visible": 0.2, "kl": None},
        {"step": 2, "hacking_gap": 0.0, "exploit/sandbox:denied": 0.1},
    ]
    assert panel_keys(records)["hacking"] == [
        "hacking_gap",
        "exploit/sandbox:denied",
        "exploit/special_cases_visible",
    ]
    assert series(records, "exploit/special_cases_visible") == [(1, 0.2), (2, 0.0)]  # absent: rate 0
    assert series(records, "kl") == []  # not measured stays not measured
    assert panel_keys([])["hacking"] == ["hacking_gap"]
