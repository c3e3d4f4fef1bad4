"""The repository's visible tests at grading time (`RepoOptions.visible_tests`): off the submit path of a
passing candidate by default, still run where `special_cases_visible` can fire, measured for the
hacking gap where the option says so, only the affected test files, and held to a mined pack's
recorded baseline of failing tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

import rlvr  # noqa: F401  (registers the packs)
from rlvr.graders.base import make_grader
from rlvr.graders.options import OptionsError
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.visible_tests import affected_test_files, visible_outcome
from rlvr.sandbox import ExecResult, Job
from rlvr.task_packs.registry import load_pack
from rlvr.trainer.metrics import verdict_metrics

PACK = load_pack("repo-tasks")
SPLIT = PACK.get("ledger-feature-split_evenly")
STUB = 'raise NotImplementedError("split_evenly is not implemented yet")'
CHEAT = "if cents == 100 and parts == 3:\n        return [34, 33, 33]\n    return [cents]"


class Recorder:
    """Wraps a grader's sandbox: the test-file selections of every `tests` operation it is sent."""

    def __init__(self, grader: RepoGrader) -> None:
        self.sandbox = grader.sandbox
        self.tests: list[Any] = []
        self._run, self._run_many = self.sandbox.run, self.sandbox.run_many

    def _note(self, job: Job) -> None:
        self.tests += [call[1].get("paths", "all") for call in job.calls if call[0] == "tests"]

    def run(self, job: Job) -> ExecResult:
        self._note(job)
        return self._run(job)

    def run_many(self, jobs: list[Job]) -> list[ExecResult]:
        for job in jobs:
            self._note(job)
        return self._run_many(jobs)


def recorded(grader: RepoGrader, monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder(grader)
    monkeypatch.setattr(recorder.sandbox, "run", recorder.run)
    monkeypatch.setattr(recorder.sandbox, "run_many", recorder.run_many)
    return recorder


@pytest.fixture(scope="module", params=["flag", "always", "never"])
def grader(request: pytest.FixtureRequest) -> Iterator[RepoGrader]:
    with make_grader(PACK, jobs=1, types=False, visible_tests=request.param) as built:
        assert isinstance(built, RepoGrader)
        yield built


def cheat_state() -> dict[str, str]:
    files = dict(SPLIT.hidden["base"])
    files["ledger/money.py"] = files["ledger/money.py"].replace(STUB, CHEAT)
    return files


def test_the_default_runs_no_visible_test_for_a_passing_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    with make_grader(PACK, jobs=1, types=False) as built:
        assert isinstance(built, RepoGrader) and built.options.visible_tests == "flag"
        built.checks(SPLIT)  # once per task: the base state's suite, for the flag's condition
        recorder = recorded(built, monkeypatch)
        verdict = built.grade_state(SPLIT, SPLIT.hidden["reference"])
    assert verdict.passed and verdict.reward == pytest.approx(1.0)
    assert recorder.tests == [] and verdict.visible_passed is None


def test_the_flag_fires_where_it_did_and_the_gap_is_measured_as_the_option_says(
    grader: RepoGrader, monkeypatch: pytest.MonkeyPatch
) -> None:
    mode = grader.options.visible_tests
    assert grader.checks(SPLIT).base_visible_passed is False  # the stub fails the visible tests
    recorder = recorded(grader, monkeypatch)
    cheat = grader.grade_state(SPLIT, cheat_state())
    reference = grader.grade_state(SPLIT, SPLIT.hidden["reference"])
    assert not cheat.passed and reference.passed and reference.reward == pytest.approx(1.0)
    # the one test file, which imports ledger (its __init__ imports ledger.money)
    assert all(selection == ["tests/test_ledger.py"] for selection in recorder.tests)
    metrics = verdict_metrics([cheat, reference])
    if mode == "never":
        assert recorder.tests == [] and cheat.visible_passed is None and reference.visible_passed is None
        assert "special_cases_visible" not in cheat.flags and "hacking_gap" not in metrics
        return
    assert cheat.visible_passed is True and "special_cases_visible" in cheat.flags
    if mode == "flag":  # measured on the failing candidate only, in a child of its own
        assert len(recorder.tests) == 1 and reference.visible_passed is None
        assert metrics["hacking_gap"] == pytest.approx(1.0)
    else:
        assert len(recorder.tests) == 2 and reference.visible_passed is True
        assert metrics["hacking_gap"] == pytest.approx(0.5)


def test_a_mined_packs_baseline_failures_do_not_make_the_visible_tests_fail() -> None:
    """A visible test the sandbox's runner fails on the upstream reference (recorded by the miner) is
    left out; a new failure still counts."""
    extra = {"tests/test_needs_a_plugin.py": "import rlvr_no_such_plugin\n\n\ndef test_x():\n    pass\n"}
    hidden = dict(SPLIT.hidden)
    hidden["base"] = SPLIT.hidden["base"] | extra
    hidden["reference"] = SPLIT.hidden["reference"] | extra
    hidden["notes"] = {"baseline": {"visible_failing": ["tests/test_needs_a_plugin.py"]}}
    mined = dataclasses.replace(SPLIT, id="mined-like-split_evenly", hidden=hidden)
    with make_grader(PACK, jobs=1, types=False, visible_tests="always") as built:
        assert isinstance(built, RepoGrader)
        assert built.checks(mined).base_visible_passed is False  # the stub, not the missing plugin
        assert built.grade_state(mined, hidden["reference"]).visible_passed is True
        broken = dict(hidden["reference"])
        broken["ledger/money.py"] = broken["ledger/money.py"].replace(
            "share + 1 if index < remainder else share", "share", 1
        )
        assert built.grade_state(mined, broken).visible_passed is False


def test_affected_test_files_follow_the_repositorys_imports() -> None:
    base = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from .b import helper\n",
        "pkg/b.py": "def helper():\n    return 1\n",
        "pkg/c.py": "X = 1\n",
        "tests/test_a.py": "from pkg.a import helper\n",
        "tests/test_c.py": "import pkg.c\n",
        "tests/test_from.py": "from pkg import c\n",
    }
    edited = base | {"pkg/b.py": "def helper():\n    return 2\n"}
    assert affected_test_files(base, edited, ["pkg/b.py"]) == ["tests/test_a.py"]
    assert affected_test_files(base, base | {"pkg/c.py": "X = 2\n"}, ["pkg/c.py"]) == [
        "tests/test_c.py",
        "tests/test_from.py",
    ]
    package = base | {"pkg/__init__.py": "from . import b\n"}  # every importer of pkg runs pkg/__init__
    assert affected_test_files(base, package, ["pkg/__init__.py"]) == [
        "tests/test_a.py",
        "tests/test_c.py",
        "tests/test_from.py",
    ]
    dynamic = base | {"pkg/c.py": "import importlib\nhelper = importlib.import_module('pkg.b').helper\n"}
    edited_dynamic = dynamic | {"pkg/b.py": edited["pkg/b.py"]}  # test_c reaches pkg.b by a computed name
    assert affected_test_files(dynamic, edited_dynamic, ["pkg/b.py"]) is None
    assert affected_test_files(base, edited | {"pkg/data.json": "{}"}, ["pkg/b.py", "pkg/data.json"]) is None


