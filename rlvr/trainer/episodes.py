"""Multi-turn episodes through the Gymnasium environments, many at once.

    reset one env per episode onto its task; the first observation is the prompt
    while any episode runs, lane by lane (`lanes`, 1 by default):
        sample the next assistant turn of the lane's running episodes in one batch (left padded),
            at most `max_new_tokens` and at most what is left of the episode's token budget
        step each episode's env with its turn's text (in worker threads while the next lane samples)
        append the observation's tokens: context for the next turn, never part of the loss
    an episode ends when its env ends it (final answer, turn limit) or its token budget runs out

Tokens are kept exactly as sampled (never decoded and re-encoded), so the log-probs the loss
computes later are those of the tokens the policy produced. The episode's reward is the env's
reward on its last step; an episode cut by the token budget is a scored failure (reward 0, flag
`episode_token_budget`), which `truncation` then masks or penalises like a truncated completion.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import gymnasium as gym
import torch

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict, grader_fault
from rlvr.envs.training import Grader
from rlvr.trainer.rollout import Sequences, generate_ids, stop_ids_of

TOKEN_BUDGET_FLAG = "episode_token_budget"
EndReason = Literal["env", "turn_limit", "token_budget"]


# ------------------------------------------------------------------------------------- templates
class TurnTemplate(Protocol):
    """How a conversation becomes tokens: the first prompt, then each observation after a turn."""

    def prompt_ids(self, prompt: str) -> list[int]: ...

    def observation_ids(self, history: list[dict[str, str]], observation: str) -> list[int]: ...


class PlainTemplate:
    """For models without a chat template (the tiny demo model): the prompt as it is, each assistant
    turn ends with its stop token (sampled), each observation follows on its own lines. A single-turn
    episode is then exactly the prompt and one completion, as in the completions rollout."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def prompt_ids(self, prompt: str) -> list[int]:
        return list(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])

    def observation_ids(self, history: list[dict[str, str]], observation: str) -> list[int]:
        return list(self.tokenizer(f"\n{observation}\n", add_special_tokens=False)["input_ids"])


def compact_observation(observation: str) -> str:
    """Tool results as one `name -> result` line per call (`error -> message` for a refused call or
    a malformed turn); the result keeps its JSON form. What it drops: the `role`/`tool_call_id`
    wrapper, the same for every call. Anything else is returned as it is."""
    try:
        value = json.loads(observation)
    except ValueError:
        return observation
    if isinstance(value, dict) and set(value) == {"error"}:
        return f"error -> {value['error']}"
    if not isinstance(value, list) or not all(isinstance(m, dict) and "name" in m for m in value):
        return observation
    lines = []
    for message in value:
        try:
            content = json.loads(message.get("content", ""))
        except (TypeError, ValueError):
            content = message.get("content")
        if isinstance(content, dict) and set(content) == {"error"}:
            lines.append(f"{message['name']} -> error: {content['error']}")
        elif isinstance(content, dict) and set(content) == {"result"}:
            lines.append(f"{message['name']} -> {json.dumps(content['result'], ensure_ascii=False)}")
        else:
            lines.append(f"{message['name']} -> {json.dumps(content, ensure_ascii=False)}")
    return "\n".join(lines)


class CompactTemplate(PlainTemplate):
    """Plain text with each observation's tool results in `compact_observation`'s form: for a small
    model, a short context (the call ids and message wrapper repeat on every call and carry nothing)."""

    def observation_ids(self, history: list[dict[str, str]], observation: str) -> list[int]:
        return super().observation_ids(history, compact_observation(observation))


