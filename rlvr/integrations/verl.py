"""rlvr graders as verl's custom reward function.

In a verl config:

    custom_reward_function:
      path: <site-packages>/rlvr/integrations/verl.py   # or any file that re-exports it
      name: compute_score

and in the parquet rows: `data_source = "rlvr/<pack>"`, `reward_model.ground_truth = <task id>`.
verl calls `compute_score(data_source, solution_str, ground_truth, extra_info)` per response and
gets `{"score": reward, "acc": passed, "passed", "grading_error", <one score per layer>}` — the
same keys for every item of a pack, all floats, as verl's `reward_extra_info` needs.
`compute_score_batch` is the list form for verl's batch reward manager.

Graders are built once per (pack, options) and shared by every thread of the process; calls
arriving concurrently from several threads are merged into one `grade_many` batch.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Sequence
from typing import Any

from rlvr.core.pack import TaskPack, UnknownTaskError
from rlvr.core.types import Verdict
from rlvr.executors import make_executor_grader
from rlvr.integrations.batcher import MicroBatcher
from rlvr.integrations.completions import completion_text
from rlvr.integrations.scalars import layer_names, verdict_scalars
from rlvr.task_packs.registry import load_pack

DATA_SOURCE_PREFIX = "rlvr/"


class _Shared:
    """One pack's grader behind a batcher, plus the layer names its score dicts carry."""

    def __init__(self, pack: TaskPack, options: dict[str, Any]) -> None:
        self.pack = pack
        grader = make_executor_grader(pack, **options)
        self.batcher = MicroBatcher(grader)
        self.layers = layer_names(grader)

    def score_dicts(self, verdicts: list[Verdict]) -> list[dict[str, float]]:
        out = []
        for verdict in verdicts:
            scalars = verdict_scalars(verdict, self.layers)
            scalars["acc"] = scalars["passed"]
            out.append(scalars)
        return out


_cache: dict[tuple[str, str], _Shared] = {}
_cache_lock = threading.Lock()


def pack_name_of(data_source: str) -> str:
    """`"rlvr/humaneval"` -> `"humaneval"`; anything else is a clear error."""
    if not isinstance(data_source, str) or not data_source.startswith(DATA_SOURCE_PREFIX):
        raise ValueError(f"data_source must look like 'rlvr/<pack>', got {data_source!r}")
    name = data_source[len(DATA_SOURCE_PREFIX) :]
    if not name:
        raise ValueError("data_source 'rlvr/' names no pack")
    return name


def shared_grader(pack_name: str, **options: Any) -> _Shared:
    """The process-wide grader for a pack (and grading options), built on first use."""
    key = (pack_name, repr(sorted(options.items())))
    with _cache_lock:
        shared = _cache.get(key)
        if shared is None:
            shared = _Shared(load_pack(pack_name), options)
            _cache[key] = shared
        return shared


def close_all() -> None:
    """Close every cached grader (runs at interpreter exit)."""
    with _cache_lock:
        entries = list(_cache.values())
        _cache.clear()
    for shared in entries:
        shared.batcher.close()


atexit.register(close_all)


def _task_id(ground_truth: Any, extra_info: Any) -> str:
    if isinstance(ground_truth, str) and ground_truth:
        return ground_truth
    if isinstance(extra_info, dict) and isinstance(extra_info.get("task_id"), str):
        return extra_info["task_id"]
    raise ValueError(f"ground_truth must be the rlvr task id (a non-empty str), got {ground_truth!r}")


def _check_known(shared: _Shared, task_ids: list[str]) -> None:
    unknown = []
    for task_id in task_ids:
        try:
            shared.pack.get(task_id)
        except UnknownTaskError:
            unknown.append(task_id)
    if unknown:
        raise ValueError(
            f"ground_truth task ids not in pack {shared.pack.name!r}: {sorted(set(unknown))[:5]}"
        )


def compute_score(
    data_source: str,
    solution_str: Any,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **grader_options: Any,
) -> dict[str, float]:
    """verl's reward hook for one response. `grader_options` (verl's `reward_kwargs`) reach the
    grader, e.g. `executor="ray"`, `jobs=4`."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info], **grader_options)[
        0
    ]


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[dict[str, Any] | None] | None = None,
    **grader_options: Any,
) -> list[dict[str, float]]:
    """The batch form: items are grouped by pack and each group is graded in one batch."""
    size = len(data_sources)
    infos: Sequence[dict[str, Any] | None] = list(extra_infos) if extra_infos is not None else [None] * size
    if not (len(solution_strs) == len(ground_truths) == len(infos) == size):
        raise ValueError(
            f"length mismatch: {size} data_sources, {len(solution_strs)} solution_strs, "
            f"{len(ground_truths)} ground_truths, {len(infos)} extra_infos"
        )
    groups: dict[str, list[int]] = {}
    for index, data_source in enumerate(data_sources):
        groups.setdefault(pack_name_of(data_source), []).append(index)
    texts = [completion_text(s) for s in solution_strs]
    task_ids = [_task_id(g, info) for g, info in zip(ground_truths, infos, strict=True)]
    out: list[dict[str, float] | None] = [None] * size
    for pack_name, positions in groups.items():
        shared = shared_grader(pack_name, **grader_options)
        ids = [task_ids[i] for i in positions]
        _check_known(shared, ids)
        verdicts = shared.batcher.grade(ids, [texts[i] for i in positions])
        for position, scores in zip(positions, shared.score_dicts(verdicts), strict=True):
            out[position] = scores
    return [scores for scores in out if scores is not None]
