"""Training configuration: typed sections, loaded from TOML or `--set section.key=value`, checked
before any work starts. Every problem is reported with the fix."""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

from rlvr.trainer.options import EPISODE_MISTAKES, KLEstimator, LossType, RewardScaling, TruncationHandling

DType = Literal["float32", "bfloat16", "float16"]
Template = Literal["auto", "plain", "chat", "compact"]
RolloutKind = Literal["auto", "completions", "episodes"]
LRSchedule = Literal["constant", "linear", "cosine"]
Sandbox = Literal["local", "docker"]
Executor = Literal["local", "ray"]
PreTokenizer = Literal["bytelevel", "words", "words_numbers"]


class ConfigError(ValueError):
    """A configuration that cannot run; the message names each problem and its fix."""


@dataclass
class ModelConfig:
    path: str = ""  # a local Hugging Face causal-LM directory; "" builds the tiny demo model
    dtype: DType = "float32"
    # how turns are rendered: the tokenizer's chat template, plain text, or plain text with tool results
    # as short `name -> result` lines ("compact", for the tiny model)
    template: Template = "auto"
    short_prompts: bool = False  # episodes open with the task's bare instruction (no tool schemas)
    stop_tokens: list[str] = field(default_factory=list)  # extra tokens that end a turn (EOS always does)
    lora_rank: int = 0  # > 0 trains a peft LoRA adapter; the reference is the adapter-disabled model
    lora_alpha: int = 16
    lora_target_modules: str = "all-linear"
    tiny_layers: int = 2  # the built-in tiny model (used when path is "")
    tiny_hidden: int = 128
    tiny_heads: int = 4
    tiny_vocab: int = 600
    # how the tiny model's BPE splits text before merging: "bytelevel" (GPT-2's rule: a word keeps its
    # leading space) or "words" (words, single digits, punctuation runs and spaces apart: a name is the
    # same tokens in an instruction and inside a JSON string, so copying it is one skill, not one per name)
    # or "words_numbers" (words, and every group of up to three digits one token, as Llama 3 reads numbers)
    tiny_pretokenizer: PreTokenizer = "bytelevel"
    # the most characters one BPE token may hold (0: no cap). A small model that has only ever copied a
    # name as one token has not learnt to copy one of several tokens - which is every name the
    # tokenizer never saw; with a cap, trained names are several tokens too
    tiny_max_token_length: int = 0


@dataclass
class SFTConfig:
    steps: int = -1  # -1: 500 for the built-in tiny model, 0 for a model path
    # teacher examples; multi-turn packs: at most this many reference episodes, drawn across templates
    examples: int = 6000
    batch_size: int = 32
    learning_rate: float = 3e-3
    max_difficulty: int = (
        0  # multi-turn packs: warm start on reference episodes up to this difficulty (0: all)
    )
    # the teacher's rate of ordinary mistakes: packs with a teacher (e.g. tiny-functions), and the
    # episode teacher of multi-turn packs (a wrong entity or number, a wrong answer, stopping early)
    bug_rate: float = 0.3
    # which mistakes the episode teacher makes: "argument" (a wrong entity or number in the last tool
    # turn), "answer" (a wrong final answer), "stop_early" (ending before the last tool turn)
    episode_mistakes: list[str] = field(default_factory=lambda: list(EPISODE_MISTAKES))
    # the first `clean_steps` of the `steps` train on the teacher without mistakes (bug_rate 0); the
    # rest on the configured teacher, with a fresh optimiser: the skill forms on clean examples
    # before the mistakes are learnt (0: one stage)
    clean_steps: int = 0
    # multi-turn packs: lay a batch's teacher episodes end to end in rows (each attends only to
    # itself) instead of padding every row to the longest prompt plus the longest episode; the same
    # batches and loss, fewer tokens computed (rlvr/trainer/packing.py)
    packed: bool = False


