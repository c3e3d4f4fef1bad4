"""Red team 3: `rlvr grade --swebench` (and `rlvr grade`) on hostile input lines.

`json.loads` raises more than JSONDecodeError: a plain ValueError for an integer longer than Python's
int/str digit limit (4,300 digits) and RecursionError for deep nesting. Every reader caught only
JSONDecodeError, so one such line in an instances or completions file crashed the whole command
(and a report line printed by the candidate's own pytest process crashed the grading of its batch).
An instance whose `repo` holds a NUL byte or a name too long for the file system crashed the
instances reader the same way. Each is now a flagged line / a problem on stderr, never a crash."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from rlvr.cli.grade import read_lines
from rlvr.cli.swebench import read_patches
from rlvr.graders.repo.swebench import (
    REPORT_TAG,
    InstanceError,
    SweBenchRunner,
    SweInstance,
    load_instances,
    parse_report,
    read_instances,
)
from tests.test_cli_swebench import NO_ENGINE, grade_command, instances  # noqa: F401
from tests.test_repo_swebench import instance  # noqa: F401

HUGE_INT = "9" * 5000  # over Python's 4,300-digit int/str conversion limit
DEEP = "[" * 100_000 + "]" * 100_000  # deeper than the interpreter's recursion limit


def hostile_lines(good: Mapping[str, object]) -> list[str]:
    return [
        json.dumps(good)[:-1] + f', "n": {HUGE_INT}}}',
        DEEP,
        '{"task_id": "x", "completion": ' + DEEP + "}",
    ]


def test_completion_lines_that_json_loads_cannot_hold_are_flagged(
    instances: Path,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    patches = tmp_path / "patches.jsonl"
    good = {"task_id": "shapes__clamp-1", "completion": "no patch here"}
    patches.write_text("\n".join([*hostile_lines(good), json.dumps(good)]) + "\n")
    out = tmp_path / "verdicts.jsonl"
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)  # no line reaches a test run
    status = grade_command("--swebench", str(instances), "--completions", str(patches), "--out", str(out))
    assert status == 0, capsys.readouterr().err
    verdicts = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["line"] for v in verdicts] == [1, 2, 3, 4]
    for verdict in verdicts[:3]:
        assert "not valid JSON" in verdict["error"] and not verdict["passed"]
    assert "digit" in verdicts[0]["error"] and "nested too deeply" in verdicts[1]["error"]
    assert verdicts[3]["gates"] == ["patch"] and verdicts[3]["error"] is None  # the good line is graded


def test_instance_lines_that_json_loads_or_the_file_system_cannot_hold_are_problems(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    good = {
        "instance_id": "i-1",
        "repo": "repo",
        "base_commit": "HEAD",
        "FAIL_TO_PASS": ["tests/test_a.py::test_a"],
    }
    lines = [
        *hostile_lines(good),
        json.dumps(good | {"instance_id": "nul-1", "repo": "re\x00po"}),
        json.dumps(good | {"instance_id": "long-1", "repo": "x" * 5000}),
        json.dumps(good | {"instance_id": "ids-1", "FAIL_TO_PASS": DEEP}),
        json.dumps(good | {"instance_id": "ids-2", "FAIL_TO_PASS": f"[{HUGE_INT}]"}),
        json.dumps(good),
    ]
    path = tmp_path / "instances.jsonl"
    path.write_text("\n".join(lines) + "\n")
    found, problems = read_instances(path)
    assert list(found) == ["i-1"]
    assert [number for number, _, _ in problems] == [1, 2, 3, 4, 5, 6, 7]
    assert {named for _, _, named in problems[3:]} == {"nul-1", "long-1", "ids-1", "ids-2"}
    assert "repo is not a usable path" in problems[3][1] and "is not a directory" in problems[4][1]
    assert "FAIL_TO_PASS" in problems[5][1] and "FAIL_TO_PASS" in problems[6][1]
    with pytest.raises(InstanceError, match=r"instances\.jsonl:1: "):
        load_instances(path)


def test_a_hostile_report_line_from_the_runner_is_no_report() -> None:
    """The report line is printed by the pytest process the candidate's code runs in."""
    nonce = "n" * 32
    for payload in (DEEP, '{"results": {"t": ' + HUGE_INT + "}}"):
        assert parse_report(f"{REPORT_TAG} {nonce} {payload}\n".encode(), nonce) is None
    genuine = f'{REPORT_TAG} {nonce} {{"results": {{"t::a": "passed"}}}}\n'.encode()
    assert parse_report(genuine, nonce) == {"t::a": "passed"}


def test_rlvr_grade_reader_flags_the_same_lines(tmp_path: Path) -> None:
    path = tmp_path / "completions.jsonl"
    good = {"task_id": "HumanEval/0", "completion": "def f(): pass"}
    path.write_text("\n".join([*hostile_lines(good), json.dumps(good)]) + "\n")
    rows = list(read_lines(path))
    assert [row[0] for row in rows] == [1, 2, 3, 4]
    assert all(row[3] is not None and "not valid JSON" in row[3] for row in rows[:3])
    assert rows[3] == (4, "HumanEval/0", "def f(): pass", None)
    assert [row[0] for row in read_patches(path)] == [1, 2, 3, 4]


RUNNER_SHADOWS = [
    "pytest.py",
    "pytest/__init__.py",
    "_pytest/main.py",
    "pluggy/__init__.py",
    "py.py",
    "iniconfig/__init__.py",
    "packaging.py",
    "pygments/__init__.py",
    "rlvr_swe_report.py",
    "sitecustomize.py",
    "usercustomize.py",
    "pytest.ini",
]
FORGER = (
    "import os, sys\n"
    "print('RLVR-SWE-REPORT', os.environ['RLVR_REPORT_NONCE'], '{\"results\": {}}')\n"
    "sys.exit(0)\n"
)


@pytest.mark.parametrize("path", RUNNER_SHADOWS)
def test_a_patch_that_replaces_the_test_runner_is_refused_before_running(
    instance: SweInstance,  # noqa: F811 - the fixture imported above
    path: str,
) -> None:
    patch = f"```{path}\n{FORGER}```\n"
    verdict = SweBenchRunner().decided_without_running(instance, patch)
    assert verdict is not None, f"{path} would reach the test run"
    assert {"protected_path_edit", "test_tamper"} <= set(verdict.flags) and verdict.reward == 0.0


def test_honest_paths_that_look_alike_still_run(instance: SweInstance) -> None:  # noqa: F811
    """pytest's own repository keeps its code under src/: a fix there is an ordinary patch."""
    for path in (
        "src/_pytest/main.py",
        "src/pytest/__init__.py",
        "shapes/pytest_compat.py",
        "packaging/notes.py",
    ):
        assert SweBenchRunner().decided_without_running(instance, f"```{path}\nX = 1\n```\n") is None
