"""`rlvr grade --swebench`: SWE-bench-style instances graded from the command line, on the fixture
repository the adapter's tests build (tests/data/swe_fixture). Same contract as `rlvr grade`: one
verdict line per input line, in order; bad lines are flagged, never a crash.

The tests parse and run the `grade` command in this process (the full `rlvr` entry point imports every
command, torch included: seconds per start; tests/test_cli.py covers the entry point itself)."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from rlvr.cli import grade
from tests.test_repo_swebench import FIXTURE, GEOMETRY, git, tampering

NO_ENGINE = "unix:///nonexistent/docker.sock"


def grade_command(*argv: str) -> int:
    """`rlvr grade ARGV` in this process: the `grade` subcommand's own parser and function."""
    parser = argparse.ArgumentParser(prog="rlvr")
    grade.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["grade", *argv])
    return int(args.func(args))


@pytest.fixture
def instances(tmp_path: Path) -> Path:
    """An instances file: line 1 the fixture instance (its repo given relative to the file), line 2
    not JSON, line 3 an instance without FAIL_TO_PASS, line 4 an instance whose repo does not exist."""
    repo = tmp_path / "shapes-repo"
    shutil.copytree(FIXTURE / "repo", repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "shapes" / "geometry.py").write_text(GEOMETRY.replace("width * height", "width + height"))
    git(repo, "commit", "-q", "-am", "later work")
    good = json.loads((FIXTURE / "instance.json").read_text()) | {"repo": "shapes-repo", "base_commit": base}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps(good | {"instance_id": "broken-1", "FAIL_TO_PASS": "[]"}),
        json.dumps(good | {"instance_id": "gone-1", "repo": "no-such-dir"}),
    ]
    path = tmp_path / "instances.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def reference_patch() -> str:
    return json.loads((FIXTURE / "instance.json").read_text())["patch"]


def test_bad_lines_are_flagged_in_order_without_docker(
    instances: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    patches = tmp_path / "patches.jsonl"
    patches.write_text(
        "\n".join(
            [
                json.dumps({"task_id": "shapes__clamp-1", "completion": tampering()}),
                json.dumps({"instance_id": "shapes__clamp-1", "model_patch": "no patch here"}),
                "[1, 2",
                json.dumps({"task_id": "nope-9", "completion": reference_patch()}),
                json.dumps({"task_id": "broken-1", "completion": reference_patch()}),
                "",
                json.dumps({"task_id": "shapes__clamp-1"}),
                json.dumps({"task_id": "gone-1", "completion": reference_patch()}),
            ]
        )
        + "\n"
    )
    out = tmp_path / "out" / "verdicts.jsonl"
    # no line reaches a test run, so no docker engine is needed (an unreachable one proves it)
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    status = grade_command("--swebench", str(instances), "--completions", str(patches), "--out", str(out))
    stderr = capsys.readouterr().err
    assert status == 0, stderr
    assert f"{instances}:2: not valid JSON" in stderr
    assert f"{instances}:3: FAIL_TO_PASS must name at least one test" in stderr
    assert f"{instances}:4: repo" in stderr and "is not a directory" in stderr
    verdicts = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["line"] for v in verdicts] == [1, 2, 3, 4, 5, 7, 8]  # the blank line 6 is skipped
    tampered, garbage, not_json, unknown, broken, no_patch, gone = verdicts
    assert {"protected_path_edit", "test_tamper"} <= set(tampered["flags"]) and tampered["reward"] == 0.0
    assert garbage["gates"] == ["patch"] and garbage["error"] is None and not garbage["passed"]
    assert "line 3: not valid JSON" in not_json["error"]
    assert "no instance 'nope-9'" in unknown["error"]
    assert "instances.jsonl:3: FAIL_TO_PASS" in broken["error"] and broken["fault"] == "task"
    assert "missing or non-string completion" in no_patch["error"]
    assert "instances.jsonl:4: repo" in gone["error"]
    assert not any(v["passed"] for v in verdicts)


def test_no_docker_engine_says_what_to_do(
    instances: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    patches = tmp_path / "patches.jsonl"
    patches.write_text(json.dumps({"task_id": "shapes__clamp-1", "completion": reference_patch()}) + "\n")
    out = tmp_path / "verdicts.jsonl"
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    status = grade_command("--swebench", str(instances), "--completions", str(patches), "--out", str(out))
    stderr = capsys.readouterr().err
    assert status == 2, stderr
    assert "no docker engine reachable" in stderr and "start the docker engine" in stderr
    assert not out.exists()


def test_pack_or_swebench_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        grade_command("--completions", str(tmp_path / "x"), "--out", str(tmp_path / "y"))
    stderr = capsys.readouterr().err
    assert stopped.value.code == 2 and "--pack" in stderr and "--swebench" in stderr
    with pytest.raises(SystemExit):
        grade_command("--pack", "humaneval", "--swebench", "i.jsonl", "--completions", "x", "--out", "y")
    assert "not allowed with argument" in capsys.readouterr().err
    status = grade_command("--swebench", str(tmp_path / "none.jsonl"), "--completions", "x", "--out", "y")
    stderr = capsys.readouterr().err
    assert status == 2 and "instances file" in stderr and "does not exist" in stderr


@pytest.mark.docker
def test_reference_patch_resolves_end_to_end_in_docker(
    instances: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.adversarial.docker_support import require_docker

    require_docker("runc")
    patches = tmp_path / "predictions.jsonl"
    patches.write_text(
        json.dumps(
            {"instance_id": "shapes__clamp-1", "model_patch": reference_patch(), "model_name_or_path": "m"}
        )
        + "\n"
        + json.dumps({"task_id": "shapes__clamp-1", "completion": tampering()})
        + "\n"
    )
    out = tmp_path / "verdicts.jsonl"
    status = grade_command("--swebench", str(instances), "--completions", str(patches), "--out", str(out))
    stderr = capsys.readouterr().err
    assert status == 0, stderr
    resolved, tampered = (json.loads(line) for line in out.read_text().splitlines())
    assert resolved["passed"] and resolved["reward"] == 1.0, resolved
    assert "untrusted_runner" in resolved["flags"]
    assert resolved["components"]["fail_to_pass"] == 1.0 and resolved["components"]["pass_to_pass"] == 1.0
    assert not tampered["passed"] and "test_tamper" in tampered["flags"]
    assert "1 resolved" in stderr and "untrusted_runner" in stderr
