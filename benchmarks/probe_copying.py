"""Does the tool demo's warm start copy? An SFT-only probe of `configs/tool.toml` (plus `--set` overrides).

Runs the config's warm start (teacher episodes, tiny tokenizer and model, `[sft]` steps) and, every
`--every` steps, measures on the held-out split (`[run] eval_split`, up to `eval_max_difficulty`):

- copy rate: of the reference's tool-call turns in the clean held-out teacher episodes, the share the
  model reproduces exactly when fed the reference's history and the turn's first token (teacher-forced
  argmax on every later token of the turn, which is what greedy decoding writes from that prefix).
  Forcing the first token takes the teacher's quitting ("done" in place of a call) out of the figure:
  what is left is copying names and numbers from the instruction and the observations;
- at the end, the greedy held-out pass rate of whole episodes through the env (as `rlvr train` reports it).

    python benchmarks/probe_copying.py --set run.seed=2 --set sft.packed=true [--every 600]

`--saved DIR [DIR ...]` measures saved models instead (a run's `warm_start/`, no SFT): the copy rate per
template on the held-out split and on `--trained N` of the training tasks the warm start learnt from -
copying that fails on both is a skill not learnt, copying that fails only held out is memorised.

    python benchmarks/probe_copying.py --saved /tmp/run/warm_start [--trained 264]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from typing import Any

import torch

import rlvr  # noqa: F401  (registers the envs)
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import model as models
from rlvr.trainer import teachers
from rlvr.trainer.agent import env_id_for, make_agent, stop_ids
from rlvr.trainer.config import build_config
from rlvr.trainer.curriculum import up_to_difficulty
from rlvr.trainer.episodes import Episode, make_template
from rlvr.trainer.grpo import make_run_grader, play, task_splits
from rlvr.trainer.packing import PackedBatch, fit_rows, pack_episodes, packed_forward
from rlvr.trainer.sft import supervised_warm_start
from rlvr.trainer.warm_start import teacher_batches, teacher_data


def turn_spans(episode: Episode) -> list[tuple[int, int]]:
    """(start, end) of each assistant turn in prompt + ids coordinates."""
    spans, offset, start = [], len(episode.prompt_ids), None
    for index, sampled in enumerate(episode.sampled):
        if sampled and start is None:
            start = offset + index
        if not sampled and start is not None:
            spans.append((start, offset + index))
            start = None
    if start is not None:
        spans.append((start, offset + len(episode.sampled)))
    return spans


def copy_counts(
    model: Any, episodes: list[Episode], tokenizer: Any, labels: list[str]
) -> tuple[Counter[str], Counter[str]]:
    """(hits, totals) by label (one per episode, e.g. its template) of tool-call turns (a JSON list)
    reproduced exactly after their first token."""
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    with torch.no_grad():
        for start in range(0, len(episodes), 32):
            chunk = episodes[start : start + 32]
            batch: PackedBatch = pack_episodes(chunk, tokenizer.pad_token_id)
            predicted = packed_forward(model, batch).argmax(-1)  # predicted[r, t] is the token at t + 1
            row_of, offset_of = locate(chunk)
            for index, episode in enumerate(chunk):
                tokens = episode.prompt_ids + episode.ids
                row, offset = row_of[index], offset_of[index]
                for first, end in turn_spans(episode):
                    if not tokenizer.decode([tokens[first]]).startswith("["):
                        continue
                    label = labels[start + index]
                    totals[label] += 1
                    guess = predicted[row, offset + first : offset + end - 1].tolist()
                    hits[label] += guess == tokens[first + 1 : end]
    return hits, totals


def copy_rate(model: Any, episodes: list[Episode], tokenizer: Any) -> float:
    """Share of tool-call turns (a JSON list) reproduced exactly after their first token."""
    hits, totals = copy_counts(model, episodes, tokenizer, [""] * len(episodes))
    return hits[""] / max(totals[""], 1)


def measure_saved(config: Any, directories: list[str], trained: int) -> list[dict[str, Any]]:
    """Copy rate per template of each saved model on the held-out split and on `trained` of the
    training tasks the warm start's teacher played (a seeded draw)."""
    pack = load_pack(config.run.pack)
    grader = make_run_grader(config, pack)
    _, eval_tasks = task_splits(config, pack)
    seen = up_to_difficulty(pack.tasks(config.run.train_split), config.sft.max_difficulty)
    splits = {"held_out": eval_tasks, "trained": random.Random(0).sample(seen, min(trained, len(seen)))}
    env = env_id_for(config, pack)
    clean = {
        name: teachers.teacher_transcripts(env, pack, grader, tasks, config.model.short_prompts)
        for name, tasks in splits.items()
    }
    grader.close()
    results = []
    for directory in directories:
        model, tokenizer = models.load_pretrained(directory)
        model.eval()
        template = make_template(tokenizer, config.model.template, stop_ids(config, tokenizer))
        result: dict[str, Any] = {"model": directory}
        for name, transcripts in clean.items():
            episodes = [teachers.teacher_episode(template, tokenizer, t, h) for t, h in transcripts]
            labels = [str(t.meta.get("template", "?")) for t, _ in transcripts]
            hits, totals = copy_counts(model, episodes, tokenizer, labels)
            result[name] = {
                "copy_rate": round(sum(hits.values()) / max(sum(totals.values()), 1), 3),
                "by_template": {k: f"{hits[k]}/{totals[k]}" for k in sorted(totals)},
            }
        print(json.dumps(result), flush=True)
        results.append(result)
    return results


