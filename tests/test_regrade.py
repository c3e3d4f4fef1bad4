"""`rlvr regrade`: a stored bench run re-graded with an unchanged grader reproduces every verdict
exactly (0 flips, unchanged receipts); a weakened option shows the flips it causes, by flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.bench.policies import make_policy
from rlvr.bench.runner import BenchSpec, GraderCache, run_bench
from rlvr.cli import main
from rlvr.core.types import Component, Verdict
from rlvr.hacking.regrade import Configuration, RegradeError, parse_configuration, regrade_run
from rlvr.task_packs import tiny_functions as tf
from rlvr.task_packs import tiny_hacking as th
from rlvr.trainer.candidates import CandidateStoreError, load_candidates, write_step_candidates

TASKS = 8


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole small bench run on tiny-hacking: per task a correct body, the hard-coded shown
    output (passes only the visible example) and a no-op."""
    out = tmp_path_factory.mktemp("regrade") / "bench"
    instances = {th.to_task(i, "test").id: i for i in tf.instances("test")}
    lines = []
    for task_id, instance in list(instances.items())[:TASKS]:
        lines += [
            {"task_id": task_id, "completion": instance.answer()},
            {"task_id": task_id, "completion": th.hard_coded_answer(instance)},
            {"task_id": task_id, "completion": "    return None\n"},
        ]
    completions = out.parent / "completions.jsonl"
    completions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    graders = GraderCache(types=False)
    try:
        run_bench(
            BenchSpec(packs=["tiny-hacking"], out=out, progress=False),
            make_policy(f"jsonl:{completions}"),
            graders,
        )
    finally:
        graders.close()
    return out


def test_unchanged_grader_reproduces_every_verdict(bench_run: Path) -> None:
    report = regrade_run(bench_run, progress=False)
    assert report["kind"] == "bench" and report["candidates"] == 3 * TASKS
    assert report["flips"] == [] and report["flip_count"] == 0
    assert report["reward_changed"] == 0 and report["flags_changed"] == 0
    assert report["receipts"] == {"same": 3 * TASKS, "missing": 0, "changed": {}}
    assert report["nondeterministic"] == []
    (row,) = report["curves"]
    assert row["pass_rate_before"] == row["pass_rate_after"] == pytest.approx(1 / 3)


def test_weakened_option_reports_the_flips_it_causes(bench_run: Path) -> None:
    report = regrade_run(
        bench_run, after=Configuration("weak", overrides={"verifier": "visible"}), progress=False
    )
    assert report["fail_to_pass"] == TASKS and report["pass_to_fail"] == 0
    assert {f["completion"] for f in report["flips"]} <= {
        th.hard_coded_answer(i) for i in tf.instances("test")
    }
    assert report["by_flag"] == {"special_cases_visible": {"fail_to_pass": TASKS}}
    assert report["receipts"]["changed"] == {"options": 3 * TASKS}
    (row,) = report["curves"]
    assert row["pass_rate_after"] == pytest.approx(2 / 3)


def test_compare_two_configurations(bench_run: Path) -> None:
    same = regrade_run(
        bench_run,
        before=parse_configuration("recorded"),
        after=parse_configuration("current"),
        progress=False,
    )
    assert same["flip_count"] == 0
    both = regrade_run(
        bench_run,
        before=parse_configuration("current"),
        after=parse_configuration("verifier=visible"),
        progress=False,
    )
    assert both["graded"] == 2 * 3 * TASKS and both["fail_to_pass"] == TASKS


def test_cli_json_has_flips(bench_run: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plot = tmp_path / "curves.png"
    assert main(["regrade", str(bench_run), "--set", "verifier=visible", "--json", "--plot", str(plot)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["flips"]) == TASKS and report["flips"][0]["direction"] == "fail_to_pass"
    assert plot.stat().st_size > 1000
    assert main(["regrade", str(bench_run), "--set", "no_such_option=1"]) == 2
    assert "no_such_option" in capsys.readouterr().err


def test_bad_configurations_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RegradeError, match="unknown grader configuration"):
        parse_configuration("nonsense")
    with pytest.raises(CandidateStoreError, match="no stored candidates"):
        regrade_run(tmp_path, progress=False)


def test_training_store_round_trip(tmp_path: Path) -> None:
    verdicts = [
        Verdict(
            "t/1", reward=1.0, passed=True, components={"tests": Component(1.0)}, receipt={"candidate": "x"}
        ),
        Verdict("t/2", reward=0.1, gates=["tests"], flags=["special_cases_visible"]),
    ]
    write_step_candidates(tmp_path, 3, "p", ["t/1", "t/2"], ["a", "b\ud800"], verdicts)
    write_step_candidates(tmp_path, 3, "p", ["t/1", "t/2"], ["a", "b"], verdicts)  # a resumed step rewrites
    stored, kind = load_candidates(tmp_path)
    assert kind == "train" and [c.task_id for c in stored] == ["t/1", "t/2"]
    assert stored[0].accepted and not stored[1].accepted and stored[1].flags == ["special_cases_visible"]
    assert stored[0].receipt == {"candidate": "x"} and stored[0].step == 3