class ChatTemplate:
    """The tokenizer's own chat template. The tokens after an assistant turn are the text the
    template adds between that turn's stop token and the next assistant turn: the rest of the
    assistant message's closing, the observation message (role `observation_role`) and the next
    generation prompt."""

    def __init__(self, tokenizer: Any, stop_texts: Sequence[str], observation_role: str = "tool") -> None:
        self.tokenizer = tokenizer
        self.stop_texts = [text for text in stop_texts if text]
        self.observation_role = observation_role

    def render(self, messages: list[dict[str, str]], generation_prompt: bool) -> str:
        return str(
            self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=generation_prompt
            )
        )

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt_ids(self, prompt: str) -> list[int]:
        return self.encode(self.render([{"role": "user", "content": prompt}], generation_prompt=True))

    def observation_ids(self, history: list[dict[str, str]], observation: str) -> list[int]:
        before = self.render(history, generation_prompt=False)
        after = self.render(
            [*history, {"role": self.observation_role, "content": observation}], generation_prompt=True
        )
        if not after.startswith(before):
            raise ValueError(
                "the chat template renders earlier turns differently once a message is added; "
                "set [model] template = 'plain'"
            )
        closing = before
        content = history[-1]["content"]
        if content and content in before:
            closing = before[before.rindex(content) + len(content) :]
        for stop in self.stop_texts:  # the stop token itself was sampled and is already in context
            if closing.startswith(stop):
                closing = closing[len(stop) :]
                break
        return self.encode(closing + after[len(before) :])


def make_template(tokenizer: Any, kind: str, stop_ids: Sequence[int]) -> TurnTemplate:
    """`auto`: the tokenizer's chat template when it has one, else plain text; `compact`: plain
    text with tool results in short form."""
    if kind == "compact":
        return CompactTemplate(tokenizer)
    if kind == "chat" or (kind == "auto" and getattr(tokenizer, "chat_template", None)):
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("[model] template = 'chat' but the tokenizer has no chat template")
        return ChatTemplate(tokenizer, [tokenizer.decode([i]) for i in stop_ids])
    return PlainTemplate(tokenizer)


def first_message(task: Task, observation: str, short: bool) -> str:
    """The env's first observation, or with `short` the task's bare instruction (`meta["instruction"]`:
    the task without the tool schemas, which are the same for every task of a world) when it has one.
    A tiny model learns the tools from its warm start; a real model should see the full prompt."""
    return str(task.meta.get("instruction", observation)) if short else observation


# ------------------------------------------------------------------------------------- episodes
@dataclass
class Episode:
    task: Task
    prompt_ids: list[int]
    ids: list[int] = field(default_factory=list)  # after the prompt: assistant and observation tokens
    sampled: list[bool] = field(default_factory=list)  # per token of `ids`: the policy produced it
    history: list[dict[str, str]] = field(default_factory=list)
    turn_tokens: list[int] = field(default_factory=list)
    tool_calls: Counter[str] = field(default_factory=Counter)
    malformed_turns: int = 0
    reward: float = 0.0
    verdict: Verdict | None = None
    ended_by: EndReason | None = None
    last_turn_cut: bool = False  # the last assistant turn had no stop token within its budget

    @property
    def running(self) -> bool:
        return self.ended_by is None

    @property
    def truncated(self) -> bool:
        """Treated like a truncated completion: cut by the token budget, or the last turn ran out."""
        return self.ended_by == "token_budget" or self.last_turn_cut

    def add(self, ids: Sequence[int], sampled: bool) -> None:
        self.ids.extend(int(i) for i in ids)
        self.sampled.extend([sampled] * len(ids))

    def end_by_budget(self) -> None:
        self.ended_by = "token_budget"
        self.reward = 0.0
        self.verdict = Verdict(
            task_id=self.task.id,
            reward=0.0,
            passed=False,
            feedback="the episode ran out of its token budget",
            flags=[TOKEN_BUDGET_FLAG],
        )


