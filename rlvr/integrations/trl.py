"""rlvr in TRL: agent environments for `GRPOTrainer(environment_factory=...)`, and graders as a reward function.

Multi-turn packs (tool, repo):

    from rlvr.integrations import trl as rlvr_trl
    GRPOTrainer(model=..., environment_factory=rlvr_trl.environment_factory("tool-worlds", split="train"),
                train_dataset=rlvr_trl.dataset("tool-worlds", "train"), args=GRPOConfig(...))

(see rlvr/integrations/trl_env.py). Single-turn packs:

    from rlvr.integrations.trl import make_reward_func
    reward = make_reward_func("humaneval")
    GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=dataset)  # dataset has a task_id column

TRL calls `reward(prompts=..., completions=..., completion_ids=..., task_id=[...], **other_columns)`
with one entry per generated completion; completions are strings or chat messages
(`[{"role": "assistant", "content": ...}]`). The reward of each item is its verdict's reward —
exactly what local grading gives.

A chat completion with `tool_calls` is an agent episode: on a tool pack it is replayed as the episode's
transcript (the turns in order, a `final_answer` call as the final answer). On any other pack a batch
made only of such completions raises `ValueError` naming `environment_factory`, the entry point that
runs such episodes live (the run is set up wrong); one among text answers is the policy's own output
and scores 0 (flag `tool_calls_unsupported`), the rest of the batch is graded as usual.

A task id the pack does not hold is a dataset bug and raises `ValueError`. An item whose grading
itself failed (a fault of the machinery: `Verdict.disrupted`, e.g. a sandbox fault) is reported by
`on_error`: "nan" (default) returns None, which TRL turns into NaN and logs as a missing reward
instead of a fake 0; "zero" returns 0.0; "raise" raises `RuntimeError`. An item the policy itself
made ungradable (an empty completion: `error` set, fault "input") is a scored failure, never
`on_error`'s: its reward is its verdict's (0.0), so it can neither escape its penalty nor stop the
batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from rlvr.core.pack import TaskPack, UnknownTaskError
from rlvr.core.types import Verdict
from rlvr.executors import make_executor_grader
from rlvr.graders.base import Grader, grade_or_fault
from rlvr.integrations.completions import completion_text, has_tool_calls, tool_transcript
from rlvr.integrations.trl_env import EnvironmentFactory, dataset, environment_factory
from rlvr.task_packs.registry import resolve_pack

__all__ = ["EnvironmentFactory", "RewardFunction", "dataset", "environment_factory", "make_reward_func"]

ON_ERROR_CHOICES = ("nan", "zero", "raise")


class RewardFunction:
    """A TRL-compatible reward function over one pack (build it with `make_reward_func`)."""

    def __init__(
        self,
        pack: TaskPack,
        *,
        task_id_column: str,
        on_error: str,
        name: str,
        grader_factory: Callable[[], Grader],
    ) -> None:
        if on_error not in ON_ERROR_CHOICES:
            raise ValueError(f"on_error must be one of {', '.join(ON_ERROR_CHOICES)}, not {on_error!r}")
        self.pack = pack
        self.task_id_column = task_id_column
        self.on_error = on_error
        self.__name__ = name
        self._grader_factory = grader_factory
        self._grader: Grader | None = None
        self._lock = threading.Lock()
        self.last_verdicts: list[Verdict] = []

    @property
    def grader(self) -> Grader:
        with self._lock:
            if self._grader is None:
                self._grader = self._grader_factory()
            return self._grader

    def _task_ids(self, kwargs: dict[str, Any], expected: int) -> list[str]:
        if self.task_id_column not in kwargs:
            present = sorted(k for k in kwargs if k not in ("trainer_state", "log_extra", "log_metric"))
            raise ValueError(
                f"rlvr reward needs a {self.task_id_column!r} dataset column holding task ids of pack "
                f"{self.pack.name!r}; the batch has columns {present}"
            )
        task_ids = list(kwargs[self.task_id_column])
        if len(task_ids) != expected:
            raise ValueError(f"{len(task_ids)} task ids for {expected} completions")
        unknown = []
        for index, task_id in enumerate(task_ids):
            if not isinstance(task_id, str):
                raise ValueError(f"task id at index {index} is {type(task_id).__name__}, not str")
            try:
                self.pack.get(task_id)
            except UnknownTaskError:
                unknown.append(task_id)
        if unknown:
            raise ValueError(f"task ids not in pack {self.pack.name!r}: {sorted(set(unknown))[:5]}")
        return task_ids

    def _text(self, completion: Any) -> str | None:
        """The text to grade; None for tool calls on a pack that grades one final text."""
        if not has_tool_calls(completion):
            return completion_text(completion)
        if self.pack.family == "tool":
            return tool_transcript(completion)
        return None

    def _texts(self, completions: Sequence[Any]) -> list[str | None]:
        texts = [self._text(c) for c in completions]
        if texts and all(text is None for text in texts):
            raise ValueError(
                f"the completions carry tool calls, but pack {self.pack.name!r} ({self.pack.family}) grades "
                "one final text; run its episodes live with "
                f"rlvr.integrations.trl.environment_factory({self.pack.name!r}) instead of a reward function"
            )
        return texts

    def __call__(
        self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None, **kwargs: Any
    ) -> list[float | None]:
        if completions is None:
            raise ValueError("rlvr reward needs `completions`")
        texts = self._texts(completions)
        task_ids = self._task_ids(kwargs, len(texts))
        graded = [i for i, text in enumerate(texts) if text is not None]
        verdicts = [_tool_calls_unsupported(task_id) for task_id in task_ids]
        for i, verdict in zip(
            graded,
            grade_or_fault(self.grader, [task_ids[i] for i in graded], [texts[i] or "" for i in graded]),
            strict=True,
        ):
            verdicts[i] = verdict
        self.last_verdicts = verdicts
        rewards: list[float | None] = []
        for verdict in verdicts:
            if not verdict.disrupted:  # graded, or made ungradable by the completion itself: scored
                rewards.append(float(verdict.reward))
            elif self.on_error == "raise":
                raise RuntimeError(f"grading {verdict.task_id} failed: {verdict.error}")
            else:
                rewards.append(None if self.on_error == "nan" else 0.0)
        log_metric = kwargs.get("log_metric")
        if callable(log_metric) and verdicts:
            log_metric(f"{self.__name__}/pass_rate", sum(v.passed for v in verdicts) / len(verdicts))
            log_metric(f"{self.__name__}/grading_errors", float(sum(v.disrupted for v in verdicts)))
        return rewards

    def close(self) -> None:
        with self._lock:
            if self._grader is not None:
                self._grader.close()
                self._grader = None


def _tool_calls_unsupported(task_id: str) -> Verdict:
    return Verdict(
        task_id=task_id,
        gates=["format"],
        flags=["tool_calls_unsupported"],
        feedback="the completion is tool calls, but this task is graded on one final text answer",
    )


def make_reward_func(
    pack: TaskPack | str,
    *,
    task_id_column: str = "task_id",
    on_error: str = "nan",
    name: str | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    grader: Grader | None = None,
    **options: Any,
) -> RewardFunction:
    """A TRL reward function grading completions against `pack`'s tasks.

    The grader is built on first use with `make_executor_grader(pack, executor, ray_address,
    **options)` (pass `executor="ray"` to grade on Ray actors), or is the given `grader`.
    `name` (TRL logs rewards under it) defaults to `rlvr_<pack>`.
    """
    resolved = resolve_pack(pack)

    def build() -> Grader:
        if grader is not None:
            return grader
        return make_executor_grader(resolved, executor, ray_address, **options)

    return RewardFunction(
        resolved,
        task_id_column=task_id_column,
        on_error=on_error,
        name=name or f"rlvr_{resolved.name}",
        grader_factory=build,
    )
