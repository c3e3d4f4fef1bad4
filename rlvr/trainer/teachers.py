"""Warm-start teachers: the examples a short supervised phase learns from before GRPO.

Single-turn packs with a teacher offer `sft_examples(count, seed, bug_rate)` -> (prompt, completion)
pairs. A multi-turn pack's tasks carry a reference solution (the hidden spec's `reference`: a list of
turns, each a list of tool calls or a final answer); the teacher plays those turns through the
pack's env, so the warm start sees the very observations the env produces, rendered by the same
template GRPO uses. The loss counts only the teacher's turns, never the observations.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.graders.base import Grader
from rlvr.trainer.episodes import Episode, TurnTemplate, first_message


def has_reference_turns(pack: TaskPack, split: str) -> bool:
    tasks = pack.tasks(split)
    return bool(tasks) and all(isinstance(t.hidden.get("reference"), list) for t in tasks)


def reference_turns(task: Task) -> list[str]:
    """The reference solution's turns in the shortest form the env accepts: a list of
    `{"name", "arguments"}` calls, or `{"final_answer": ...}`. A solution that only acts still ends
    with a final answer ("done"), so the episode ends when the work is done."""
    turns = []
    for turn in task.hidden["reference"]:
        if isinstance(turn, list):
            calls = [{"name": call["name"], "arguments": call["arguments"]} for call in turn]
            turns.append(json.dumps(calls))
        else:
            turns.append(json.dumps({"final_answer": str(turn)}))
    if not turns or not turns[-1].startswith('{"final_answer"'):
        turns.append(json.dumps({"final_answer": "done"}))
    return turns


def teacher_transcripts(
    env_id: str, pack: TaskPack, grader: Grader, tasks: list[Task], short_prompts: bool = False
) -> list[tuple[Task, list[dict[str, str]]]]:
    """Each task's reference turns played through its env: the conversation as messages."""
    env = gym.make(env_id, pack=pack, grader=grader, disable_env_checker=True)
    transcripts = []
    try:
        for task in tasks:
            observation, _ = env.reset(options={"task_id": task.id})
            history = [{"role": "user", "content": first_message(task, str(observation), short_prompts)}]
            for turn in reference_turns(task):
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
