"""`rlvr packs mine` on a small project written here (a few modules and their pytest tests): nothing
is downloaded. The real-project runs are in benchmarks/bench_mining.py."""

from __future__ import annotations

import io
import json
import tarfile
import textwrap
from pathlib import Path

import pytest

from rlvr.mining.capture import agrees, capture
from rlvr.mining.environment import run_suite
from rlvr.mining.kinds import describe_difference, remove_body
from rlvr.mining.miner import MineOptions, Miner, MiningError
from rlvr.mining.source import declared_test_requirements, read_project
from rlvr.sandbox import make_sandbox
from rlvr.task_packs.directory import validate_directory

PROJECT = {
    "pyproject.toml": """
        [project]
        name = "minipkg"
        version = "0.1"
        dependencies = []
        """,
    "minipkg/__init__.py": """
        from minipkg.numbers import clamp, mean, span
        from minipkg.sequences import chunks, dedupe
        from minipkg.stack import Stack
        """,
    "minipkg/numbers.py": '''
        def clamp(value, low, high):
            """`value` limited to the range [low, high]."""
            if value < low:
                return low
            if value > high:
                return high
            return value


        def mean(values):
            """The arithmetic mean of a non-empty list; ValueError when it is empty."""
            if not values:
                raise ValueError("mean of nothing")
            return sum(values) / len(values)


        def span(values):
            """max - min of the values (0 for one value)."""
            if len(values) == 0:
                return 0
            return max(values) - min(values)


        CALLS = [0]


        def ticket(prefix):
            """A new ticket name each call (depends on what ran before: not a stable scenario)."""
            CALLS[0] += 1
            return f"{prefix}-{CALLS[0]}"
        ''',
    "minipkg/sequences.py": '''
        def chunks(items, size):
            """Yield lists of `size` consecutive items (the last may be shorter)."""
            if size < 1:
                raise ValueError("size must be positive")
            for start in range(0, len(items), size):
                yield items[start : start + size]


        def dedupe(items):
            """The items without repeats, first occurrence kept, in order."""
            seen = set()
            out = []
            for item in items:
                if item not in seen:
                    seen.add(item)
                    out.append(item)
            return out
        ''',
    "minipkg/stack.py": '''
        class Stack:
            """A bounded stack."""

            def __init__(self, limit=10):
                if limit <= 0:
                    raise ValueError("limit must be positive")
                self.limit = limit
                self.items = []

            def push(self, item):
                """Push an item; OverflowError when the stack is full."""
                if len(self.items) >= self.limit:
                    raise OverflowError("full")
                self.items.append(item)
                return len(self.items)

            def pop(self):
                """Remove and return the top item; IndexError when empty."""
                if not self.items:
                    raise IndexError("empty")
                return self.items.pop()

            def peek(self):
                """The top item without removing it, or None when empty."""
                if len(self.items) == 0:
                    return None
                return self.items[-1]
        ''',
    "tests/test_numbers.py": """
        import pytest

        from minipkg import clamp, mean, span
        from minipkg.numbers import ticket


        @pytest.mark.parametrize("value, expected", [(-5, 0), (0, 0), (5, 5), (10, 10), (15, 10)])
        def test_clamp(value, expected):
            assert clamp(value, 0, 10) == expected


        def test_mean():
            assert mean([1, 2, 3, 4]) == 2.5
            assert mean([7]) == 7
            with pytest.raises(ValueError):
                mean([])


        def test_span():
            assert span([3, 9, 4]) == 6
            assert span([5]) == 0
            assert span([]) == 0


        def test_ticket():
            assert ticket("a").startswith("a-")
        """,
    "tests/test_sequences.py": """
        from minipkg import chunks, dedupe
        from minipkg.numbers import ticket


        def test_ticket_here_too():
            assert ticket("b").startswith("b-")


        def test_chunks():
            assert list(chunks([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]
            assert list(chunks([1, 2, 3], 3)) == [[1, 2, 3]]
            assert list(chunks([], 2)) == []


        def test_dedupe():
            assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]
            assert dedupe(["a", "a"]) == ["a"]
        """,
    "tests/test_stack.py": """
        import pytest

        from minipkg import Stack


        def test_push_pop():
            stack = Stack(2)
            assert stack.push("a") == 1
            assert stack.push("b") == 2
            with pytest.raises(OverflowError):
                stack.push("c")
            assert stack.peek() == "b"
            assert stack.pop() == "b"
            assert stack.pop() == "a"
            assert stack.peek() is None
            with pytest.raises(IndexError):
                stack.pop()


        def test_bad_limit():
            with pytest.raises(ValueError):
                Stack(0)
        """,
}


