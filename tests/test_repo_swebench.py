"""The SWE-bench-style adapter: instances as a git repository + base commit + FAIL_TO_PASS/PASS_TO_PASS
pytest ids, graded by the repository's own tests on the docker backend (flag `untrusted_runner`).

Fast tests (no docker): patch application to a real tree, tampering caught before anything runs,
report parsing (a report without the run's nonce is ignored). Docker end to end (marked `docker`):
the reference fix passes, a wrong fix fails, a test-tampering patch fails flagged, and — what the
flag is for — code in the candidate's process can forge the runner's report."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rlvr.graders.repo.patch import PatchError, make_unified_diff
from rlvr.graders.repo.swebench import (
    SweBenchRunner,
    SweInstance,
    apply_to_tree,
    export_commit,
    instance_from_json,
    load_instances,
    parse_report,
)

FIXTURE = Path(__file__).parent / "data" / "swe_fixture"
GEOMETRY = (FIXTURE / "repo" / "shapes" / "geometry.py").read_text()
TESTS = (FIXTURE / "repo" / "tests" / "test_geometry.py").read_text()


def git(repo: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def instance(tmp_path: Path) -> SweInstance:
    """The fixture repository as a git repository: the base commit, then a later commit that breaks
    `area` (so grading anything but the base commit fails PASS_TO_PASS)."""
    repo = tmp_path / "shapes-repo"
    shutil.copytree(FIXTURE / "repo", repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "shapes" / "geometry.py").write_text(GEOMETRY.replace("width * height", "width + height"))
    git(repo, "commit", "-q", "-am", "later work")
    line = json.loads((FIXTURE / "instance.json").read_text()) | {"repo": str(repo), "base_commit": base}
    return instance_from_json(line, tmp_path)


def wrong_fix() -> str:
    return make_unified_diff(
        {"shapes/geometry.py": GEOMETRY},
        {"shapes/geometry.py": GEOMETRY.replace("return max(low, value)", "return min(value, high)")},
    )


def tampering() -> str:
    weakened = TESTS.replace("assert clamp(-5, 0, 10) == 0", "assert True")
    return make_unified_diff({"tests/test_geometry.py": TESTS}, {"tests/test_geometry.py": weakened})


def forging() -> str:
    """A 'fix' that leaves the bug and rewrites the reporting plugin's results from inside pytest's
    process: exactly what `untrusted_runner` warns about."""
    init = (FIXTURE / "repo" / "shapes" / "__init__.py").read_text()
    forged = init + (
        "\nimport sys as _sys\n\n\nclass _AllPassed(dict):\n"
        "    def __setitem__(self, key: object, value: object) -> None:\n"
        "        super().__setitem__(key, 'passed')\n\n\n"
        "_plugin = _sys.modules.get('rlvr_swe_report')\n"
        "if _plugin is not None:\n"
        "    _plugin._RESULTS = _AllPassed()  # type: ignore[attr-defined]\n"
    )
    return make_unified_diff({"shapes/__init__.py": init}, {"shapes/__init__.py": forged})


# ---------------------------------------------------------------------------------------- fast
def test_instances_load_in_swebench_format(instance: SweInstance, tmp_path: Path) -> None:
    assert instance.fail_to_pass == ("tests/test_geometry.py::test_clamp_high",)
    assert len(instance.pass_to_pass) == 3 and instance.test_files == ["tests/test_geometry.py"]
    path = tmp_path / "instances.jsonl"
    raw = json.loads((FIXTURE / "instance.json").read_text())
    path.write_text(
        json.dumps(raw | {"repo": "shapes-repo"}) + "\n" + json.dumps(raw | {"FAIL_TO_PASS": "[]"}) + "\n"
    )
    with pytest.raises(ValueError, match=r"instances.jsonl:2: FAIL_TO_PASS"):
        load_instances(path)


def test_the_base_commit_is_exported_and_patched_as_text(instance: SweInstance, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    export_commit(instance.repo_dir, instance.base_commit, tree)
    assert (tree / "shapes" / "geometry.py").read_text() == GEOMETRY  # the base, not the later commit
    assert apply_to_tree(tree, instance.patch) == ["shapes/geometry.py"]
    assert "min(value, high)" in (tree / "shapes" / "geometry.py").read_text()
    with pytest.raises(PatchError):
        apply_to_tree(tree, instance.patch)  # already applied: the context no longer matches
    (tree / "link.py").symlink_to("/etc/hostname")
    with pytest.raises(PatchError, match="symlink"):
        apply_to_tree(tree, "```link.py\nx = 1\n```\n")
    assert Path("/etc/hostname").read_text() != "x = 1\n"


def test_a_patch_to_the_tests_fails_before_anything_runs(instance: SweInstance) -> None:
    runner = SweBenchRunner(image="no-such-image:never")  # would fail loudly if a container were started
    verdict = runner.grade(instance, tampering())
    assert not verdict.passed and verdict.reward == 0.0 and verdict.error is None
    assert {"protected_path_edit", "test_tamper"} <= set(verdict.flags)
    garbage = runner.grade(instance, "no patch here")
    assert not garbage.passed and garbage.gates == ["patch"] and garbage.error is None


def test_only_the_runs_own_nonce_counts() -> None:
    good = b'x\nRLVR-SWE-REPORT abc {"results": {"t::a": "passed"}, "exitstatus": 0}\n'
    forged = b'RLVR-SWE-REPORT zzz {"results": {"t::a": "passed"}, "exitstatus": 0}\n'
    assert parse_report(good, "abc") == {"t::a": "passed"}
    assert parse_report(forged, "abc") is None
    assert parse_report(b"RLVR-SWE-REPORT abc {broken\n", "abc") is None


# ---------------------------------------------------------------------------------------- docker
@pytest.mark.docker
def test_docker_end_to_end(instance: SweInstance) -> None:
    from tests.adversarial.docker_support import require_docker

    require_docker("runc")
    runner = SweBenchRunner(timeout=120)
    try:
        correct = runner.grade(instance, instance.patch)
        assert correct.passed and correct.reward == 1.0, correct
        assert "untrusted_runner" in correct.flags
        assert correct.components["fail_to_pass"].detail == "1/1"
        assert correct.components["pass_to_pass"].detail == "3/3"

        wrong = runner.grade(instance, wrong_fix())
        assert not wrong.passed and wrong.reward == 0.0 and wrong.error is None, wrong
        assert (
            "tests/test_geometry.py::test_clamp_low" in wrong.feedback and "untrusted_runner" in wrong.flags
        )

        unfixed = runner.grade(instance, "```shapes/extra.py\nX = 1\n```\n")
        assert not unfixed.passed and unfixed.components["fail_to_pass"].detail == "0/1", unfixed

        tampered = runner.grade(instance, tampering())
        assert not tampered.passed and "test_tamper" in tampered.flags

        forged = runner.grade(instance, forging())  # the bug is still there, yet the runner says "passed"
        assert forged.passed and "untrusted_runner" in forged.flags, forged
    finally:
        runner.close()
