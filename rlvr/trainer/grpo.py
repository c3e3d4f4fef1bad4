"""GRPO, top to bottom (`train`, then the step's two halves: `collect_rollout`, `policy_update`).

for each step:
    draw tasks (curriculum.py)          -> G episodes per task (G grows with difficulty)
        single-turn families: one completion each (rollout.py), the whole step graded in one batch
        multi-turn families: turns through the family's Gymnasium env (episodes.py), observations
        appended as context
    rewards -> one keep mask: episodes whose grading was disrupted leave; with dynamic sampling
        (DAPO) groups whose rewards are all equal leave too and fresh tasks replace them
    group advantages (r - mean) / std, one per episode, on every token the policy sampled (advantages.py)
    old log-probs, once, before any update; reference log-probs if beta > 0
    mu passes: clipped surrogate + beta * KL (losses.py), micro-batched, one optimiser step per pass
    metrics.jsonl (and grading_errors.jsonl, metrics.py); checkpoint every N steps
held-out evaluation before and after; plots; summary.json

With `[grpo] max_staleness = 1`, `GradingOverlap` hands the step the rollout sampled one step
earlier, whose grading ran while this step's completions were generated (its docstring states the
staleness rule). The warm start that builds the starting policy is warm_start.py.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.core.verdict_cache import grade_once_each
from rlvr.envs.training import Grader, grade_or_fault, load_pack, make_executor_grader
from rlvr.trainer import model as models
from rlvr.trainer.advantages import group_advantages, informative_rows, zero_std_groups
from rlvr.trainer.agent import Agent, make_agent
from rlvr.trainer.canaries import CanaryProbe
from rlvr.trainer.candidates import record_grading, store_rollout_candidates
from rlvr.trainer.checkpoint import RunPaths, find_checkpoint, load_checkpoint_state, save_checkpoint
from rlvr.trainer.config import ConfigError, TrainConfig
from rlvr.trainer.curriculum import Curriculum, group_size_for, up_to_difficulty
from rlvr.trainer.episodes import Episode, episode_metrics, episode_sequences
from rlvr.trainer.evaluate import evaluate
from rlvr.trainer.interrupt import stop_on_sigint
from rlvr.trainer.losses import BatchNorms, grpo_loss
from rlvr.trainer.masks import overlong_penalty
from rlvr.trainer.metrics import RunLogs, build_summary, completion_metrics, verdict_metrics
from rlvr.trainer.packing import packed_completion_logprobs
from rlvr.trainer.plots import plot_metrics
from rlvr.trainer.rollout import Sequences, completion_logprobs, decode, generate, micro_batches
from rlvr.trainer.warm_start import starting_policy


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
    # (N, C) log-probs of each token under the policy that sampled it, when that policy has changed
    # since (max_staleness = 1); None: the current policy sampled every episode
    behaviour_logp: torch.Tensor | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # generation and time spent waiting on grading

    @property
    def groups_kept(self) -> int:
        return len(torch.unique(self.group_ids[self.keep]))


# ---------------------------------------------------------------------------------------- rollouts
def grade_unique(grader: Grader, task_ids: list[str], texts: list[str]) -> list[Verdict]:
    """Grade each distinct (task, completion) once: graders are deterministic, groups repeat; each
    repeat gets its own copy of the verdict."""
    return grade_once_each(
        list(zip(task_ids, texts, strict=True)),
        lambda todo: grade_or_fault(grader, [t for t, _ in todo], [c for _, c in todo]),
    )


def play(
    policy: Any, agent: Agent, tasks: list[Task], config: TrainConfig, greedy: bool = False
) -> tuple[Sequences, list[Verdict], torch.Tensor, list[Episode]]:
    """One episode per entry of `tasks`: (sequences, verdicts, rewards, episodes). Single-turn: the
    completions are sampled in micro-batches and graded in one batch; multi-turn: the runner steps
    each episode's env turn by turn."""
    if agent.runner is not None:
        g = config.grpo
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
    sequences = sample_completions(policy, agent, tasks, config, greedy)
    verdicts = grade_unique(agent.grader, [t.id for t in tasks], decode(agent.tokenizer, sequences))
    return sequences, verdicts, torch.tensor([v.reward for v in verdicts]), []


def sample_completions(
    policy: Any, agent: Agent, tasks: list[Task], config: TrainConfig, greedy: bool = False
) -> Sequences:
    """One completion per entry of `tasks`, sampled in micro-batches."""
    g = config.grpo
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
    return Sequences.concat(chunks, agent.tokenizer.pad_token_id)