class EpisodeRunner:
    """One env per concurrent episode (kept between calls), all sharing one grader; with `lanes` > 1
    one lane's env steps run in worker threads while the next lane samples its turns."""

    def __init__(
        self,
        env_id: str,
        pack: TaskPack,
        grader: Grader,
        tokenizer: Any,
        template: TurnTemplate,
        *,
        split: str | None = None,
        max_turns: int = 0,
        stop_ids: Sequence[int] = (),
        short_prompts: bool = False,
        lanes: int = 1,
    ) -> None:
        self.env_id, self.pack, self.grader = env_id, pack, grader
        self.tokenizer, self.template = tokenizer, template
        self.split, self.max_turns, self.short_prompts = split, max_turns, short_prompts
        self.stop_ids = stop_ids_of(tokenizer, stop_ids)
        self.episode_budget = 0
        self.envs: list[gym.Env[Any, Any]] = []
        self.lanes = max(1, lanes)
        # env steps run here unless lanes can overlap them with sampling; only the env step leaves
        # this thread (the tokenizer is used from this thread alone)
        self.pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="rlvr-env") if lanes > 1 else None

    def _envs(self, count: int) -> list[gym.Env[Any, Any]]:
        options: dict[str, Any] = {"pack": self.pack, "grader": self.grader, "split": self.split}
        if self.max_turns:
            options["max_turns"] = self.max_turns
        while len(self.envs) < count:
            self.envs.append(gym.make(self.env_id, disable_env_checker=True, **options))
        return self.envs[:count]

    def run(
        self,
        policy: Any,
        tasks: list[Task],
        *,
        temperature: float,
        max_new_tokens: int,
        max_episode_tokens: int,
        batch_size: int,
        greedy: bool = False,
    ) -> list[Episode]:
        """One episode per entry of `tasks` (a task repeated G times gives its group).

        The episodes are dealt into `lanes` that take turns: a lane waits for its env steps of the
        last turn, samples its next turns (micro-batched), and hands the env steps to the worker
        threads, then the next lane samples while they run. Each lane samples only once all of its
        own steps are back, in a fixed order, so a seed gives the same episodes with any timing."""
        envs = self._envs(len(tasks))
        self.episode_budget = max_episode_tokens
        episodes = []
        for env, task in zip(envs, tasks, strict=True):
            observation, _ = env.reset(options={"task_id": task.id})
            prompt = first_message(task, str(observation), self.short_prompts)
            episode = Episode(task, self.template.prompt_ids(prompt))
            episode.history.append({"role": "user", "content": prompt})
            episodes.append(episode)
        lanes = [list(range(len(tasks)))[lane :: self.lanes] for lane in range(self.lanes)]
        in_flight: dict[int, Future[tuple[Any, ...]]] = {}  # episode index -> its env step
        while in_flight or any(e.running for e in episodes):
            for lane in lanes:
                for index in lane:  # the lane's env steps of its last turn, back in order
                    if index in in_flight:
                        self._observe(envs[index], episodes[index], in_flight.pop(index).result())
                running = [i for i in lane if episodes[i].running]
                for start in range(0, len(running), batch_size):
                    chunk = running[start : start + batch_size]
                    for index, ids, budget in zip(
                        chunk,
                        *self._sample(policy, episodes, chunk, temperature, max_new_tokens, greedy),
                        strict=True,
                    ):
                        text = self._turn(episodes[index], ids, budget, max_new_tokens)
                        if text is not None:
                            in_flight[index] = self._step(envs[index], text)
        return episodes

    def _sample(
        self,
        policy: Any,
        episodes: list[Episode],
        chunk: list[int],
        temperature: float,
        max_new_tokens: int,
        greedy: bool,
    ) -> tuple[list[list[int]], list[int]]:
        """The next turn of each episode of `chunk` in one batch: (its sampled ids, its turn budget)."""
        pad_id = int(self.tokenizer.pad_token_id)
        room = [self.episode_budget - len(episodes[i].ids) for i in chunk]
        contexts = [episodes[i].prompt_ids + episodes[i].ids for i in chunk]
        width = max(len(c) for c in contexts)
        prompt_ids = torch.tensor([[pad_id] * (width - len(c)) + c for c in contexts])
        prompt_mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
        turns = generate_ids(
            policy,
            self.tokenizer,
            prompt_ids,
            prompt_mask,
            temperature,
            min(max_new_tokens, max(room)),
            greedy,
            self.stop_ids,
        )
        ids = [turns.completion_ids[row][turns.mask[row].bool()].tolist() for row in range(len(chunk))]
        return ids, [min(max_new_tokens, left) for left in room]

    def _step(self, env: gym.Env[Any, Any], text: str) -> Future[tuple[Any, ...]]:
        """The env step of one turn (its tool calls; the grading on a final answer): in a worker thread
        when there are lanes to overlap it with, else here."""
        if self.pool is not None:
            return self.pool.submit(env.step, text)
        done: Future[tuple[Any, ...]] = Future()
        done.set_result(env.step(text))
        return done

    def _turn(self, episode: Episode, ids: list[int], budget: int, max_new_tokens: int) -> str | None:
        """Record one sampled turn (`ids`: through its stop token, or all it generated); the text to step
        the env with, or None when the turn ran the episode out of its token budget."""
        stopped = bool(ids) and ids[-1] in self.stop_ids and len(ids) <= budget
        ids = ids[:budget]
        episode.add(ids, sampled=True)
        episode.turn_tokens.append(len(ids))
        if not stopped and budget < max_new_tokens:  # the episode's budget, not the turn's, ran out
            episode.end_by_budget()
            return None
        episode.last_turn_cut = not stopped
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        episode.history.append({"role": "assistant", "content": text})
        return text

    def _observe(self, env: gym.Env[Any, Any], episode: Episode, step: tuple[Any, ...]) -> None:
        """What the env answered a turn: the episode's end and verdict, or the observation as context."""
        observation, reward, terminated, truncated, info = step
        episode.tool_calls.update(info.get("tool_calls") or [])
        episode.malformed_turns += bool(info.get("malformed"))
        if terminated or truncated:
            episode.ended_by = "env" if terminated else "turn_limit"
            episode.reward = float(reward)
            verdict = getattr(env.unwrapped, "last_verdict", None)
            episode.verdict = verdict or grader_fault(
                episode.task.id, "the env ended the episode without a verdict"
            )
            return
        following = self.template.observation_ids(episode.history, str(observation))
        episode.history.append({"role": "tool", "content": str(observation)})
        left = self.episode_budget - len(episode.ids)
        episode.add(following[:left], sampled=False)
        if len(following) >= left:
            episode.end_by_budget()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        for env in self.envs:
            env.close()
        self.envs = []


