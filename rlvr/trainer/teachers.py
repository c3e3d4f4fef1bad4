"""Warm-start teachers: the examples a short supervised phase learns from before GRPO.

Single-turn packs with a teacher offer `sft_examples(count, seed, bug_rate)` -> (prompt, completion)
pairs. A multi-turn pack's tasks carry a reference solution (the hidden spec's `reference`: a list of
turns, each a list of tool calls or a final answer); the teacher plays those turns through the
pack's env, so the warm start sees the very observations the env produces, rendered by the same
template GRPO uses. The loss counts only the teacher's turns, never the observations.

Like the single-turn teachers, the episode teacher is noisy: at `bug_rate` a transcript carries one
ordinary agent mistake (`flawed_reference`): an argument naming another entity of the same world (a
sibling file, account or SKU), a number off by a little, a wrong final answer, or an episode that ends
before the work is done. The mistake is played through the env like any turn, so what follows it is
what the env really answers; GRPO's verifier, not the teacher, then decides what is right. `mistakes`
narrows the kinds (e.g. only stopping early).
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Iterator
from typing import Any

import gymnasium as gym

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.envs.training import Grader
from rlvr.trainer.episodes import Episode, TurnTemplate, first_message
from rlvr.trainer.options import EPISODE_MISTAKES


def has_reference_turns(pack: TaskPack, split: str) -> bool:
    tasks = pack.tasks(split)
    return bool(tasks) and all(isinstance(t.hidden.get("reference"), list) for t in tasks)


def reference_turns(task: Task, reference: list[Any] | None = None) -> list[str]:
    """The reference solution's turns (or `reference`'s, a variant of them) in the shortest form the
    env accepts: a list of `{"name", "arguments"}` calls, or `{"final_answer": ...}`. A solution that
    only acts still ends with a final answer ("done"), so the episode ends when the work is done."""
    turns = []
    for turn in task.hidden["reference"] if reference is None else reference:
        if isinstance(turn, list):
            calls = [{"name": call["name"], "arguments": call["arguments"]} for call in turn]
            turns.append(json.dumps(calls))
        else:
            turns.append(json.dumps({"final_answer": str(turn)}))
    if not turns or not turns[-1].startswith('{"final_answer"'):
        turns.append(json.dumps({"final_answer": "done"}))
    return turns


def _shape(text: str) -> str:
    """A string's look with its letters and digits blurred: `/docs/alpha.txt` -> `/a/a.a`,
    `SKU-123` -> `A-0`; entities of one kind share a shape."""
    return re.sub(r"[A-Z]+", "A", re.sub(r"[a-z_]+", "a", re.sub(r"\d+", "0", text)))


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, dict keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _wrong_number(value: int | float, rng: random.Random) -> int | float:
    step = max(1, round(abs(value) * rng.choice([0.1, 0.5])) if abs(value) >= 10 else 1)
    wrong = value + rng.choice([-1, 1]) * step
    return round(wrong, 2) if isinstance(value, float) else int(wrong)


def _wrong_value(value: Any, world_strings: list[str], rng: random.Random) -> Any:
    """A plausible wrong value: another entity of the same shape from the world, or a nearby number;
    `None` when there is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _wrong_number(value, rng)
    if isinstance(value, str):
        if re.fullmatch(r"-?\d+(\.\d+)?", value):
            number = float(value) if "." in value else int(value)
            return str(_wrong_number(number, rng))
        siblings = sorted({s for s in world_strings if s != value and _shape(s) == _shape(value)})
        return rng.choice(siblings) if siblings else None
    return None


def flawed_reference(
    task: Task, rng: random.Random, kinds: tuple[str, ...] = EPISODE_MISTAKES
) -> list[Any] | None:
    """The task's reference turns with one ordinary mistake of one of `kinds`, or `None` when no
    mistake fits: one argument of one call of the last tool turn of an acting task made wrong
    (another entity of the same shape found in the world's state, or a nearby number), a wrong final
    answer, or the episode ended (final answer "done") before its last tool turn. Unless stopping
    early is the only kind, it is one mistake in five."""
    reference = copy.deepcopy(task.hidden["reference"])
    world_strings = list(_strings(task.hidden.get("state", {})))
    tool_turns = [i for i, turn in enumerate(reference) if isinstance(turn, list)]
    # only the last tool turn's arguments, and none when an answer follows: a later turn of the
    # (static) reference would not follow a wrong read, and a read that changes nothing is no mistake
    answers = any(isinstance(turn, str) and turn != "done" for turn in reference)
    slots: list[tuple[dict[str, Any], str] | int] = []
    for index, turn in enumerate(reference):
        if isinstance(turn, list) and index == tool_turns[-1] and not answers:
            if "argument" in kinds:
                slots += [(call["arguments"], key) for call in turn for key in call.get("arguments", {})]
        elif isinstance(turn, str) and "answer" in kinds and _wrong_value(turn, [], rng) is not None:
            slots.append(index)
    rng.shuffle(slots)
    only_stopping = set(kinds) == {"stop_early"}
    if tool_turns and "stop_early" in kinds and (only_stopping or rng.random() < 0.2):
        return [*reference[: tool_turns[-1]], "done"]
    for slot in slots:
        if isinstance(slot, int):
            reference[slot] = _wrong_value(reference[slot], [], rng)
            return reference
        arguments, key = slot
        wrong = _wrong_value(arguments[key], world_strings, rng)
        if wrong is not None:
            arguments[key] = wrong
            return reference
    return None


def teacher_transcripts(
    env_id: str,
    pack: TaskPack,
    grader: Grader,
    tasks: list[Task],
    short_prompts: bool = False,
    bug_rate: float = 0.0,
    seed: int = 0,
    mistakes: tuple[str, ...] = EPISODE_MISTAKES,
) -> list[tuple[Task, list[dict[str, str]]]]:
    """Each task's reference turns played through its env: the conversation as messages. At
    `bug_rate` a transcript plays `flawed_reference` with one of `mistakes` instead (drawn from `seed`)."""
    rng = random.Random(seed)
    env = gym.make(env_id, pack=pack, grader=grader, disable_env_checker=True)
    transcripts = []
    try:
        for task in tasks:
            observation, _ = env.reset(options={"task_id": task.id})
            history = [{"role": "user", "content": first_message(task, str(observation), short_prompts)}]
            flawed = flawed_reference(task, rng, mistakes) if rng.random() < bug_rate else None
            for turn in reference_turns(task, flawed):
                history.append({"role": "assistant", "content": turn})
                observation, _, terminated, truncated, _ = env.step(turn)
                if terminated or truncated:
                    break
                history.append({"role": "tool", "content": str(observation)})
            transcripts.append((task, history))
    finally:
        env.close()
    return transcripts


def transcript_texts(transcripts: list[tuple[Task, list[dict[str, str]]]]) -> list[str]:
    """Every message's text (to train the tiny model's tokenizer on)."""
    return [message["content"] for _, history in transcripts for message in history]


def teacher_episode(
    template: TurnTemplate, tokenizer: Any, task: Task, history: list[dict[str, str]]
) -> Episode:
    """A transcript as an Episode: the teacher's turns (each closed by EOS) are the `sampled` tokens."""
    episode = Episode(task, template.prompt_ids(history[0]["content"]))
    for index, message in enumerate(history[1:], start=1):
        if message["role"] == "assistant":
            ids = tokenizer(message["content"], add_special_tokens=False)["input_ids"]
            episode.add([*ids, tokenizer.eos_token_id], sampled=True)
        else:
            episode.add(template.observation_ids(history[:index], message["content"]), sampled=False)
    return episode
