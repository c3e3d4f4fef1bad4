"""OpenRLHF's own MultiTurnAgentExecutor runs rlvr episodes through rlvr's agent file, loaded the way
OpenRLHF loads `--agent_func_path`; a tiny local model stands in for the vLLM engine (which needs CUDA).

openrlhf is installed here with --no-deps: its declared deepspeed/flash-attn/vllm do not build on this
CPU machine; `openrlhf.utils.agent` needs none of them."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from types import SimpleNamespace

import pytest

TASK = "tool/reprice/0"


class TinyEngine:
    """The part of OpenRLHF's vLLM engine the agent executor calls: `await generate(ids, params)`."""

    def __init__(self, model, tokenizer) -> None:
        self.model, self.tokenizer = model, tokenizer

    async def generate(self, token_ids, sampling_params, multi_modal_data=None):
        import torch

        ids = torch.tensor([list(token_ids)])
        out = self.model.generate(ids, max_new_tokens=min(8, sampling_params.max_tokens), do_sample=False)
        new = out[0][ids.shape[1] :].tolist()
        text = self.tokenizer.decode(new)
        return SimpleNamespace(
            outputs=[SimpleNamespace(token_ids=new, text=text, finish_reason="stop", logprobs=None)]
        )


def test_openrlhf_executor_runs_an_rlvr_episode(monkeypatch, tmp_path):
    # imported here, not at module level: every pytest-xdist worker collects every file, and only
    # the one that runs this test should pay for openrlhf and the tiny model's transformers classes
    pytest.importorskip(
        "openrlhf.utils.agent",
        reason="openrlhf is not installed: its wheel needs CUDA builds (flash-attn fails: No module named torch);"
        " ./run setup installs it with pip install --no-deps openrlhf pylatexenc",
    )
    from openrlhf.utils.agent import AgentExecutorBase

    import rlvr.integrations.openrlhf_agent as agent_module
    from tests.agent_models import render, scripted_model, tokenizer_for, tool_call_text

    monkeypatch.setenv("RLVR_PACK", "tool-worlds")
    monkeypatch.setenv("RLVR_SPLIT", "train")
    monkeypatch.setattr(agent_module, "_sessions", None)
    spec = importlib.util.spec_from_file_location("agent_module", agent_module.__file__)  # as OpenRLHF does
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert issubclass(loaded.AgentExecutor, AgentExecutorBase)

    dataset = tmp_path / "train.jsonl"
    count = agent_module.write_dataset("tool-worlds", "train", dataset)
    rows = [line for line in dataset.read_text().splitlines() if f'"label": "{TASK}"' in line]
    assert count > 1000 and len(rows) == 1
    prompt = json.loads(rows[0])["prompt"]
    script = [
        tool_call_text("set_price", {"sku": "SKU-102", "price": 13.58}),
        tool_call_text("final_answer", {"answer": "ok"}),
    ]
    text = render(prompt)
    tokenizer = tokenizer_for([text], script)
    engine = TinyEngine(scripted_model(tokenizer, script), tokenizer)
    executor = loaded.AgentExecutor()
    params = SimpleNamespace(max_tokens=None, logprobs=None)
    result = asyncio.run(executor.execute(text, TASK, params, 4096, tokenizer, engine))
    assert result["reward"] == pytest.approx(1.0)  # one world call, as the optimal solution
    assert float(result["extra_logs"]["passed"]) == 1.0
    ((start, end),) = result["action_ranges"]  # one generated turn: both calls, the episode ended
    assert tokenizer.decode(result["observation_tokens"][start:end]).startswith(script[0])
