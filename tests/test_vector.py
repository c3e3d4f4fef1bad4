"""Gymnasium vector envs over rlvr/Code-v0: make_vec sync/async, GRPO groups, autoreset."""

from __future__ import annotations

import copy
import multiprocessing

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

import rlvr  # noqa: F401  (registers rlvr/Code-v0)
from rlvr.envs.spaces import UnicodeText
from rlvr.envs.vector import BatchedSyncVectorEnv, GroupError, GroupRollout, reset_group

TASK = "HumanEval/2"
OTHER_TASK = "HumanEval/16"


def group_completions(task) -> tuple[str, ...]:
    return (task.hidden["reference"], task.prompt + "    return None\n", "def broken(:\n")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_group_rewards_match_local_grading(mode, humaneval_pack, humaneval_grader):
    envs = gym.make_vec("rlvr/Code-v0", num_envs=3, vectorization_mode=mode, pack="humaneval", jobs=1)
    try:
        assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        group = GroupRollout(envs)
        task = humaneval_pack.get(TASK)
        assert group.reset(TASK, seed=3) == task.prompt
        completions = group_completions(task)
        step = group.step(completions)
        local = humaneval_grader.grade_many([TASK] * 3, list(completions))
        assert step.rewards == pytest.approx([v.reward for v in local], abs=1e-9)
        assert step.rewards[0] == 1.0 and 0.0 < step.rewards[1] < 1.0 and step.rewards[2] == 0.0
        assert step.terminated.all()
        assert [v["passed"] for v in step.verdicts if v] == [v.passed for v in local]
        assert step.verdicts[1] is not None and step.verdicts[1]["components"]["tests"] == 0.0
        with pytest.raises(GroupError, match="reset"):
            group.step(completions)  # would only return autoreset zeros
        other = humaneval_pack.get(OTHER_TASK)
        assert group.reset(OTHER_TASK) == other.prompt  # the next group, all on the new task
        assert group.step((other.hidden["reference"],) * 3).rewards.tolist() == [1.0, 1.0, 1.0]
    finally:
        envs.close()


def test_default_make_vec_grades_each_group_in_one_batch(humaneval_pack, humaneval_grader):
    envs = gym.make_vec("rlvr/Code-v0", num_envs=4, pack="humaneval", grader_options={"jobs": 1})
    try:
        assert isinstance(envs, BatchedSyncVectorEnv)  # the registered vector_entry_point
        assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        group = GroupRollout(envs)
        task = humaneval_pack.get(TASK)
        group.reset(TASK, seed=0)
        completions = (*group_completions(task), task.hidden["reference"])
        step = group.step(completions)
        local = humaneval_grader.grade_many([TASK] * 4, list(completions))
        assert step.rewards == pytest.approx([v.reward for v in local], abs=1e-9)
        assert envs.grader.batches == 1  # four sub-envs, one grading batch
        _, rewards, terminated, _, _ = envs.step(("a", "b", "c", "d"))  # autoreset step: nothing graded
        assert rewards.tolist() == [0.0] * 4 and not terminated.any() and envs.grader.batches == 1
    finally:
        envs.close()


def test_next_step_autoreset_would_break_a_group(humaneval_pack, humaneval_grader):
    """What the module docstring warns about: stepping past termination autoresets each sub-env
    onto its own random task with reward 0, ignoring the action."""
    envs = gym.make_vec(
        "rlvr/Code-v0", num_envs=2, vectorization_mode="sync", pack="humaneval", grader=humaneval_grader
    )
    try:
        observations, _ = reset_group(envs, TASK, seed=0)
        task = humaneval_pack.get(TASK)
        assert list(observations) == [task.prompt, task.prompt]
        _, rewards, terminated, _, _ = envs.step((task.hidden["reference"],) * 2)
        assert rewards.tolist() == [1.0, 1.0] and terminated.all()
        observations, rewards, terminated, truncated, info = envs.step((task.hidden["reference"],) * 2)
        assert rewards.tolist() == [0.0, 0.0] and not terminated.any() and not truncated.any()
        assert "verdict" not in info  # nothing was graded: these were reset steps
        assert all(isinstance(o, str) and o for o in observations)
    finally:
        envs.close()


def test_group_rejects_bad_completions(humaneval_grader):
    envs = gym.make_vec(
        "rlvr/Code-v0", num_envs=2, vectorization_mode="sync", pack="humaneval", grader=humaneval_grader
    )
    try:
        group = GroupRollout(envs)
        with pytest.raises(GroupError, match="reset"):
            group.step(("a", "b"))
        group.reset(TASK)
        with pytest.raises(GroupError, match="3 completions for a group of 2"):
            group.step(("a", "b", "c"))
        with pytest.raises(GroupError, match="str"):
            group.step(("a", 7))  # type: ignore[arg-type]
        with pytest.raises(Exception, match="HumanEval/9999"):
            group.reset("HumanEval/9999")
    finally:
        envs.close()


def test_reset_group_needs_rlvr_envs():
    envs = gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
    try:
        with pytest.raises(GroupError, match="task ids"):
            reset_group(envs, TASK)
    finally:
        envs.close()


def test_unicode_text_shared_memory_round_trips_any_string():
    space = UnicodeText(max_length=64)
    texts = ["", "def f():\n    return 1", "ünïcödé 🐍 漢字", "lone \ud800 surrogate", "x" * 64]
    memory = create_shared_memory(space, n=len(texts), ctx=multiprocessing)
    for index, text in enumerate(texts):
        write_to_shared_memory(space, index, text, memory)
    view = read_from_shared_memory(space, memory, n=len(texts))
    assert view == tuple(texts) and view[1:3] == tuple(texts[1:3])
    snapshot = copy.deepcopy(view)
    write_to_shared_memory(space, 0, "later", memory)
    assert view[0] == "later"  # a live view, as AsyncVectorEnv expects of shared memory
    assert isinstance(snapshot, tuple) and snapshot[0] == ""  # what the env hands out (copy=True)
    with pytest.raises(ValueError, match="at most 64"):
        write_to_shared_memory(space, 0, "y" * 65, memory)
    assert np.frombuffer(memory.get_obj(), dtype=np.uint32).size == len(texts) * 65
