"""Whole-repository pyright on the warm language server: incremental checks see cross-module breaks,
added and removed modules; a candidate that times pyright out is a flagged scored failure; a dead
server is restarted; the server and the cold CLI agree."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.code.typecheck.run import RunFailure
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.types_server import RepoServerEngine
from rlvr.graders.repo.whole_repo_types import RepoTypeChecker
from rlvr.task_packs.registry import load_pack

PACK = load_pack("repo-tasks")
TASK = PACK.get("ledger-rename-format_cents")
BASE: dict[str, str] = TASK.hidden["base"]
REFERENCE: dict[str, str] = TASK.hidden["reference"]
SLOW = "x = 1\n" + "x = [x]\n" * 20_000  # pyright's inference on this takes far more than 8 s


def states() -> dict[str, dict[str, str]]:
    """Named repository states whose error counts are known (reference: 0)."""
    # only the definition and the package's re-export are renamed: report.py's caller now breaks
    half_renamed = dict(BASE)
    for path in ("ledger/money.py", "ledger/__init__.py"):
        half_renamed[path] = BASE[path].replace("format_cents", "render_cents")
    added = dict(REFERENCE)
    added["ledger/extra/helpers.py"] = "def seven() -> int:\n    return 7\n"
    added["ledger/report.py"] = REFERENCE["ledger/report.py"] + (
        "\n\nfrom ledger.extra.helpers import seven\n\nSEVEN: str = seven()\n"
    )
    removed = dict(added)
    del removed["ledger/extra/helpers.py"]  # the import no longer resolves (no empty directory left)
    return {"reference": REFERENCE, "half_renamed": half_renamed, "added": added, "removed": removed}


@pytest.fixture(scope="module")
def server() -> Iterator[RepoTypeChecker]:
    checker = RepoTypeChecker(cache_size=0)
    yield checker
    checker.close()


def _errors(checker: RepoTypeChecker, files: dict[str, str]) -> dict[tuple[str, str], int]:
    report = checker.check(files)
    assert report.failure is None, report.failure
    return dict(report.errors)


def test_incremental_checks_follow_each_state(server: RepoTypeChecker) -> None:
    named = states()
    assert _errors(server, named["reference"]) == {}
    broken = _errors(server, named["half_renamed"])
    assert broken and all(path == "ledger/report.py" for path, _ in broken), broken
    assert any("format_cents" in message for _, message in broken)
    added = _errors(server, named["added"])
    assert [path for path, _ in added] == ["ledger/report.py"], added
    assert '"int" is not assignable to declared type "str"' in next(iter(added))[1]
    removed = _errors(server, named["removed"])
    assert any("ledger.extra.helpers" in message for _, message in removed), removed
    assert _errors(server, named["reference"]) == {}  # back where it started: nothing stale remains
    engine = server._server
    assert isinstance(engine, RepoServerEngine) and engine.starts == 1  # one warm server throughout


def test_a_stub_directory_in_the_repository_shadows_nothing(server: RepoTypeChecker) -> None:
    """pyright's default stubPath is `<root>/typings`: a candidate's copy of the old module there must
    not hide the caller a half-done rename broke (nor may `src/`)."""
    broken = states()["half_renamed"]
    expected = _errors(server, broken)
    for directory in ("typings", "src"):
        shadowed = broken | {
            f"{directory}/ledger/money.py": BASE["ledger/money.py"],
            f"{directory}/ledger/__init__.py": BASE["ledger/__init__.py"],
        }
        found = _errors(server, shadowed)
        assert {k: v for k, v in found.items() if k[0].startswith("ledger/")} == expected, (directory, found)


def test_a_dead_server_is_restarted(server: RepoTypeChecker) -> None:
    engine = server._server
    assert isinstance(engine, RepoServerEngine)
    _errors(server, REFERENCE)
    starts = engine.starts
    connection = engine._connection
    assert connection is not None
    connection.kill()  # the server dies between checks
    assert _errors(server, states()["half_renamed"])  # checked on a fresh server, same answer
    assert engine.starts == starts + 1


def test_a_failure_on_the_candidate_alone_is_flagged_and_one_on_the_canary_too_is_a_fault(
    server: RepoTypeChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attribution, with pyright's answer replaced: a candidate state pyright cannot finish while a
    trivial repository checks fine is the candidate's (`timeout` / `crash`); if the trivial one fails
    too, the machinery is at fault (any other failure text, which the grader turns into an error)."""
    engine = server._server
    assert isinstance(engine, RepoServerEngine)
    real_run = engine.run
    poisoned = states()["half_renamed"] | {"ledger/poison.py": "x = 1\n"}

    def run(sources: dict[str, str]) -> list[tuple[str, int, str]] | RunFailure:
        if "ledger/poison.py" in sources:
            return RunFailure("pyright timed out", timed_out=True)
        return real_run(sources)

    monkeypatch.setattr(engine, "run", run)
    assert server.check(poisoned).failure == "timeout"
    monkeypatch.setattr(engine, "run", lambda sources: RunFailure("pyright-langserver exited unexpectedly"))
    report = server.check(poisoned)
    assert report.failure is not None and report.failure not in ("timeout", "crash")
    assert "trivial repository" in report.failure


@pytest.mark.slow
def test_a_candidate_that_times_pyright_out_is_a_flagged_failure() -> None:
    with make_grader(PACK, jobs=1, type_timeout=8.0) as grader:
        assert isinstance(grader, RepoGrader)
        files = dict(REFERENCE) | {"ledger/slow.py": SLOW}
        verdict = grader.grade_state(TASK, files)
        assert verdict.error is None and verdict.fault is None and not verdict.passed
        assert "timeout:types" in verdict.flags and verdict.components["types"].score == 0.0
        # the server was replaced; the next submit is graded normally
        verdict = grader.grade_state(TASK, REFERENCE)
        assert verdict.passed and verdict.components["types"].score == 1.0, verdict


@pytest.mark.slow
def test_server_and_cli_agree() -> None:
    cli = RepoTypeChecker(engine="cli", cache_size=0)
    server = RepoTypeChecker(cache_size=0)
    try:
        for name, files in {"base": BASE, **states()}.items():
            assert server.check(files).errors == cli.check(files).errors, name
    finally:
        cli.close()
        server.close()


def test_a_forked_child_checks_on_its_own_server(server: RepoTypeChecker) -> None:
    """A child inherits the checker: it starts its own server in its own directory, and the parent's
    server (and the files it reads) are untouched."""
    import os

    broken = states()["half_renamed"]
    expected = _errors(server, REFERENCE)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            found = server.check(broken)
            os.write(write, b"ok" if found.failure is None and found.errors else b"bad")
            server.close()  # the child's own server; the parent's is not the child's to kill
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    answer = os.read(read, 16)
    os.close(read)
    assert status == 0 and answer == b"ok", answer
    engine = server._server
    assert isinstance(engine, RepoServerEngine) and engine._connection is not None
    assert engine._connection.alive  # the child did not kill the parent's server
    # the files the parent's server reads are still the parent's state
    assert all((engine._root / path).read_text() == text for path, text in engine._state.items())
    assert _errors(server, REFERENCE) == expected == {}
    assert _errors(server, broken)  # the parent's server still follows its own states
