"""GRPO, top to bottom.

for each step:
    draw tasks (curriculum)              -> G episodes per task (G grows with difficulty)
        single-turn families: one completion each, the whole step graded in one batch
        multi-turn families: turns through the Gymnasium env, observations appended as context
    rewards -> one keep mask: episodes whose grading was disrupted leave; with dynamic sampling
        (DAPO) groups whose rewards are all equal leave too and fresh tasks replace them
    group advantages (r - mean) / std, one per episode, on every token the policy sampled
    old log-probs, once, before any update; reference log-probs if beta > 0
    mu passes: clipped surrogate + beta * KL, micro-batched, one optimiser step per pass
    metrics.jsonl (and grading_errors.jsonl); checkpoint every N steps
held-out evaluation before and after; plots; summary.json
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from rlvr.core.flags import exploit_flags
from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.executors import make_executor_grader
from rlvr.graders.base import Grader, grade_or_fault
from rlvr.hacking.canaries import CanaryProbe
from rlvr.hacking.candidates import store_rollout_candidates
from rlvr.hacking.grading_record import grading_entry, write_grading_record
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import model as models
from rlvr.trainer import teachers
from rlvr.trainer.advantages import group_advantages, informative_rows, zero_std_groups
from rlvr.trainer.checkpoint import find_checkpoint, load_checkpoint_state, save_checkpoint
from rlvr.trainer.config import ConfigError, TrainConfig
from rlvr.trainer.curriculum import Curriculum, group_size_for
from rlvr.trainer.episodes import (
    ENV_IDS,
    MULTI_TURN_FAMILIES,
    Episode,
    EpisodeRunner,
    episode_metrics,
    episode_sequences,
    make_template,
)
from rlvr.trainer.evaluate import evaluate
from rlvr.trainer.interrupt import stop_on_sigint
from rlvr.trainer.losses import BatchNorms, grpo_loss
from rlvr.trainer.masks import overlong_penalty
from rlvr.trainer.metrics import MetricsLog, completion_metrics, verdict_metrics
from rlvr.trainer.plots import plot_metrics
from rlvr.trainer.rollout import Sequences, completion_logprobs, decode, generate, micro_batches
from rlvr.trainer.sft import episode_batches, pair_batches, supervised_warm_start

MAX_FLAGGED_PER_STEP = 64  # flagged samples kept per step in flagged_samples.jsonl
MAX_FLAGGED_CHARS = 4000  # characters of each flagged completion kept


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
    def flagged_samples(self) -> Path:
        return self.root / "flagged_samples.jsonl"

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
    """Every episode sampled in one step (all rounds of dynamic sampling), and which to learn from."""

    sequences: Sequences
    group_ids: torch.Tensor  # (N,) one id per task drawn; the G episodes of a task share it
    verdicts: list[Verdict]
    rewards: torch.Tensor  # (N,) the episode rewards (with the overlong penalty, if configured)
    keep: torch.Tensor  # (N,) bool: learn from this episode
    episodes: list[Episode] = field(default_factory=list)  # multi-turn only: turns, tool calls, ...
    groups_sampled: int = 0
    resample_rounds: int = 0

    @property
    def groups_kept(self) -> int:
        return len(torch.unique(self.group_ids[self.keep]))


@dataclass
class Agent:
    """What the rollout samples with: the tokenizer, the stop ids, and for episodes their runner."""

    tokenizer: Any
    grader: Grader
    stop_ids: list[int]
    runner: EpisodeRunner | None  # None: single-turn completions, graded in one batch per step


# ---------------------------------------------------------------------------------------- models
def uses_episodes(config: TrainConfig, pack: TaskPack) -> bool:
    kind = config.grpo.rollout
    return kind == "episodes" or (kind == "auto" and pack.family in MULTI_TURN_FAMILIES)


def up_to_difficulty(tasks: list[Task], level: int) -> list[Task]:
    """The tasks of difficulty <= `level` (every task when `level` is 0)."""
    return [t for t in tasks if not level or t.difficulty <= level]


def spread_sample(tasks: list[Task], count: int, seed: int) -> list[Task]:
    """At most `count` of `tasks`, drawn uniformly from the seed and kept in their order: a pack lists
    its tasks template by template, so a prefix would drop whole templates."""
    if len(tasks) <= count:
        return tasks
    keep = sorted(random.Random(f"sft-tasks/{seed}").sample(range(len(tasks)), count))
    return [tasks[i] for i in keep]


TeacherData = list[tuple[Task, list[dict[str, str]]]] | list[tuple[str, str]]


def teacher_data(
    config: TrainConfig, pack: TaskPack, grader: Grader, bug_rate: float
) -> tuple[TeacherData, list[str]]:
    """The warm start's teacher examples at `bug_rate` and their texts (for the tiny tokenizer):
    episodes played through the env for a multi-turn pack, (prompt, completion) pairs otherwise."""
    if not uses_episodes(config, pack):
        pairs = pack.sft_examples(config.sft.examples, config.run.seed, bug_rate)  # type: ignore[attr-defined]
        return pairs, [p + c for p, c in pairs]
    tasks = up_to_difficulty(pack.tasks(config.run.train_split), config.sft.max_difficulty)
    tasks = spread_sample(tasks, config.sft.examples, config.run.seed)
    transcripts = teachers.teacher_transcripts(
        env_id_for(config, pack),
        pack,
        grader,
        tasks,
        config.model.short_prompts,
        bug_rate=bug_rate,
        seed=config.run.seed,
        mistakes=tuple(config.sft.episode_mistakes),
    )
    return transcripts, teachers.transcript_texts(transcripts)


def teacher_batches(
    config: TrainConfig, pack: TaskPack, tokenizer: Any, data: TeacherData
) -> Callable[[random.Random], Any]:
    if not uses_episodes(config, pack):
        return pair_batches(tokenizer, data, config.sft.batch_size)  # type: ignore[arg-type]
    template = make_template(tokenizer, config.model.template, stop_ids(config, tokenizer))
    episodes = [teachers.teacher_episode(template, tokenizer, t, h) for t, h in data]  # type: ignore[misc]
    return episode_batches(episodes, tokenizer.pad_token_id, config.sft.batch_size)


def starting_policy(
    config: TrainConfig,
    paths: RunPaths,
    pack: TaskPack,
    grader: Grader,
    log: Callable[[str], None],
) -> tuple[Any, Any, dict[str, Any]]:
    """The policy GRPO starts from (also the KL reference): the base model, warm-started by SFT
    when configured (on teacher completions, or on teacher episodes played through the env for a
    multi-turn pack; with `[sft] clean_steps`, first on the teacher without mistakes, then on the
    configured one). Saved to warm_start/ so a resumed run rebuilds exactly the same start."""
    if (paths.warm_start / "config.json").is_file():
        model, tokenizer = models.load_pretrained(str(paths.warm_start))
        return model, tokenizer, {"reused": True}
    sft_steps, clean_steps = config.sft_steps, config.sft.clean_steps
    data: TeacherData = []
    texts: list[str] = []
    if sft_steps > 0 or not config.model.path:
        data, texts = teacher_data(config, pack, grader, config.sft.bug_rate)
    tokenizer: Any
    if config.model.path:
        model, tokenizer = models.load_pretrained(config.model.path, config.model.dtype)
    else:
        tokenizer = models.build_tokenizer(
            texts,
            config.model.tiny_vocab,
            config.model.tiny_pretokenizer,
            config.model.tiny_max_token_length,
        )
        tokenizer.padding_side = "left"
        model = models.build_tiny_model(tokenizer, config.model, config.run.seed)
    models.disable_dropout(model)
    info: dict[str, Any] = {"steps": sft_steps, "examples": len(data)}
    if sft_steps > 0:
        # (teacher data, SFT steps, batch-order seed) per stage; each stage has its own optimiser
        stages = [(data, sft_steps, config.run.seed)]
        if clean_steps:
            clean, _ = teacher_data(config, pack, grader, bug_rate=0.0)
            stages = [
                (clean, clean_steps, config.run.seed),
                (data, sft_steps - clean_steps, config.run.seed + 100),
            ]
            info["clean_steps"] = clean_steps
        log(
            f"warm start: {sft_steps} SFT steps on {len(data)} teacher examples"
            + (f", the first {clean_steps} without mistakes" if clean_steps else "")
        )
        started = time.perf_counter()
        losses: list[float] = []
        with tqdm(total=sft_steps, desc="sft", leave=False, disable=None) as bar:
            for stage_data, steps, seed in stages:
                losses += supervised_warm_start(
                    model,
                    teacher_batches(config, pack, tokenizer, stage_data),
                    steps=steps,
                    learning_rate=config.sft.learning_rate,
                    seed=seed,
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


def env_id_for(config: TrainConfig, pack: TaskPack) -> str:
    return config.run.env or ENV_IDS[pack.family]


def stop_ids(config: TrainConfig, tokenizer: Any) -> list[int]:
    """EOS and every `[model] stop_tokens` entry, as token ids."""
    ids = [int(tokenizer.eos_token_id)]
    for token in config.model.stop_tokens:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == tokenizer.unk_token_id:
            raise ConfigError(f"[model] stop_tokens: {token!r} is not a token of this tokenizer")
        ids.append(int(token_id))
    return list(dict.fromkeys(ids))


def make_agent(config: TrainConfig, pack: TaskPack, grader: Grader, tokenizer: Any) -> Agent:
    stops = stop_ids(config, tokenizer)
    runner = None
    if uses_episodes(config, pack):
        runner = EpisodeRunner(
            env_id_for(config, pack),
            pack,
            grader,
            tokenizer,
            make_template(tokenizer, config.model.template, stops),
            max_turns=config.grpo.max_turns,
            stop_ids=stops,
            short_prompts=config.model.short_prompts,
        )
    return Agent(tokenizer, grader, stops, runner)


# ---------------------------------------------------------------------------------------- rollouts
def grade_unique(grader: Grader, task_ids: list[str], texts: list[str]) -> list[Verdict]:
    """Grade each distinct (task, completion) once: graders are deterministic, groups repeat."""
    keys = list(dict.fromkeys(zip(task_ids, texts, strict=True)))
    verdicts = grade_or_fault(grader, [k[0] for k in keys], [k[1] for k in keys])
    graded = dict(zip(keys, verdicts, strict=True))
    return [graded[key] for key in zip(task_ids, texts, strict=True)]


def play(
    policy: Any, agent: Agent, tasks: list[Task], config: TrainConfig, greedy: bool = False
) -> tuple[Sequences, list[Verdict], torch.Tensor, list[Episode]]:
    """One episode per entry of `tasks`: (sequences, verdicts, rewards, episodes). Single-turn: the
    completions are sampled in micro-batches and graded in one batch; multi-turn: the runner steps
    each episode's env turn by turn."""
    g = config.grpo
    if agent.runner is not None:
        episodes = agent.runner.run(
            policy,
            tasks,
            temperature=g.temperature,
            max_new_tokens=g.max_new_tokens,
            max_episode_tokens=g.max_episode_tokens,
            batch_size=g.micro_batch_size,
            greedy=greedy,
        )
        verdicts = [e.verdict for e in episodes if e.verdict is not None]
        rewards = torch.tensor([e.reward for e in episodes])
        return episode_sequences(episodes, agent.tokenizer.pad_token_id), verdicts, rewards, episodes
    chunks = [
        generate(
            policy,
            agent.tokenizer,
            [t.prompt for t in tasks[s : s + g.micro_batch_size]],
            g.temperature,
            g.max_new_tokens,
            greedy,
            agent.stop_ids,
        )
        for s in range(0, len(tasks), g.micro_batch_size)
    ]
    sequences = Sequences.concat(chunks, agent.tokenizer.pad_token_id)
    verdicts = grade_unique(agent.grader, [t.id for t in tasks], decode(agent.tokenizer, sequences))
    return sequences, verdicts, torch.tensor([v.reward for v in verdicts]), []


