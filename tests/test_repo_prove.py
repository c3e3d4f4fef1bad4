"""`rlvr packs validate` proves repository tasks by running them: a deliberately broken pack (one task of
each broken kind) is refused task by task, and a sound task passes with its no-op reward printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.core.validation import TRIVIAL_REWARD_LIMIT
from rlvr.graders.repo.prove import prove_repo_tasks
from rlvr.sandbox import make_sandbox
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).resolve().parents[1]

CORE = '''"""Small arithmetic helpers."""


def double(x: int) -> int:
    """Twice x."""
    return x * 2


def clamp(x: int, low: int, high: int) -> int:
    """x limited to [low, high]."""
    return max(low, min(high, x))
'''
TESTS = """from pkg.core import clamp, double


def test_double() -> None:
    assert double(3) == 6


def test_clamp() -> None:
    assert clamp(5, 0, 3) == 3
"""
SCENARIOS = [
    {"kind": "call", "target": "pkg.core:double", "args": [4]},
    {"kind": "call", "target": "pkg.core:double", "args": [-1]},
    {"kind": "call", "target": "pkg.core:clamp", "args": [5, 0, 3]},
    {"kind": "call", "target": "pkg.core:clamp", "args": [-5, 0, 3]},
]
BUGGY = CORE.replace("return x * 2", "return x * 3")


def _line(task_id: str, **fields: object) -> dict[str, object]:
    return {
        "id": task_id,
        "prompt": "Bug report: double(4) gives 12, expected 8. Do not edit the tests.",
        "repo": "calc",
        "base_edits": {"pkg/core.py": BUGGY},
        "reference_edits": {},
        "scenarios": SCENARIOS,
        "split": "test",
        "meta": {"kind": "bug"},
    } | fields


BROKEN = {
    # the reference (the repository as shipped, plus its edits) fails its own visible test
    "fails-own-test": _line(
        "fails-own-test", reference_edits={"pkg/core.py": CORE.replace("max(low, min(high, x))", "x")}
    ),
    # the reference has a type error
    "type-error": _line(
        "type-error", reference_edits={"pkg/core.py": CORE + '\n\ndef broken() -> int:\n    return "no"\n'}
    ),
    # a scenario calls a function that does not exist (both states "agree" on AttributeError)
    "missing-function": _line(
        "missing-function", scenarios=SCENARIOS + [{"kind": "call", "target": "pkg.core:triple", "args": [1]}]
    ),
    # a scenario names a module that does not exist
    "missing-module": _line(
        "missing-module",
        scenarios=SCENARIOS + [{"kind": "call", "target": "pkg.nowhere:double", "args": [1]}],
    ),
    # a module of the package cannot be imported
    "cannot-import": _line(
        "cannot-import",
        reference_edits={"pkg/extra.py": "import pkg.absent_module\n\nVALUE: int = 1\n"},
    ),
    # the base state already behaves as the reference on every check: a no-op scores 1.0
    "noop-passes": _line(
        "noop-passes",
        base_edits={"pkg/core.py": CORE.replace('"""Twice x."""', '"""Twice x (documented)."""')},
    ),
}
SOUND = _line("sound")


def _write_pack(root: Path, lines: list[dict[str, object]]) -> Path:
    (root / "repos/calc/pkg").mkdir(parents=True)
    (root / "repos/calc/tests").mkdir()
    (root / "repos/calc/pkg/__init__.py").write_text('"""calc."""\n')
    (root / "repos/calc/pkg/core.py").write_text(CORE)
    (root / "repos/calc/tests/test_core.py").write_text(TESTS)
    (root / "pack.toml").write_text('name = "calc-broken"\nfamily = "repo"\nversion = "1"\n')
    (root / "tasks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox("local", workers=2) as pool:
        yield pool


@pytest.fixture(scope="module")
def broken_report(tmp_path_factory: pytest.TempPathFactory, sandbox):
    root = _write_pack(tmp_path_factory.mktemp("broken"), [*BROKEN.values(), SOUND])
    assert validate_directory(root) == []  # the format alone accepts every task: only running them tells
    pack = load_pack(str(root))
    return prove_repo_tasks("calc-broken", pack.tasks(), sandbox=sandbox, progress=False)


def _messages(report, task_id: str) -> list[str]:
    return [f"{p.field}: {p.message}" for p in report.problems if p.file.endswith(":" + task_id)]


def test_every_broken_task_is_refused_and_the_sound_one_proved(broken_report) -> None:
    for task_id in BROKEN:
        assert _messages(broken_report, task_id), f"validate accepted the broken task {task_id}"
    assert _messages(broken_report, "sound") == []
    proofs = {proof.task_id: proof for proof in broken_report.proofs}
    assert proofs["sound"].reference_reward == 1.0
    assert proofs["sound"].trivial_rewards["no-op"] < 0.05


def test_each_broken_kind_is_named(broken_report) -> None:
    said = {task_id: " | ".join(_messages(broken_report, task_id)) for task_id in BROKEN}
    assert "fails its own visible tests" in said["fails-own-test"]
    assert "type errors" in said["type-error"]
    assert "pkg.core:triple" in said["missing-function"] and "does not resolve" in said["missing-function"]
    assert "pkg.nowhere" in said["missing-module"] and "does not resolve" in said["missing-module"]
    assert "pkg.extra" in said["cannot-import"] and "does not import" in said["cannot-import"]
    assert "base state passes every hidden check" in said["noop-passes"]
    noop = next(p for p in broken_report.proofs if p.task_id == "noop-passes").trivial_rewards["no-op"]
    assert noop >= TRIVIAL_REWARD_LIMIT and "no-op" in said["noop-passes"]


def test_cli_validate_prints_the_noop_reward_per_task_and_refuses(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "pack", [BROKEN["missing-function"], SOUND])
    run = subprocess.run(
        [sys.executable, "-m", "rlvr", "packs", "validate", str(root)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "sound: reference 1.000, no-op 0.000" in run.stdout
    assert "missing-function: reference" in run.stdout
    assert "pkg.core:triple" in run.stderr
