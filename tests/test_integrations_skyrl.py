"""The SkyRL-Gym envs, driven by skyrl_gym's own make / init / step / close."""

from __future__ import annotations

import json

import pytest

TASK = "tool/reprice/0"


@pytest.fixture(scope="module")
def skyrl_gym():
    """skyrl_gym, with rlvr's envs registered (rlvr-tool, rlvr-repo); imported when a test here runs,
    not when the suite is collected (every pytest-xdist worker collects every file)."""
    module = pytest.importorskip("skyrl_gym")
    import rlvr.integrations.skyrl  # noqa: F401  (registers rlvr-tool, rlvr-repo)

    return module


def _call(name: str, arguments: dict) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def test_tool_episode_through_skyrl_gym(skyrl_gym):
    env = skyrl_gym.make("rlvr-tool", env_config={"split": "train"}, extras={"task_id": TASK})
    assert isinstance(env, skyrl_gym.envs.base_text_env.BaseTextEnv)
    prompt, meta = env.init([{"role": "system", "content": "be brief"}])
    assert prompt[0]["role"] == "system" and "SKU-102" in prompt[-1]["content"]
    assert "set_price" in [tool["function"]["name"] for tool in meta["tools"]]
    out = env.step("I will look first. " + _call("check_stock", {"sku": "SKU-102"}))
    assert not out["done"] and out["reward"] == 0.0 and "result" in out["observations"][0]["content"]
    out = env.step(
        _call("set_price", {"sku": "SKU-102", "price": 13.58}) + _call("final_answer", {"answer": "ok"})
    )
    assert out["done"] and out["reward"] == pytest.approx(0.8 + 0.2 / 2)
    assert out["metadata"]["verdict"]["passed"] is True
    assert env.get_metrics()["passed"] == 1.0
    env.close()


def test_wrong_and_malformed_turns_are_scored_not_raised(skyrl_gym):
    env = skyrl_gym.make("rlvr-tool", env_config={"split": "train"}, extras={"task_id": TASK})
    env.init([])
    out = env.step("<tool_call>{not json</tool_call>")
    assert not out["done"] and "not valid JSON" in out["observations"][0]["content"]
    out = env.step(
        _call("set_price", {"sku": "SKU-102", "price": 99.0}) + _call("final_answer", {"answer": "ok"})
    )
    assert out["done"] and out["reward"] == 0.0 and "malformed_turns" in out["metadata"]["verdict"]["flags"]
    env.close()


def test_repo_episode_through_skyrl_gym(skyrl_gym):
    from rlvr.task_packs.registry import load_pack

    task = load_pack("repo-tasks").tasks("train")[0]
    env = skyrl_gym.make("rlvr-repo", env_config={"split": "train", "jobs": 1}, extras={"task_id": task.id})
    prompt, meta = env.init([])
    assert "submit" in [tool["function"]["name"] for tool in meta["tools"]]
    out = env.step(_call("list_files", {}))
    assert not out["done"] and sorted(task.hidden["base"])[0] in out["observations"][0]["content"]
    out = env.step(_call("submit", {}))
    assert out["done"] and out["metadata"]["verdict"]["task_id"] == task.id
    assert out["reward"] == pytest.approx(out["metadata"]["verdict"]["reward"])
    env.close()
