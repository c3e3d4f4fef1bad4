"""Overlapping slow work with generation: grading of step k's completions while step k+1 generates
(`[grpo] max_staleness = 1`), and episode lanes whose env steps run while another lane samples
(`[grpo] episode_lanes`). The staleness rule is pinned here: a step learns from episodes one update
old, and their ratio and advantages are computed against the policy that generated them."""

from __future__ import annotations

import copy
import random
import threading
import time
from typing import Any

import gymnasium as gym
import pytest
import torch

import rlvr  # noqa: F401  (registers the envs)
from rlvr.core.types import Task, Verdict
from rlvr.graders.base import make_grader
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import episodes as episode_module
from rlvr.trainer import grpo
from rlvr.trainer.agent import check_rollout
from rlvr.trainer.config import ConfigError, ModelConfig, TrainConfig, build_config
from rlvr.trainer.curriculum import Curriculum
from rlvr.trainer.episodes import EpisodeRunner, PlainTemplate
from rlvr.trainer.model import build_tiny_model, build_tokenizer, disable_dropout
from rlvr.trainer.rollout import completion_logprobs

TEXTS = [f"def f{i}(x: int) -> int:\n    return x + {i}\n" for i in range(30)]
PROMPTS = ["def f1(x: int) -> int:\n", "def f22(x: int) -> int:\n    return", "def f7(x: int) -> int:\n"]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tokenizer(TEXTS, 300)


@pytest.fixture(scope="module")
def tool_pack() -> Any:
    return load_pack("tool-worlds")  # its procedural tasks are generated once per module


def tiny(tokenizer: Any, seed: int = 0) -> Any:
    model = build_tiny_model(tokenizer, ModelConfig(tiny_layers=1, tiny_hidden=32, tiny_heads=2), seed)
    disable_dropout(model)
    return model


class LengthGrader:
    """In-process and deterministic: reward 1 for an even-length completion (so groups vary)."""

    def __init__(self) -> None:
        self.graded_in: list[str] = []  # the thread each batch was graded in

    def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
        self.graded_in.append(threading.current_thread().name)
        return [
            Verdict(t, float(len(c) % 2 == 0), passed=len(c) % 2 == 0)
            for t, c in zip(task_ids, completions, strict=True)
        ]


def overlap_config(**grpo_settings: Any) -> TrainConfig:
    config = TrainConfig()
    g = config.grpo
    g.max_staleness, g.tasks_per_step, g.group_size, g.group_size_max = 1, 3, 4, 0
    g.max_new_tokens, g.micro_batch_size, g.truncation, g.num_iterations = 6, 5, "none", 1
    for key, value in grpo_settings.items():
        setattr(g, key, value)
    return config


def weights_sum(model: Any) -> float:
    return float(sum(p.detach().double().sum() for p in model.parameters()))


