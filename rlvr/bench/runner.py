"""Run one benchmark: plan (pack, task, sample) triples, generate and grade the missing ones in
batches, store each sample as it completes, then aggregate and write the report."""

from __future__ import annotations

import sys
import time
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rlvr.bench.metrics import by_task, pack_metrics, task_rows
from rlvr.bench.policies import Generation, Policy, Request
from rlvr.bench.records import failed_record, graded_record, sample_key
from rlvr.bench.report import write_bench_report
from rlvr.bench.store import BenchError, SampleStore, check_run_identity
from rlvr.core.pack import TaskPack, UnknownTaskError
from rlvr.core.types import Task
from rlvr.graders.base import Grader, make_grader
from rlvr.task_packs.registry import load_pack
from rlvr.trainer.candidates import write_grading_record

PackRef = str | TaskPack


@dataclass
class BenchSpec:
    packs: list[PackRef]
    out: Path
    ks: list[int] = field(default_factory=lambda: [1])
    n: int | None = None  # samples per task; default max(ks) for a generating policy, the file's for jsonl
    split: str | None = "test"
    seed: int = 0
    progress: bool | None = None  # None: show a progress bar when stderr is a terminal

    def __post_init__(self) -> None:
        if not self.packs:
            raise BenchError("at least one --pack is required")
        if not self.ks or any(k < 1 for k in self.ks):
            raise BenchError(f"k values must be positive integers, got {self.ks}")
        self.ks = sorted(set(self.ks))
        if self.n is not None and self.n < 1:
            raise BenchError(f"n must be at least 1, got {self.n}")


class GraderCache:
    """One (pack, grader) per pack reference, built on first use and shared across runs of a sweep."""

    def __init__(self, factory: Callable[[TaskPack], Grader] | None = None, **grader_options: Any) -> None:
        self.factory = factory or (lambda pack: make_grader(pack, **grader_options))
        self._packs: dict[str, TaskPack] = {}
        self._graders: dict[str, Grader] = {}

    def pack(self, ref: PackRef) -> TaskPack:
        if isinstance(ref, TaskPack):
            self._packs.setdefault(ref.name, ref)
            return self._packs[ref.name]
        if ref not in self._packs:
            self._packs[ref] = load_pack(ref)
        return self._packs[ref]

    def grader(self, pack: TaskPack) -> Grader:
        if pack.name not in self._graders:
            self._graders[pack.name] = self.factory(pack)
        return self._graders[pack.name]

    def grading_entries(self, refs: list[PackRef]) -> dict[str, dict[str, Any]]:
        """How each pack of `refs` whose grader was built is graded (for the run's grading.json)."""
        entries = {}
        for ref in refs:
            pack = self.pack(ref)
            if pack.name in self._graders:
                entries[pack.name] = (
                    self._graders[pack.name].receipt_book().entry(ref if isinstance(ref, str) else None)
                )
        return entries

    def close(self) -> None:
        for grader in self._graders.values():
            grader.close()
        self._graders.clear()


@dataclass(frozen=True)
class PlannedSample:
    pack: TaskPack | None  # None for a recorded task id that no selected pack holds
    task_id: str
    task: Task | None
    sample: int

    @property
    def key(self) -> tuple[str, str, int]:
        return sample_key(self.pack.name if self.pack else None, self.task_id, self.sample)


def _find_task(packs: list[TaskPack], task_id: str) -> tuple[TaskPack, Task] | None:
    for pack in packs:
        try:
            return pack, pack.get(task_id)
        except UnknownTaskError:
            continue
    return None


