"""Done-when check for `rlvr bench`: a recorded (jsonl) policy over real HumanEval tasks with a known
number of correct samples per task, graded by the real code grader, gives exactly the unbiased
pass@1 and pass@8; the report and its PNG plots are written; re-runs resume."""

from __future__ import annotations

import csv
import json
import random
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import pytest

from rlvr.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# task -> (original text, off-by-one replacement) applied to the canonical solution
OFF_BY_ONE = {
    "HumanEval/23": ("return len(string)", "return len(string) + 1"),
    "HumanEval/13": ("return a\n", "return a + 1\n"),
    "HumanEval/55": ("        return 1\n", "        return 2\n"),
    "HumanEval/4": ("/ len(numbers)\n", "/ (len(numbers) - 1)\n"),
    "HumanEval/35": ("for e in l:", "for e in l[:-1]:"),
}
RETURN_NONE = "    return None\n"
HALLUCINATED = "    import numpy_fastmath\n    return None\n"
SYNTAX_ERROR = "    return (a * h\n"

# task -> (correct, off-by-one, return-None, hallucinated-import, syntax-error) sample counts
PLAN = {
    "HumanEval/23": (3, 4, 3, 0, 0),
    "HumanEval/13": (0, 5, 5, 0, 0),
    "HumanEval/55": (1, 4, 3, 0, 0),
    "HumanEval/4": (12, 0, 0, 0, 0),
    "HumanEval/35": (5, 2, 2, 0, 0),
    "HumanEval/45": (2, 0, 3, 2, 1),
}


def off_by_one(task_id: str, canonical: str) -> str:
    old, new = OFF_BY_ONE[task_id]
    assert old in canonical, f"the off-by-one edit for {task_id} no longer applies"
    return canonical.replace(old, new, 1)


def recorded_lines(problems: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    lines: list[dict[str, str]] = []
    for task_id, (good, edited, none, hallucinated, broken) in PLAN.items():
        problem = problems[task_id]
        canonical = problem["canonical_solution"]
        corrects = [canonical] * good
        if task_id == "HumanEval/35":  # one correct sample as a fenced full program
            corrects[0] = f"Here it is:\n```python\n{problem['prompt']}{canonical}```\n"
        samples = (
            corrects
            + [off_by_one(task_id, canonical) for _ in range(edited)]
            + [RETURN_NONE] * none
            + [HALLUCINATED] * hallucinated
            + [SYNTAX_ERROR] * broken
        )
        lines += [{"task_id": task_id, "completion": text} for text in samples]
    random.Random(7).shuffle(lines)  # samples of one task need not be adjacent
    return lines


def expected_pass_at(k: int) -> float:
    per_task = [1 - Fraction(comb(sum(c) - c[0], k), comb(sum(c), k)) for c in PLAN.values()]
    return float(sum(per_task) / len(per_task))


def bench(recorded: Path, out: Path, ks: str) -> dict[str, Any]:
    argv = ["bench", "--pack", "humaneval", "--policy", f"jsonl:{recorded}", "--k", ks, "--out", str(out)]
    assert main([*argv, "--jobs", "2", "--no-progress"]) == 0
    return json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory, humaneval_problems: dict[str, dict[str, str]]
) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bench-humaneval")
    recorded = root / "recorded.jsonl"
    recorded.write_text("".join(json.dumps(line) + "\n" for line in recorded_lines(humaneval_problems)))
    out = root / "run"
    return {"recorded": recorded, "out": out, "results": bench(recorded, out, "1,8")}


def test_exact_unbiased_pass_at_1_and_8(run: dict[str, Any]) -> None:
    results = run["results"]
    assert results["pack"] == "humaneval"
    assert results["tasks"] == len(PLAN)
    assert results["samples"] == sum(sum(c) for c in PLAN.values())
    assert results["pass@1"] == pytest.approx(expected_pass_at(1), abs=1e-12)
    assert results["pass@8"] == pytest.approx(expected_pass_at(8), abs=1e-12)
    assert results["packs"]["humaneval"]["pass@8"] == results["pass@8"]
    assert results["notes"] == []


def test_per_task_counts_and_diagnostics(run: dict[str, Any]) -> None:
    results = run["results"]
    with (run["out"] / "tasks.csv").open() as handle:
        rows = {row["task_id"]: row for row in csv.DictReader(handle)}
    assert {t: (int(r["n"]), int(r["correct"])) for t, r in rows.items()} == {
        t: (sum(c), c[0]) for t, c in PLAN.items()
    }
    total = sum(sum(c) for c in PLAN.values())
    syntax_errors = sum(c[4] for c in PLAN.values())
    hallucinated = sum(c[3] for c in PLAN.values())
    assert results["syntax_error_rate"] == pytest.approx(syntax_errors / total, abs=1e-6)
    # hallucinated imports are measured on the samples whose program parsed
    assert results["hallucinated_import_rate"] == pytest.approx(
        hallucinated / (total - syntax_errors), abs=1e-6
    )
    assert results["generation_errors"] == 0 and results["grading_errors"] == 0
    assert set(results["components"]) == {"syntax", "types", "tests", "perf"}
    assert results["components"]["tests"] >= results["pass_rate"] - 1e-9
    samples = [json.loads(line) for line in (run["out"] / "samples.jsonl").read_text().splitlines()]
    flagged = [s for s in samples if s["hallucinated_imports"]]
    assert len(flagged) == hallucinated and all(
        s["hallucinated_imports"] == ["numpy_fastmath"] for s in flagged
    )


def test_report_and_plots_are_written(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    report = (out / "report.html").read_text()
    for name in ("reward_distribution.png", "pass_by_difficulty.png", "components.png"):
        assert f"src='{name}'" in report
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
    with (out / "results.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["pack"] == "humaneval"
    assert float(row["pass@1"]) == pytest.approx(expected_pass_at(1), abs=1e-12)


def test_rerun_resumes_and_new_k_reuses_samples(run: dict[str, Any]) -> None:
    again = bench(run["recorded"], run["out"], "1,8,20")
    total = sum(sum(c) for c in PLAN.values())
    assert again["resumed_samples"] == total
    assert again["pass@1"] == run["results"]["pass@1"]
    assert again["pass@8"] == run["results"]["pass@8"]
    # pass@20 is undefined for tasks with fewer than 20 samples: null with a note, never a number
    assert again["pass@20"] is None
    assert any(note.startswith("pass@20 is null") for note in again["notes"])


def test_interrupted_run_resumes_from_stored_samples(run: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "interrupted"
    out.mkdir()
    for name in ("run.json", "samples.jsonl"):
        (out / name).write_bytes((run["out"] / name).read_bytes())
    lines = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text("".join(lines[:20]) + lines[20][:40])  # killed mid-write
    resumed = bench(run["recorded"], out, "1,8")
    assert resumed["resumed_samples"] == 20
    assert resumed["pass@1"] == pytest.approx(expected_pass_at(1), abs=1e-12)
    assert resumed["pass@8"] == pytest.approx(expected_pass_at(8), abs=1e-12)
    assert any("unreadable line" in note for note in resumed["notes"])