def test_a_stale_step_weighs_its_episodes_by_the_policy_that_generated_them(
    tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 2 learns from episodes pi_0 sampled during step 1: their old log-probs are pi_0's (not the
    updated pi_1's), the first pass's ratio is pi_1 / pi_0, and the advantages are each group's own."""
    tasks = [Task(id=f"t{i}", prompt=p, split="train") for i, p in enumerate(PROMPTS)]
    config = overlap_config()
    grader = LengthGrader()
    agent = grpo.Agent(tokenizer, grader, [tokenizer.eos_token_id], None)  # type: ignore[arg-type]
    sampled_by: list[float] = []  # the policy's weights (their sum) at each sampling
    real_sample = grpo.sample_completions

    def spy_sample(policy: Any, *args: Any, **kwargs: Any) -> Any:
        sampled_by.append(weights_sum(policy))
        return real_sample(policy, *args, **kwargs)

    monkeypatch.setattr(grpo, "sample_completions", spy_sample)
    policy = tiny(tokenizer)
    torch.manual_seed(0)
    overlap = grpo.GradingOverlap(agent, Curriculum(tasks, False, 1.0, 1), random.Random(0), config, (1, 1))
    try:
        pi_0 = copy.deepcopy(policy)
        first = overlap.rollout(policy, last=False)  # round 1, and round 2 sampled ahead, both by pi_0
        assert sampled_by == [weights_sum(pi_0)] * 2
        optimizer = torch.optim.SGD(policy.parameters(), lr=0.5)
        grpo.policy_update(policy, None, optimizer, first, config)
        pi_1 = copy.deepcopy(policy)
        assert weights_sum(pi_1) != weights_sum(pi_0)

        second = overlap.rollout(policy, last=True)  # round 2: sampled by pi_0, learnt from at pi_1
    finally:
        overlap.close()
    assert len(sampled_by) == 2  # the last step samples nothing ahead
    assert grader.graded_in and all(name.startswith("rlvr-grading") for name in grader.graded_in)
    mask = second.sequences.mask.bool()
    with torch.no_grad():
        under_0 = completion_logprobs(pi_0, second.sequences, config.grpo.temperature)[0]
        under_1 = completion_logprobs(pi_1, second.sequences, config.grpo.temperature)[0]
    assert second.behaviour_logp is not None
    assert torch.allclose(second.behaviour_logp[mask], under_0[mask], atol=1e-5)
    assert not torch.allclose(under_0[mask], under_1[mask], atol=1e-3)  # the update moved the policy

    seen: dict[str, Any] = {}
    real_loss = grpo.grpo_loss

    def spy_loss(*args: Any, **kwargs: Any) -> Any:
        out = real_loss(*args, **kwargs)
        seen.update(
            logp=args[0].detach(), old=args[1], advantages=args[3], ratio=out.surrogate.ratio.detach()
        )
        return out

    monkeypatch.setattr(grpo, "grpo_loss", spy_loss)
    config.grpo.micro_batch_size = 64  # one micro-batch: the spy sees every row
    grpo.policy_update(policy, None, torch.optim.SGD(policy.parameters(), lr=0.0), second, config)
    assert torch.allclose(seen["old"][mask], under_0[mask], atol=1e-5)
    assert torch.allclose(seen["logp"][mask], under_1[mask], atol=1e-5)
    assert torch.allclose(seen["ratio"][mask], (under_1 - under_0).exp()[mask], atol=1e-4)
    assert not torch.allclose(seen["ratio"][mask], torch.ones_like(under_0[mask]), atol=1e-3)
    rewards, groups = second.rewards.tolist(), second.group_ids.tolist()
    expected = []
    for reward, group in zip(rewards, groups, strict=True):
        members = [r for r, gid in zip(rewards, groups, strict=True) if gid == group]
        expected.append(reward - sum(members) / len(members))  # scale_rewards = "none"
    assert torch.allclose(seen["advantages"], torch.tensor(expected), atol=1e-6)


def test_without_staleness_the_current_policy_is_the_behaviour_policy(tokenizer: Any) -> None:
    tasks = [Task(id=f"t{i}", prompt=p, split="train") for i, p in enumerate(PROMPTS)]
    config = overlap_config(max_staleness=0)
    agent = grpo.Agent(tokenizer, LengthGrader(), [tokenizer.eos_token_id], None)  # type: ignore[arg-type]
    rollout = grpo.collect_rollout(
        tiny(tokenizer), agent, Curriculum(tasks, False, 1.0, 1), random.Random(0), config, (1, 1)
    )
    assert rollout.behaviour_logp is None and rollout.seconds["grading_seconds"] >= 0


class WaitsForTheNextGeneration(LengthGrader):
    """Grades round 1 only once round 2's generation has begun: passes only if they overlap."""

    def __init__(self, started: threading.Event) -> None:
        super().__init__()
        self.started, self.overlapped = started, []

    def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
        self.overlapped.append(self.started.wait(timeout=120))
        return super().grade_many(task_ids, completions)


def test_grading_runs_while_the_next_round_generates(tokenizer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [Task(id=f"t{i}", prompt=p, split="train") for i, p in enumerate(PROMPTS)]
    started = threading.Event()
    calls = []
    real_sample = grpo.sample_completions

    def spy_sample(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            started.set()
        return real_sample(*args, **kwargs)

    monkeypatch.setattr(grpo, "sample_completions", spy_sample)
    grader = WaitsForTheNextGeneration(started)
    agent = grpo.Agent(tokenizer, grader, [tokenizer.eos_token_id], None)  # type: ignore[arg-type]
    overlap = grpo.GradingOverlap(
        agent, Curriculum(tasks, False, 1.0, 1), random.Random(0), overlap_config(), (1, 1)
    )
    try:
        rollout = overlap.rollout(tiny(tokenizer), last=False)
    finally:
        overlap.close()
    assert grader.overlapped[0] is True and len(rollout.verdicts) == 12


def test_staleness_settings_are_checked(tool_pack: Any) -> None:
    with pytest.raises(ConfigError, match=r"max_staleness must be 0 .* or 1"):
        build_config(None, ["grpo.max_staleness=2"])
    with pytest.raises(ConfigError, match="episode_lanes must be >= 1"):
        build_config(None, ["grpo.episode_lanes=0"])
    config = build_config("configs/tool.toml", ["grpo.max_staleness=1"])
    with pytest.raises(ConfigError, match="episode_lanes = 2"):
        check_rollout(config, tool_pack)


class JitteryEnv(gym.Wrapper[Any, Any, Any, Any]):
    """A real Tool-v0 env whose steps take a random few milliseconds (a slow tool) and record
    whether the trainer sampled another lane's turns meanwhile."""

    def __init__(self, env: Any, generations: list[int], overlapped: list[bool], seed: int) -> None:
        super().__init__(env)
        self.generations, self.overlapped, self.rng = generations, overlapped, random.Random(seed)

    def step(self, action: Any) -> Any:
        before = len(self.generations)
        deadline = time.monotonic() + self.rng.uniform(0.002, 0.02)
        while time.monotonic() < deadline:
            time.sleep(0.001)
        if threading.current_thread() is not threading.main_thread():
            waited = time.monotonic() + 1.0  # long enough for the other lane to start sampling
            while len(self.generations) == before and time.monotonic() < waited:
                time.sleep(0.001)
        self.overlapped.append(len(self.generations) > before)
        return self.env.step(action)


def play_lanes(
    pack: Any, tokenizer: Any, lanes: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[list[int]], list[bool]]:
    tasks = pack.tasks("train")[:2]
    generations: list[int] = []
    overlapped: list[bool] = []
    real_generate = episode_module.generate_ids

    def counting_generate(*args: Any, **kwargs: Any) -> Any:
        generations.append(1)
        return real_generate(*args, **kwargs)

    monkeypatch.setattr(episode_module, "generate_ids", counting_generate)
    grader = make_grader(pack)
    runner = EpisodeRunner(
        "rlvr/Tool-v0", pack, grader, tokenizer, PlainTemplate(tokenizer), max_turns=3, lanes=lanes
    )
    runner.envs = [
        JitteryEnv(
            gym.make("rlvr/Tool-v0", pack=pack, grader=grader, max_turns=3), generations, overlapped, seed + i
        )
        for i in range(len(tasks) * 2)
    ]
    torch.manual_seed(0)
    try:
        played = runner.run(
            tiny(tokenizer),
            [t for t in tasks for _ in range(2)],
            temperature=1.0,
            max_new_tokens=8,
            max_episode_tokens=200,
            batch_size=8,
        )
    finally:
        runner.close()
        grader.close()
    assert all(not e.running and e.verdict is not None for e in played)
    return [e.prompt_ids + e.ids for e in played], overlapped


def test_episode_lanes_sample_while_other_episodes_tool_calls_run(
    tool_pack: Any, tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two lanes one lane's env steps run while the other lane samples, and the episodes do not
    depend on how long the tools took (a seed gives the same tokens); one lane steps envs in turn."""
    first, overlapped = play_lanes(tool_pack, tokenizer, 2, seed=1, monkeypatch=monkeypatch)
    again, _ = play_lanes(tool_pack, tokenizer, 2, seed=2, monkeypatch=monkeypatch)  # other tool timings
    assert first == again
    assert any(overlapped) and sum(overlapped) >= len(overlapped) // 3
    _, sequential = play_lanes(tool_pack, tokenizer, 1, seed=1, monkeypatch=monkeypatch)
    assert sequential and not any(sequential)
