"""The trainer's model-facing parts on a tiny local model: sampling/log-prob consistency, gradient
accumulation, mu > 1 clipping, the KL reference (frozen copy and LoRA adapter-disabled)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

from rlvr.core.types import Task, Verdict
from rlvr.trainer.config import ModelConfig, TrainConfig
from rlvr.trainer.grpo import Agent, Rollout, collect_rollout, policy_update, rollout_metrics
from rlvr.trainer.losses import BatchNorms, grpo_loss
from rlvr.trainer.model import ReferencePolicy, add_lora, build_tiny_model, build_tokenizer, disable_dropout
from rlvr.trainer.rollout import completion_logprobs, generate, sampling_config

TEXTS = [f"def f{i}(x: int) -> int:\n    return x + {i}\n" for i in range(30)]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tokenizer(TEXTS, 300)


def tiny(tokenizer: Any, seed: int = 0) -> Any:
    model = build_tiny_model(tokenizer, ModelConfig(tiny_layers=1, tiny_hidden=32, tiny_heads=2), seed)
    disable_dropout(model)
    return model


PROMPTS = ["def f1(x: int) -> int:\n", "def f22(x: int) -> int:\n    return"]


def test_logprobs_match_the_sampler(tokenizer: Any) -> None:
    """The log-probs the loss uses are those of the distribution generate() sampled from."""
    model = tiny(tokenizer)
    temperature = 0.7
    torch.manual_seed(0)
    tokenizer.padding_side = "left"
    encoded = tokenizer(PROMPTS, return_tensors="pt", padding=True, add_special_tokens=False)
    config = sampling_config(tokenizer, temperature, 6)
    config.output_scores = config.return_dict_in_generate = True
    out = model.generate(**encoded, generation_config=config)
    torch.manual_seed(0)
    sequences = generate(model, tokenizer, PROMPTS, temperature, 6)
    assert torch.equal(sequences.completion_ids, out.sequences[:, encoded["input_ids"].shape[1] :])
    with torch.no_grad():
        logp, _ = completion_logprobs(model, sequences, temperature)
    for t, scores in enumerate(out.scores):
        want = (
            torch.log_softmax(scores, dim=-1).gather(-1, sequences.completion_ids[:, t : t + 1]).squeeze(-1)
        )
        rows = sequences.mask[:, t].bool()
        assert torch.allclose(logp[rows, t], want[rows], atol=1e-4)


def make_rollout(tokenizer: Any, model: Any, rewards: list[float], group_size: int = 3) -> Rollout:
    torch.manual_seed(1)
    prompts = [p for p in PROMPTS for _ in range(group_size)]
    sequences = generate(model, tokenizer, prompts, 1.0, 6)
    groups = torch.tensor([i for i in range(len(PROMPTS)) for _ in range(group_size)])
    verdicts = [Verdict(task_id="t", reward=r) for r in rewards]
    keep = torch.ones(len(rewards), dtype=torch.bool)
    return Rollout(sequences, groups, verdicts, torch.tensor(rewards), keep, groups_sampled=len(PROMPTS))


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo"])
def test_gradient_accumulation_equals_full_batch(tokenizer: Any, loss_type: str) -> None:
    model = tiny(tokenizer)
    rollout = make_rollout(tokenizer, model, [1.0, 0.0, 0.5, 0.2, 0.9, 0.2])
    seq = rollout.sequences
    advantages = torch.tensor([1.2, -1.0, 0.1, -0.6, 1.3, -0.6])
    with torch.no_grad():
        old = completion_logprobs(model, seq, 1.0)[0] + 0.05
    norms = BatchNorms.of(seq.mask, 6)

    def gradient(chunks: list[slice]) -> list[torch.Tensor]:
        model.zero_grad()
        for c in chunks:
            logp, _ = completion_logprobs(model, seq.rows(c), 1.0)
            loss = grpo_loss(
                logp,
                old[c],
                None,
                advantages[c],
                seq.mask[c],
                norms=norms,
                loss_type=loss_type,
                epsilon_high=0.28,  # type: ignore[arg-type]
            ).loss
            loss.backward()
        return [p.grad.clone() for p in model.parameters() if p.grad is not None]

    full = gradient([slice(0, 6)])
    parts = gradient([slice(0, 1), slice(1, 4), slice(4, 6)])
    assert len(full) == len(parts) > 0
    for a, b in zip(full, parts, strict=True):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)
    assert any(g.abs().sum() > 0 for g in full)


def update_config(**grpo: Any) -> TrainConfig:
    config = TrainConfig()
    config.grpo.micro_batch_size = 4
    config.grpo.max_new_tokens = 6
    config.grpo.truncation = "none"  # the random tiny model rarely emits EOS within 6 tokens
    for key, value in grpo.items():
        setattr(config.grpo, key, value)
    return config


def test_inner_iterations_move_the_ratio_and_clip(tokenizer: Any) -> None:
    model = tiny(tokenizer)
    rollout = make_rollout(tokenizer, model, [1.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    single = policy_update(
        copy.deepcopy(model),
        None,
        torch.optim.SGD(model.parameters(), lr=0.0),
        rollout,
        update_config(num_iterations=1),
    )
    assert single["clip_ratio/low"] == single["clip_ratio/high"] == 0.0  # ratio == 1 on the first pass
    assert single["grad_norm"] > 0
    policy = copy.deepcopy(model)
    optimizer = torch.optim.SGD(policy.parameters(), lr=5.0)
    stats = policy_update(
        policy, None, optimizer, rollout, update_config(num_iterations=4, epsilon_low=0.05, epsilon_high=0.05)
    )
    assert stats["clip_ratio/low"] + stats["clip_ratio/high"] > 0.0


def test_old_logprobs_are_taken_before_the_update(tokenizer: Any) -> None:
    model = tiny(tokenizer)
    rollout = make_rollout(tokenizer, model, [1.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    with torch.no_grad():
        before = completion_logprobs(model, rollout.sequences, 1.0)[0]
    policy_update(
        model, None, torch.optim.SGD(model.parameters(), lr=1.0), rollout, update_config(num_iterations=2)
    )
    with torch.no_grad():
        after = completion_logprobs(model, rollout.sequences, 1.0)[0]
    assert not torch.allclose(before, after)


def test_kl_is_zero_at_the_reference_and_grows(tokenizer: Any) -> None:
    model = tiny(tokenizer)
    rollout = make_rollout(tokenizer, model, [1.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    reference = ReferencePolicy(model, uses_lora=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
    first = policy_update(model, reference, optimizer, rollout, update_config(num_iterations=1, beta=0.1))
    assert first["kl"] == pytest.approx(0.0, abs=1e-7)
    second = policy_update(model, reference, optimizer, rollout, update_config(num_iterations=1, beta=0.1))
    assert second["kl"] > 1e-6
    assert not any(p.requires_grad for p in reference.model.parameters())


def test_lora_reference_is_the_adapter_disabled_model(tokenizer: Any) -> None:
    pytest.importorskip("peft")
    base = tiny(tokenizer)
    frozen_copy = copy.deepcopy(base)
    policy = add_lora(base, ModelConfig(lora_rank=4, lora_target_modules="all-linear"))
    reference = ReferencePolicy(policy, uses_lora=True)
    rollout = make_rollout(tokenizer, frozen_copy, [1.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    optimizer = torch.optim.SGD([p for p in policy.parameters() if p.requires_grad], lr=5.0)
    for _ in range(2):
        stats = policy_update(
            policy, reference, optimizer, rollout, update_config(num_iterations=1, beta=0.1)
        )
    assert stats["kl"] > 1e-6
    with torch.no_grad(), reference.context():
        disabled = completion_logprobs(reference.model, rollout.sequences, 1.0)[0]
        original = completion_logprobs(frozen_copy, rollout.sequences, 1.0)[0]
    assert torch.allclose(disabled, original, atol=1e-5)


def rollout_for(model: Any, tokenizer: Any, grader: Any, tasks: list[Task], config: TrainConfig) -> Any:
    """One step's rollout at a fixed difficulty level, without the curriculum, and its metrics."""
    import random

    from rlvr.trainer.curriculum import Curriculum

    agent = Agent(tokenizer, grader, [tokenizer.eos_token_id], None)
    rollout = collect_rollout(
        model, agent, Curriculum(tasks, False, 1.0, 1), random.Random(0), config, (1, 1)
    )
    return rollout, rollout_metrics(rollout)