def locate(episodes: list[Episode]) -> tuple[dict[int, int], dict[int, int]]:
    """Row and start offset of each episode in `pack_episodes(episodes)` (the same first-fit rows)."""
    rows = fit_rows([len(e.prompt_ids) + len(e.ids) for e in episodes])
    row_of, offset_of = {}, {}
    for row, members in enumerate(rows):
        offset = 0
        for index in members:
            row_of[index], offset_of[index] = row, offset
            offset += len(episodes[index].prompt_ids) + len(episodes[index].ids)
    return row_of, offset_of


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="configs/tool.toml")
    parser.add_argument("--set", action="append", default=[], dest="assignments")
    parser.add_argument("--every", type=int, default=600)
    parser.add_argument("--out", default="")
    parser.add_argument("--saved", nargs="+", default=[], help="measure these saved models, no SFT")
    parser.add_argument("--trained", type=int, default=264, help="training tasks measured with --saved")
    args = parser.parse_args()
    config = build_config(args.config, args.assignments)
    torch.set_num_threads(config.run.threads)
    if args.saved:
        results = measure_saved(config, args.saved, args.trained)
        if args.out:
            with open(args.out, "w") as handle:
                json.dump(results, handle, indent=2)
        return
    torch.manual_seed(config.run.seed)
    pack = load_pack(config.run.pack)
    grader = make_run_grader(config, pack)
    started = time.perf_counter()
    data, texts = teacher_data(config, pack, grader, config.sft.bug_rate)
    tokenizer = models.build_tokenizer(
        texts, config.model.tiny_vocab, config.model.tiny_pretokenizer, config.model.tiny_max_token_length
    )
    tokenizer.padding_side = "left"
    model = models.build_tiny_model(tokenizer, config.model, config.run.seed)
    models.disable_dropout(model)
    _, eval_tasks = task_splits(config, pack)
    clean = teachers.teacher_transcripts(
        env_id_for(config, pack), pack, grader, eval_tasks, config.model.short_prompts
    )
    template = make_template(tokenizer, config.model.template, stop_ids(config, tokenizer))
    held_out = [teachers.teacher_episode(template, tokenizer, t, h) for t, h in clean]
    records: list[dict[str, Any]] = []

    class Checkpoints:  # the warm start's progress hook: measure every `--every` steps
        step = 0

        def update(self, count: int) -> None:
            self.step += count
            if self.step % args.every == 0 or self.step == config.sft_steps:
                rate = copy_rate(model, held_out, tokenizer)
                records.append({"step": self.step, "copy_rate": rate, "cpu_s": time.process_time()})
                print(json.dumps(records[-1]), flush=True)

        def set_postfix(self, **_: Any) -> None:
            pass

    supervised_warm_start(
        model,
        teacher_batches(config, pack, tokenizer, data),
        steps=config.sft_steps,
        learning_rate=config.sft.learning_rate,
        seed=config.run.seed,
        progress=Checkpoints(),
    )
    agent = make_agent(config, pack, grader, tokenizer)
    with torch.no_grad():
        verdicts = play(model, agent, eval_tasks, config, greedy=True)[1]
    greedy = sum(v.passed for v in verdicts) / len(verdicts)
    summary = {
        "settings": args.assignments,
        "checkpoints": records,
        "greedy_pass": greedy,
        "tasks": len(eval_tasks),
        "wall_s": time.perf_counter() - started,
        "cpu_s": time.process_time(),
    }
    print(json.dumps(summary), flush=True)
    if agent.runner is not None:
        agent.runner.close()
    grader.close()
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(summary, handle, indent=2)


if __name__ == "__main__":
    main()
