"""`rlvr bench --executor ray` grades on Ray actors and reports what local grading reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")


@pytest.mark.slow  # Ray grading agreement is covered by tests/test_ray.py
def test_bench_on_ray_matches_local(tmp_path: Path, humaneval_problems):
    samples = tmp_path / "samples.jsonl"
    rows = []
    for task_id in ("HumanEval/0", "HumanEval/4", "HumanEval/7"):
        problem = humaneval_problems[task_id]
        rows.append({"task_id": task_id, "completion": problem["canonical_solution"]})
        rows.append({"task_id": task_id, "completion": "    return None\n"})
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    results = {}
    for executor in ("local", "ray"):
        out = tmp_path / executor
        command = [
            sys.executable,
            "-m",
            "rlvr",
            "bench",
            "--pack",
            "humaneval",
            "--policy",
            f"jsonl:{samples}",
        ]
        command += ["--k", "1,2", "--out", str(out), "--no-progress", "--executor", executor]
        if executor == "ray":
            command += ["--ray-workers", "1"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        results[executor] = json.loads((out / "results.json").read_text())
    assert results["local"]["pass@1"] == pytest.approx(0.5)
    assert results["local"]["pass@2"] == pytest.approx(1.0)
    for key in ("pass@1", "pass@2"):
        assert results["ray"][key] == pytest.approx(results["local"][key])