@dataclass
class Round:
    """One draw of tasks, sampled: G episodes per task, in group order. `graded` holds the verdicts,
    rewards and grading seconds, or will once the grading worker is done with them."""

    tasks: list[Task]
    sizes: list[int]  # G of each task
    sequences: Sequences
    episodes: list[Episode]
    graded: Future[Graded]
    behaviour_logp: torch.Tensor | None  # (N, C): under the policy that sampled; None = the current one
    generation_seconds: float  # episodes: their env steps (tool calls and grading) too


Graded = tuple[list[Verdict], torch.Tensor, float]


def timed_grading(grader: Grader, task_ids: list[str], texts: list[str]) -> Graded:
    started = time.perf_counter()
    verdicts = grade_unique(grader, task_ids, texts)
    return verdicts, torch.tensor([v.reward for v in verdicts]), time.perf_counter() - started


def sample_round(
    policy: Any,
    agent: Agent,
    curriculum: Curriculum,
    count: int,
    rng: random.Random,
    config: TrainConfig,
    levels: tuple[int, int],
    grading: ThreadPoolExecutor | None = None,
) -> Round:
    """G episodes of each of `count` tasks the curriculum draws: the one place a step's tasks are
    chosen. With a `grading` worker (single-turn only) the completions are handed to it and this
    returns at once with their grading under way; the log-probs of the policy that sampled them are
    kept, since it will have changed by the time they are learnt from."""
    g = config.grpo
    tasks = curriculum.draw(count, rng)
    started = time.perf_counter()
    sizes = [
        group_size_for(t.difficulty, levels[0], levels[1], g.group_size, g.group_size_max) for t in tasks
    ]
    repeated = [t for t, n in zip(tasks, sizes, strict=True) for _ in range(n)]
    graded: Future[Graded] = Future()
    if agent.runner is not None:  # the env grades each episode as it ends
        sequences, verdicts, rewards, episodes = play(policy, agent, repeated, config)
        graded.set_result((verdicts, rewards, 0.0))
        return Round(tasks, sizes, sequences, episodes, graded, None, time.perf_counter() - started)
    sequences = sample_completions(policy, agent, repeated, config)
    generated = time.perf_counter() - started
    arguments = (agent.grader, [t.id for t in repeated], decode(agent.tokenizer, sequences))
    if grading is None:
        graded.set_result(timed_grading(*arguments))
        return Round(tasks, sizes, sequences, [], graded, None, generated)
    graded = grading.submit(timed_grading, *arguments)
    with torch.no_grad():  # while the grading worker runs
        chunks = micro_batches(sequences, g.micro_batch_size, g.micro_batch_tokens)
        behaviour = torch.cat(
            [completion_logprobs(policy, sequences.rows(c), g.temperature)[0] for c in chunks]
        )
    return Round(tasks, sizes, sequences, [], graded, behaviour, time.perf_counter() - started)


def collect_rollout(
    policy: Any,
    agent: Agent,
    curriculum: Curriculum,
    rng: random.Random,
    config: TrainConfig,
    levels: tuple[int, int],
    *,
    sampled: Round | None = None,
    grading: ThreadPoolExecutor | None = None,
) -> Rollout:
    """G episodes for each of `tasks_per_step` tasks (the first round given as `sampled` when it was
    sampled ahead). With dynamic sampling, groups whose rewards are all equal are dropped and
    replaced by fresh tasks (up to `max_resample_rounds`)."""
    g = config.grpo
    rounds: list[Round] = []
    parts: list[tuple[list[Verdict], torch.Tensor]] = []
    group_ids: list[int] = []
    groups, resampled, informative, waited, grading_seconds = 0, 0, 0, 0.0, 0.0
    while True:
        batch = sampled or sample_round(
            policy, agent, curriculum, g.tasks_per_step - informative, rng, config, levels, grading
        )
        sampled = None
        waiting = time.perf_counter()
        verdicts, rewards, seconds = batch.graded.result()
        waited, grading_seconds = waited + time.perf_counter() - waiting, grading_seconds + seconds
        if g.truncation == "penalty":  # DAPO's soft overlong penalty, on the episode's whole length
            limit = g.max_episode_tokens if agent.runner is not None else g.max_new_tokens
            lengths = batch.sequences.completion_attention.sum(-1)
            rewards = rewards + overlong_penalty(lengths, limit, g.overlong_buffer, g.overlong_penalty)
        rounds.append(batch)
        parts.append((verdicts, rewards))
        group_ids += [groups + i for i, n in enumerate(batch.sizes) for _ in range(n)]
        groups += len(batch.tasks)
        rewards, ids = torch.cat([p[1] for p in parts]), torch.tensor(group_ids)
        verdicts = [v for p in parts for v in p[0]]
        keep = torch.tensor([not v.disrupted for v in verdicts], dtype=torch.bool)
        if not g.dynamic_sampling:
            break
        keep &= informative_rows(rewards, ids, keep)
        informative = len(torch.unique(ids[keep]))
        if informative >= g.tasks_per_step or resampled >= g.max_resample_rounds:
            break
        resampled += 1
    pad_id = agent.tokenizer.pad_token_id
    sequences = Sequences.concat([r.sequences for r in rounds], pad_id)
    behaviour = None
    logps = [r.behaviour_logp for r in rounds]
    if all(logp is not None for logp in logps):  # rounds of different widths, padded like the sequences
        width = sequences.completion_ids.shape[1]
        behaviour = torch.cat(
            [torch.nn.functional.pad(lp, (0, width - lp.shape[1])) for lp in logps if lp is not None]
        )
    episodes = [e for r in rounds for e in r.episodes]
    seconds = {
        "generation_seconds": sum(r.generation_seconds for r in rounds),
        "grading_seconds": grading_seconds,  # the grader's own time, overlapped or not
        "grading_wait_seconds": waited,  # what the step spent waiting for it (0 when overlapped fully)
    }
    return Rollout(sequences, ids, verdicts, rewards, keep, episodes, groups, resampled, behaviour, seconds)