def plan_samples(
    spec: BenchSpec, policy: Policy, packs: list[TaskPack]
) -> tuple[list[PlannedSample], list[str]]:
    """Every sample the run needs, and the recorded task ids that no selected pack holds."""
    planned: list[PlannedSample] = []
    unknown: list[str] = []
    recorded_ids = policy.task_ids()
    if recorded_ids is None:
        n = spec.n if spec.n is not None else max(spec.ks)
        if n < max(spec.ks):
            raise BenchError(
                f"n={n} samples per task is fewer than k={max(spec.ks)}: pass@{max(spec.ks)} needs at least "
                f"{max(spec.ks)} samples per task (raise --n or drop that k)"
            )
        for pack in packs:
            tasks = pack.tasks(spec.split)
            if not tasks:
                raise BenchError(
                    f"pack {pack.name!r} has no tasks in split {spec.split!r}; its splits are {pack.splits()}"
                )
            planned += [PlannedSample(pack, t.id, t, i) for t in tasks for i in range(n)]
        return planned, unknown
    for task_id in recorded_ids:
        found = _find_task(packs, task_id)
        count = policy.sample_count(task_id, spec.n)
        if found is None:
            unknown.append(task_id)
            planned += [PlannedSample(None, task_id, None, i) for i in range(count)]
        else:
            pack, task = found
            planned += [PlannedSample(pack, task_id, task, i) for i in range(count)]
    return planned, unknown


def _seed(base: int, item: PlannedSample) -> int:
    return zlib.crc32(f"{base}|{item.key[0]}|{item.task_id}|{item.sample}".encode())


def _generate(batch: list[PlannedSample], policy: Policy, seed: int) -> list[Generation]:
    """One Generation per planned sample; a policy that raises still yields failed generations."""
    if batch[0].pack is None:  # recorded ids in no selected pack: nothing to generate or grade
        return [Generation(text=None) for _ in batch]
    requests = [
        Request(item.task_id, item.task.prompt if item.task else "", item.sample, _seed(seed, item))
        for item in batch
    ]
    try:
        generations = policy.generate(requests)
        if len(generations) != len(requests):
            raise RuntimeError(f"policy returned {len(generations)} generations for {len(requests)} requests")
        return generations
    except Exception as exc:  # policies should not raise; if one does, every sample still gets a record
        return [Generation.failed(f"generation failed: {type(exc).__name__}: {exc}") for _ in batch]


def _grade(
    batch: list[PlannedSample], generations: list[Generation], graders: GraderCache
) -> list[dict[str, Any]]:
    """Grade one generated batch (all of one pack); one record per sample, failures included."""
    pack = batch[0].pack
    if pack is None:
        missing = "the task id is in none of the selected packs"
        return [
            failed_record(None, None, i.task_id, i.sample, g, missing)
            for i, g in zip(batch, generations, strict=True)
        ]
    records: list[dict[str, Any] | None] = [None] * len(batch)
    to_grade = [i for i, g in enumerate(generations) if g.text is not None]
    for i, generation in enumerate(generations):
        if generation.text is None:
            item = batch[i]
            error = generation.error or "generation failed"
            records[i] = failed_record(pack.name, item.task, item.task_id, item.sample, generation, error)
    if to_grade:
        started = time.perf_counter()
        try:
            verdicts = graders.grader(pack).grade_many(
                [batch[i].task_id for i in to_grade], [generations[i].text or "" for i in to_grade]
            )
            if len(verdicts) != len(to_grade):
                raise RuntimeError(
                    f"grader returned {len(verdicts)} verdicts for {len(to_grade)} completions"
                )
        except Exception as exc:  # the grader contract says never raise; a broken grader is still recorded
            for i in to_grade:
                item = batch[i]
                error = f"grading failed: {type(exc).__name__}: {exc}"
                records[i] = failed_record(
                    pack.name, item.task, item.task_id, item.sample, generations[i], error
                )
        else:
            grade_s = round((time.perf_counter() - started) / len(to_grade), 6)
            for i, verdict in zip(to_grade, verdicts, strict=True):
                item = batch[i]
                assert item.task is not None
                record = graded_record(
                    pack.name, item.task, item.sample, generations[i], verdict, pack.family
                )
                record["grade_s"] = grade_s
                records[i] = record
    return [r for r in records if r is not None]


def _generate_and_grade(
    batches: list[list[PlannedSample]],
    policy: Policy,
    graders: GraderCache,
    store: SampleStore,
    seed: int,
    bar: Any,
) -> None:
    """Generate batch i+1 while batch i is graded in a background thread; store each batch in order.
    An interrupted run keeps every batch whose grading finished."""
    in_flight: tuple[Future[list[dict[str, Any]]], int] | None = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-grade") as grading:
        try:
            for batch in batches:
                generations = _generate(batch, policy, seed)
                if in_flight is not None:
                    (future, size), in_flight = in_flight, None
                    store.append(future.result())
                    bar.update(size)
                in_flight = (grading.submit(_grade, batch, generations, graders), len(batch))
        finally:
            if in_flight is not None:
                future, size = in_flight
                store.append(future.result())
                bar.update(size)


