"""TRL's real GRPOTrainer runs rlvr agent episodes through `environment_factory` (Tool-v0 and Repo-v0).

The policy is a tiny local model overfitted to make given tool calls (tests/agent_models.py), so the
rollouts really call the env's tools; the rewards TRL logs must be the trusted verdicts of those
episodes: for Tool-v0 the same verdict the tool grader gives when it replays TRL's own chat completion
(through `make_reward_func`, which used to score such completions a silent 0), for Repo-v0 the verdict
of the repository state the calls left.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from trl import GRPOConfig

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


@pytest.fixture(autouse=True)
def _trl_installed() -> None:
    """TRL, datasets and the tiny model's transformers classes are imported by the tests that run,
    not when the suite is collected (every pytest-xdist worker collects every file)."""
    pytest.importorskip("trl")


def _config(tmp_path, **overrides) -> GRPOConfig:
    from trl import GRPOConfig

    values = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=64,
        max_steps=2,
        learning_rate=1e-6,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        seed=0,
        disable_tqdm=True,
        max_tool_calling_iterations=1,
    )
    values.update(overrides)
    return GRPOConfig(**values)


def test_grpo_trainer_runs_tool_v0_episodes(tmp_path):
    from datasets import Dataset
    from trl import GRPOTrainer

    from rlvr.integrations import trl as rlvr_trl
    from tests.agent_models import render, scripted_model, tokenizer_for, tool_call_text

    task_id = "tool/reprice/0"
    factories = rlvr_trl.environment_factory("tool-worlds", split="train")
    assert isinstance(factories, dict) and set(factories) == {"files", "ledger", "calendar", "inventory"}
    factory = factories["inventory"]
    probe = factory()
    methods = [
        getattr(probe, name)
        for name in ("adjust_stock", "check_stock", "list_items", "set_price", "final_answer")
    ]
    task = factory.sessions.pack.get(task_id)
    call = task.hidden["reference"][0][0]
    prompt = probe.reset(task_id=task_id)
    script = [
        tool_call_text(call["name"], call["arguments"]),
        tool_call_text("final_answer", {"answer": "done"}),
    ]
    context = render([{"role": "user", "content": prompt}], methods)
    tokenizer = tokenizer_for([context], script)
    model = scripted_model(tokenizer, script)  # one message: set_price, then final_answer

    replay = rlvr_trl.make_reward_func("tool-worlds", name="replay")
    seen: list[tuple[list[str], list[float | None], list]] = []

    def replayed(prompts, completions, environments, **kwargs):
        rewards = replay(prompts=prompts, completions=completions, **kwargs)
        seen.append((list(kwargs["task_id"]), rewards, list(environments)))
        return rewards

    replayed.__name__ = "replay"
    dataset = Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": ""}]], "task_id": [task_id], "environment": ["inventory"]}
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[replayed],
        args=_config(tmp_path / "tool"),
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=factories,
    )
    trainer.train()
    assert len(seen) == 2
    task_ids, replay_rewards, environments = seen[
        -1
    ]  # the pooled environments now hold the last step's episodes
    assert task_ids == [task_id, task_id]
    for reward, environment in zip(replay_rewards, environments, strict=True):
        result = environment.last_result
        assert result is not None and result.task_id == task_id and result.terminated
        assert result.reward == pytest.approx(
            reward
        )  # live episode == the grader's replay of TRL's transcript
        assert result.reward > 0.8  # the scripted calls solve the task: a real, non-zero verdict
    logged = [e for e in trainer.state.log_history if "rewards/RlvrInventoryEnvironment/mean" in e]
    assert len(logged) == 2
    for entry in logged:
        assert entry["rewards/RlvrInventoryEnvironment/mean"] == pytest.approx(entry["rewards/replay/mean"])
    factory.sessions.close()


def test_grpo_trainer_runs_repo_v0_episodes(tmp_path):
    from trl import GRPOTrainer

    from rlvr.integrations import trl as rlvr_trl
    from rlvr.integrations.session import Sessions
    from tests.agent_models import render, scripted_model, tokenizer_for, tool_call_text

    factory = rlvr_trl.environment_factory("repo-tasks", split="train", jobs=1)
    assert isinstance(factory, rlvr_trl.EnvironmentFactory)
    probe = factory()
    task = factory.sessions.tasks[0]
    methods = [getattr(probe, schema["function"]["name"]) for schema in factory.sessions.toolset(task)[1]]
    prompt = probe.reset(task_id=task.id)
    script = [tool_call_text("list_files", {}), tool_call_text("submit", {})]
    tokenizer = tokenizer_for([render([{"role": "user", "content": prompt}], methods)], script)
    model = scripted_model(tokenizer, script)
    trainer = GRPOTrainer(
        model=model,
        args=_config(tmp_path / "repo"),
        train_dataset=rlvr_trl.dataset("repo-tasks", "train").select([0]),
        processing_class=tokenizer,
        environment_factory=factory,
    )
    trainer.train()
    environments = trainer.environments
    assert environments
    with Sessions("repo-tasks", split="train", jobs=1) as sessions:
        base_verdict = sessions.grader.grade_state(task, dict(task.hidden["base"]))  # type: ignore[attr-defined]
    for environment in environments:
        result = environment.last_result
        assert result is not None and result.task_id == task.id
        assert result.terminated and not result.truncated  # the scripted policy submitted
        assert result.reward == pytest.approx(base_verdict.reward)  # nothing edited: the base state's verdict
        assert result.verdict["gates"] == base_verdict.to_json()["gates"]
    logged = [e for e in trainer.state.log_history if "rewards/RlvrRepoEnvironment/mean" in e]
    assert len(logged) == 2 and logged[-1]["rewards/RlvrRepoEnvironment/mean"] == pytest.approx(
        base_verdict.reward
    )
    factory.close()
    factory.sessions.close()