def kept_task_ids(rollout: Rollout) -> list[str]:
    return [v.task_id for v, keep in zip(rollout.verdicts, rollout.keep.tolist(), strict=True) if keep]


class ParityGrader:
    """Tasks named "flat*" always get reward 1 (a zero-variance group); others reward odd-length
    completions, so their groups usually vary."""

    def __init__(self) -> None:
        self.calls = 0

    def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
        self.calls += 1
        return [
            Verdict(t, 1.0 if t.startswith("flat") else float(len(c) % 2), passed=True)
            for t, c in zip(task_ids, completions, strict=True)
        ]


def test_dynamic_sampling_replaces_zero_variance_groups(tokenizer: Any) -> None:

    model = tiny(tokenizer)
    tasks = [Task(id=f"flat{i}", prompt=PROMPTS[0], split="train") for i in range(3)]
    tasks += [Task(id=f"vary{i}", prompt=PROMPTS[1], split="train") for i in range(3)]
    config = update_config(tasks_per_step=3, group_size=4, group_size_max=0, dynamic_sampling=True)
    config.grpo.max_resample_rounds = 6
    grader = ParityGrader()
    torch.manual_seed(0)
    rollout, stats = rollout_for(model, tokenizer, grader, tasks, config)
    assert kept_task_ids(rollout) and all(t.startswith("vary") for t in kept_task_ids(rollout))
    kept_groups = rollout.group_ids[rollout.keep]
    assert not any(
        rollout.rewards[rollout.keep][kept_groups == g].unique().numel() == 1 for g in kept_groups.unique()
    )
    assert stats["zero_std_group_fraction"] > 0 and stats["groups_sampled"] > 3 and grader.calls > 1
    assert len(rollout.verdicts) == len(rollout.rewards) == rollout.sequences.completion_ids.shape[0]

    config.grpo.dynamic_sampling = False
    rollout, stats = rollout_for(model, tokenizer, ParityGrader(), tasks, config)
    assert rollout.groups_kept == 3 and bool(rollout.keep.all()) and stats["groups_sampled"] == 3