def _batches(items: list[PlannedSample], size: int) -> list[list[PlannedSample]]:
    """Consecutive runs of samples from the same pack, at most `size` long."""
    out: list[list[PlannedSample]] = []
    for item in items:
        if out and len(out[-1]) < size and out[-1][0].pack is item.pack:
            out[-1].append(item)
        else:
            out.append([item])
    return out


def _show_progress(setting: bool | None) -> bool:
    return sys.stderr.isatty() if setting is None else setting


def run_bench(
    spec: BenchSpec, policy: Policy, graders: GraderCache, *, label: str = "bench"
) -> dict[str, Any]:
    """Run (or resume) one benchmark into `spec.out` and return what results.json holds."""
    packs = [graders.pack(ref) for ref in spec.packs]
    names = [p.name for p in packs]
    if len(set(names)) != len(names):
        raise BenchError(f"a pack is selected twice: {names}")
    check_run_identity(spec.out, {**policy.identity(), "seed": spec.seed})
    store = SampleStore(spec.out)
    planned, unknown = plan_samples(spec, policy, packs)
    pending = [item for item in planned if not store.is_done(item.key)]
    with tqdm(
        total=len(planned),
        initial=len(planned) - len(pending),
        desc=label,
        unit="sample",
        disable=not _show_progress(spec.progress),
        file=sys.stderr,
    ) as bar:
        _generate_and_grade(
            _batches(pending, max(1, policy.preferred_batch)), policy, graders, store, spec.seed, bar
        )
    write_grading_record(spec.out, graders.grading_entries(spec.packs))  # what `rlvr regrade` rebuilds

    records = {name: _records(store, planned, name) for name in names}
    results = summarize(spec, policy, records, store, unknown, resumed=len(planned) - len(pending))
    results["planned_samples"] = len(planned)
    rows = {name: task_rows(by_task(pack_records), spec.ks) for name, pack_records in records.items()}
    write_bench_report(spec.out, results, records, rows)
    return results


def _records(store: SampleStore, planned: list[PlannedSample], pack_name: str | None) -> list[dict[str, Any]]:
    wanted = [item.key for item in planned if (item.pack.name if item.pack else None) == pack_name]
    return [store.records[key] for key in wanted if key in store.records]


def summarize(
    spec: BenchSpec,
    policy: Policy,
    records: dict[str, list[dict[str, Any]]],
    store: SampleStore,
    unknown: list[str],
    *,
    resumed: int,
) -> dict[str, Any]:
    per_pack = {name: pack_metrics(pack_records, spec.ks) for name, pack_records in records.items()}
    notes: list[str] = []
    if unknown:
        notes.append(
            f"{len(unknown)} recorded task id(s) are in none of the selected packs and were not graded: "
            + ", ".join(unknown[:5])
            + (" ..." if len(unknown) > 5 else "")
        )
    if not policy.recorded and policy.settings.temperature == 0 and (spec.n or max(spec.ks)) > 1:
        notes.append(
            "temperature 0 is greedy decoding: a task's samples are (nearly) identical, so pass@k ~ pass@1"
        )
    if store.unreadable_lines:
        notes.append(
            f"{store.unreadable_lines} unreadable line(s) in samples.jsonl were ignored (re-generated)"
        )
    results: dict[str, Any] = {
        "policy": policy.spec,
        "identity": policy.identity(),
        "k": spec.ks,
        "n": spec.n,
        "split": None if policy.recorded else spec.split,
        "seed": spec.seed,
        "resumed_samples": resumed,
        "unknown_task_ids": unknown,
        "notes": notes,
        "packs": per_pack,
    }
    if len(per_pack) == 1:
        ((name, metrics),) = per_pack.items()
        results = {**results, "pack": name, **{k: v for k, v in metrics.items() if k != "notes"}}
        results["notes"] = notes + metrics["notes"]
    return results
