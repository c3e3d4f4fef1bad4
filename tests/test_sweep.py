"""`rlvr sweep`: a grid of recorded policies x settings on real HumanEval tasks, graded by the real
code grader; each cell's pass@k is checked against an independent computation."""

from __future__ import annotations

import csv
import json
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import pytest

from rlvr.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# policy file -> task -> correctness of its samples, in file order
POLICIES = {
    "strong.jsonl": {"HumanEval/23": [True, True, False], "HumanEval/45": [True, False, True]},
    "weak.jsonl": {"HumanEval/23": [False, True, False], "HumanEval/45": [False, False, False]},
}
WRONG = "    return None\n"


def write_recorded(root: Path, problems: dict[str, dict[str, str]]) -> None:
    for name, tasks in POLICIES.items():
        lines = [
            {"task_id": task_id, "completion": problems[task_id]["canonical_solution"] if ok else WRONG}
            for task_id, flags in tasks.items()
            for ok in flags
        ]
        (root / name).write_text("".join(json.dumps(line) + "\n" for line in lines))


def expected(policy: str, n: int, k: int) -> float | None:
    values = []
    for flags in POLICIES[policy].values():
        used = flags[:n]
        if len(used) < k:
            return None
        values.append(1 - Fraction(comb(len(used) - sum(used), k), comb(len(used), k)))
    return float(sum(values) / len(values))


CONFIG = """
out = "sweep-out"
packs = ["humaneval"]
k = [1, 2]
jobs = 2
[[policies]]
spec = "jsonl:strong.jsonl"
name = "strong"
[[policies]]
spec = "jsonl:weak.jsonl"
name = "weak"
[grid]
n = [2, 3]
temperature = [0.2, 0.8]
"""


@pytest.fixture(scope="module")
def sweep(
    tmp_path_factory: pytest.TempPathFactory, humaneval_problems: dict[str, dict[str, str]]
) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("sweep")
    write_recorded(root, humaneval_problems)
    config = root / "sweep.toml"
    config.write_text(CONFIG)
    assert main(["sweep", str(config), "--no-progress"]) == 0
    out = root / "sweep-out"
    return {"config": config, "out": out, "summary": json.loads((out / "sweep.json").read_text())}


def test_every_cell_has_the_exact_pass_at_k(sweep: dict[str, Any]) -> None:
    cells = sweep["summary"]["cells"]
    assert len(cells) == 2 * 2 * 2  # policies x n x temperature
    assert sweep["summary"]["failed_cells"] == 0
    for cell in cells:
        policy = f"{cell['policy']}.jsonl"
        assert cell["pass@1"] == pytest.approx(expected(policy, cell["n"], 1), abs=1e-12)
        assert cell["pass@2"] == pytest.approx(expected(policy, cell["n"], 2), abs=1e-12)
        assert cell["samples"] == 2 * cell["n"]


def test_combined_table_plots_and_report(sweep: dict[str, Any]) -> None:
    out: Path = sweep["out"]
    with (out / "sweep.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8 and {"policy", "pack", "n", "temperature", "pass@1", "mean_reward"} <= set(rows[0])
    report = (out / "report.html").read_text()
    for name in ("sweep_pass_at_k.png", "sweep_quality.png", "sweep_temperature.png"):
        assert (out / name).read_bytes().startswith(PNG_MAGIC) and f"src='{name}'" in report
    for cell in sweep["summary"]["cells"]:
        assert (out / cell["report"]).exists() and f"href='{cell['report']}'" in report


def test_rerun_resumes_every_cell(sweep: dict[str, Any]) -> None:
    assert main(["sweep", str(sweep["config"]), "--no-progress"]) == 0
    for cell in json.loads((sweep["out"] / "sweep.json").read_text())["cells"]:
        results = json.loads((sweep["out"] / "cells" / cell["cell"] / "results.json").read_text())
        assert results["resumed_samples"] == results["planned_samples"] == cell["samples"]


def test_a_failing_cell_is_reported_and_the_rest_run(
    tmp_path: Path, humaneval_problems: dict[str, dict[str, str]]
) -> None:
    write_recorded(tmp_path, humaneval_problems)
    config = tmp_path / "sweep.toml"
    config.write_text(
        'packs = ["humaneval"]\npolicies = ["jsonl:strong.jsonl", "jsonl:missing.jsonl"]\njobs = 2\n'
    )
    assert main(["sweep", str(config), "--out", str(tmp_path / "o"), "--no-progress"]) == 1
    cells = {c["policy"]: c for c in json.loads((tmp_path / "o" / "sweep.json").read_text())["cells"]}
    assert "does not exist" in cells["jsonl:missing.jsonl"]["error"]
    assert cells["jsonl:strong.jsonl"]["error"] is None
    assert cells["jsonl:strong.jsonl"]["pass@1"] == pytest.approx(expected("strong.jsonl", 3, 1), abs=1e-12)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('packs = ["humaneval"]\npolicies = ["jsonl:x"]\ncolour = 1\n', "unknown key(s) colour"),
        ('packs = ["humaneval"]\npolicies = ["jsonl:x"]\n[grid]\nbeam = [1]\n', "grid key 'beam'"),
        ('packs = ["humaneval"]\npolicies = ["jsonl:x"]\n[grid]\nk = [0]\n', "positive integer"),
        ('packs = []\npolicies = ["jsonl:x"]\n', "packs must be"),
        ('packs = ["humaneval"]\npolicies = ["jsonl:x"]\ntemperature = 9.0\n', "temperature must be"),
        ("packs = [", "not valid TOML"),
    ],
)
def test_bad_configs_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    assert main(["sweep", str(config), "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err