def test_curriculum_and_adaptive_group_size() -> None:
    import random

    from rlvr.trainer.curriculum import Curriculum, group_size_for

    assert [group_size_for(d, 1, 3, 4, 16) for d in (1, 2, 3)] == [4, 10, 16]
    assert group_size_for(3, 1, 3, 8, 0) == 8
    tasks = [
        Task(id=f"d{d}-{i}", prompt="p", difficulty=d, split="train") for d in (1, 2, 3) for i in range(4)
    ]
    curriculum = Curriculum(tasks, True, threshold=0.5, window=2)
    assert {t.difficulty for t in curriculum.draw(8, random.Random(0))} == {1}
    assert not curriculum.observe(0.9)  # one step is not a window yet
    assert curriculum.observe(0.6) and curriculum.level == 2
    assert not curriculum.observe(0.1) and not curriculum.observe(0.2)
    assert {t.difficulty for t in curriculum.draw(8, random.Random(0))} <= {1, 2}
    restored = Curriculum(tasks, True, threshold=0.5, window=2)
    restored.load_state(curriculum.state())
    assert restored.level == 2 and restored.recent == curriculum.recent


class BrokenGrader:
    def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
        raise RuntimeError("sandbox exploded")


def test_a_grader_that_raises_is_counted_not_fatal(tokenizer: Any) -> None:

    tasks = [Task(id=f"t{i}", prompt=PROMPTS[0], split="train") for i in range(2)]
    config = update_config(tasks_per_step=2, group_size=2, group_size_max=0)
    rollout, stats = rollout_for(tiny(tokenizer), tokenizer, BrokenGrader(), tasks, config)
    # every episode's grading was disrupted: all are counted, none is learned from
    assert stats["grading_errors"] == 4 and stats["grading_disrupted"] == 4
    assert not rollout.keep.any() and rollout.groups_kept == 0


