"""`rlvr serve --protocol openenv`: openenv-core's own client resets, steps and reads state."""

from __future__ import annotations

import time

import pytest

TASK = "tool/reprice/0"


@pytest.fixture(scope="module")
def tool_server():
    """openenv-core and rlvr's adapter are imported here, when a test of this file runs, not when
    the suite is collected (every pytest-xdist worker collects every file)."""
    pytest.importorskip("openenv.core")
    from rlvr.integrations.openenv import ServerOptions, close_app, create_app
    from tests.loopback_server import Server

    app = create_app("tool-worlds", split="train", options=ServerOptions(idle_timeout=3.0))
    with Server(app) as server:
        yield server
    close_app(app)


def test_openenv_client_runs_a_tool_episode(tool_server):
    from openenv.core.generic_client import GenericEnvClient

    registry = tool_server.app.state.rlvr_registry
    pack = tool_server.app.state.rlvr_sessions.pack
    call = pack.get(TASK).hidden["reference"][0][0]
    with GenericEnvClient(base_url=tool_server.url) as env:
        first = env.reset(task_id=TASK)
        assert not first.done and first.observation["task_id"] == TASK
        names = [tool["function"]["name"] for tool in first.observation["tools"]]
        assert "set_price" in names and "final_answer" in names
        step = env.step({"tool": "check_stock", "arguments": {"sku": call["arguments"]["sku"]}})
        assert not step.done and "result" in step.observation["text"]
        env.step({"tool": call["name"], "arguments": call["arguments"]})
        state = env.state()
        assert state["task_id"] == TASK and state["step_count"] == 2 and state["done"] is False
        last = env.step({"tool": "final_answer", "arguments": {"answer": "done"}})
        assert last.done and last.reward == pytest.approx(0.8 + 0.2 * 1 / 2)  # 2 calls, 1 optimal
        assert last.observation["verdict"]["passed"] is True
        assert registry.open_sessions() == 1
    deadline = time.monotonic() + 10
    while registry.open_sessions() and time.monotonic() < deadline:  # the disconnect drops the session
        time.sleep(0.05)
    assert registry.open_sessions() == 0


def test_bad_actions_are_errors_and_the_session_goes_on(tool_server):
    from rlvr.integrations.openenv import RlvrAction, RlvrEnvClient

    with RlvrEnvClient(base_url=tool_server.url) as env:
        env.reset(task_id=TASK)
        with pytest.raises(RuntimeError, match="exactly one of"):
            env.step(RlvrAction(tool="list_items", text="{}"))
        bad = env.step(RlvrAction(tool="set_price", arguments={"sku": 7}))
        assert not bad.done and "bad arguments" in bad.observation.text
        result = env.step(RlvrAction(end=True))
        assert result.done and result.reward == 0.0 and "unfinished" in result.observation.verdict["flags"]
        with pytest.raises(RuntimeError, match="over"):
            env.step(RlvrAction(tool="list_items"))


def test_idle_session_expires_with_a_clear_error(tool_server):
    from rlvr.integrations.openenv import RlvrAction, RlvrEnvClient

    registry = tool_server.app.state.rlvr_registry
    with RlvrEnvClient(base_url=tool_server.url) as env:
        env.reset(task_id=TASK)
        deadline = time.monotonic() + 20
        while registry.open_sessions() and time.monotonic() < deadline:
            time.sleep(0.2)  # the reaper closes it after 3 s idle
        assert registry.open_sessions() == 0
        with pytest.raises(RuntimeError, match="idle for more than 3s"):
            env.step(RlvrAction(tool="list_items"))
        again = env.reset(task_id=TASK)  # a new episode on the same connection
        assert again.observation.task_id == TASK
