"""GRPO, top to bottom.

for each step:
    draw tasks (curriculum)            -> G completions per task (G grows with difficulty)
    grade all completions in one batch -> rewards (Verdicts from the env's grader)
    group advantages (r - mean) / std  -> zero-variance groups counted (or resampled: DAPO)
    old log-probs, once, before any update; reference log-probs if beta > 0
    mu passes: clipped surrogate + beta * k3 KL, micro-batched, one optimiser step per pass
    metrics.jsonl; checkpoint every N steps
held-out evaluation before and after; plots; summary.json
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.executors import make_executor_grader
from rlvr.graders.base import Grader, grade_or_fault
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import model as models
from rlvr.trainer.advantages import group_advantages, zero_std_groups
from rlvr.trainer.checkpoint import find_checkpoint, load_checkpoint_state, save_checkpoint
from rlvr.trainer.config import TrainConfig
from rlvr.trainer.curriculum import Curriculum, group_size_for
from rlvr.trainer.evaluate import evaluate
from rlvr.trainer.interrupt import stop_on_sigint
from rlvr.trainer.losses import BatchNorms, grpo_loss
from rlvr.trainer.masks import overlong_penalty
from rlvr.trainer.metrics import MetricsLog, completion_metrics, verdict_metrics
from rlvr.trainer.plots import plot_metrics
from rlvr.trainer.rollout import Sequences, completion_logprobs, decode, generate
from rlvr.trainer.sft import supervised_warm_start


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def grading_errors(self) -> Path:
        return self.root / "grading_errors.jsonl"

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def plots(self) -> Path:
        return self.root / "plots"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"

    @property
    def warm_start(self) -> Path:
        return self.root / "warm_start"

    @property
    def config(self) -> Path:
        return self.root / "config.json"


@dataclass
class Rollout:
    tasks: list[Task]  # one per group
    sequences: Sequences
    group_ids: torch.Tensor
    verdicts: list[Verdict]
    rewards: torch.Tensor
    zero_std_groups: int
    groups_sampled: int


# ---------------------------------------------------------------------------------------- models
def starting_policy(
    config: TrainConfig, paths: RunPaths, pack: TaskPack, log: Callable[[str], None]
) -> tuple[Any, Any, dict[str, Any]]:
    """The policy GRPO starts from (also the KL reference): the base model, warm-started by SFT
    when configured. Saved to warm_start/ so a resumed run rebuilds exactly the same start."""
    if (paths.warm_start / "config.json").is_file():
        model, tokenizer = models.load_pretrained(str(paths.warm_start))
        return model, tokenizer, {"reused": True}
    sft_steps = config.sft_steps
    pairs: list[tuple[str, str]] = []
    if sft_steps > 0 or not config.model.path:
        pairs = pack.sft_examples(config.sft.examples, config.run.seed, config.sft.bug_rate)  # type: ignore[attr-defined]
    if config.model.path:
        model, tokenizer = models.load_pretrained(config.model.path, config.model.dtype)
    else:
        tokenizer = models.build_tokenizer([p + c for p, c in pairs], config.model.tiny_vocab)
        tokenizer.padding_side = "left"
        model = models.build_tiny_model(tokenizer, config.model, config.run.seed)
    models.disable_dropout(model)
    info: dict[str, Any] = {"steps": sft_steps, "examples": len(pairs)}
    if sft_steps > 0:
        log(f"warm start: {sft_steps} SFT steps on {len(pairs)} teacher examples")
        started = time.perf_counter()
        with tqdm(total=sft_steps, desc="sft", leave=False, disable=None) as bar:
            losses = supervised_warm_start(
                model,
                tokenizer,
                pairs,
                steps=sft_steps,
                batch_size=config.sft.batch_size,
                learning_rate=config.sft.learning_rate,
                seed=config.run.seed,
                progress=bar,
            )
        info.update(seconds=time.perf_counter() - started, first_loss=losses[0], final_loss=losses[-1])
    if sft_steps > 0 or not config.model.path:
        model.save_pretrained(paths.warm_start)
        tokenizer.save_pretrained(paths.warm_start)
    return model, tokenizer, info


def policy_from(base: Any, config: TrainConfig, checkpoint: Path | None) -> Any:
    if config.model.lora_rank > 0:
        if checkpoint is None:
            return models.add_lora(base, config.model)
        from peft import PeftModel

        return PeftModel.from_pretrained(base, checkpoint / "model", is_trainable=True)
    if checkpoint is None:
        return base
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(checkpoint / "model", local_files_only=True, dtype=base.dtype)


# ---------------------------------------------------------------------------------------- rollouts
def grade_unique(grader: Grader, task_ids: list[str], texts: list[str]) -> list[Verdict]:
    """Grade each distinct (task, completion) once: graders are deterministic, groups repeat."""
    keys = list(dict.fromkeys(zip(task_ids, texts, strict=True)))
    verdicts = grade_or_fault(grader, [k[0] for k in keys], [k[1] for k in keys])
    graded = dict(zip(keys, verdicts, strict=True))
    return [graded[key] for key in zip(task_ids, texts, strict=True)]


def sample_groups(
    policy: Any,
    tokenizer: Any,
    grader: Grader,
    tasks: list[Task],
    sizes: list[int],
    config: TrainConfig,
    first_group: int,
) -> tuple[Rollout, list[Verdict], Sequences]:
    """G completions per task, graded. Returns the rollout to learn from (episodes whose grading was
    disrupted dropped) and every sampled verdict and sequence, for the step's metrics."""
    g = config.grpo
    prompts = [t.prompt for t, n in zip(tasks, sizes, strict=True) for _ in range(n)]
    task_ids = [t.id for t, n in zip(tasks, sizes, strict=True) for _ in range(n)]
    group_ids = torch.tensor([first_group + i for i, n in enumerate(sizes) for _ in range(n)])
    chunks = [
        generate(policy, tokenizer, prompts[s : s + g.micro_batch_size], g.temperature, g.max_new_tokens)
        for s in range(0, len(prompts), g.micro_batch_size)
    ]
    sequences = Sequences.concat(chunks, tokenizer.pad_token_id)
    verdicts = grade_unique(grader, task_ids, decode(tokenizer, sequences))
    rewards = torch.tensor([v.reward for v in verdicts])
    if g.truncation == "penalty":
        rewards = rewards + overlong_penalty(
            sequences.lengths, g.max_new_tokens, g.overlong_buffer, g.overlong_penalty
        )
    rollout = drop_disrupted(Rollout(tasks, sequences, group_ids, verdicts, rewards, 0, len(tasks)))
    if rollout.verdicts:
        rollout.zero_std_groups = int(zero_std_groups(rollout.rewards, rollout.group_ids).sum())
    rollout.groups_sampled = len(tasks)
    return rollout, verdicts, sequences