def episode_sequences(episodes: list[Episode], pad_id: int) -> Sequences:
    """The training layout: [left-padded prompt | assistant and observation tokens]; `mask` holds
    only the sampled tokens, `attention` every real one."""
    prompt_width = max(len(e.prompt_ids) for e in episodes)
    width = max(max(len(e.ids) for e in episodes), 1)
    prompt_ids = torch.tensor(
        [[pad_id] * (prompt_width - len(e.prompt_ids)) + e.prompt_ids for e in episodes]
    )
    prompt_mask = torch.tensor(
        [[0] * (prompt_width - len(e.prompt_ids)) + [1] * len(e.prompt_ids) for e in episodes]
    )
    ids = torch.tensor([e.ids + [pad_id] * (width - len(e.ids)) for e in episodes])
    mask = torch.tensor([[float(s) for s in e.sampled] + [0.0] * (width - len(e.ids)) for e in episodes])
    attention = torch.tensor([[1.0] * len(e.ids) + [0.0] * (width - len(e.ids)) for e in episodes])
    truncated = torch.tensor([e.truncated for e in episodes], dtype=torch.bool)
    return Sequences(prompt_ids, prompt_mask, ids, mask, truncated, attention)


def episode_metrics(episodes: list[Episode]) -> dict[str, float]:
    """What an agent run is watched by: turns, tool calls (by name), malformed turns, tokens per
    turn, how episodes ended, and whether long episodes succeed."""
    if not episodes:
        return {}
    count = len(episodes)
    turns = sum(len(e.turn_tokens) for e in episodes)
    passed = [e for e in episodes if e.verdict is not None and e.verdict.passed]
    failed = [e for e in episodes if not (e.verdict is not None and e.verdict.passed)]
    calls: Counter[str] = Counter()
    for e in episodes:
        calls.update(e.tool_calls)

    def mean_length(group: list[Episode]) -> float:
        return sum(len(e.ids) for e in group) / len(group) if group else float("nan")

    out = {
        "turns_per_episode": turns / count,
        "tool_calls_per_episode": sum(calls.values()) / count,
        "malformed_turn_rate": sum(e.malformed_turns for e in episodes) / max(turns, 1),
        "tokens_per_turn": sum(sum(e.turn_tokens) for e in episodes) / max(turns, 1),
        "episode_tokens_mean": mean_length(episodes),
        "episode_tokens_passed": mean_length(passed),
        "episode_tokens_failed": mean_length(failed),
        "ended_by_token_budget": sum(e.ended_by == "token_budget" for e in episodes) / count,
        "ended_by_turn_limit": sum(e.ended_by == "turn_limit" for e in episodes) / count,
    }
    for name, number in sorted(calls.items()):
        out[f"tool_calls/{name}"] = number / count
    return out
