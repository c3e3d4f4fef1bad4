"""Red team 5, class 10: a tool argument nested hundreds of levels deep.

A turn handed to `rlvr/Tool-v0` as data (an assistant message or a call list, as trainers hold them)
was turned into text with `str()`, outside the episode's fault handling: an argument nested 2,000
levels deep raised RecursionError out of `step()` — a policy violation (a forbidden tool) turned
into an episode crash, an escape from its penalty — and an honest turn given as data was read as
Python's repr (single quotes), not JSON, so it failed as malformed. Now a turn given as data is
checked for depth without recursion, refused as a malformed turn (`oversized:nesting`, scored) when
too deep, and read as JSON otherwise.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import rlvr  # noqa: F401  (registers the rlvr/ env ids)
from rlvr.task_packs.registry import load_pack

TASK_ID = "tool/archive_text_files/0"


def _deep(levels: int) -> Any:
    value: Any = "/inbox/beacon.txt"
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture(scope="module")
def env() -> Any:
    made = gym.make("rlvr/Tool-v0", pack=load_pack("tool-worlds"), max_turns=1)
    yield made
    made.close()


@pytest.mark.parametrize("levels", [300, 2_000, 100_000])
@pytest.mark.parametrize("shape", ["call", "assistant message"])
def test_a_deeply_nested_argument_given_as_data_is_a_scored_malformed_turn(
    env: Any, levels: int, shape: str
) -> None:
    call = {"name": "delete_file", "arguments": {"path": _deep(levels)}}  # a forbidden tool, too
    action = call if shape == "call" else {"role": "assistant", "tool_calls": [{"function": call}]}
    env.reset(options={"task_id": TASK_ID})
    observation, reward, _, _, info = env.step(action)
    assert "nested deeper than" in observation
    verdict = info["verdict"]
    assert verdict["error"] is None and reward < 1.0
    assert "oversized:nesting" in verdict["flags"]


def test_an_honest_turn_given_as_data_is_read_as_json(env: Any) -> None:
    env.reset(options={"task_id": TASK_ID})
    observation, _, _, _, info = env.step({"name": "list_files", "arguments": {"directory": "/inbox"}})
    assert "malformed" not in observation and "beacon.txt" in observation
    assert info["tool_calls"] == ["list_files"] and not info["malformed"]
