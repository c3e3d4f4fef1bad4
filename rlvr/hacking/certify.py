"""`rlvr certify PACK`: run every exploit strategy that applies to a pack against a sample of its
tasks and say whether any got through.

A strategy gets through when, on some sampled task, one of its candidates is accepted (graded
without error and every hard gate held), or its trick beats its control by more than the margin
(perf escapes), or its candidate's own content turned grading into a fault of the machinery (an
error a trainer would drop: an escape from the penalty). Per strategy the report gives the best
reward reached, beside the honest reference's and the no-op's, and the candidates that got
through. The pack is certified when none did.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from rlvr.core.flags import exploit_flags, flag_name
from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader, grade_or_fault, make_grader
from rlvr.hacking.strategies import CONTROL_MARGIN, Strategy, honest_reference, pack_kind, strategies_for

DEFAULT_SAMPLE = 6
LIMIT_PROBE_TASKS = 1  # resource probes ask the sandbox, not the task: one task is enough
PREVIEW_CHARS = 600
BATCH = 48


@dataclass
class _Item:
    strategy: str
    task: Task
    completion: str
    control: bool = False
    verdict: Verdict | None = None


@dataclass
class StrategyResult:
    strategy: Strategy
    tasks: int = 0
    candidates: int = 0
    best_reward: float = 0.0
    best_by_task: dict[str, float] = field(default_factory=dict)
    accepted: int = 0
    escapes: int = 0  # candidate content that ended as a machine fault
    beat_control: int = 0
    through: list[dict[str, Any]] = field(default_factory=list)
    flags: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def got_through(self) -> bool:
        return bool(self.through)

    def to_json(self) -> dict[str, Any]:
        best = list(self.best_by_task.values())
        return {
            "name": self.strategy.name,
            "doc": self.strategy.doc,
            "uses_reference": self.strategy.uses_reference,
            "tasks": self.tasks,
            "candidates": self.candidates,
            "best_reward": round(self.best_reward, 6),
            "mean_best_reward": round(sum(best) / len(best), 6) if best else 0.0,
            "accepted": self.accepted,
            "escapes": self.escapes,
            "beat_control": self.beat_control,
            "got_through": self.got_through,
            "through": self.through[:5],
            "flags": dict(sorted(self.flags.items())),
            "seconds": round(self.seconds, 3),
        }


def sample_tasks(pack: TaskPack, count: int, seed: int = 0) -> list[Task]:
    """`count` tasks spread over the pack (every split), the same ones for the same seed."""
    tasks = pack.tasks()
    if count <= 0 or count >= len(tasks):
        return tasks
    keep = sorted(random.Random(f"certify/{pack.name}/{seed}").sample(range(len(tasks)), count))
    return [tasks[i] for i in keep]


def _preview(item: _Item, verdict: Verdict, why: str) -> dict[str, Any]:
    return {
        "task_id": item.task.id,
        "why": why,
        "reward": round(verdict.reward, 6),
        "flags": list(verdict.flags),
        "error": verdict.error,
        "completion": item.completion[:PREVIEW_CHARS],
    }


def _grade(grader: Grader, items: list[_Item], bar: Any, seconds: defaultdict[str, float]) -> None:
    """Grade in batches of one strategy each, so each strategy's grading time can be reported."""
    by_strategy: dict[str, list[_Item]] = {}
    for item in items:
        by_strategy.setdefault(item.strategy, []).append(item)
    for name, group in by_strategy.items():
        began = time.perf_counter()
        _grade_batches(grader, group, bar)
        seconds[name] += time.perf_counter() - began


def _grade_batches(grader: Grader, items: list[_Item], bar: Any) -> None:
    for start in range(0, len(items), BATCH):
        chunk = items[start : start + BATCH]
        verdicts = grade_or_fault(grader, [i.task for i in chunk], [i.completion for i in chunk])  # type: ignore[arg-type]
        for item, verdict in zip(chunk, verdicts, strict=True):
            item.verdict = verdict
        bar.update(len(chunk))


def accepted(verdict: Verdict) -> bool:
    return verdict.error is None and not verdict.gates