@dataclass
class GRPOConfig:
    steps: int = 40
    tasks_per_step: int = 16
    group_size: int = 6  # G for the easiest tasks
    group_size_max: int = 10  # G for the hardest tasks (linear in difficulty); <= group_size: fixed G
    temperature: float = 1.0
    max_new_tokens: int = 20
    learning_rate: float = 5e-4
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    num_iterations: int = 2  # mu: optimiser passes over each rollout
    epsilon_low: float = 0.2
    epsilon_high: float = 0.28
    beta: float = 0.0  # k3 KL to the reference policy; 0 skips the reference entirely
    lr_schedule: LRSchedule = "constant"  # after warmup: constant, or linear / cosine decay to 0
    warmup_steps: int = 0  # linear warmup from 0 over this many optimiser steps
    kl_estimator: KLEstimator = "k3"  # k3 | k3_unbiased (k3 weighted by the ratio pi / pi_old)
    # none: group | batch | none (Dr. GRPO: partial-credit noise in all-wrong groups stays small)
    scale_rewards: RewardScaling = "none"
    loss_type: LossType = "grpo"
    truncation: TruncationHandling = "mask"  # none | mask (drop from the loss) | penalty (DAPO soft overlong)
    # completions: one graded completion per sample, a whole step graded in one batch (single-turn
    # families); episodes: turns through the Gymnasium env; auto: episodes for multi-turn families
    rollout: RolloutKind = "auto"
    max_turns: int = 0  # episodes: most assistant turns; 0 = the env's own limit (each task's)
    max_difficulty: int = 0  # train on tasks up to this difficulty (0: all); the held-out split is untouched
    max_episode_tokens: int = 768  # episodes: assistant + observation tokens after the prompt
    overlong_buffer: int = 4
    overlong_penalty: float = 1.0
    dynamic_sampling: bool = False  # DAPO: replace zero-variance groups with fresh tasks
    max_resample_rounds: int = 3
    # 1: step k's completions are graded in a worker thread while step k+1's are generated, so each
    # step learns from episodes one update old, weighted by the ratio to the policy that sampled them
    # (single-turn rollouts; 0: generate, grade, update one after the other)
    max_staleness: int = 0
    # episodes: the running episodes split into this many lanes that take turns, so one lane's env
    # steps (tool calls, grading) run in worker threads while the next lane generates (1: one batch)
    episode_lanes: int = 1
    micro_batch_size: int = 64
    micro_batch_tokens: int = 0  # > 0: also cap rows x padded length per forward pass (long episodes)
    # the update's forward passes on packed rows (each episode's real tokens end to end, attending only
    # to itself) instead of [padded prompt | padded completion]: the same log-probs on fewer tokens
    packed: bool = False
    curriculum: bool = True  # start with the easiest tasks, raise difficulty as pass rate rises
    curriculum_threshold: float = 0.6
    curriculum_window: int = 2


@dataclass
class RunConfig:
    pack: str = "tiny-functions"
    env: str = ""  # the Gymnasium env episodes run in; "" = the pack family's (rlvr/Tool-v0 for tool packs)
    train_split: str = "train"
    eval_split: str = "test"
    seed: int = 0
    checkpoint_every: int = 5
    eval_samples: int = 4  # sampled completions per held-out task (pass rate = mean of passed)
    eval_max_tasks: int = 0  # 0 = every held-out task
    eval_max_difficulty: int = 0  # held-out tasks up to this difficulty (0: all)
    grader_jobs: int = 0  # sandbox workers; 0 = one per core
    grader_types: bool = True  # run the type-checker layer
    sandbox: Sandbox = "local"
    executor: Executor = "local"  # where graders run
    ray_address: str = ""  # with executor = "ray": a cluster address; "" = a private loopback cluster
    threads: int = 1  # torch CPU threads (tiny matrices gain nothing from more); 0 = torch's default


@dataclass
class CanaryConfig:
    # the share of each step's completions spent on canaries (impossible variants of the step's own
    # tasks, sampled beside the batch and never trained on; rlvr/hacking/canaries.py); 0 turns them off
    fraction: float = 0.02
    # stop the run when the canary pass rate over the last `window` steps exceeds this (1: never)
    stop_above: float = 0.5
    window: int = 5


