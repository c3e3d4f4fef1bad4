"""The repo task format, `rlvr packs validate` on repo pack directories, and the built-in repo-tasks pack."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rlvr.graders.repo.runner import run_ops
from rlvr.sandbox import make_sandbox
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack
from rlvr.task_packs.repo_tasks import DATA_DIR, RepoTasksPack
from rlvr.task_packs.repo_tasks.format import read_repo

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT = {"router", "configloader", "bookings"}


def test_builtin_pack_shape() -> None:
    pack = load_pack("repo-tasks")
    assert isinstance(pack, RepoTasksPack) and pack.validate() == []
    tasks = pack.tasks()
    assert pack.family == "repo" and len(tasks) >= 200
    repos = {t.hidden["repo"] for t in tasks}
    assert len(repos) >= 8
    kinds = Counter(t.meta["kind"] for t in tasks)
    assert {"bug", "bug2", "feature", "rename", "migration"} <= set(kinds)
    assert {t.hidden["repo"] for t in pack.tasks("test")} == HELD_OUT  # held-out repositories
    assert not HELD_OUT & {t.hidden["repo"] for t in pack.tasks("train")}
    assert len({t.difficulty for t in tasks}) >= 3
    # the held-out split has every kind of task, schema migrations on sqlite included
    held_out_kinds = Counter(t.meta["kind"] for t in pack.tasks("test"))
    assert {"bug", "bug2", "feature", "rename", "migration"} <= set(held_out_kinds), held_out_kinds
    assert any(s["kind"] == "sqlite" for t in pack.tasks("test") for s in t.hidden["scenarios"])
    for task in tasks:
        public = json.dumps(task.public())
        assert "injected" not in public and "scenarios" not in public and "removed" not in public
        assert task.hidden["base"] != task.hidden["reference"]


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA_DIR / "repos").iterdir()))
def test_reference_repositories_pass_their_own_tests_in_the_sandbox(name: str) -> None:
    files = read_repo(DATA_DIR / "repos" / name)
    assert 3 <= len(files) <= 15
    with make_sandbox("local", workers=1) as sandbox:
        result = run_ops(sandbox, files, [("tests", {"selector": None})], timeout=20)
    outcome = result.outcomes[1]
    assert outcome is not None and outcome.ok, result
    assert outcome.value["failed"] == 0 and outcome.value["passed"] >= 3, outcome.value["lines"]


@pytest.mark.slow
def test_reference_repositories_are_pyright_clean() -> None:
    from rlvr.graders.repo.whole_repo_types import RepoTypeChecker

    checker = RepoTypeChecker()
    try:
        for directory in sorted((DATA_DIR / "repos").iterdir()):
            report = checker.check(read_repo(directory))
            assert report.failure is None and sum(report.errors.values()) == 0, (
                directory.name,
                report.errors,
            )
    finally:
        checker.close()


def _write_pack(root: Path, lines: list[object]) -> None:
    (root / "repos" / "mini" / "mini").mkdir(parents=True)
    (root / "repos" / "mini" / "mini" / "__init__.py").write_text("def f(x: int) -> int:\n    return x + 1\n")
    (root / "pack.toml").write_text('name = "mini"\nfamily = "repo"\n')
    (root / "tasks.jsonl").write_text(
        "\n".join(json.dumps(line) if not isinstance(line, str) else line for line in lines) + "\n"
    )


GOOD = {
    "id": "mini-1",
    "prompt": "f is off by one",
    "repo": "mini",
    "base_edits": {"mini/__init__.py": "def f(x: int) -> int:\n    return x + 2\n"},
    "scenarios": [{"kind": "call", "target": "mini:f", "args": [1]}],
}


def test_directory_pack_validates_with_file_line_and_field(tmp_path: Path) -> None:
    bad = [
        GOOD,
        "{not json",
        {**GOOD, "id": "mini-2", "repo": "nope"},
        {**GOOD, "id": "mini-3", "base_edits": {"../escape.py": "x"}},
        {**GOOD, "id": "mini-4", "scenarios": [{"kind": "shell", "target": "mini:f"}]},
        {**GOOD, "id": "mini-5", "reference_edits": {"mini/__init__.py": "def f(:\n"}},
        {**GOOD, "id": "mini-1"},
        {
            **GOOD,
            "id": "mini-7",
            "reference_edits": {"tests/test_mini.py": "def test() -> None:\n    pass\n"},
        },
        {**GOOD, "id": "mini-8", "domains": [{"target": "mini:f", "args": [{"int": [5, 1]}]}]},
    ]
    _write_pack(tmp_path, bad)
    problems = [str(p) for p in validate_directory(tmp_path)]
    tasks_file = str(tmp_path / "tasks.jsonl")
    assert any(p.startswith(f"{tasks_file}:2:") and "not valid JSON" in p for p in problems)
    assert any(p.startswith(f"{tasks_file}:3: repo:") for p in problems)
    assert any(p.startswith(f"{tasks_file}:4: base_edits:") and ".." in p for p in problems)
    assert any(p.startswith(f"{tasks_file}:5: scenarios[0]:") for p in problems)
    assert any(
        p.startswith(f"{tasks_file}:6: reference_edits:") and "does not compile" in p for p in problems
    )
    assert any(p.startswith(f"{tasks_file}:7: id:") and "duplicate" in p for p in problems)
    assert any(p.startswith(f"{tasks_file}:8: reference_edits:") and "protected" in p for p in problems)
    assert any(p.startswith(f"{tasks_file}:9: domains[0]:") and "lo <= hi" in p for p in problems)
    completed = subprocess.run(
        [sys.executable, "-m", "rlvr", "packs", "validate", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert completed.returncode == 1 and f"{tasks_file}:3: repo:" in completed.stderr


def test_good_directory_pack_loads(tmp_path: Path) -> None:
    _write_pack(
        tmp_path,
        [GOOD, {**GOOD, "id": "mini-2", "domains": [{"target": "mini:f", "args": [{"int": [0, 9]}]}]}],
    )
    assert validate_directory(tmp_path) == []
    pack = load_pack(str(tmp_path))
    task = pack.get("mini-1")
    assert task.family == "repo" and "return x + 2" in task.hidden["base"]["mini/__init__.py"]
    assert "return x + 1" in task.hidden["reference"]["mini/__init__.py"]


def test_example_directory_pack_grades() -> None:
    from rlvr.graders.base import make_grader
    from rlvr.graders.repo import RepoGrader

    pack = load_pack(str(ROOT / "examples" / "packs" / "repo-mini"))
    assert validate_directory(ROOT / "examples" / "packs" / "repo-mini") == []
    with make_grader(pack, jobs=1, types=False) as grader:
        assert isinstance(grader, RepoGrader)
        for task in pack.tasks():
            assert grader.grade_state(task, task.hidden["reference"]).passed
            assert not grader.grade_state(task, task.hidden["base"]).passed