def collect_rollout(
    policy: Any,
    tokenizer: Any,
    grader: Grader,
    curriculum: Curriculum,
    rng: random.Random,
    config: TrainConfig,
    levels: tuple[int, int],
) -> tuple[Rollout, dict[str, float]]:
    """G completions for each of `tasks_per_step` tasks. With dynamic sampling, groups whose
    rewards are all equal are dropped and replaced by fresh tasks (up to `max_resample_rounds`)."""
    g = config.grpo

    def sizes_for(tasks: list[Task]) -> list[int]:
        return [
            group_size_for(t.difficulty, levels[0], levels[1], g.group_size, g.group_size_max) for t in tasks
        ]

    tasks = curriculum.draw(g.tasks_per_step, rng)
    rollout, verdicts, sequences = sample_groups(
        policy, tokenizer, grader, tasks, sizes_for(tasks), config, 0
    )
    sampled, zero, rounds = rollout.groups_sampled, rollout.zero_std_groups, 0
    all_verdicts, all_sequences = list(verdicts), [sequences]
    if g.dynamic_sampling:
        rollout = keep_informative(rollout)
        while len(rollout.tasks) < g.tasks_per_step and rounds < g.max_resample_rounds:
            rounds += 1
            extra_tasks = curriculum.draw(g.tasks_per_step - len(rollout.tasks), rng)
            extra, extra_verdicts, extra_sequences = sample_groups(
                policy, tokenizer, grader, extra_tasks, sizes_for(extra_tasks), config, sampled
            )
            sampled, zero = sampled + extra.groups_sampled, zero + extra.zero_std_groups
            all_verdicts += extra_verdicts
            all_sequences.append(extra_sequences)
            rollout = merge(rollout, keep_informative(extra), tokenizer.pad_token_id)
    stats = {
        "groups_sampled": float(sampled),
        "zero_std_group_fraction": zero / max(sampled, 1),
        "resample_rounds": float(rounds),
        "grading_disrupted": float(sum(grading_disrupted(v) for v in all_verdicts)),
    }
    # reward/length metrics describe every completion sampled this step, kept or not
    every = Sequences.concat(all_sequences, tokenizer.pad_token_id)
    stats.update(verdict_metrics(all_verdicts))
    stats.update(
        completion_metrics(
            [row[m.bool()].tolist() for row, m in zip(every.completion_ids, every.mask, strict=True)],
            every.truncated.tolist(),
            [v.passed for v in all_verdicts],
        )
    )
    return rollout, stats


