"""Red team 6, batch isolation on the reward paths: one item's content must never change, delay or
error another item's verdict.

Found in the TRL reward function (each test failed before its fix):
- `on_error="raise"` raised for an *empty completion* (a verdict with `error` set, fault "input":
  the policy's own doing, not the machinery's), so one empty generation - a model that emits EOS
  at once - stopped the whole training step; under "nan" the same item got no reward at all
  instead of its 0. `on_error` now covers faults of the machinery only (`Verdict.disrupted`);
- one completion that came back as tool calls (a chat template that parses the model's text into
  `tool_calls`) on a single-turn pack raised `ValueError` for the whole batch. Now that item
  alone scores 0 (flag `tool_calls_unsupported`); a batch made only of them still raises the
  set-up error naming `environment_factory` (the control below).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.graders.base import Grader, make_grader
from rlvr.integrations.trl import make_reward_func
from rlvr.task_packs.registry import load_pack

PACK = load_pack("tiny-functions")
TASK = PACK.tasks()[0]
REFERENCE = str(TASK.hidden["reference"])
TOOL_CALLS = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
    }
]


@pytest.fixture(scope="module")
def grader() -> Iterator[Grader]:
    with make_grader(PACK, jobs=1) as built:
        yield built


@pytest.mark.parametrize("on_error", ["raise", "nan", "zero"])
def test_an_empty_completion_is_a_scored_zero_and_stops_no_batch(grader: Grader, on_error: str) -> None:
    reward = make_reward_func(PACK, grader=grader, on_error=on_error)
    rewards = reward(completions=[REFERENCE, "", REFERENCE], task_id=[TASK.id] * 3)
    assert rewards == [1.0, 0.0, 1.0]


def test_one_tool_call_completion_scores_zero_alone(grader: Grader) -> None:
    reward = make_reward_func(PACK, grader=grader)
    rewards = reward(completions=[REFERENCE, TOOL_CALLS, REFERENCE], task_id=[TASK.id] * 3)
    assert rewards == [1.0, 0.0, 1.0]
    assert "tool_calls_unsupported" in reward.last_verdicts[1].flags
    assert reward.last_verdicts[1].error is None


def test_a_batch_of_only_tool_calls_is_still_the_set_up_error(grader: Grader) -> None:
    reward = make_reward_func(PACK, grader=grader)
    with pytest.raises(ValueError, match="environment_factory"):
        reward(completions=[TOOL_CALLS, TOOL_CALLS], task_id=[TASK.id] * 2)


def test_honest_chat_completions_are_graded_as_before(grader: Grader) -> None:
    reward = make_reward_func(PACK, grader=grader)
    chat = [{"role": "assistant", "content": REFERENCE}]
    assert reward(completions=[chat, REFERENCE], task_id=[TASK.id] * 2) == [1.0, 1.0]