def collect_rollout(
    policy: Any,
    agent: Agent,
    curriculum: Curriculum,
    rng: random.Random,
    config: TrainConfig,
    levels: tuple[int, int],
) -> Rollout:
    """G episodes for each of `tasks_per_step` tasks. With dynamic sampling, groups whose rewards
    are all equal are dropped and replaced by fresh tasks (up to `max_resample_rounds`)."""
    g = config.grpo
    parts: list[tuple[Sequences, list[Verdict], torch.Tensor, list[Episode]]] = []
    group_ids: list[int] = []
    groups, rounds, informative = 0, 0, 0
    while True:
        tasks = curriculum.draw(g.tasks_per_step - informative, rng)
        sizes = [
            group_size_for(t.difficulty, levels[0], levels[1], g.group_size, g.group_size_max) for t in tasks
        ]
        sequences, verdicts, rewards, episodes = play(
            policy, agent, [t for t, n in zip(tasks, sizes, strict=True) for _ in range(n)], config
        )
        if g.truncation == "penalty":  # DAPO's soft overlong penalty, on the episode's whole length
            limit = g.max_episode_tokens if agent.runner is not None else g.max_new_tokens
            lengths = sequences.completion_attention.sum(-1)
            rewards = rewards + overlong_penalty(lengths, limit, g.overlong_buffer, g.overlong_penalty)
        parts.append((sequences, verdicts, rewards, episodes))
        group_ids += [groups + i for i, n in enumerate(sizes) for _ in range(n)]
        groups += len(tasks)
        rewards, ids = torch.cat([p[2] for p in parts]), torch.tensor(group_ids)
        verdicts = [v for p in parts for v in p[1]]
        keep = torch.tensor([not v.disrupted for v in verdicts], dtype=torch.bool)
        if not g.dynamic_sampling:
            break
        keep &= informative_rows(rewards, ids, keep)
        informative = len(torch.unique(ids[keep]))
        if informative >= g.tasks_per_step or rounds >= g.max_resample_rounds:
            break
        rounds += 1
    sequences = Sequences.concat([p[0] for p in parts], agent.tokenizer.pad_token_id)
    episodes = [e for p in parts for e in p[3]]
    return Rollout(sequences, ids, verdicts, rewards, keep, episodes, groups, rounds)


