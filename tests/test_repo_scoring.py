"""Repository rewards pay for progress on the hidden checks the base state fails: a no-op scores ~0 on
every task of the built-in pack, a state failing hidden checks scores below the same state passing them,
and a partial fix sits between a no-op and the reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.graders.base import make_grader
from rlvr.graders.compose import normalized_weights
from rlvr.graders.repo.checks import TaskChecks, progress
from rlvr.graders.repo.grader import REPO_GATES, REPO_WEIGHTS, RepoGrader, repo_reward
from rlvr.sandbox import make_sandbox
from rlvr.task_packs.registry import load_pack

WEIGHTS = normalized_weights({"perf": 0.0}, REPO_WEIGHTS, REPO_GATES)
fraction = st.floats(0.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(types=fraction, perf=fraction, behaviour=st.floats(0.0, 0.999))
def test_failing_hidden_checks_scores_below_passing_them(types: float, perf: float, behaviour: float) -> None:
    """Same patch, syntax, types and perf: the state that fails hidden checks scores strictly less."""
    base = {"patch": 1.0, "syntax": 1.0, "types": types, "perf": perf}
    failing, failed = repo_reward(base | {"behaviour": behaviour}, WEIGHTS)
    passing, _ = repo_reward(base | {"behaviour": 1.0}, WEIGHTS)
    assert "behaviour" in failed and failing < passing
    full, gates = repo_reward(base | {"types": 1.0, "behaviour": 1.0}, WEIGHTS)
    assert not gates and failing < 0.5 * full  # below every state that passes every gate


@settings(max_examples=300, deadline=None)
@given(low=st.floats(0.0, 1.0), high=st.floats(0.0, 1.0), types=fraction)
def test_reward_grows_with_behaviour(low: float, high: float, types: float) -> None:
    low, high = sorted((low, high))
    base = {"patch": 1.0, "syntax": 1.0, "types": types}
    assert (
        repo_reward(base | {"behaviour": low}, WEIGHTS)[0]
        <= repo_reward(base | {"behaviour": high}, WEIGHTS)[0]
    )


@settings(max_examples=200, deadline=None)
@given(
    matched=st.lists(st.booleans(), min_size=1, max_size=30),
    data=st.data(),
)
def test_progress_counts_only_checks_the_base_fails(matched: list[bool], data: st.DataObject) -> None:
    discriminating = frozenset(data.draw(st.sets(st.integers(0, len(matched) - 1), min_size=1)))
    checks = TaskChecks([{}] * len(matched), [None] * len(matched), discriminating, None, frozenset())
    share, kept = progress(checks, matched)
    assert share == sum(matched[i] for i in discriminating) / len(discriminating)
    noop = [i not in discriminating for i in range(len(matched))]  # what the base state itself passes
    assert progress(checks, noop) == (0.0, 1.0)


@pytest.fixture(scope="module")
def grader():
    pack = load_pack("repo-tasks")
    with make_sandbox("local", workers=2) as sandbox:
        built = make_grader(pack, sandbox=sandbox, types=False)
        assert isinstance(built, RepoGrader)
        yield pack, built
        built.close()


def test_noop_scores_near_zero_on_a_sample_of_the_pack(grader) -> None:
    pack, repo = grader
    sample = pack.tasks()[::12]
    rewards = [repo.grade_state(task, task.hidden["base"]).reward for task in sample]
    assert max(rewards) <= 0.05 and sum(rewards) / len(rewards) <= 0.05, rewards


def test_a_partial_fix_sits_between_noop_and_reference(grader) -> None:
    pack, repo = grader
    task = next(t for t in pack.tasks() if t.meta["kind"] == "bug2")
    base, reference = task.hidden["base"], task.hidden["reference"]
    fixed = [path for path in base if base[path] != reference.get(path)]
    assert len(fixed) == 2
    halves = [repo.grade_state(task, {**base, path: reference[path]}).reward for path in fixed]
    noop = repo.grade_state(task, base).reward
    full = repo.grade_state(task, reference).reward
    assert full == 1.0 and noop == 0.0
    assert all(noop < half < 0.5 for half in halves), halves