@dataclass
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    sft: SFTConfig = field(default_factory=SFTConfig)
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    run: RunConfig = field(default_factory=RunConfig)
    canaries: CanaryConfig = field(default_factory=CanaryConfig)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def sft_steps(self) -> int:
        if self.sft.steps >= 0:
            return self.sft.steps
        return 500 if not self.model.path else 0


SECTIONS = {f.name: f for f in fields(TrainConfig)}
# The choices of every Literal-typed setting (annotations are strings under `from __future__`).
CHOICES: dict[str, tuple[str, ...]] = {
    "dtype": get_args(DType),
    "template": get_args(Template),
    "tiny_pretokenizer": get_args(PreTokenizer),
    "lr_schedule": get_args(LRSchedule),
    "kl_estimator": get_args(KLEstimator),
    "scale_rewards": get_args(RewardScaling),
    "loss_type": get_args(LossType),
    "truncation": get_args(TruncationHandling),
    "rollout": get_args(RolloutKind),
    "sandbox": get_args(Sandbox),
    "executor": get_args(Executor),
}


def _coerce(section: str, key: str, value: Any, default: Any) -> Any:
    where = f"[{section}] {key}"
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{where} must be a list of strings, got {value!r}")
        return list(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an integer, got {value!r}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where} must be a number, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {value!r}")
    return value


def _unknown(name: str, choices: list[str], what: str) -> ConfigError:
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"unknown {what} {name!r}{hint}; valid: {', '.join(sorted(choices))}")


def apply(config: TrainConfig, data: dict[str, Any]) -> TrainConfig:
    """Overlay a {section: {key: value}} mapping onto `config`, checking names and types."""
    for section, values in data.items():
        if section not in SECTIONS:
            raise _unknown(section, list(SECTIONS), "config section")
        if not isinstance(values, dict):
            raise ConfigError(f"[{section}] must be a table of settings, got {values!r}")
        target = getattr(config, section)
        names = {f.name for f in fields(target)}
        for key, value in values.items():
            if key not in names:
                raise _unknown(key, list(names), f"setting in [{section}]")
            setattr(target, key, _coerce(section, key, value, getattr(target, key)))
    return config


def load_toml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"config file {str(path)!r} does not exist; pass a TOML file (see README, `rlvr train`)"
        )
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {str(path)!r} is not valid TOML: {exc}") from exc


def parse_assignment(text: str) -> dict[str, Any]:
    """`grpo.steps=10` -> {"grpo": {"steps": 10}} (the value is read as a TOML value, or a string)."""
    name, sep, raw = text.partition("=")
    section, dot, key = name.strip().partition(".")
    if not sep or not dot or not key:
        raise ConfigError(f"--set expects SECTION.KEY=VALUE (e.g. grpo.steps=10), got {text!r}")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return {section: {key: value}}


