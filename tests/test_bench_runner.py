"""The bench runner's bookkeeping on a small code pack graded by the real code grader: failures are
recorded and counted (never dropped), resume skips finished samples, bad input gets clear errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlvr.bench.policies import Generation, Policy, PolicyError, Request, Settings, make_policy
from rlvr.bench.runner import BenchSpec, GraderCache, run_bench
from rlvr.bench.store import BenchError
from rlvr.cli import main
from rlvr.core.pack import StaticPack
from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader

RIGHT = {"add": "    return a + b\n", "mul": "    return a * b\n"}


def code_task(
    name: str, body: str, calls: list[tuple[Any, ...]], difficulty: int, split: str = "test"
) -> Task:
    return Task(
        id=name,
        prompt=f"def {name}(a, b):\n",
        family="code",
        difficulty=difficulty,
        split=split,
        hidden={
            "entry_point": name,
            "reference": f"def {name}(a, b):\n{body}",
            "check": None,
            "calls": calls,
            "mode": "hidden",
        },
    )


def tiny_pack(name: str = "tiny-code") -> StaticPack:
    return StaticPack(
        name,
        [
            code_task("add", RIGHT["add"], [(1, 2), (3, 4), (-1, 5)], 1),
            code_task("mul", RIGHT["mul"], [(2, 3), (0, 9), (4, 4)], 2),
        ],
    )


class ScriptedPolicy(Policy):
    """Answers from a table keyed by (task id, sample); `None` in the table means a failed request."""

    def __init__(self, answers: dict[tuple[str, int], str | None], settings: Settings | None = None) -> None:
        super().__init__("scripted:test", settings)
        self.answers = answers
        self.requests: list[Request] = []

    def generate(self, requests: list[Request]) -> list[Generation]:
        self.requests += requests
        out = []
        for r in requests:
            text = self.answers.get((r.task_id, r.sample), RIGHT[r.task_id])
            out.append(
                Generation.failed("server said no") if text is None else Generation(text, completion_tokens=3)
            )
        return out


class RaisingGrader(Grader):
    """A broken grader (breaks its never-raise contract) — what is under test is the runner's handling."""

    def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
        raise RuntimeError("sandbox exploded")


@pytest.fixture(scope="module")
def graders() -> Iterator[GraderCache]:
    cache = GraderCache(jobs=2, timeout=1.0)
    yield cache
    cache.close()


def spec(out: Path, **kwargs: Any) -> BenchSpec:
    return BenchSpec(packs=kwargs.pop("packs", [tiny_pack()]), out=out, progress=False, **kwargs)


def test_failed_generation_is_recorded_counted_and_retried(tmp_path: Path, graders: GraderCache) -> None:
    failing = ScriptedPolicy({("add", 1): None})
    first = run_bench(spec(tmp_path, ks=[1, 2], n=2), failing, graders)
    assert first["samples"] == 4 and first["generation_errors"] == 1
    assert first["pass@1"] == pytest.approx((1 / 2 + 2 / 2) / 2)  # the failed sample counts as incorrect
    assert first["pass@2"] == pytest.approx(1.0)
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    (failed,) = [x for x in lines if x["generation_error"]]
    assert failed["task_id"] == "add" and failed["sample"] == 1 and failed["error"] == "server said no"

    healthy = ScriptedPolicy({})
    second = run_bench(spec(tmp_path, ks=[1, 2], n=2), healthy, graders)
    assert [(r.task_id, r.sample) for r in healthy.requests] == [("add", 1)]  # only the failed one again
    assert second["resumed_samples"] == 3 and second["generation_errors"] == 0
    assert second["pass@1"] == 1.0
    assert second["completion_tokens"]["total"] == 12


def test_timeouts_and_hallucinated_imports_are_counted(tmp_path: Path, graders: GraderCache) -> None:
    policy = ScriptedPolicy(
        {
            ("add", 0): "    while True:\n        pass\n",
            ("add", 1): "    import requests\n    return a + b\n",
            ("mul", 0): "    return (a *\n",
        }
    )
    results = run_bench(spec(tmp_path, ks=[1], n=2), policy, graders)
    assert results["timeouts"] == 1 and results["timeout_rate"] == pytest.approx(1 / 4)
    assert results["syntax_error_rate"] == pytest.approx(1 / 4)
    assert results["hallucinated_import_rate"] == pytest.approx(1 / 3)  # over the 3 samples that parsed
    assert results["pass@1"] == pytest.approx((0 + 1 / 2) / 2)
    assert results["by_difficulty"]["1"]["pass_rate"] == 0.0
    assert results["by_difficulty"]["2"]["pass_rate"] == 0.5


def test_grader_failure_is_recorded_never_dropped(tmp_path: Path) -> None:
    broken = GraderCache(factory=RaisingGrader)
    results = run_bench(spec(tmp_path, ks=[1], n=2), ScriptedPolicy({}), broken)
    assert results["samples"] == 4 and results["grading_errors"] == 4
    assert results["pass@1"] == 0.0
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert all("sandbox exploded" in x["error"] for x in lines)


