"""Red team of the agent adapters (session layer, TRL environments, the OpenEnv server).

The attacker is the policy (its tool names and arguments) or a hostile/buggy client of the OpenEnv server on
loopback. Each hole found has a test here; each surface also has an honest control that must still score.
"""

from __future__ import annotations

import json
import threading

import pytest
from fastapi import FastAPI, Request  # module level: FastAPI resolves the endpoint's annotations here

from rlvr.integrations.session import EpisodeOver, Sessions

TASK = "tool/reprice/0"


def _nested(depth: int) -> dict:
    root: dict = {}
    current = root
    for _ in range(depth):
        current["a"] = {}
        current = current["a"]
    return root


@pytest.fixture(scope="module")
def tool_sessions():
    with Sessions("tool-worlds", split="train") as sessions:
        yield sessions


def _honest_reprice(session) -> None:
    session.call_tool("set_price", {"sku": "SKU-102", "price": 13.58})
    session.call_tool("final_answer", {"answer": "repriced"})


# ------------------------------------------------------------------ session layer: the policy's arguments


def test_deeply_nested_arguments_are_a_tool_error_not_an_exception(tool_sessions):
    session = tool_sessions.open()
    session.start(TASK)
    output = session.call_tool("check_stock", {"sku": _nested(5000)})  # raised RecursionError before
    assert not output.done and "error" in output.text and "nest" in output.text
    _honest_reprice(session)  # the episode goes on and still scores
    result = session.finish()
    assert result.passed and result.error is None
    session.close()


def test_hostile_arguments_never_escape_the_adapter_and_the_episode_is_scored(tool_sessions):
    session = tool_sessions.open()
    session.start(TASK)
    attacks = [
        ("check_stock", {"sku": 10**5000}),
        ("check_stock", {"sku": "\ud800"}),
        ("\udfff", {}),
        ("rm_rf", {"path": "/"}),
        ("set_price", {"sku": ["x"], "price": "cheap"}),
        ("set_price", {"sku": "SKU-102", "price": float("inf")}),
        ("check_stock", {"sku": "x" * 2_000_000}),
    ]
    for name, arguments in attacks:
        output = session.call_tool(name, arguments)
        assert "error" in output.text
        if output.done:
            break
    result = session.finish()
    assert result.error is None and result.reward == 0.0 and result.flags  # a scored, flagged failure
    with pytest.raises(EpisodeOver):
        session.call_tool("check_stock", {"sku": "SKU-102"})
    assert session.finish() is result  # finishing twice gives the same verdict
    session.close()


def test_trl_tool_method_survives_deep_nesting():
    from rlvr.integrations.trl import environment_factory

    factories = environment_factory("tool-worlds", split="train")
    assert isinstance(factories, dict)
    env = factories["inventory"]()
    try:
        env.reset(task_id=TASK)
        text = env.check_stock(sku=_nested(5000))  # type: ignore[attr-defined]
        assert "error" in text
        env.set_price(sku="SKU-102", price=13.58)  # type: ignore[attr-defined]
        env.final_answer(answer="repriced")  # type: ignore[attr-defined]
        reward = env.get_reward()
        assert env.last_result is not None and env.last_result.passed and reward == env.last_result.reward
    finally:
        env._close()
        factories["inventory"].sessions.close()


# ------------------------------------------------------------------ session layer: isolation between sessions


def test_one_sessions_writes_never_reach_another_session_of_the_same_task(tool_sessions):
    attacker, victim = tool_sessions.open(), tool_sessions.open()
    attacker.start(TASK)
    victim.start(TASK)
    attacker.call_tool("set_price", {"sku": "SKU-102", "price": 13.58})
    seen = json.loads(victim.call_tool("check_stock", {"sku": "SKU-102"}).text)
    assert "13.58" not in json.dumps(seen)
    victim.call_tool("final_answer", {"answer": "done"})  # did nothing: must not inherit the attacker's write
    assert not victim.finish().passed
    attacker.call_tool("final_answer", {"answer": "repriced"})
    assert attacker.finish().passed
    mutated = attacker.start(TASK).tools
    mutated[0]["function"]["name"] = "pwned"
    assert victim.start(TASK).tools[0]["function"]["name"] != "pwned"
    attacker.close()
    victim.close()


def test_a_reused_session_starts_pristine(tool_sessions):
    session = tool_sessions.open()
    session.start(TASK)
    _honest_reprice(session)
    assert session.finish().passed
    session.start(TASK)  # the next episode of the same session
    result = session.finish()
    assert not result.passed and "unfinished" in result.flags and result.turns == 0
    session.close()


# ------------------------------------------------------------------ OpenEnv server: hostile clients


@pytest.fixture(scope="module")
def openenv_app():
    pytest.importorskip("openenv.core")
    from rlvr.integrations.openenv import ServerOptions, close_app, create_app

    app = create_app("tool-worlds", split="train", options=ServerOptions(max_sessions=2, idle_timeout=60))
    yield app
    close_app(app)