def validate(config: TrainConfig) -> None:
    """Range and choice checks that need no files; raises ConfigError listing every problem."""
    g, m, s, r = config.grpo, config.model, config.sft, config.run
    problems: list[str] = []

    def need(ok: bool, message: str) -> None:
        if not ok:
            problems.append(message)

    need(g.steps >= 0, "[grpo] steps must be >= 0")
    need(g.tasks_per_step >= 1, "[grpo] tasks_per_step must be >= 1")
    need(g.group_size >= 2, "[grpo] group_size must be >= 2 (a group of one has no relative signal)")
    need(g.temperature > 0, "[grpo] temperature must be > 0 (sampling needs it; use eval for greedy)")
    need(g.max_new_tokens >= 1, "[grpo] max_new_tokens must be >= 1")
    need(g.learning_rate > 0, "[grpo] learning_rate must be > 0")
    need(g.num_iterations >= 1, "[grpo] num_iterations (mu) must be >= 1")
    need(0 <= g.epsilon_low < 1, "[grpo] epsilon_low must be in [0, 1)")
    need(g.epsilon_high >= 0, "[grpo] epsilon_high must be >= 0")
    need(g.beta >= 0, "[grpo] beta must be >= 0")
    for name, section in (("model", m), ("grpo", g), ("run", r)):
        for key, choices in CHOICES.items():
            value = getattr(section, key, None)
            need(
                value is None or value in choices,
                f"[{name}] {key} must be one of {', '.join(choices)}, got {value!r}",
            )
    need(g.warmup_steps >= 0, "[grpo] warmup_steps must be >= 0")
    need(g.max_turns >= 0, "[grpo] max_turns must be >= 0 (0 = the env's own limit)")
    need(g.max_difficulty >= 0, "[grpo] max_difficulty must be >= 0 (0 = every difficulty)")
    need(s.max_difficulty >= 0, "[sft] max_difficulty must be >= 0 (0 = every difficulty)")
    need(g.max_episode_tokens >= g.max_new_tokens, "[grpo] max_episode_tokens must be >= max_new_tokens")
    need(g.micro_batch_size >= 1, "[grpo] micro_batch_size must be >= 1")
    need(
        g.max_staleness in (0, 1),
        "[grpo] max_staleness must be 0 (no overlap) or 1 (grading overlaps the next step's generation)",
    )
    need(g.episode_lanes >= 1, "[grpo] episode_lanes must be >= 1 (1: every running episode in one batch)")
    need(g.micro_batch_tokens >= 0, "[grpo] micro_batch_tokens must be >= 0 (0: rows only)")
    need(g.max_grad_norm > 0, "[grpo] max_grad_norm must be > 0")
    need(0 <= g.curriculum_threshold <= 1, "[grpo] curriculum_threshold must be in [0, 1]")
    need(g.curriculum_window >= 1, "[grpo] curriculum_window must be >= 1")
    need(g.max_resample_rounds >= 0, "[grpo] max_resample_rounds must be >= 0")
    need(m.lora_rank >= 0, "[model] lora_rank must be >= 0")
    need(m.tiny_max_token_length >= 0, "[model] tiny_max_token_length must be >= 0 (0: no cap)")
    need(m.tiny_hidden % max(m.tiny_heads, 1) == 0, "[model] tiny_hidden must be a multiple of tiny_heads")
    need(s.batch_size >= 1 and s.examples >= 1, "[sft] batch_size and examples must be >= 1")
    need(0 <= s.bug_rate <= 1, "[sft] bug_rate must be in [0, 1]")
    need(
        s.clean_steps == 0 or 0 < s.clean_steps < config.sft_steps,
        f"[sft] clean_steps must be 0 or between 1 and steps - 1 (steps = {config.sft_steps}), got {s.clean_steps}",
    )
    unknown_mistakes = [kind for kind in s.episode_mistakes if kind not in EPISODE_MISTAKES]
    need(
        bool(s.episode_mistakes) and not unknown_mistakes,
        f"[sft] episode_mistakes must be a non-empty list of {', '.join(EPISODE_MISTAKES)}, got {s.episode_mistakes!r}",
    )
    need(r.checkpoint_every >= 1, "[run] checkpoint_every must be >= 1")
    c = config.canaries
    need(
        0 <= c.fraction <= 1 and 0 <= c.stop_above <= 1,
        "[canaries] fraction and stop_above must be in [0, 1]",
    )
    need(c.window >= 1, "[canaries] window must be >= 1")
    need(r.eval_samples >= 0, "[run] eval_samples must be >= 0")
    need(r.eval_max_difficulty >= 0, "[run] eval_max_difficulty must be >= 0 (0: every held-out task)")
    need(r.grader_jobs >= 0 and r.threads >= 0, "[run] grader_jobs and threads must be >= 0")
    if problems:
        raise ConfigError("invalid training config:\n  - " + "\n  - ".join(problems))


def build_config(toml_path: str | Path | None = None, assignments: list[str] | None = None) -> TrainConfig:
    config = TrainConfig()
    if toml_path is not None:
        apply(config, load_toml(toml_path))
    for text in assignments or []:
        apply(config, parse_assignment(text))
    validate(config)
    return config


def from_dict(data: dict[str, Any]) -> TrainConfig:
    """The inverse of `TrainConfig.to_dict` (used on resume)."""
    config = apply(TrainConfig(), data)
    validate(config)
    return config