def rollout_metrics(rollout: Rollout) -> dict[str, float]:
    """What the step sampled, kept or not: rewards, lengths, grading faults, agent statistics."""
    s = rollout.sequences
    undisrupted = torch.tensor([not v.disrupted for v in rollout.verdicts], dtype=torch.bool)
    zero = zero_std_groups(rollout.rewards[undisrupted], rollout.group_ids[undisrupted])
    stats = {
        "groups_sampled": float(rollout.groups_sampled),
        "zero_std_group_fraction": float(zero.sum()) / max(rollout.groups_sampled, 1),
        "resample_rounds": float(rollout.resample_rounds),
        "grading_disrupted": float(sum(v.disrupted for v in rollout.verdicts)),
    }
    stats.update(verdict_metrics(rollout.verdicts))
    stats.update(
        completion_metrics(
            [row[m.bool()].tolist() for row, m in zip(s.completion_ids, s.mask, strict=True)],
            s.truncated.tolist(),
            [v.passed for v in rollout.verdicts],
        )
    )
    stats.update(episode_metrics(rollout.episodes))
    return stats


# ---------------------------------------------------------------------------------------- update
def policy_update(
    policy: Any,
    reference: models.ReferencePolicy | None,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    config: TrainConfig,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
) -> dict[str, float]:
    g = config.grpo
    keep = rollout.keep.nonzero().squeeze(-1)
    sequences = rollout.sequences.rows(keep)
    advantages = group_advantages(rollout.rewards[keep], rollout.group_ids[keep], g.scale_rewards)
    mask = sequences.mask.clone()  # the tokens the policy sampled; observations are context only
    if g.truncation == "mask":
        mask[sequences.truncated] = 0.0
    chunks = micro_batches(sequences, g.micro_batch_size, g.micro_batch_tokens)

    # Old log-probs: the sampling policy, computed once before any update (the ratio's denominator).
    # With mu = 1 the one optimiser step comes after the only gradient pass, so that pass's own
    # log-probs, detached, are exactly the old log-probs: no extra forward is needed.
    with torch.no_grad():
        old_logp = None
        if g.num_iterations > 1:
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

    budget = g.max_episode_tokens if rollout.episodes else g.max_new_tokens
    norms = BatchNorms.of(mask, budget)
    tokens = max(float(mask.sum()), 1.0)
    totals: dict[str, float] = dict.fromkeys(
        ("loss", "policy_loss", "kl", "clip_ratio/low", "clip_ratio/high", "entropy", "grad_norm"), 0.0
    )
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
                loss_type=g.loss_type,
                epsilon_low=g.epsilon_low,
                epsilon_high=g.epsilon_high,
                beta=g.beta,
                kl_estimator=g.kl_estimator,
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
        if scheduler is not None:
            scheduler.step()
    totals["advantage_abs_mean"] = float(advantages.abs().mean())
    totals["kl"] = totals["kl"] if reference is not None else float("nan")
    return totals


