"""What capture records from a project's tests beyond plain calls: the package lines each recorded call
runs (so bugs are injected where a hidden check reaches, and replayed with the scenarios that run the
changed line), and objects a test gets from a factory (a classmethod such as `Version.parse`, or a
module function returning an instance) with the methods it then calls on them. A small project written
here; nothing is downloaded."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rlvr.mining.capture import Captured, capture
from rlvr.mining.kinds import Candidate
from rlvr.mining.miner import MineOptions, Miner
from rlvr.mining.source import read_project
from rlvr.sandbox import make_sandbox

PROJECT = {
    "pyproject.toml": """
        [project]
        name = "verpkg"
        version = "0.1"
        dependencies = []
        """,
    "verpkg/__init__.py": """
        from verpkg.version import Version, parse_version, sign
        """,
    "verpkg/_digits.py": '''
        def to_int(text):
            """An int from decimal digits; ValueError otherwise."""
            if not text.isdigit():
                raise ValueError(text)
            return int(text)


        def never_called(text):
            """No test reaches this."""
            return text.strip() + "!"
        ''',
    "verpkg/version.py": '''
        from verpkg._digits import to_int


        def _separator(kind):
            return "." if kind == "dotted" else "-"


        SEPARATOR = _separator("dotted")  # run at import


        def sign(value):
            """-1, 0 or 1."""
            if value < 0:
                return -1
            if value > 0:
                return 1
            return 0


        class Version:
            """A major.minor version."""

            def __init__(self, major, minor):
                self.major = major
                self.minor = minor

            @classmethod
            def parse(cls, text):
                """A Version from "major.minor"."""
                major, minor = text.split(".")
                return cls(to_int(major), to_int(minor))

            @staticmethod
            def is_valid(text):
                """Is `text` a "major.minor" version?"""
                parts = text.split(".")
                return len(parts) == 2 and all(part.isdigit() for part in parts)

            def bump_minor(self):
                """The next minor version."""
                return Version(self.major, self.minor + 1)

            def as_tuple(self):
                return [self.major, self.minor]

            def __eq__(self, other):
                if isinstance(other, str):
                    other = Version.parse(other)
                return self.as_tuple() == other.as_tuple()

            def __str__(self):
                return f"{self.major}.{self.minor}"


        def parse_version(text):
            """Version.parse, as a function."""
            return Version.parse(text)
        ''',
    "tests/helpers.py": """
        from verpkg import sign


        def sign_of_minus_three():
            return sign(-3)
        """,
    "tests/test_version.py": """
        import pytest

        from helpers import sign_of_minus_three
        from verpkg import Version, parse_version, sign


        def test_sign():
            assert sign(5) == 1
            assert sign(0) == 0
            assert sign_of_minus_three() == -1


        def test_parse():
            version = Version.parse("1.2")
            assert version.as_tuple() == [1, 2]
            assert version.bump_minor().as_tuple() == [1, 3]
            with pytest.raises(ValueError):
                Version.parse("1.x")


        def test_function_factory():
            version = parse_version("3.4")
            assert version.as_tuple() == [3, 4]


        def test_operators():
            version = Version(2, 5)
            assert version == "2.5"
            assert version == Version(2, 5)  # not data: not recorded, the steps stay plain
            assert str(version) == "2.5"


        def test_is_valid():
            assert Version.is_valid("1.2")
            assert not Version.is_valid("1")
        """,
}


def write(root: Path) -> Path:
    for path, text in PROJECT.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("verpkg")
    project = read_project(write(root / "src"), root / "work")
    with make_sandbox("local", workers=1) as sandbox:
        report = capture(
            sandbox, project.files, project.files, "verpkg", project.tests, None, 300.0, deselect=[]
        )
    return project, report


def test_classmethods_staticmethods_and_factory_objects_are_recorded(captured) -> None:
    _, report = captured
    scenarios = [c.scenario for c in report.scenarios]
    # a classmethod is a call target of its own, and the object it returns is an object scenario
    # whose steps are the methods the test called on it
    assert {"kind": "call", "target": "verpkg.version:Version.parse", "args": ["1.x"]} in scenarios
    parsed = [
        c
        for c in report.scenarios
        if c.scenario.get("kind") == "object" and c.scenario["target"] == "verpkg.version:Version.parse"
    ]
    assert parsed and [m for m, _ in parsed[0].scenario["steps"]] == ["as_tuple", "bump_minor"]
    assert parsed[0].outcome["steps"][0] == {"value": [1, 2]}
    # a module function returning an object of the package starts one too
    made = [
        c
        for c in report.scenarios
        if c.scenario.get("kind") == "object" and c.scenario["target"] == "verpkg.version:parse_version"
    ]
    assert made and made[0].outcome["steps"] == [{"value": [3, 4]}]
    assert {"kind": "call", "target": "verpkg.version:Version.is_valid", "args": ["1"]} in scenarios


def test_comparisons_and_string_forms_are_steps(captured) -> None:
    _, report = captured
    built = [
        c for c in report.scenarios if c.scenario.get("kind") == "object" and c.scenario["args"] == [2, 5]
    ]
    assert built and built[0].scenario["steps"] == [["__eq__", ["2.5"]], ["__str__", []]]
    assert built[0].outcome["steps"] == [{"value": True}, {"value": "2.5"}]


def test_calls_from_a_helper_module_beside_the_tests_are_recorded(captured) -> None:
    _, report = captured
    assert {"kind": "call", "target": "verpkg.version:sign", "args": [-3]} in [
        c.scenario for c in report.scenarios
    ]


def test_each_scenario_carries_the_package_lines_its_call_ran(captured) -> None:
    project, report = captured
    version = project.files["verpkg/version.py"]
    digits = project.files["verpkg/_digits.py"]
    by_call = {
        (c.scenario["target"], tuple(c.scenario.get("args", []))): c
        for c in report.scenarios
        if c.scenario.get("kind") == "call"
    }
    positive = by_call[("verpkg.version:sign", (5,))].lines
    zero = by_call[("verpkg.version:sign", (0,))].lines
    assert ("verpkg/version.py", line_of(version, "return 1")) in positive
    assert ("verpkg/version.py", line_of(version, "return 0")) not in positive
    assert ("verpkg/version.py", line_of(version, "return 0")) in zero
    # a helper module's lines, run through the public function that calls it
    failing = by_call[("verpkg.version:Version.parse", ("1.x",))].lines
    assert ("verpkg/_digits.py", line_of(digits, "raise ValueError")) in failing
    everything = {line for c in report.scenarios for line in c.lines}
    assert all(path != "tests/test_version.py" for path, _ in everything)  # the package's lines only
    assert ("verpkg/_digits.py", line_of(digits, 'return text.strip() + "!"')) not in everything


def test_a_changed_line_is_tried_with_the_scenarios_that_run_it() -> None:
    """A bug in a helper module no scenario targets is replayed with the scenarios (of other modules)
    whose recorded calls ran the changed line, not skipped or sampled at random."""
    runs = Captured(
        {"kind": "call", "target": "pkg.api:parse", "args": ["1"]},
        {"value": 1},
        "pkg.api",
        lines=frozenset({("pkg/_h.py", 3)}),
    )
    other = Captured(
        {"kind": "call", "target": "pkg.api:size", "args": [[]]},
        {"value": 0},
        "pkg.api",
        lines=frozenset({("pkg/api.py", 9)}),
    )
    helper_bug = Candidate(
        "bug", {"pkg/_h.py": "..."}, ["pkg/_h.py:3: x"], function="pkg._h:to_int", lines=[("pkg/_h.py", 3)]
    )
    miner = Miner(MineOptions(progress=False))
    assert miner._scenarios_for(helper_bug, {"pkg.api": [runs, other]}) == [runs]


def test_the_suite_plugin_does_not_import_the_rlvr_package() -> None:
    """The plugin is loaded into every pytest run of the project (each candidate's check too):
    importing `rlvr` there would add gymnasium and numpy to each run's start-up."""
    import subprocess
    import sys

    from rlvr.mining.environment import PLUGIN_DIR, RLVR_ROOT

    code = (
        "import sys, rlvr_mining_plugin; print(sorted(m for m in sys.modules if m.split('.')[0] == 'rlvr'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": f"{PLUGIN_DIR}:{RLVR_ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.strip() == "[]"


def test_suite_runs_do_not_rewrite_assertions(tmp_path: Path) -> None:
    """Every mine-time pytest run (the reference suite, capture, each candidate's check) uses plain
    asserts: rewriting recompiles the test files on each run, and the outcome is the same."""
    from rlvr.mining.environment import run_suite

    files = {
        "pkg/__init__.py": "",
        "tests/test_plain.py": (
            "def test_plain():\n"
            "    assert '@py_builtins' not in test_plain.__code__.co_names\n"
            "    assert 1 + 1 == 2\n"
            "\n"
            "def test_fails():\n"
            "    assert [1] == [2]\n"
        ),
    }
    run = run_suite(files, ["tests/test_plain.py"], None, 120.0)
    assert run.outcomes == {
        "tests/test_plain.py::test_plain": "passed",
        "tests/test_plain.py::test_fails": "failed",
    }


def test_the_mutation_cap_per_function_counts_only_lines_a_scenario_runs() -> None:
    """With one mutation allowed per function, the one chosen is on a line a hidden scenario runs
    (capping first and filtering after left most run-reached functions with no candidate)."""
    import random

    from rlvr.mining.kinds import bug_candidates

    text = textwrap.dedent(
        """
        def grade(score):
            if score > 90:
                return "A"
            if score > 80:
                return "B"
            if score > 70:
                return "C"
            return "F"
        """
    ).lstrip("\n")
    run = {line_of(text, 'return "B"'), line_of(text, "if score > 80")}
    for seed in range(5):
        chosen = bug_candidates("pkg/grades.py", text, random.Random(seed), per_function=1, lines=run)
        assert len(chosen) == 1 and chosen[0].lines[0][1] in run


def test_a_default_value_of_a_function_that_ran_is_reached() -> None:
    """A mutation of a default argument (on the `def` line, which a line tracer never reports during
    a call) is kept when the function's body ran; not when it did not."""
    import random

    from rlvr.mining.kinds import bug_candidates

    text = textwrap.dedent(
        """
        def join(words, separator="-", limit=3):
            return separator.join(words[:limit])


        def unused(words, limit=3):
            return words[:limit]
        """
    ).lstrip("\n")
    body = {line_of(text, "return separator")}
    chosen = bug_candidates("pkg/words.py", text, random.Random(0), per_function=12, lines=body)
    header = line_of(text, "def join")
    assert any(c.lines[0][1] == header for c in chosen)
    assert all(c.function == "pkg.words:join" for c in chosen)


def test_lines_run_at_import_are_measured(captured) -> None:
    project, report = captured
    version = project.files["verpkg/version.py"]
    assert ("verpkg/version.py", line_of(version, 'return "." if kind')) in report.import_lines