def write_project(root: Path, extra: dict[str, str] | None = None) -> Path:
    for path, text in (PROJECT | (extra or {})).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def make_sdist(directory: Path, into: Path) -> Path:
    archive = into / "minipkg-0.1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(directory, arcname="minipkg-0.1")
    return archive


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox("local", workers=1) as pool:
        yield pool


def test_an_sdist_is_laid_out_as_package_plus_tests(tmp_path: Path) -> None:
    archive = make_sdist(write_project(tmp_path / "src"), tmp_path)
    project = read_project(archive, tmp_path / "work")
    assert project.package == "minipkg"
    assert project.modules() == [
        "minipkg/__init__.py",
        "minipkg/numbers.py",
        "minipkg/sequences.py",
        "minipkg/stack.py",
    ]
    assert project.tests == ["tests/test_numbers.py", "tests/test_sequences.py", "tests/test_stack.py"]
    assert project.requirements == []


def test_an_sdist_cannot_write_outside_its_directory(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"x = 1\n"
        info = tarfile.TarInfo("../escaped.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(MiningError):
        Miner(MineOptions(progress=False)).mine(archive, tmp_path / "out")
    assert not (tmp_path / "escaped.py").exists()


UNRELATED_TEST = {
    "tests/test_unrelated.py": """
        def test_calls_nothing_in_the_package():
            assert sorted([2, 1]) == [1, 2]
        """,
}


def test_capture_keeps_stable_calls_and_drops_order_dependent_ones(tmp_path: Path, sandbox) -> None:
    project = read_project(write_project(tmp_path / "p", UNRELATED_TEST), tmp_path / "work")
    report = capture(
        sandbox, project.files, project.files, "minipkg", project.tests, None, 300.0, deselect=[]
    )
    # the whole suite is traced once; the order check re-runs only the tests that made sampled calls
    unrelated = "tests/test_unrelated.py::test_calls_nothing_in_the_package"
    first, second = (set(run.outcomes) for run in report.runs)
    assert unrelated in first and unrelated not in second
    assert second and second < first
    targets = {c.scenario["target"] for c in report.scenarios}
    assert {"minipkg.numbers:clamp", "minipkg.numbers:mean", "minipkg.sequences:dedupe"} <= targets
    assert "minipkg.numbers:ticket" not in targets  # its result depends on which test ran first
    assert report.dropped["different outcomes between recordings"] >= 2
    by_target = {c.scenario["target"]: c for c in report.scenarios}
    chunked = by_target["minipkg.sequences:chunks"]
    assert chunked.scenario["kind"] == "object" and all(m == "__next__" for m, _ in chunked.scenario["steps"])
    assert chunked.outcome["steps"][-1] == {"raises": "StopIteration"}
    stack = [c for c in report.scenarios if c.scenario["target"] == "minipkg.stack:Stack"]
    assert any([m for m, _ in c.scenario["steps"]][:3] == ["push", "push", "push"] for c in stack)
    assert any(c.outcome.get("init") == {"raises": "ValueError"} for c in stack)
    mean_empty = [
        c
        for c in report.scenarios
        if c.scenario == {"kind": "call", "target": "minipkg.numbers:mean", "args": [[]]}
    ]
    assert mean_empty and mean_empty[0].outcome["raises"] == "ValueError"
    # nudged variants: hidden calls no test makes, answered by the reference in the sandbox
    captured = {json.dumps(c.scenario, sort_keys=True) for c in report.scenarios}
    assert report.variants
    assert all(json.dumps(v.scenario, sort_keys=True) not in captured for v in report.variants)
    clamp_variants = [v for v in report.variants if v.scenario["target"] == "minipkg.numbers:clamp"]
    assert clamp_variants
    for variant in clamp_variants:
        value, low, high = variant.scenario["args"]
        assert variant.outcome == {"value": min(max(value, low), high)} or "mutated" in variant.outcome


def test_agrees_compares_what_the_recording_holds() -> None:
    assert agrees({"value": 2.5}, {"value": 2.5, "mutated": [[1]]})
    assert not agrees({"value": 2.5}, {"value": 2})
    assert not agrees({"value": 1}, {"raises": "TypeError"})
    assert agrees(
        {"steps": [{"value": 1}, {"raises": "StopIteration"}]},
        {"steps": [{"value": 1}, {"raises": "StopIteration"}]},
    )
    assert not agrees({"steps": [{"value": 1}]}, {"steps": [{"value": 1}, {"value": 2}]})


def test_a_removed_body_keeps_signature_and_docstring() -> None:
    import ast

    source = textwrap.dedent(PROJECT["minipkg/sequences.py"]).lstrip("\n")
    function = ast.parse(source).body[1]
    assert isinstance(function, ast.FunctionDef)
    stubbed = remove_body(source, function)
    assert stubbed is not None
    assert 'def dedupe(items):\n    """The items without repeats' in stubbed
    assert "seen = set()" not in stubbed and "raise NotImplementedError" in stubbed
    assert "yield items[start" in stubbed  # the other function is untouched


def test_an_iterator_symptom_names_the_call_and_the_items() -> None:
    scenario = {
        "kind": "object",
        "target": "minipkg.sequences:chunks",
        "args": [[1, 2, 3], 2],
        "steps": [["__next__", []]] * 3,
    }
    want = {"steps": [{"value": [1, 2]}, {"value": [3]}, {"raises": "StopIteration"}]}
    got = {"steps": [{"value": [1, 2]}, {"value": [3, 4]}, {"raises": "StopIteration"}]}
    text = describe_difference(scenario, got, want)
    assert "minipkg.sequences.chunks([1, 2, 3], 2)" in text and "item 2" in text and "[3]" in text


def test_failing_reference_tests_are_listed_unless_allowed(tmp_path: Path, sandbox) -> None:
    broken = {"tests/test_broken.py": "def test_wrong():\n    assert 1 + 1 == 3\n"}
    root = write_project(tmp_path / "p", broken)
    with pytest.raises(MiningError) as caught:
        Miner(MineOptions(progress=False, verify=False), sandbox=sandbox).mine(
            root, tmp_path / "out"
        )  # fails before pyright starts
    assert "tests/test_broken.py::test_wrong" in str(caught.value) and "--allow-failing" in str(caught.value)


def test_mine_end_to_end_every_task_verified(tmp_path: Path, sandbox) -> None:
    """The whole pipeline on the fixture project: the pack validates, every task's reference scored
    1.0 and its unchanged base at most 0.05 through gym.make("rlvr/Repo-v0"), each kind
    appears, the issue quotes a symptom but never the injected change."""
    root = write_project(
        tmp_path / "p", {"tests/test_broken.py": "def test_wrong():\n    assert 1 + 1 == 3\n"}
    )
    options = MineOptions(
        max_tasks=5, progress=False, allow_failing=True, seed=1, test_modules=("minipkg.stack",)
    )
    miner = Miner(options, sandbox=sandbox)
    try:
        summary = miner.mine(root, tmp_path / "pack")
    finally:
        miner.close()
    assert summary.tests_failing == ["tests/test_broken.py::test_wrong"]
    assert validate_directory(tmp_path / "pack") == []
    lines = [json.loads(line) for line in (tmp_path / "pack" / "tasks.jsonl").read_text().splitlines()]
    assert len(lines) >= 3
    assert summary.noop_mean is not None and summary.noop_mean <= 0.05
    kinds = {line["meta"]["kind"] for line in lines}
    assert {"bug", "feature"} <= kinds, kinds
    for line in lines:
        checked = line["notes"]["checked"]
        assert checked["reference"] == 1.0 and checked["noop"] <= 0.05
        assert set(line["protected"]) >= {"tests/test_numbers.py", "tests/test_stack.py"}
        for path, text in line["base_edits"].items():
            original = set(textwrap.dedent(PROJECT[path]).lstrip("\n").splitlines())
            changed = [row for row in text.splitlines() if row not in original and row.strip()]
            assert changed
            for fragment in changed:  # the broken line is never quoted
                assert fragment.strip() not in line["prompt"]
        stack_task = any(p == "minipkg/stack.py" for p in line["base_edits"])
        assert line["split"] == ("test" if stack_task else "train")
    assert sum(summary.kept.values()) == len(lines)
    assert (tmp_path / "pack" / "mining.json").is_file()


def test_options_are_typed_and_quotas_fit_the_task_count() -> None:
    from rlvr.mining.miner import _quotas

    with pytest.raises(ValueError, match="unknown task kind"):
        MineOptions(kinds=("bug", "bugs"))
    with pytest.raises(TypeError):
        MineOptions(max_task=3)  # type: ignore[call-arg]  # a misspelled option is an error
    for total in (1, 3, 4, 10, 45):
        quota = _quotas(("bug", "feature", "multi"), total)
        assert sum(quota.values()) <= max(total, 3) and all(v >= 1 for v in quota.values())


def test_pack_directory_names_for_many_sources() -> None:
    from rlvr.mining.scale import mine_many, pack_dir_name

    assert pack_dir_name(Path("boltons-26.2.0.tar.gz")) == "boltons"
    assert pack_dir_name(Path("python_slugify-9.2.0.tar.gz")) == "python-slugify"
    assert pack_dir_name(Path("/src/myproject")) == "myproject"
    with pytest.raises(ValueError, match="same pack directory"):
        mine_many([Path("a-1.0.tar.gz"), Path("a-2.0.tar.gz")], Path("/tmp/unused"), MineOptions())


def test_cli_reports_a_bad_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rlvr.cli import main

    assert main(["packs", "mine", str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 1
    assert "no such file or directory" in capsys.readouterr().err
    assert main(["packs", "mine", str(tmp_path), "--out", str(tmp_path / "o"), "--kinds", "nope"]) == 2


INTROSPECTING = {
    "minipkg/functional.py": '''
        import functools
        import inspect


        def _arity(function):
            return len(inspect.signature(function).parameters)


        def apply_all(functions, value):
            """Each function applied to `value`, as a tuple."""
            return tuple(function(value) for function in functions)


        def group_by(key, items):
            """{key(item): [items with that key, in order]}."""
            out = {}
            for item in items:
                out.setdefault(key(item), []).append(item)
            return out


        def pairs(items):
            """Yield (item, next item) for each neighbouring pair of a tuple."""
            for index in range(len(items) - 1):
                yield (items[index], items[index + 1])


        @functools.wraps(group_by)
        def grouped(key, items):
            return group_by(key, items)


        ARITIES = {"apply_all": _arity(apply_all), "group_by": _arity(group_by)}
        ''',
    "tests/test_functional.py": """
        from minipkg.functional import ARITIES, apply_all, group_by, pairs


        def test_arities():
            assert ARITIES == {"apply_all": 2, "group_by": 2}


        def test_apply_all():
            assert apply_all((len, str.upper), "ab") == (2, "AB")
            assert apply_all([lambda s: s + "!"], "hi") == ("hi!",)


        def test_group_by():
            assert group_by(len, ("a", "bb", "c")) == {1: ["a", "c"], 2: ["bb"]}
            assert group_by(lambda n: n % 3, range(7)) == {0: [0, 3, 6], 1: [1, 4], 2: [2, 5]}


        def test_pairs():
            assert list(pairs((1, 2, 3))) == [(1, 2), (2, 3)]
            assert list(pairs(())) == []
        """,
}


def test_a_package_that_introspects_at_import_mines_and_grades(tmp_path: Path, sandbox) -> None:
    """The package calls `inspect.signature` at import (the sandbox lets a repository read its own
    functions' code) and its tests pass builtins, lambdas, tuples and ranges: those calls are captured
    through the replay adapter, and the tasks they make grade 1.0 on the reference and fail unchanged."""
    root = write_project(tmp_path / "p", INTROSPECTING)
    project = read_project(root, tmp_path / "work")
    from rlvr.mining.miner import ADAPTER_SOURCE
    from rlvr.mining.replay import ADAPTER_PATH, ADAPTER_TARGET

    files = project.files | {ADAPTER_PATH: ADAPTER_SOURCE}
    report = capture(sandbox, files, files, "minipkg", project.tests, None, 300.0, deselect=[])
    through_adapter = [c for c in report.scenarios if c.scenario["target"] == ADAPTER_TARGET]
    specs = {json.dumps(c.scenario["args"][0], sort_keys=True): c.outcome for c in through_adapter}
    group_len = {
        "target": "minipkg.functional:group_by",
        "args": [{"$ref": "builtins:len"}, {"$tuple": ["a", "bb", "c"]}],
    }
    assert specs[json.dumps(group_len, sort_keys=True)] == {"value": {1: ["a", "c"], 2: ["bb"]}}
    lambdas = [s for s in specs if "$lambda" in s and "group_by" in s]
    assert lambdas and "$range" in lambdas[0]
    pairs = {"target": "minipkg.functional:pairs", "args": [{"$tuple": [1, 2, 3]}]}
    assert specs[json.dumps(pairs, sort_keys=True)] == {"value": {"$items": [(1, 2), (2, 3)], "$more": False}}

    options = MineOptions(max_tasks=4, progress=False, seed=3, kinds=("bug", "feature"), test_fraction=0.0)
    miner = Miner(options, sandbox=sandbox)
    try:
        summary = miner.mine(root, tmp_path / "pack")
    finally:
        miner.close()
    lines = [json.loads(line) for line in (tmp_path / "pack" / "tasks.jsonl").read_text().splitlines()]
    functional = [line for line in lines if "minipkg/functional.py" in line["base_edits"]]
    assert functional, summary.lines()
    for line in functional:
        assert line["notes"]["checked"]["reference"] == 1.0 and line["notes"]["checked"]["noop"] <= 0.05
        assert ADAPTER_PATH in line["protected"]
    assert (tmp_path / "pack" / "repos" / "minipkg" / ADAPTER_PATH).is_file()
    assert validate_directory(tmp_path / "pack") == []

    # `rlvr packs validate` holds a mined task to what the miner proved: the project's own type errors
    # and the visible tests the sandbox cannot run are the recorded baseline, not failures...
    import dataclasses

    from rlvr.graders.repo.prove import prove_repo_tasks
    from rlvr.task_packs.registry import load_pack

    tasks = [t for t in load_pack(str(tmp_path / "pack")).tasks() if t.id == functional[0]["id"]]
    assert tasks[0].hidden["notes"]["baseline"]["visible_failing"]  # the suites that import pytest
    report = prove_repo_tasks("mined", tasks, sandbox=sandbox, progress=False)
    assert report.problems == [], report.problems
    # ...and still refuses a broken task: a reference with a new type error, or failing a visible test
    # the sandbox ran at mine time
    reference = tasks[0].hidden["reference"]
    typed = dict(reference)
    typed["minipkg/functional.py"] += '\nBROKEN: int = "text"\n'
    failing = dict(reference)
    failing["minipkg/functional.py"] = failing["minipkg/functional.py"].replace(
        "ARITIES = {", "ARITIES = {'extra': 0, "
    )
    broken = [
        dataclasses.replace(tasks[0], id=name, hidden={**tasks[0].hidden, "reference": state})
        for name, state in (("typed", typed), ("failing", failing))
    ]
    report = prove_repo_tasks("mined", broken, sandbox=sandbox, progress=False)
    messages: dict[str, list[str]] = {}
    for problem in report.problems:  # file is "where:task id"
        messages.setdefault(problem.file.rsplit(":", 1)[-1], []).append(problem.message)
    assert any("type errors" in m and "Literal['text']" in m for m in messages.get("typed", [])), messages
    assert any(
        "fails its own visible tests" in m and "test_arities" in m for m in messages.get("failing", [])
    ), messages


def test_an_adapter_symptom_is_written_as_python() -> None:
    from rlvr.mining.replay import ADAPTER_TARGET, decode

    spec = {
        "target": "minipkg.functional:group_by",
        "args": [{"$ref": "builtins:len"}, {"$tuple": ["a", "bb"]}],
        "kwargs": {"into": {"$lambda": ["lambda: {}", {}]}},
    }
    scenario = {"kind": "call", "target": ADAPTER_TARGET, "args": [spec]}
    text = describe_difference(scenario, {"value": {1: ["a"]}}, {"value": {1: ["a"], 2: ["bb"]}})
    assert text.startswith("Calling `minipkg.functional.group_by(len, ('a', 'bb'), into=lambda: {})` gives")
    assert "expected `{1: ['a'], 2: ['bb']}`" in text
    items = {"value": {"$items": [[1, 2]], "$more": True}}
    assert "an iterator over [[1, 2]] and more" in describe_difference(
        scenario, items, {"raises": "KeyError"}
    )
    assert decode({"$dict": [[{"$tuple": [1, 2]}, {"$set": [3]}]]}) == {(1, 2): {3}}
    assert decode({"plain": {"$bytes": "6869"}}) == {"plain": b"hi"}


def test_a_test_file_that_does_not_import_is_reported_and_the_rest_runs(tmp_path: Path) -> None:
    broken = {
        "tests/test_needs_more.py": "import a_test_dependency_nobody_installed\n\ndef test_x():\n    pass\n"
    }
    project = read_project(write_project(tmp_path / "p", broken), tmp_path / "work")
    targets = [t for t in project.tests if not t.endswith("conftest.py")]
    run = run_suite(project.files, targets, None, 300.0)
    assert run.outcomes["tests/test_needs_more.py"] == "error"
    assert run.failing == ["tests/test_needs_more.py"]
    assert "tests/test_numbers.py::test_mean" in run.passing
    # mining from the passing subset leaves the file out (deselecting would come after collection)
    again = run_suite(project.files, targets, None, 300.0, deselect=run.failing)
    assert not again.failing and len(again.passing) == len(run.passing)


def test_test_requirements_come_from_the_test_extra_group_and_files(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [project]
            name = "demo"
            dependencies = ["attrs"]
            optional-dependencies.tests = ["freezegun", "pytest>=9", "pytest-cov", "attrs"]
            optional-dependencies.docs = ["sphinx"]
            [dependency-groups]
            base = ["hypothesis>=6"]
            test = [{include-group = "base"}, "pytest-benchmark; python_version >= '3'"]
            """
        )
    )
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "tests.txt").write_text("-r base.txt\nsortedcontainers  # tests\n")
    wanted = declared_test_requirements(tmp_path, ["attrs"])
    assert sorted(wanted) == ["freezegun", "hypothesis>=6", "pytest-benchmark", "sortedcontainers"]