def lr_multiplier(config: TrainConfig) -> Callable[[int], float]:
    """The learning rate's factor after `n` optimiser steps: linear warmup, then constant or a
    linear / cosine decay to 0 at the last step (one optimiser step per pass, mu per GRPO step)."""
    g = config.grpo
    total = max(g.steps * g.num_iterations, 1)

    def factor(n: int) -> float:
        if n < g.warmup_steps:
            return (n + 1) / (g.warmup_steps + 1)
        if g.lr_schedule == "constant":
            return 1.0
        progress = min(1.0, (n - g.warmup_steps) / max(total - g.warmup_steps, 1))
        if g.lr_schedule == "linear":
            return 1.0 - progress
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return factor


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
    train_tasks = up_to_difficulty(train_tasks, g.max_difficulty)
    eval_tasks = up_to_difficulty(eval_tasks, r.eval_max_difficulty)
    if g.max_difficulty and not train_tasks:
        raise ConfigError(f"[grpo] max_difficulty = {g.max_difficulty}: no training task is that easy")
    if r.eval_max_tasks:
        eval_tasks = eval_tasks[: r.eval_max_tasks]
    if r.eval_max_difficulty and not eval_tasks:
        raise ConfigError(
            f"[run] eval_max_difficulty = {r.eval_max_difficulty}: no held-out task is that easy"
        )
    levels = (min(t.difficulty for t in train_tasks), max(t.difficulty for t in train_tasks))

    grader_options: dict[str, Any] = {"sandbox": r.sandbox}
    if r.grader_jobs:
        grader_options["jobs"] = r.grader_jobs
    if not r.grader_types and pack.family == "code":  # the type-checker layer is the code family's
        grader_options["types"] = False
    grader = make_executor_grader(pack, r.executor, r.ray_address or None, **grader_options)
    write_grading_record(out_dir, {pack.name: grading_entry(r.pack, grader)})  # for `rlvr regrade`

    checkpoint = find_checkpoint(paths.checkpoint) if resume else None
    base, tokenizer, sft_info = starting_policy(config, paths, pack, grader, log)
    policy = policy_from(base, config, checkpoint)
    models.disable_dropout(policy)
    agent = make_agent(config, pack, grader, tokenizer)
    canaries = CanaryProbe.for_run(config, pack, grader, paths.root, single_turn=agent.runner is None)
    uses_lora = config.model.lora_rank > 0
    reference = None
    if g.beta > 0:
        reference = models.ReferencePolicy(policy if uses_lora else base, uses_lora)
    optimizer = torch.optim.AdamW(
        models.trainable_parameters(policy), lr=g.learning_rate, weight_decay=g.weight_decay
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_multiplier(config))
    curriculum = Curriculum(train_tasks, g.curriculum, g.curriculum_threshold, g.curriculum_window)
    sampler = random.Random(r.seed)
    metrics, grading_errors = MetricsLog(paths.metrics), MetricsLog(paths.grading_errors)
    flagged = MetricsLog(paths.flagged_samples)  # what `rlvr inspect RUN_DIR` reads
    state: dict[str, Any] = {"step": 0, "elapsed": 0.0, "sft": sft_info}
    if checkpoint is not None:
        payload = load_checkpoint_state(checkpoint)
        optimizer.load_state_dict(payload["optimizer"])
        state = payload["state"]
        scheduler.load_state_dict(state["scheduler"])
        curriculum.load_state(state["curriculum"])
        sampler.setstate(state["sampler"])
        metrics.truncate(state["metrics_lines"])
        grading_errors.truncate(state.get("grading_error_lines", 0))
        flagged.truncate(state.get("flagged_lines", 0))
        log(f"resuming {out_dir} at step {state['step']} of {g.steps}")
    else:
        metrics.truncate(0)
        grading_errors.truncate(0)
        flagged.truncate(0)
    session_start = started - state["elapsed"]  # wall time counts SFT, evaluation and earlier sessions

    def snapshot() -> None:
        state.update(
            curriculum=curriculum.state(),
            sampler=sampler.getstate(),
            scheduler=scheduler.state_dict(),
            metrics_lines=metrics.line_count(),
            grading_error_lines=grading_errors.line_count(),
            flagged_lines=flagged.line_count(),
            elapsed=time.perf_counter() - session_start,
        )
        save_checkpoint(paths.checkpoint, policy, tokenizer, optimizer, state)

    def heldout() -> dict[str, Any]:
        result = evaluate(
            lambda tasks, greedy: play(policy, agent, tasks, config, greedy)[1],
            eval_tasks,
            samples=r.eval_samples,
            temperature=g.temperature,
            seed=r.seed + 1,
        )
        return result

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
                learning_rate = optimizer.param_groups[0]["lr"]
                rollout = collect_rollout(policy, agent, curriculum, sampler, config, levels)
                stats = rollout_metrics(rollout)
                generated = time.perf_counter()
                if rollout.keep.any():
                    update = policy_update(policy, reference, optimizer, rollout, config, scheduler)
                else:  # every episode was disrupted, or no group was informative: nothing to learn
                    update = {"skipped_update": 1.0}
                state["step"] += 1
                for v in rollout.verdicts:  # every faulted episode, dropped or kept, before the metric line
                    if v.error is not None:
                        grading_errors.append(
                            {
                                "step": state["step"],
                                "task_id": v.task_id,
                                "error": v.error,
                                "fault": v.fault,
                                "dropped": v.disrupted,
                            }
                        )
                attempts = [row for row, v in enumerate(rollout.verdicts) if exploit_flags(v.flags)]
                for row in attempts[:MAX_FLAGGED_PER_STEP]:  # exploit attempts, bounded per step
                    v = rollout.verdicts[row]
                    ids = rollout.sequences.completion_ids[row][rollout.sequences.mask[row] > 0]
                    flagged.append(
                        {
                            "step": state["step"],
                            "task_id": v.task_id,
                            "reward": v.reward,
                            "passed": v.passed,
                            "flags": v.flags,
                            "completion": agent.tokenizer.decode(ids.tolist())[:MAX_FLAGGED_CHARS],
                        }
                    )
                record = {"step": state["step"], **stats, **update, "difficulty_level": curriculum.level}
                record.update(canaries.probe(policy, agent, config, rollout.verdicts, state["step"]))
                record.update(
                    step_seconds=time.perf_counter() - step_started,
                    rollout_seconds=generated - step_started,
                    update_seconds=time.perf_counter() - generated,
                    group_size_mean=int(rollout.keep.sum()) / max(rollout.groups_kept, 1),
                    learning_rate=learning_rate,
                )
                metrics.append(record)
                if agent.runner is None:  # every graded candidate with its receipt (`rlvr regrade`)
                    texts = decode(agent.tokenizer, rollout.sequences)
                    store_rollout_candidates(paths.root, state["step"], pack.name, rollout.verdicts, texts)
                canaries.raise_if_alarm(snapshot)
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
            if agent.runner is not None:
                agent.runner.close()
            canaries.close()
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