def keep_informative(rollout: Rollout) -> Rollout:
    """Only the groups whose rewards differ (DAPO dynamic sampling)."""
    _, inverse = torch.unique(rollout.group_ids, return_inverse=True)
    informative = ~zero_std_groups(rollout.rewards, rollout.group_ids)
    return select_rows(rollout, informative[inverse])


def grading_disrupted(verdict: Verdict) -> bool:
    """Grading itself failed (sandbox fault, grader fault, unpreparable task): the reward says nothing
    about the completion. An input error (e.g. an empty completion) is the policy's own doing and
    keeps its reward of 0."""
    return verdict.disrupted


def drop_disrupted(rollout: Rollout) -> Rollout:
    """Completions whose grading was disrupted leave the batch before advantages are computed, so a
    sandbox fault never teaches the policy anything; they are counted and logged by the caller."""
    keep = torch.tensor([not grading_disrupted(v) for v in rollout.verdicts], dtype=torch.bool)
    return rollout if bool(keep.all()) else select_rows(rollout, keep)


def select_rows(rollout: Rollout, keep_rows: torch.Tensor) -> Rollout:
    """The rollout restricted to `keep_rows`; a group with no row left loses its task."""
    first_ids = list(dict.fromkeys(int(x) for x in rollout.group_ids))
    kept_groups = {int(gid) for gid in rollout.group_ids[keep_rows]}
    tasks = [t for t, gid in zip(rollout.tasks, first_ids, strict=True) if gid in kept_groups]
    index = keep_rows.nonzero().squeeze(-1)
    return Rollout(
        tasks,
        rollout.sequences.rows(index),
        rollout.group_ids[index],
        [rollout.verdicts[i] for i in index.tolist()],
        rollout.rewards[index],
        0,
        len(tasks),
    )


def merge(a: Rollout, b: Rollout, pad_id: int) -> Rollout:
    return Rollout(
        a.tasks + b.tasks,
        Sequences.concat([a.sequences, b.sequences], pad_id),
        torch.cat([a.group_ids, b.group_ids]),
        a.verdicts + b.verdicts,
        torch.cat([a.rewards, b.rewards]),
        a.zero_std_groups + b.zero_std_groups,
        a.groups_sampled + b.groups_sampled,
    )


# ---------------------------------------------------------------------------------------- update
def policy_update(
    policy: Any,
    reference: models.ReferencePolicy | None,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    config: TrainConfig,
) -> dict[str, float]:
    g = config.grpo
    sequences = rollout.sequences
    advantages = group_advantages(rollout.rewards, rollout.group_ids, g.scale_rewards)  # type: ignore[arg-type]
    mask = sequences.mask.clone()
    if g.truncation == "mask":
        mask[sequences.truncated] = 0.0
    chunks = [slice(s, s + g.micro_batch_size) for s in range(0, len(advantages), g.micro_batch_size)]

    # Old log-probs: the sampling policy, computed once before any update (the ratio's denominator).
    # With mu = 1 the one optimiser step comes after the only gradient pass, so that pass's own
    # log-probs, detached, are exactly the old log-probs: no extra forward is needed.
    reuse_first_pass = g.num_iterations == 1
    with torch.no_grad():
        old_logp = None
        if not reuse_first_pass:
            old_logp = torch.cat(
                [completion_logprobs(policy, sequences.rows(c), g.temperature)[0] for c in chunks]
            )
        ref_logp = None
        if reference is not None:
            with reference.context():
                ref_logp = torch.cat(
                    [
                        completion_logprobs(reference.model, sequences.rows(c), g.temperature)[0]
                        for c in chunks
                    ]
                )

    norms = BatchNorms.of(mask, g.max_new_tokens)
    tokens = max(float(mask.sum()), 1.0)
    totals = {
        "loss": 0.0,
        "policy_loss": 0.0,
        "kl": 0.0,
        "clip_ratio/low": 0.0,
        "clip_ratio/high": 0.0,
        "entropy": 0.0,
        "grad_norm": 0.0,
    }
    params = models.trainable_parameters(policy)
    for iteration in range(g.num_iterations):
        optimizer.zero_grad(set_to_none=True)
        for c in chunks:
            logp, entropy = completion_logprobs(
                policy, sequences.rows(c), g.temperature, with_entropy=iteration == 0
            )
            out = grpo_loss(
                logp,
                logp.detach() if old_logp is None else old_logp[c],
                None if ref_logp is None else ref_logp[c],
                advantages[c],
                mask[c],
                norms=norms,
                loss_type=g.loss_type,  # type: ignore[arg-type]
                epsilon_low=g.epsilon_low,
                epsilon_high=g.epsilon_high,
                beta=g.beta,
            )
            out.loss.backward()
            m = mask[c]
            totals["loss"] += out.loss.item() / g.num_iterations
            totals["policy_loss"] += out.policy_loss.item() / g.num_iterations
            totals["clip_ratio/low"] += (
                float((out.surrogate.low_clipped * m).sum()) / tokens / g.num_iterations
            )
            totals["clip_ratio/high"] += (
                float((out.surrogate.high_clipped * m).sum()) / tokens / g.num_iterations
            )
            if out.kl is not None:
                totals["kl"] += float((out.kl.detach() * m).sum()) / tokens / g.num_iterations
            if entropy is not None:
                totals["entropy"] += float((entropy * m).sum()) / tokens
        totals["grad_norm"] += (
            float(torch.nn.utils.clip_grad_norm_(params, g.max_grad_norm)) / g.num_iterations
        )
        optimizer.step()
    totals["advantage_abs_mean"] = float(advantages.abs().mean())
    totals["kl"] = totals["kl"] if reference is not None else float("nan")
    return totals


