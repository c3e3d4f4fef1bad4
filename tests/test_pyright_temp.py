"""pyright leaves nothing in the system temp dir: its own `pyright-<pid>-*` directories, the batch
directories and the checkers' homes all live under a directory rlvr owns and removes on close."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlvr.graders.code.typecheck.checker import TypeChecker
from rlvr.graders.repo.whole_repo_types import RepoTypeChecker

NODE_DEFAULT_TEMP = Path("/tmp")  # node's os.tmpdir() when its environment names no TMPDIR


@pytest.fixture
def system_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private stand-in for the system temp dir (Python's tempfile and any TMPDIR a child inherits),
    and after the test: no `pyright-<pid>-*` of a process the test started in node's default either
    (pyright's children get their own environment, so the stand-in alone would not see those)."""
    temp = tmp_path / "system-temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    started: list[int] = []

    class Recording(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            started.append(self.pid)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    since = time.time() - 1.0
    yield temp
    assert started, "no pyright process was started"
    # pids are reused: an old directory of someone else's process with the same pid does not count
    leaked = [
        p for pid in started for p in NODE_DEFAULT_TEMP.glob(f"pyright-{pid}-*") if p.stat().st_mtime >= since
    ]
    assert leaked == [], f"pyright left {leaked} in {NODE_DEFAULT_TEMP}"


@pytest.mark.parametrize("engine", ["server", "cli"])
def test_the_code_type_checker_leaves_no_temp_files(system_temp: Path, engine: str) -> None:
    with TypeChecker(engine=engine) as checker:
        assert checker.check("def f(x: int) -> str:\n    return x\n").errors == 1
        assert checker._home.is_relative_to(system_temp)
    assert list(system_temp.iterdir()) == []


@pytest.mark.parametrize("engine", ["server", "cli"])
def test_the_repo_type_checker_leaves_no_temp_files(system_temp: Path, engine: str) -> None:
    checker = RepoTypeChecker(engine=engine)
    try:
        assert sum(checker.check({"pkg/a.py": 'x: int = "s"\n'}).errors.values()) == 1
    finally:
        checker.close()
    assert list(system_temp.iterdir()) == []


def test_a_killed_language_server_leaves_its_temp_dir_inside_the_home(system_temp: Path) -> None:
    """pyright's own temp directory survives a SIGKILL; it must sit where rlvr cleans up."""
    with TypeChecker(engine="server") as checker:
        checker.check("x: int = 1\n")
        assert list(checker._home.glob("tmp/pyright-*")), "pyright made no temp dir under the home"
        checker._engine.close()  # kills the server: it cannot remove its own temp dir
    assert list(system_temp.iterdir()) == []