class GradingOverlap:
    """Step k's completions are graded in a worker thread while step k+1's are generated: bounded
    staleness of one step (`[grpo] max_staleness = 1`, single-turn rollouts).

        step k, policy pi_k:  sample round k+1 with pi_k; its grading starts at once in the worker
                              wait for round k's verdicts (sampled by pi_k-1 during step k-1)
                              update pi_k -> pi_k+1 on round k

    The staleness rule: round k was sampled by pi_k-1 and is learnt from at pi_k, one update later.
    Its old log-probs (the ratio's denominator) are pi_k-1's, recorded when it was sampled, so the
    clipped ratio pi / pi_k-1 is the importance weight of the policy that generated each episode;
    the advantages are its group's own rewards, untouched by the update. Dynamic sampling's extra
    rounds are sampled (and graded) within the step, by pi_k, and keep pi_k's log-probs the same way.
    The curriculum sees round k's pass rate after round k+1's tasks were drawn (one step late). A
    round sampled ahead when a run stops is dropped: a resumed run draws fresh tasks."""

    def __init__(
        self,
        agent: Agent,
        curriculum: Curriculum,
        rng: random.Random,
        config: TrainConfig,
        levels: tuple[int, int],
    ) -> None:
        self.agent, self.curriculum, self.rng, self.config, self.levels = (
            agent,
            curriculum,
            rng,
            config,
            levels,
        )
        self.grading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlvr-grading")
        self.ahead: Round | None = None

    def sample(self, policy: Any) -> Round:
        count = self.config.grpo.tasks_per_step
        return sample_round(
            policy, self.agent, self.curriculum, count, self.rng, self.config, self.levels, self.grading
        )

    def rollout(self, policy: Any, *, last: bool) -> Rollout:
        """This step's rollout; unless it is the `last` step, the next step's round is sampled first."""
        current = self.ahead or self.sample(policy)  # nothing was sampled ahead of the first step
        self.ahead = None if last else self.sample(policy)
        return collect_rollout(
            policy,
            self.agent,
            self.curriculum,
            self.rng,
            self.config,
            self.levels,
            sampled=current,
            grading=self.grading,
        )

    def close(self) -> None:
        self.grading.shutdown(wait=True, cancel_futures=True)


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
    stats.update(rollout.seconds, group_size_mean=int(rollout.keep.sum()) / max(rollout.groups_kept, 1))
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
    logprobs = packed_completion_logprobs if g.packed else completion_logprobs  # one layout, same values

    # Old log-probs: the sampling policy, computed once before any update (the ratio's denominator).
    # With mu = 1 the one optimiser step comes after the only gradient pass, so that pass's own
    # log-probs, detached, are exactly the old log-probs: no extra forward is needed.
    with torch.no_grad():
        old_logp = None
        if rollout.behaviour_logp is not None:
            # Sampled by an earlier policy (max_staleness = 1): the ratio's denominator is the policy
            # that generated each episode, recorded as it sampled, never the current one (whose ratio
            # would be 1 and hide the off-policy step from the clip).
            old_logp = rollout.behaviour_logp[keep]
        elif g.num_iterations > 1:
            old_logp = torch.cat([logprobs(policy, sequences.rows(c), g.temperature)[0] for c in chunks])
        ref_logp = None
        if reference is not None:
            with reference.context():
                ref_logp = torch.cat(
                    [logprobs(reference.model, sequences.rows(c), g.temperature)[0] for c in chunks]
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
            logp, entropy = logprobs(policy, sequences.rows(c), g.temperature, with_entropy=iteration == 0)
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
def task_splits(config: TrainConfig, pack: TaskPack) -> tuple[list[Task], list[Task]]:
    """(training tasks, held-out tasks) after the difficulty and size limits of the config."""
    g, r = config.grpo, config.run
    train_tasks = up_to_difficulty(pack.tasks(r.train_split), g.max_difficulty)
    eval_tasks = up_to_difficulty(pack.tasks(r.eval_split), r.eval_max_difficulty)
    if g.max_difficulty and not train_tasks:
        raise ConfigError(f"[grpo] max_difficulty = {g.max_difficulty}: no training task is that easy")
    if r.eval_max_tasks:
        eval_tasks = eval_tasks[: r.eval_max_tasks]
    if r.eval_max_difficulty and not eval_tasks:
        raise ConfigError(
            f"[run] eval_max_difficulty = {r.eval_max_difficulty}: no held-out task is that easy"
        )
    return train_tasks, eval_tasks


def make_run_grader(config: TrainConfig, pack: TaskPack) -> Grader:
    r = config.run
    options: dict[str, Any] = {"sandbox": r.sandbox}
    if r.grader_jobs:
        options["jobs"] = r.grader_jobs
    if not r.grader_types and pack.family == "code":  # the type-checker layer is the code family's
        options["types"] = False
    return make_executor_grader(pack, r.executor, r.ray_address or None, **options)


def trainable_policy(
    config: TrainConfig, base: Any, checkpoint: Path | None
) -> tuple[Any, models.ReferencePolicy | None, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """(policy, KL reference or None, optimiser, learning-rate schedule) for a run starting at `base`."""
    g = config.grpo
    policy = models.policy_from(base, config.model, checkpoint)
    models.disable_dropout(policy)
    reference = None
    if g.beta > 0:  # the KL anchor is the starting policy: a frozen copy, or with LoRA the bare base
        uses_lora = config.model.lora_rank > 0
        reference = models.ReferencePolicy(policy if uses_lora else base, uses_lora)
    params = models.trainable_parameters(policy)
    optimizer = torch.optim.AdamW(params, lr=g.learning_rate, weight_decay=g.weight_decay)
    return policy, reference, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lr_multiplier(config))


def train(
    config: TrainConfig, out_dir: Path, *, resume: bool = False, log: Callable[[str], None] = print
) -> dict[str, Any]:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # per-shard save/load bars would drown the step progress bar
    started = time.perf_counter()
    paths, g, r = RunPaths(out_dir), config.grpo, config.run
    out_dir.mkdir(parents=True, exist_ok=True)
    if r.threads:
        torch.set_num_threads(r.threads)
    torch.manual_seed(r.seed)
    random.seed(r.seed)
    pack = load_pack(r.pack)
    train_tasks, eval_tasks = task_splits(config, pack)
    levels = (min(t.difficulty for t in train_tasks), max(t.difficulty for t in train_tasks))
    grader = make_run_grader(config, pack)
    record_grading(out_dir, pack.name, r.pack, grader)  # for `rlvr regrade`
    checkpoint = find_checkpoint(paths.checkpoint) if resume else None
    base, tokenizer, sft_info = starting_policy(config, paths.warm_start, pack, grader, log)
    policy, reference, optimizer, scheduler = trainable_policy(config, base, checkpoint)
    agent = make_agent(config, pack, grader, tokenizer)
    canaries = CanaryProbe.for_run(config, pack, grader, out_dir, single_turn=agent.runner is None)
    curriculum = Curriculum(train_tasks, g.curriculum, g.curriculum_threshold, g.curriculum_window)
    sampler = random.Random(r.seed)
    overlap = GradingOverlap(agent, curriculum, sampler, config, levels) if g.max_staleness else None
    logs = RunLogs(paths.metrics, paths.grading_errors, paths.flagged_samples)
    state: dict[str, Any] = {"step": 0, "elapsed": 0.0, "sft": sft_info}
    if checkpoint is not None:
        state = restore(checkpoint, optimizer, scheduler, curriculum, sampler)
        log(f"resuming {out_dir} at step {state['step']} of {g.steps}")
    logs.rewind(state)  # a fresh run starts the logs empty; a resumed one at its checkpoint
    session_start = started - state["elapsed"]  # wall time counts SFT, evaluation and earlier sessions

    def snapshot() -> None:
        state.update(
            curriculum=curriculum.state(), sampler=sampler.getstate(), scheduler=scheduler.state_dict()
        )
        state.update(logs.line_counts(), elapsed=time.perf_counter() - session_start)
        save_checkpoint(paths.checkpoint, policy, tokenizer, optimizer, state)

    def heldout(when: str) -> None:  # once per run: a resumed run keeps the result it already has
        if f"heldout_{when}" not in state:
            log(f"held-out evaluation ({when}): {len(eval_tasks)} tasks of split {r.eval_split!r}")
            state[f"heldout_{when}"] = result = evaluate(
                lambda tasks, greedy: play(policy, agent, tasks, config, greedy)[1],
                eval_tasks,
                samples=r.eval_samples,
                temperature=g.temperature,
                seed=r.seed + 1,
            )
            log(f"  pass rate {result['pass_rate']:.3f}")
            snapshot()

    with stop_on_sigint(log) as stop:  # Ctrl-C stops at the next safe point, checkpointed
        try:
            heldout("before")
            bar = tqdm(total=g.steps, initial=state["step"], desc="grpo", disable=None)
            while state["step"] < g.steps:
                stop.check(snapshot)
                step_started, learning_rate = time.perf_counter(), optimizer.param_groups[0]["lr"]
                if overlap is None:
                    rollout = collect_rollout(policy, agent, curriculum, sampler, config, levels)
                else:  # step k's grading ran while step k+1 generated
                    rollout = overlap.rollout(policy, last=state["step"] + 1 == g.steps)
                stats, generated = rollout_metrics(rollout), time.perf_counter()
                if rollout.keep.any():
                    update = policy_update(policy, reference, optimizer, rollout, config, scheduler)
                else:  # every episode was disrupted, or no group was informative: nothing to learn
                    update = {"skipped_update": 1.0}
                state["step"] += 1
                logs.faults_and_exploits(
                    state["step"], rollout.verdicts, partial(completion_text, agent, rollout)
                )
                logs.metrics.append(
                    {"step": state["step"], **stats, **update, **step_seconds(step_started, generated)}
                    | {"difficulty_level": curriculum.level, "learning_rate": learning_rate}
                    | canaries.probe(policy, agent, config, rollout.verdicts, state["step"])
                )
                if agent.runner is None:  # every graded candidate with its receipt (`rlvr regrade`)
                    texts = decode(agent.tokenizer, rollout.sequences)
                    store_rollout_candidates(out_dir, state["step"], pack.name, rollout.verdicts, texts)
                canaries.raise_if_alarm(snapshot)
                curriculum.observe(stats["pass_rate"])
                bar.update(1)
                bar.set_postfix(reward=f"{stats['reward_mean']:.2f}", passed=f"{stats['pass_rate']:.2f}")
                if state["step"] % r.checkpoint_every == 0 or state["step"] == g.steps:
                    snapshot()
            bar.close()
            stop.check(snapshot)
            heldout("after")
        finally:
            if overlap is not None:
                overlap.close()
            if agent.runner is not None:
                agent.runner.close()
            canaries.close()
            grader.close()

    records = logs.metrics.read()
    plot_metrics(records, paths.plots)
    now = time.perf_counter()
    summary = build_summary(config.to_dict(), state, records, now - session_start, now - started)
    paths.summary.write_text(json.dumps(summary, indent=2, default=str))
    return summary


def restore(
    checkpoint: Path,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    curriculum: Curriculum,
    sampler: random.Random,
) -> dict[str, Any]:
    """Load a checkpoint's optimiser, schedule, curriculum and RNG states; returns its trainer state."""
    payload = load_checkpoint_state(checkpoint)
    optimizer.load_state_dict(payload["optimizer"])
    state: dict[str, Any] = payload["state"]
    scheduler.load_state_dict(state["scheduler"])
    curriculum.load_state(state["curriculum"])
    sampler.setstate(state["sampler"])
    return state


def step_seconds(started: float, generated: float) -> dict[str, float]:
    """The step's wall time, split at the end of its rollout."""
    now = time.perf_counter()
    return {
        "step_seconds": now - started,
        "rollout_seconds": generated - started,
        "update_seconds": now - generated,
    }


def completion_text(agent: Agent, rollout: Rollout, row: int) -> str:
    """What the policy wrote in row `row` of the rollout (its sampled tokens, decoded)."""
    ids = rollout.sequences.completion_ids[row][rollout.sequences.mask[row] > 0]
    return str(agent.tokenizer.decode(ids.tolist()))