def test_recorded_ids_outside_the_pack_are_reported(tmp_path: Path, graders: GraderCache) -> None:
    recorded = tmp_path / "recorded.jsonl"
    rows = [("add", RIGHT["add"]), ("add", "    return 0\n"), ("ghost", "x"), ("mul", RIGHT["mul"])]
    recorded.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in rows))
    results = run_bench(spec(tmp_path / "out", ks=[1]), make_policy(f"jsonl:{recorded}"), graders)
    assert results["unknown_task_ids"] == ["ghost"]
    assert any("none of the selected packs" in note for note in results["notes"])
    assert results["tasks"] == 2 and results["pass@1"] == pytest.approx((1 / 2 + 1) / 2)
    stored = [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert [x["task_id"] for x in stored if x["pack"] is None] == ["ghost"]


def test_several_packs_are_reported_per_pack(tmp_path: Path, graders: GraderCache) -> None:
    results = run_bench(
        spec(tmp_path, packs=[tiny_pack("first"), tiny_pack("second")], ks=[1], n=1),
        ScriptedPolicy({}),
        graders,
    )
    assert set(results["packs"]) == {"first", "second"}
    assert "pass@1" not in results  # top-level pass@k only for a single pack
    assert all(m["pass@1"] == 1.0 and m["samples"] == 2 for m in results["packs"].values())
    assert (tmp_path / "report.html").exists()


def test_n_below_k_is_a_clear_error(tmp_path: Path, graders: GraderCache) -> None:
    with pytest.raises(BenchError, match="fewer than k=8"):
        run_bench(spec(tmp_path, ks=[1, 8], n=4), ScriptedPolicy({}), graders)


def test_empty_split_names_the_splits(tmp_path: Path, graders: GraderCache) -> None:
    with pytest.raises(BenchError, match=r"no tasks in split 'train'.*\['test'\]"):
        run_bench(spec(tmp_path, ks=[1], split="train"), ScriptedPolicy({}), graders)


def test_changed_settings_do_not_mix_into_one_directory(tmp_path: Path, graders: GraderCache) -> None:
    run_bench(spec(tmp_path, ks=[1], n=1), ScriptedPolicy({}, Settings(temperature=0.2)), graders)
    with pytest.raises(BenchError, match="changed: temperature"):
        run_bench(spec(tmp_path, ks=[1], n=1), ScriptedPolicy({}, Settings(temperature=0.9)), graders)


def test_bad_policy_specs_and_files_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(PolicyError, match="hf:PATH, openai:URL or jsonl:FILE"):
        make_policy("gpt:whatever")
    with pytest.raises(PolicyError, match="do not take model"):
        make_policy(f"jsonl:{tmp_path}/x.jsonl", model="m")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n{"task_id": 3, "completion": "y"}\n')
    code = main(["bench", "--pack", "humaneval", "--policy", f"jsonl:{bad}", "--out", str(tmp_path / "o")])
    assert code == 2
    assert f"{bad}:2: task_id must be a non-empty string" in capsys.readouterr().err
    good = tmp_path / "good.jsonl"
    good.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n')
    assert (
        main(["bench", "--pack", "no-such-pack", "--policy", f"jsonl:{good}", "--out", str(tmp_path / "o")])
        == 2
    )
    assert "unknown pack 'no-such-pack'" in capsys.readouterr().err


class InterruptedPolicy(ScriptedPolicy):
    """Generates one sample per batch and is interrupted (Ctrl-C) on its third batch."""

    preferred_batch = 1

    def generate(self, requests: list[Request]) -> list[Generation]:
        if len(self.requests) == 2:
            raise KeyboardInterrupt
        return super().generate(requests)


def test_interrupted_run_keeps_graded_batches_and_resumes(tmp_path: Path, graders: GraderCache) -> None:
    with pytest.raises(KeyboardInterrupt):
        run_bench(spec(tmp_path, ks=[1], n=2), InterruptedPolicy({}), graders)
    stored = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    # batch 1 was stored when batch 2 finished generating; batch 2 was graded while batch 3 was interrupted
    assert [(x["task_id"], x["sample"], x["passed"]) for x in stored] == [("add", 0, True), ("add", 1, True)]

    resumed = ScriptedPolicy({})
    resumed.preferred_batch = 1
    results = run_bench(spec(tmp_path, ks=[1], n=2), resumed, graders)
    assert [(r.task_id, r.sample) for r in resumed.requests] == [("mul", 0), ("mul", 1)]
    assert results["resumed_samples"] == 2 and results["samples"] == 4 and results["pass@1"] == 1.0


def test_a_sample_holding_an_unpaired_surrogate_is_stored_and_read_back(tmp_path: Path) -> None:
    """A model's text can hold a lone surrogate (no UTF-8 writer accepts it): the sample is stored as an
    escape and the resumed store reads it back as it was generated."""
    from rlvr.bench.store import SampleStore

    record = {"pack": "p", "task_id": "t", "sample": 0, "completion": "x\ud800y", "generation_error": None}
    SampleStore(tmp_path).append([record])
    again = SampleStore(tmp_path)
    assert again.is_done(("p", "t", 0)) and again.records[("p", "t", 0)]["completion"] == "x\ud800y"