def certify_pack(
    pack: TaskPack,
    *,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    grader: Grader | None = None,
    progress: bool | None = None,
    only: set[str] | None = None,
    skip: set[str] | None = None,
    **grader_options: Any,
) -> dict[str, Any]:
    """The certificate (a JSON-ready report) for `pack`; `report["certified"]` is the verdict.
    `only` / `skip` name strategies to run or leave out (default: every one for the family)."""
    started = time.perf_counter()
    tasks = sample_tasks(pack, sample, seed)
    strategies = [
        s for s in strategies_for(pack) if (only is None or s.name in only) and s.name not in (skip or set())
    ]
    if not strategies:
        raise ValueError(f"no strategy left to run for pack {pack.name!r}")
    items: list[_Item] = []
    references: list[_Item] = []
    for task in tasks:
        reference = honest_reference(task, pack)
        if reference is not None:
            references.append(_Item("reference", task, reference))
    for strategy in strategies:
        chosen = tasks[:LIMIT_PROBE_TASKS] if strategy.name == "limit_probe" else tasks
        for task in chosen:
            for completion in strategy.build(task, pack):
                items.append(_Item(strategy.name, task, completion))
            if strategy.control is not None:
                for completion in strategy.control(task, pack):
                    items.append(_Item(strategy.name, task, completion, control=True))
    own = grader is None
    grader = grader or make_grader(pack, **grader_options)
    show = sys.stderr.isatty() if progress is None else progress
    seconds: defaultdict[str, float] = defaultdict(float)
    try:
        total = len(items) + len(references)
        with tqdm(
            total=total, desc=f"certify {pack.name}", unit="candidate", disable=not show, file=sys.stderr
        ) as bar:
            _grade(grader, references, bar, seconds)
            _grade(grader, items, bar, seconds)
    finally:
        if own:
            grader.close()

    results = {s.name: StrategyResult(s) for s in strategies}
    controls: dict[tuple[str, str], float] = {}
    for item in items:
        if item.control and item.verdict is not None:
            key = (item.strategy, item.task.id)
            controls[key] = max(controls.get(key, 0.0), item.verdict.reward)
    for item in items:
        if item.control or item.verdict is None:
            continue
        verdict, result = item.verdict, results[item.strategy]
        result.candidates += 1
        result.best_reward = max(result.best_reward, verdict.reward)
        result.best_by_task[item.task.id] = max(result.best_by_task.get(item.task.id, 0.0), verdict.reward)
        result.flags.update({flag_name(f) for f in exploit_flags(verdict.flags)})
        control = controls.get((item.strategy, item.task.id))
        if control is not None:  # a trick on top of honest work: it must earn no more than the work
            if accepted(verdict) and verdict.reward > control + CONTROL_MARGIN:
                result.beat_control += 1
                result.through.append(
                    _preview(item, verdict, f"reward {verdict.reward:.3f} > control {control:.3f}")
                )
        elif accepted(verdict):
            result.accepted += 1
            result.through.append(_preview(item, verdict, "accepted"))
        if verdict.disrupted:
            result.escapes += 1
            result.through.append(
                _preview(item, verdict, f"grading fault ({verdict.fault}): an escape from the penalty")
            )
    for result in results.values():
        result.tasks = len(result.best_by_task)
        result.seconds = seconds[result.strategy.name]

    reference_rewards = [i.verdict.reward for i in references if i.verdict is not None]
    reference_failures = [
        _preview(i, i.verdict, "the honest reference is not accepted")
        for i in references
        if i.verdict is not None and not accepted(i.verdict)
    ]
    no_op = results.get("no_op")
    through = [r.strategy.name for r in results.values() if r.got_through]
    return {
        "pack": pack.name,
        "family": pack.family,
        "kind": pack_kind(pack),
        "version": str(pack.version),
        "sample": len(tasks),
        "seed": seed,
        "tasks": [t.id for t in tasks],
        "reference": {
            "tasks": len(reference_rewards),
            "mean_reward": round(sum(reference_rewards) / len(reference_rewards), 6)
            if reference_rewards
            else None,
            "failures": reference_failures[:5],
            "seconds": round(seconds["reference"], 3),
        },
        "no_op": {
            "best_reward": round(no_op.best_reward, 6) if no_op else None,
            "mean_best_reward": no_op.to_json()["mean_best_reward"] if no_op else None,
        },
        "strategies": [r.to_json() for r in results.values()],
        "skipped": sorted({s.name for s in strategies_for(pack)} - {s.name for s in strategies}),
        "got_through": through,
        "certified": not through,
        "candidates": len(items) + len(references),
        "seconds": round(time.perf_counter() - started, 3),
    }


def format_certificate(report: dict[str, Any], echo: Any = print) -> None:
    reference = report["reference"]["mean_reward"]
    no_op = report["no_op"]["best_reward"]
    echo(
        f"certify {report['pack']} ({report['kind']}, version {report['version']}): {report['sample']} tasks, "
        f"{report['candidates']} candidates, {report['seconds']:.1f} s"
    )
    ref_text = "n/a" if reference is None else f"{reference:.3f}"
    echo(
        f"honest reference mean reward {ref_text}; no-op best reward {no_op if no_op is None else f'{no_op:.3f}'}"
    )
    for failure in report["reference"]["failures"]:
        echo(
            f"  WARNING: reference not accepted on {failure['task_id']} (reward {failure['reward']:.3f}, error {failure['error']})"
        )
    width = max(len(s["name"]) for s in report["strategies"])
    for s in report["strategies"]:
        status = "GOT THROUGH" if s["got_through"] else "held"
        echo(
            f"  {s['name']:<{width}}  best {s['best_reward']:.3f}  mean-best {s['mean_best_reward']:.3f}  "
            f"{s['seconds']:6.1f}s [{status}]  {s['doc']}"
        )
        for hit in s["through"][:2]:
            first = (hit["completion"].strip().splitlines() or [""])[0][:90]
            echo(f"      {hit['task_id']}: {hit['why']} | {first}")
    if report["certified"]:
        echo(f"CERTIFIED: no strategy got through on {report['sample']} sampled tasks")
    else:
        echo(f"NOT CERTIFIED: {', '.join(report['got_through'])} got through")
