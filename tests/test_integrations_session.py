"""The session layer under the agent adapters: the real env's tools, turns, budgets and verdicts."""

from __future__ import annotations

import pytest

from rlvr.graders.repo.episode import TOOL_ARGUMENTS
from rlvr.integrations.session import EpisodeOver, SessionError, Sessions
from rlvr.integrations.trl import make_reward_func
from rlvr.specs.tool_worlds import WORLDS

TASK = "tool/reprice/0"


@pytest.fixture(scope="module")
def tool_sessions():
    with Sessions("tool-worlds", split="train") as sessions:
        yield sessions


def test_tools_are_the_worlds_tools_plus_final_answer(tool_sessions):
    session = tool_sessions.open()
    start = session.start(TASK)
    names = [tool["function"]["name"] for tool in start.tools]
    assert names == [*WORLDS["inventory"].tools(), "final_answer"]
    assert start.toolset == "inventory" and "SKU-102" in start.prompt
    assert "tool_calls" in start.observation  # the env's own text-protocol prompt is there too
    session.close()


def test_live_session_verdict_equals_the_graders_replay(tool_sessions):
    session = tool_sessions.open()
    session.start(TASK)
    assert '"result"' in session.call_tool("check_stock", {"sku": "SKU-102"}).text
    assert not session.call_tool("set_price", {"sku": "SKU-102", "price": 13.58}).done
    final = session.call_tool("final_answer", {"answer": "repriced"})
    assert final.done and final.reward == pytest.approx(0.9)
    result = session.finish()
    assert result.terminated and not result.truncated and result.passed and result.flags == []
    completion = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"type": "function", "function": {"name": "check_stock", "arguments": {"sku": "SKU-102"}}}
            ],
        },
        {"role": "tool", "content": "whatever the trainer logged"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "set_price", "arguments": '{"sku": "SKU-102", "price": 13.58}'},
                }
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "final_answer", "arguments": {"answer": "repriced"}},
                }
            ],
        },
    ]
    reward = make_reward_func("tool-worlds")
    assert reward(completions=[completion], task_id=[TASK]) == [pytest.approx(result.reward)]
    with pytest.raises(EpisodeOver):
        session.call_tool("list_items", {})
    session.close()


def test_unfinished_episode_is_graded_as_it_is_and_flagged(tool_sessions):
    session = tool_sessions.open()
    session.start(TASK)
    session.call_tool("set_price", {"sku": "SKU-102", "price": 13.58})
    result = session.finish()
    assert result.truncated and not result.terminated and "unfinished" in result.flags
    assert result.reward == pytest.approx(
        1.0
    )  # the goal holds (the task asks for no answer); 1 call, optimal
    assert session.finish() is result
    session.close()


def test_bad_calls_are_observations_and_count_as_turns(tool_sessions):
    session = tool_sessions.open()
    with pytest.raises(SessionError):
        session.call_tool("list_items", {})
    session.start(TASK)
    assert "must be an object" in session.call_tool("list_items", ["x"]).text  # type: ignore[arg-type]
    assert "not JSON data" in session.call_tool("set_price", {"sku": {1, 2}}).text
    deep: dict = {}
    for _ in range(100):
        deep = {"x": deep}
    assert "nested" in session.call_tool("set_price", {"sku": deep}).text
    assert "unknown tool" in session.call_tool("drop_database", {}).text
    result = session.finish()
    assert result.reward == 0.0 and "oversized:nesting" in result.flags and "malformed_turns" in result.flags
    session.close()


def test_turn_budget_ends_the_episode(tool_sessions):
    with Sessions("tool-worlds", split="train", max_turns=2) as sessions:
        session = sessions.open()
        session.start(TASK)
        assert not session.call_tool("list_items", {}).done
        out = session.call_tool("list_items", {})
        assert out.done and out.reward == 0.0
        assert session.finish().truncated
        session.close()


def test_options_are_checked_and_single_turn_packs_are_refused():
    with pytest.raises((TypeError, ValueError), match="max_turnz"):
        Sessions("tool-worlds", max_turnz=3)
    with Sessions("tiny-functions") as sessions, pytest.raises(TypeError, match="not an agent env"):
        sessions.open()
    reward = make_reward_func("tiny-functions")
    task_id = reward.pack.tasks()[0].id
    chat = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
        }
    ]
    with pytest.raises(ValueError, match="environment_factory"):
        reward(completions=[chat], task_id=[task_id])


def test_repo_schemas_are_the_episodes_own_arguments():
    with Sessions("repo-tasks", split="train", jobs=1) as sessions:
        task = sessions.tasks[0]
        name, tools = sessions.toolset(task)
        assert name == "repo"
        assert {
            t["function"]["name"]: tuple(t["function"]["parameters"]["properties"]) for t in tools
        } == TOOL_ARGUMENTS
        session = sessions.open()
        session.start(task.id)
        path = sorted(task.hidden["base"])[0]
        read = session.call_tool(
            "read_file", {"path": path, "start": 1, "end": 2}
        )  # ints, as the schema types them
        assert read.text.startswith("   1|") and "error" not in read.text.splitlines()[0]
        result = session.finish()
        assert "unfinished" in result.flags and result.task_id == task.id
        session.close()