class FlakyGrader:
    """Task "t0": every second completion hits a sandbox fault; task "t1": every second completion is
    an input error (the policy's own doing). Others get reward 1 for even length, else 0."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
        out = []
        for task_id, completion in zip(task_ids, completions, strict=True):
            self.seen[task_id] = self.seen.get(task_id, 0) + 1
            if self.seen[task_id] % 2 == 0 and task_id == "t0":
                out.append(
                    Verdict(task_id, 0.0, False, gates=["tests"], error="sandbox failure: worker died")
                )
            elif self.seen[task_id] % 2 == 0 and task_id == "t1":
                out.append(Verdict.failure(task_id, "empty completion"))
            else:
                out.append(Verdict(task_id, float(len(completion) % 2 == 0), passed=True))
        return out


def test_disrupted_grading_is_dropped_but_input_errors_are_learned_from(
    tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlvr.trainer import grpo

    # grade every sampled completion (no de-duplication) so the grader's counters see each one
    monkeypatch.setattr(grpo, "grade_unique", lambda grader, ids, texts: grader.grade_many(ids, texts))
    tasks = [Task(id=f"t{i}", prompt=PROMPTS[i], split="train") for i in range(2)]
    config = update_config(tasks_per_step=2, group_size=4, group_size_max=0)
    rollout, stats = rollout_for(tiny(tokenizer), tokenizer, FlakyGrader(), tasks, config)
    assert stats["grading_errors"] == 4 and stats["grading_disrupted"] == 2
    kept = [v for v, keep in zip(rollout.verdicts, rollout.keep.tolist(), strict=True) if keep]
    assert not any(v.error and "sandbox" in v.error for v in kept)
    assert sum(v.error == "empty completion" for v in kept) == 2
    assert len(kept) == 6 and len(rollout.verdicts) == rollout.sequences.completion_ids.shape[0] == 8
    kept_per_task = {t: sum(v.task_id == t for v in kept) for t in ("t0", "t1")}
    assert kept_per_task == {"t0": 2, "t1": 4} and rollout.groups_kept == 2


def test_dropout_is_off(tokenizer: Any) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=64,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            attention_dropout=0.3,
        )
    )
    model.model.layers[0].mlp.add_module("extra_dropout", torch.nn.Dropout(0.5))
    disable_dropout(model)
    assert not model.training
    assert all(m.p == 0.0 for m in model.modules() if isinstance(m, torch.nn.Dropout))
    ids = torch.randint(0, 64, (2, 5))
    with torch.no_grad():
        assert torch.equal(model(input_ids=ids).logits, model(input_ids=ids).logits)


def test_truncated_completions_get_the_overlong_penalty(tokenizer: Any) -> None:

    tasks = [Task(id=f"flat{i}", prompt=PROMPTS[0], split="train") for i in range(2)]
    config = update_config(
        tasks_per_step=2, group_size=3, group_size_max=0, truncation="penalty", overlong_buffer=2
    )
    torch.manual_seed(0)
    rollout, stats = rollout_for(tiny(tokenizer), tokenizer, ParityGrader(), tasks, config)
    truncated = rollout.sequences.truncated
    assert truncated.any() and stats["truncated_ratio"] == pytest.approx(float(truncated.float().mean()))
    assert torch.all(rollout.rewards[truncated] == 0.0)  # grader said 1.0; a full-budget completion pays 1.0
    for reward, length in zip(rollout.rewards.tolist(), rollout.sequences.lengths.tolist(), strict=True):
        penalty = 0.0 if length <= 4 else -min(1.0, (length - 4) / 2)  # DAPO, budget 6, buffer 2
        assert reward == pytest.approx(1.0 + penalty)


def test_a_checkpoints_generation_config_does_not_change_sampling(tokenizer: Any) -> None:
    """generate() fills every unset setting from the model's generation_config.json; the trainer
    sets them all and sets the saved config aside, so hostile defaults change nothing."""
    from transformers import GenerationConfig

    model = tiny(tokenizer)
    torch.manual_seed(0)
    plain = generate(model, tokenizer, PROMPTS, 1.0, 8)
    model.generation_config = GenerationConfig(
        top_k=2,
        top_p=0.3,
        min_p=0.5,
        typical_p=0.2,
        repetition_penalty=3.0,
        no_repeat_ngram_size=1,
        min_new_tokens=8,
        suppress_tokens=list(range(2, 200)),
        temperature=0.1,
        do_sample=False,
    )
    torch.manual_seed(0)
    hostile = generate(model, tokenizer, PROMPTS, 1.0, 8)
    assert torch.equal(plain.completion_ids, hostile.completion_ids)
    assert model.generation_config.top_k == 2  # the model's own config is back in place afterwards


def test_several_stop_ids_end_a_completion(tokenizer: Any) -> None:
    from rlvr.trainer.masks import completion_mask

    ids = torch.tensor([[5, 7, 9, 9], [5, 1, 7, 9], [5, 6, 6, 6]])
    mask, truncated = completion_mask(ids, [1, 7])
    assert mask.tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]]
    assert truncated.tolist() == [False, False, True]
    model = tiny(tokenizer)
    torch.manual_seed(0)
    free = generate(model, tokenizer, PROMPTS, 1.0, 8)
    stop = int(free.completion_ids[0, 1])  # a token the model samples second: make it a stop token
    torch.manual_seed(0)
    stopped = generate(model, tokenizer, PROMPTS, 1.0, 8, stop_ids=[stop])
    assert stopped.mask[0].tolist()[:3] == [1.0, 1.0, 0.0] and not bool(stopped.truncated[0])
    assert torch.equal(stopped.completion_ids[0, :2], free.completion_ids[0, :2])


def test_learning_rate_warmup_and_schedules() -> None:
    from rlvr.trainer.grpo import lr_multiplier

    config = TrainConfig()
    config.grpo.steps, config.grpo.num_iterations, config.grpo.warmup_steps = 5, 2, 3  # 10 optimiser steps
    constant = lr_multiplier(config)
    assert [constant(n) for n in range(5)] == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0])
    config.grpo.lr_schedule = "linear"
    linear = lr_multiplier(config)
    assert linear(3) == 1.0 and linear(10) == 0.0 and linear(6) == pytest.approx(4 / 7)
    config.grpo.lr_schedule = "cosine"
    cosine = lr_multiplier(config)
    assert cosine(3) == 1.0 and cosine(10) == pytest.approx(0.0) and 0 < cosine(6) < 1
    config.grpo.warmup_steps = 0
    assert lr_multiplier(TrainConfig())(0) == 1.0  # the default: constant, no warmup


def test_unbiased_kl_weights_k3_by_the_ratio() -> None:
    torch.manual_seed(0)
    logp = torch.randn(3, 4, requires_grad=True)
    old, ref = logp.detach() + 0.3 * torch.randn(3, 4), logp.detach() + 0.5 * torch.randn(3, 4)
    mask, advantages = torch.ones(3, 4), torch.zeros(3)
    norms = BatchNorms.of(mask, 4)
    plain = grpo_loss(logp, old, ref, advantages, mask, norms=norms, beta=1.0, kl_estimator="k3")
    unbiased = grpo_loss(logp, old, ref, advantages, mask, norms=norms, beta=1.0, kl_estimator="k3_unbiased")
    assert plain.kl is not None and unbiased.kl is not None
    assert torch.allclose(unbiased.kl, torch.exp(logp - old) * plain.kl)
    same = grpo_loss(
        logp, logp.detach(), ref, advantages, mask, norms=norms, beta=1.0, kl_estimator="k3_unbiased"
    )
    k3_at_ratio_one = grpo_loss(logp, logp.detach(), ref, advantages, mask, norms=norms, beta=1.0)
    assert torch.allclose(same.loss, k3_at_ratio_one.loss)  # ratio 1: the values are k3's
    # ... but the gradient keeps the ratio's term: grad(ratio * k3) = k3 * grad(logp) + grad(k3)
    (grad_unbiased,) = torch.autograd.grad(same.loss, logp)
    (grad_k3,) = torch.autograd.grad(k3_at_ratio_one.loss, logp)
    assert not torch.allclose(grad_unbiased, grad_k3)
    with pytest.raises(ValueError, match="kl_estimator"):
        grpo_loss(logp, old, ref, advantages, mask, norms=norms, beta=1.0, kl_estimator="k2")  # type: ignore[arg-type]