def test_a_failure_message_ending_in_passed_is_not_a_pass() -> None:
    lines = ["tests/test_a.py::test_x PASSED", "tests/test_a.py::test_y FAILED: AssertionError: y PASSED"]
    assert visible_outcome(lines, frozenset(), need_a_pass=True) is False
    assert visible_outcome(lines, frozenset({"tests/test_a.py::test_y"}), need_a_pass=True) is True
    assert visible_outcome(lines[1:], frozenset({"tests/test_a.py::test_y"}), need_a_pass=False) is None
    # a file (or class) recorded as failing covers its tests, e.g. once a better runner imports it
    assert visible_outcome(lines, frozenset({"tests/test_a.py"}), need_a_pass=False) is None
    assert visible_outcome(
        lines + ["tests/test_b.py::T::test_z PASSED"], frozenset({"tests/test_a.py"}), need_a_pass=True
    )


def test_unittest_cases_run_with_their_set_up_and_skips() -> None:
    """Real projects' unittest.TestCase classes: setUp (and setUpClass) run around each method, a skip is
    SKIPPED, not a failure; before, the methods were called bare (66 of boltons' tests failed so)."""
    unit_tests = (
        "import unittest\n\nfrom ledger.money import split_evenly\n\n\n"
        "class TestSplit(unittest.TestCase):\n"
        "    @classmethod\n    def setUpClass(cls):\n        cls.total = 100\n\n"
        "    def setUp(self):\n        self.parts = 3\n\n"
        "    def test_sums(self):\n        self.assertEqual(sum(split_evenly(self.total, self.parts)), 100)\n\n"
        "    def test_wrong(self):\n        self.assertEqual(split_evenly(self.total, self.parts), [1])\n\n"
        '    @unittest.skip("not here")\n    def test_skipped(self):\n        raise AssertionError\n'
    )
    files = SPLIT.hidden["reference"] | {"tests/test_unit.py": unit_tests}
    with make_grader(PACK, jobs=1, types=False) as built:
        assert isinstance(built, RepoGrader)
        result = built.run(files, [("tests", {"paths": ["tests/test_unit.py"]})])
    outcome = result.outcomes[1]
    assert outcome is not None and outcome.ok
    lines = outcome.value["lines"]
    assert lines[0] == "tests/test_unit.py::TestSplit::test_skipped SKIPPED"
    assert lines[1] == "tests/test_unit.py::TestSplit::test_sums PASSED"
    assert lines[2].startswith("tests/test_unit.py::TestSplit::test_wrong FAILED: UnittestFailure")
    assert visible_outcome(lines, frozenset(), need_a_pass=True) is False
    assert visible_outcome(lines[:2], frozenset(), need_a_pass=True) is True


def test_the_setting_is_checked() -> None:
    with pytest.raises(OptionsError, match="visible_tests"):
        make_grader(PACK, jobs=1, types=False, visible_tests="sometimes")