def test_http_requests_out_of_order_are_4xx_not_500(openenv_app):
    from fastapi.testclient import TestClient

    with TestClient(openenv_app, raise_server_exceptions=False) as client:
        step = client.post("/step", json={"action": {"tool": "list_items"}})
        assert 400 <= step.status_code < 500, step.text
        assert "reset" in step.json()["detail"]
        unknown = client.post("/reset", json={"task_id": "tool/../../etc/passwd"})
        assert 400 <= unknown.status_code < 500, unknown.text
        assert "unknown task id" in unknown.json()["detail"]
        negative = client.post("/reset", json={"seed": -1})
        assert 400 <= negative.status_code < 500, negative.text
        both = client.post("/step", json={"action": {"tool": "list_items", "end": True}})
        assert 400 <= both.status_code < 500, both.text
        honest = client.post("/reset", json={"task_id": TASK})  # the control: a good request still works
        assert honest.status_code == 200 and honest.json()["observation"]["task_id"] == TASK
        assert client.get("/health").status_code == 200
    assert openenv_app.state.rlvr_registry.open_sessions() == 0  # nothing left open by HTTP requests


def test_websocket_garbage_is_an_error_message_and_the_session_lives(openenv_app):
    from fastapi.testclient import TestClient

    with TestClient(openenv_app) as client, client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        assert ws.receive_json()["type"] == "observation"
        for garbage in [
            "{not json",
            json.dumps({"type": "step", "data": {"tool": 7}}),
            json.dumps({"type": "step", "data": {"tool": "check_stock", "arguments": _nested(400)}}),
            json.dumps({"type": "reset", "data": {"task_id": ["x"]}}),
            json.dumps({"type": "reset", "data": {"seed": -5}}),
            json.dumps({"type": "nope"}),
        ]:
            ws.send_text(garbage)
            reply = ws.receive_json()
            assert reply["type"] in ("error", "observation"), reply
        ws.send_text(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        assert ws.receive_json()["type"] == "observation"
        for action in [
            {"tool": "set_price", "arguments": {"sku": "SKU-102", "price": 13.58}},
            {"tool": "final_answer", "arguments": {"answer": "repriced"}},
        ]:
            ws.send_text(json.dumps({"type": "step", "data": action}))
            reply = ws.receive_json()
        assert reply["data"]["done"] and reply["data"]["observation"]["verdict"]["passed"]


def test_max_sessions_refuses_the_extra_client_and_frees_slots_on_disconnect(openenv_app):
    from fastapi.testclient import TestClient

    registry = openenv_app.state.rlvr_registry
    with TestClient(openenv_app) as client:
        for _ in range(3):  # three rounds: a leaked slot would refuse the second round
            with client.websocket_connect("/ws") as first, client.websocket_connect("/ws") as second:
                for ws in (first, second):
                    ws.send_text(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
                    assert ws.receive_json()["type"] == "observation"
                with client.websocket_connect("/ws") as third:
                    assert third.receive_json()["data"]["code"] == "CAPACITY_REACHED"
        assert registry.open_sessions() == 0


# ------------------------------------------------------------------ OpenEnv server: a disconnect mid-step


@pytest.fixture(scope="module")
def repo_app():
    pytest.importorskip("openenv.core")
    from rlvr.integrations.openenv import ServerOptions, close_app, create_app

    app = create_app("repo-tasks", split="train", options=ServerOptions(max_sessions=4, idle_timeout=0.5))
    yield app
    close_app(app)


def _slow_step(environment, started: threading.Event, done: threading.Event) -> None:
    from rlvr.integrations.openenv import RlvrAction

    started.set()
    try:
        environment.step(RlvrAction(tool="run_python", arguments={"code": "import time\ntime.sleep(4)"}))
    finally:
        done.set()


def test_closing_a_session_mid_step_does_not_block_the_caller(repo_app):
    """openenv-core closes a disconnected client's env on the server's event loop, under its session lock:
    a close that waits for the running step stalls every other client of the server for that long."""
    from rlvr.integrations.openenv import RlvrOpenEnvEnvironment

    sessions, registry = repo_app.state.rlvr_sessions, repo_app.state.rlvr_registry
    environment = RlvrOpenEnvEnvironment(sessions, registry)
    environment.reset(task_id=sessions.tasks[0].id)
    started, done = threading.Event(), threading.Event()
    worker = threading.Thread(target=_slow_step, args=(environment, started, done))
    worker.start()
    started.wait()
    assert not done.wait(1.5)  # the sandboxed snippet is running, three idle timeouts long
    assert registry.reap() == 0  # a session busy in a step is not idle, whatever the idle timeout
    assert environment.session is not None and not environment.expired  # nor did the reaper thread expire it
    environment.close()  # the client disconnected
    assert not done.is_set(), "close() waited for the running step"
    worker.join(timeout=60)
    assert environment.session is None and registry.open_sessions() == 0  # the step's end closed it


def test_honest_repo_episode_over_the_server_still_scores(repo_app):
    from rlvr.integrations.openenv import RlvrAction, RlvrOpenEnvEnvironment

    sessions, registry = repo_app.state.rlvr_sessions, repo_app.state.rlvr_registry
    environment = RlvrOpenEnvEnvironment(sessions, registry)
    first = environment.reset(task_id=sessions.tasks[0].id)
    assert first.tools and "submit" in [t["function"]["name"] for t in first.tools]
    listed = environment.step(RlvrAction(tool="list_files"))
    assert "csvreport" in listed.text or listed.text
    final = environment.step(RlvrAction(tool="submit"))
    assert final.done and final.reward is not None and final.verdict is not None
    assert final.verdict["error"] is None
    environment.close()


# ------------------------------------------------------------------ make_reward_func: replayed tool-call completions


def _call(name: str, arguments) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


@pytest.fixture(scope="module")
def tool_reward():
    from rlvr.integrations.trl import make_reward_func

    return make_reward_func("tool-worlds")


@pytest.mark.parametrize(
    "completion",
    [
        [
            _call("check_stock", {"sku": 10**5000}),
            _call("final_answer", {"answer": "ok"}),
        ],  # raised ValueError
        [_call("final_answer", "[" * 100_000)],  # raised RecursionError
        [_call("check_stock", {"sku": _nested(5000)}), _call("final_answer", {"answer": "ok"})],
        [_call("final_answer", {"answer": _nested(5000)})],
    ],
    ids=["huge-int", "deep-string-arguments", "deep-arguments", "deep-answer"],
)
def test_reward_func_scores_unencodable_tool_calls_as_failures(tool_reward, completion):
    rewards = tool_reward(prompts=[""], completions=[completion], task_id=[TASK])
    verdict = tool_reward.last_verdicts[0]
    assert rewards == [0.0] and verdict.error is None


def test_reward_func_honest_replay_still_scores(tool_reward):
    completion = [
        _call("set_price", {"sku": "SKU-102", "price": 13.58}),
        _call("final_answer", {"answer": "repriced"}),
    ]
    assert tool_reward(prompts=[""], completions=[completion], task_id=[TASK]) == [1.0]
    assert tool_reward.last_verdicts[0].passed


# ------------------------------------------------------------------ SkyRL text env: hostile generated text


def test_skyrl_env_scores_hostile_tool_call_blocks():
    pytest.importorskip("skyrl_gym")
    import skyrl_gym

    import rlvr.integrations.skyrl  # noqa: F401  (registers rlvr-tool)

    env = skyrl_gym.make(
        "rlvr-tool", env_config={"pack": "tool-worlds", "split": "train"}, extras={"task_id": TASK}
    )
    env.init([])
    deep = "<tool_call>" + json.dumps({"name": "check_stock", "arguments": {"sku": "x"}})[:-1] + "[" * 50_000
    for text in [
        deep + "</tool_call>",
        "<tool_call>\ud800</tool_call>",
        "\x00" * 1000,
        "<tool_call>" * 10_000,
    ]:
        output = env.step(text)
        if output["done"]:
            break
    while not output["done"]:
        output = env.step('{"final_answer": "gave up"}')
    metadata = output["metadata"] or {}
    assert output["reward"] == 0.0 and metadata["disrupted"] is False
    env.close()


# ------------------------------------------------------------------ verifiers: hostile raw tool-call arguments


def _raw_arguments_endpoint(turns: list[list[tuple[str, str]]]):
    """A chat endpoint whose n-th assistant turn calls the n-th tools with these raw argument strings."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict:
        body = await request.json()
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        calls = turns[turn] if turn < len(turns) else []
        message: dict = {"role": "assistant", "content": None if calls else "done"}
        if calls:
            message["tool_calls"] = [
                {"id": f"c{turn}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(calls)
            ]
        return {
            "id": f"raw-{turn}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    return app


def test_verifiers_rollout_scores_deeply_nested_raw_arguments():
    pytest.importorskip("verifiers")
    from tests.loopback_server import Server
    from tests.test_integrations_verifiers import _evaluate, _task_env

    turns = [
        [
            ("check_stock", "[" * 100_000)
        ],  # raised RecursionError out of env_response: the whole evaluate died
        [("set_price", json.dumps({"sku": "SKU-102", "price": 13.58}))],
        [("final_answer", json.dumps({"answer": "ok"}))],
    ]
    with Server(_raw_arguments_endpoint(turns)) as endpoint:
        outputs = _evaluate(_task_env(), endpoint.url)
    (rollout,) = outputs["outputs"]
    assert (
        rollout["metrics"]["rlvr_passed"] == 1.0 and rollout["reward"] > 0
    )  # the episode went on and scored