# ---------------------------------------------------------------------------------------- the run
def train(
    config: TrainConfig, out_dir: Path, *, resume: bool = False, log: Callable[[str], None] = print
) -> dict[str, Any]:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # per-shard save/load bars would drown the step progress bar
    started = time.perf_counter()
    paths = RunPaths(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if config.run.threads:
        torch.set_num_threads(config.run.threads)
    torch.manual_seed(config.run.seed)
    random.seed(config.run.seed)
    g, r = config.grpo, config.run
    pack = load_pack(r.pack)
    train_tasks, eval_tasks = pack.tasks(r.train_split), pack.tasks(r.eval_split)
    if r.eval_max_tasks:
        eval_tasks = eval_tasks[: r.eval_max_tasks]
    levels = (min(t.difficulty for t in train_tasks), max(t.difficulty for t in train_tasks))

    checkpoint = find_checkpoint(paths.checkpoint) if resume else None
    base, tokenizer, sft_info = starting_policy(config, paths, pack, log)
    policy = policy_from(base, config, checkpoint)
    models.disable_dropout(policy)
    uses_lora = config.model.lora_rank > 0
    reference = None
    if g.beta > 0:
        reference = models.ReferencePolicy(policy if uses_lora else base, uses_lora)
    optimizer = torch.optim.AdamW(
        models.trainable_parameters(policy), lr=g.learning_rate, weight_decay=g.weight_decay
    )
    curriculum = Curriculum(train_tasks, g.curriculum, g.curriculum_threshold, g.curriculum_window)
    sampler = random.Random(r.seed)
    metrics = MetricsLog(paths.metrics)
    state: dict[str, Any] = {"step": 0, "elapsed": 0.0, "sft": sft_info}
    if checkpoint is not None:
        payload = load_checkpoint_state(checkpoint)
        optimizer.load_state_dict(payload["optimizer"])
        state = payload["state"]
        curriculum.load_state(state["curriculum"])
        sampler.setstate(state["sampler"])
        metrics.truncate(state["metrics_lines"])
        log(f"resuming {out_dir} at step {state['step']} of {g.steps}")
    else:
        metrics.truncate(0)
    session_start = started - state["elapsed"]  # wall time counts SFT, evaluation and earlier sessions

    grader_options: dict[str, Any] = {"sandbox": r.sandbox}
    if r.grader_jobs:
        grader_options["jobs"] = r.grader_jobs
    if not r.grader_types:
        grader_options["types"] = False
    grader = make_executor_grader(pack, r.executor, r.ray_address or None, **grader_options)

    def snapshot() -> None:
        state.update(
            curriculum=curriculum.state(),
            sampler=sampler.getstate(),
            metrics_lines=metrics.line_count(),
            elapsed=time.perf_counter() - session_start,
        )
        save_checkpoint(paths.checkpoint, policy, tokenizer, optimizer, state)

    def heldout() -> dict[str, Any]:
        return evaluate(
            policy,
            tokenizer,
            grader,
            eval_tasks,
            samples=r.eval_samples,
            temperature=g.temperature,
            max_new_tokens=g.max_new_tokens,
            seed=r.seed + 1,
            batch_size=g.micro_batch_size,
        )

    with stop_on_sigint(log) as stop:  # Ctrl-C stops at the next safe point, checkpointed
        try:
            if "heldout_before" not in state:
                log(f"held-out evaluation (before): {len(eval_tasks)} tasks of split {r.eval_split!r}")
                state["heldout_before"] = heldout()
                log(f"  pass rate {state['heldout_before']['pass_rate']:.3f}")
                snapshot()
            bar = tqdm(total=g.steps, initial=state["step"], desc="grpo", disable=None)
            while state["step"] < g.steps:
                stop.check(snapshot)
                step_started = time.perf_counter()
                rollout, stats = collect_rollout(
                    policy, tokenizer, grader, curriculum, sampler, config, levels
                )
                generated = time.perf_counter()
                if rollout.tasks:
                    update = policy_update(policy, reference, optimizer, rollout, config)
                else:  # dynamic sampling found no informative group: nothing to learn from this step
                    update = {"skipped_update": 1.0}
                errors = [v for v in rollout.verdicts if v.error]
                if errors:
                    with open(paths.grading_errors, "a") as handle:
                        for v in errors:
                            handle.write(
                                json.dumps(
                                    {"step": state["step"] + 1, "task_id": v.task_id, "error": v.error}
                                )
                                + "\n"
                            )
                state["step"] += 1
                record = {"step": state["step"], **stats, **update, "difficulty_level": curriculum.level}
                record.update(
                    step_seconds=time.perf_counter() - step_started,
                    rollout_seconds=generated - step_started,
                    update_seconds=time.perf_counter() - generated,
                    group_size_mean=len(rollout.group_ids) / max(len(rollout.tasks), 1),
                    learning_rate=g.learning_rate,
                )
                metrics.append(record)
                curriculum.observe(stats["pass_rate"])
                bar.update(1)
                bar.set_postfix(
                    reward=f"{stats['reward_mean']:.2f}",
                    passed=f"{stats['pass_rate']:.2f}",
                    level=curriculum.level,
                )
                if state["step"] % r.checkpoint_every == 0 or state["step"] == g.steps:
                    snapshot()
            bar.close()
            stop.check(snapshot)
            if "heldout_after" not in state:
                log("held-out evaluation (after)")
                state["heldout_after"] = heldout()
                snapshot()
        finally:
            grader.close()

    records = metrics.read()
    plot_metrics(records, paths.plots)
    summary = build_summary(
        config, state, records, time.perf_counter() - session_start, time.perf_counter() - started
    )
    paths.summary.write_text(json.dumps(summary, indent=2, default=str))
    return summary


def build_summary(
    config: TrainConfig,
    state: dict[str, Any],
    records: list[dict[str, Any]],
    wall: float,
    this_session: float,
) -> dict[str, Any]:
    before, after = state["heldout_before"], state["heldout_after"]

    def window(key: str, part: slice) -> float | None:
        values = [rec[key] for rec in records[part] if rec.get(key) is not None]
        return sum(values) / len(values) if values else None

    return {
        "heldout": {"before": before, "after": after},
        "heldout_gain": {
            "pass_rate": after["pass_rate"] - before["pass_rate"],
            "greedy_pass_rate": after["greedy"]["pass_rate"] - before["greedy"]["pass_rate"],
        },
        "wall_seconds": wall,
        "this_session_seconds": this_session,
        "steps": state["step"],
        "train": {
            "pass_rate_first_5": window("pass_rate", slice(0, 5)),
            "pass_rate_last_5": window("pass_rate", slice(-5, None)),
            "reward_first_5": window("reward_mean", slice(0, 5)),
            "reward_last_5": window("reward_mean", slice(-5, None)),
            "grading_errors": sum(rec.get("grading_errors", 0) for rec in records),
            "final_difficulty_level": records[-1].get("difficulty_level") if records else None,
        },
        "sft": state.get("sft", {}),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average": list(os.getloadavg()),
            "torch_threads": torch.get_num_threads(),
        },
        "config": config.to_dict(),
    }
