"""verifiers' own rollout code (Environment.evaluate) runs rlvr episodes against a scripted local chat
endpoint that emits tool calls; the rubric's reward is rlvr's verdict."""

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from fastapi import FastAPI

TASK = "tool/reprice/0"


@pytest.fixture(autouse=True)
def _verifiers_installed() -> None:
    """verifiers, rlvr's adapter (which imports it) and the servers load when a test here runs, not
    when the suite is collected (every pytest-xdist worker collects every file)."""
    pytest.importorskip("verifiers")


def scripted_endpoint(script: list[list[tuple[str, dict]]], seen: list[dict]) -> "FastAPI":
    """An OpenAI chat-completions endpoint whose n-th assistant turn makes the n-th scripted calls.
    (No `from __future__ import annotations` in this file: FastAPI resolves `request: Request`
    from the annotation object, and `Request` is imported here, not at module level.)"""
    from fastapi import FastAPI, Request

    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict:
        body = await request.json()
        seen.append(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        calls = script[turn] if turn < len(script) else []
        message: dict = {"role": "assistant", "content": None if calls else "done"}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{turn}_{i}",
                    "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a)},
                }
                for i, (n, a) in enumerate(calls)
            ]
        return {
            "id": f"scripted-{turn}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    return app


def _evaluate(env, url: str):
    from openai import AsyncOpenAI
    from verifiers.legacy.clients.openai_chat_completions_client import OpenAIChatCompletionsClient

    async def run():
        client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=url + "/v1", api_key="local"))
        return await env.evaluate(
            client, model="scripted", num_examples=1, rollouts_per_example=1, on_progress=[]
        )

    return asyncio.run(run())


def _task_env():
    from rlvr.integrations.verifiers import load_environment

    env = load_environment(pack="tool-worlds", split="train")
    index = [row["task_id"] for row in env.dataset["info"]].index(TASK)
    env.dataset = env.dataset.select([index])
    env.eval_dataset = env.dataset
    return env


def test_verifiers_rollout_scores_the_rlvr_verdict():
    from tests.loopback_server import Server

    seen: list[dict] = []
    script = [
        [("check_stock", {"sku": "SKU-102"})],
        [("set_price", {"sku": "SKU-102", "price": 13.58})],
        [("final_answer", {"answer": "ok"})],
    ]
    with Server(scripted_endpoint(script, seen)) as endpoint:
        outputs = _evaluate(_task_env(), endpoint.url)
    assert [t["function"]["name"] for t in seen[0]["tools"]][
        -1
    ] == "final_answer"  # the env's tools reached the model
    assert "SKU-102" in seen[0]["messages"][-1]["content"]
    assert len(seen) == 3  # the episode ended at final_answer
    tool_results = [m for m in seen[-1]["messages"] if m["role"] == "tool"]
    assert "result" in tool_results[0]["content"]
    (rollout,) = outputs["outputs"]
    assert rollout["reward"] == pytest.approx(0.8 + 0.2 / 2)  # 2 world calls, 1 optimal
    assert rollout["metrics"]["rlvr_passed"] == 1.0


def test_a_turn_without_tool_calls_ends_and_grades_the_state():
    from tests.loopback_server import Server

    seen: list[dict] = []
    script = [[("set_price", {"sku": "SKU-102", "price": 1.0})]]  # wrong price, then plain text
    with Server(scripted_endpoint(script, seen)) as endpoint:
        outputs = _evaluate(_task_env(), endpoint.url)
    assert len(seen) == 2
    (rollout,) = outputs["outputs"]
    assert rollout["reward"] == 0.0 and rollout["metrics"]["rlvr_passed"] == 0.0
