"""GRPO groups on Gymnasium vector envs: G copies of one task, one completion each.

    import gymnasium as gym, rlvr
    from rlvr.envs.vector import GroupRollout

    envs = gym.make_vec("rlvr/Code-v0", num_envs=G, vectorization_mode="sync", pack="humaneval")
    group = GroupRollout(envs)
    prompt = group.reset("HumanEval/0", seed=0)      # every sub-env on the same task
    result = group.step(completions)                  # G completions -> G rewards + verdicts

`reset_group(vec_env, task_id, seed)` is the bare form: a full `reset` with
`options={"task_id": ...}`, which every sub-env receives, followed by a check that all of them
really hold that task.

Autoreset. Gymnasium 1.x vector envs default to `AutoresetMode.NEXT_STEP`: after a sub-env
terminates, the *next* `step()` call does not use its action — it resets that sub-env (without
options, so onto an independently sampled task) and returns reward 0, `terminated=False` and the
new prompt. A group therefore must not be stepped past its last turn: start each group with a
full reset (`reset_group` / `GroupRollout.reset`), which clears pending autoresets and puts all G
sub-envs on the group's task. `GroupRollout.step` refuses to step a group whose sub-envs have all
terminated, instead of silently returning autoreset zeros. Single-turn code tasks terminate after
one step; multi-turn envs (`max_turns > 1`) keep stepping until every sub-env has terminated.

Async mode. `vectorization_mode="async"` passes observations through shared memory; this module
relies on the shared-memory support `rlvr.envs.spaces` registers for `UnicodeText` (a length word
plus UTF-32 code points, so any string up to the space's `max_length` round-trips, lone surrogates
included), so `gym.make_vec(..., vectorization_mode="async")` works without extra arguments.

Batched grading (the default). `rlvr/Code-v0` registers `make_batched_vector_env` as its
`vector_entry_point`, so `gym.make_vec("rlvr/Code-v0", num_envs=G, pack=...)` with no
`vectorization_mode` (or with "vector_entry_point") builds a `BatchedSyncVectorEnv`: the G sub-envs
share one grader, and each `step` grades all G completions in one `grade_many` batch — one
type-checker run and one sandbox pass per group — with results and autoreset behaviour identical to
"sync". Grader settings go in `grader_options={...}`; `executor="ray"` grades on Ray actors.

Cost of the other modes. With "sync" each sub-env builds its own grader (and sandbox) unless one is
passed in (`gym.make_vec(..., grader=shared_grader)`), and grades its completion alone; with "async"
each worker process builds its own grader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.core.verdict_cache import grade_once_each
from rlvr.graders.base import Grader, grade_or_fault
from rlvr.task_packs.registry import resolve_pack


class GroupError(RuntimeError):
    """A group that cannot be reset or stepped as asked."""


def _task_ids(info: dict[str, Any], num_envs: int) -> list[str]:
    task = info.get("task")
    ids = task.get("id") if isinstance(task, dict) else None
    if ids is None or len(ids) != num_envs:
        raise GroupError("the vector env's reset info has no per-env task ids; is this an rlvr env?")
    return [str(task_id) for task_id in ids]


def reset_group(
    vec_env: gym.vector.VectorEnv, task_id: str, seed: int | None = None
) -> tuple[Sequence[str], dict[str, Any]]:
    """Reset every sub-env of `vec_env` onto `task_id` (GRPO's group). Returns (observations, info)."""
    observations, info = vec_env.reset(seed=seed, options={"task_id": task_id})
    held = _task_ids(info, vec_env.num_envs)
    if any(held_id != task_id for held_id in held):
        raise GroupError(f"reset onto {task_id!r} left the sub-envs on {held}")
    return observations, info


@dataclass
class GroupStep:
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    observations: Sequence[str]
    verdicts: list[dict[str, Any] | None] = field(default_factory=list)


class GroupRollout:
    """Drives a vector env one GRPO group at a time."""

    def __init__(self, vec_env: gym.vector.VectorEnv) -> None:
        self.vec_env = vec_env
        self.num_envs = vec_env.num_envs
        self.task_id: str | None = None
        self._done = np.ones(self.num_envs, dtype=bool)

    def reset(self, task_id: str, seed: int | None = None) -> str:
        observations, _info = reset_group(self.vec_env, task_id, seed)
        self.task_id = task_id
        self._done = np.zeros(self.num_envs, dtype=bool)
        return str(observations[0])

    def step(self, completions: Sequence[str]) -> GroupStep:
        if self.task_id is None or self._done.all():
            raise GroupError("every sub-env of this group has terminated; call reset(task_id) first")
        if len(completions) != self.num_envs:
            raise GroupError(f"{len(completions)} completions for a group of {self.num_envs}")
        if any(not isinstance(c, str) for c in completions):
            raise GroupError("completions must be str")
        observations, rewards, terminated, truncated, info = self.vec_env.step(tuple(completions))
        rewards = np.asarray(rewards, dtype=np.float64)
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool)
        # Sub-envs that had already finished were autoreset by this step: their reward is not
        # part of the group.
        rewards = np.where(self._done, 0.0, rewards)
        self._done |= terminated | truncated
        verdicts = self._verdicts(info)
        return GroupStep(rewards, terminated, truncated, observations, verdicts)

    def _verdicts(self, info: dict[str, Any]) -> list[dict[str, Any] | None]:
        verdict = info.get("verdict")
        present = info.get("_verdict")
        if not isinstance(verdict, dict) or present is None:
            return [None] * self.num_envs
        return [_pick(verdict, index) if present[index] else None for index in range(self.num_envs)]


def _pick(value: Any, index: int) -> Any:
    """Vector infos store nested dicts as dicts of per-env arrays: take sub-env `index`'s value."""
    if isinstance(value, dict):
        return {k: _pick(v, index) for k, v in value.items() if not str(k).startswith("_")}
    item = value[index]
    return item.item() if isinstance(item, np.generic) else item


# ---------------------------------------------------------------------- batched grading
class PrefetchingGrader(Grader):
    """Serves `grade_many` from verdicts graded ahead of time in one batch (`prefetch`), and grades
    anything else with the wrapped grader. Grading is deterministic, so a verdict graded ahead is
    the verdict the sub-env would have got. The batch grades each distinct item once
    (`grade_once_each`), and each prefetched verdict is handed out once, to one sub-env: it is a
    hand-off within one step, not a cache (reuse across steps is the grader's verdict cache)."""

    def __init__(self, inner: Grader) -> None:
        super().__init__(inner.pack)
        self.inner = inner
        self.family = inner.family
        self.weights = getattr(inner, "weights", None)
        self._ready: dict[tuple[str, str], list[Verdict]] = {}
        self.batches = 0

    def prefetch(self, task_ids: Sequence[str], completions: Sequence[str]) -> None:
        items = list(zip(task_ids, completions, strict=True))
        verdicts = grade_once_each(
            items, lambda todo: grade_or_fault(self.inner, [i[0] for i in todo], [i[1] for i in todo])
        )
        self.batches += 1
        self._ready = {}
        for item, verdict in zip(items, verdicts, strict=True):
            self._ready.setdefault(item, []).append(verdict)

    def grade_many(self, task_ids: Sequence[str | Task], completions: Sequence[str]) -> list[Verdict]:
        ids = [t.id if isinstance(t, Task) else t for t in task_ids]
        out: list[Verdict | None] = [self._take(key) for key in zip(ids, completions, strict=True)]
        missing = [i for i, verdict in enumerate(out) if verdict is None]
        if missing:
            self.batches += 1
            graded = self.inner.grade_many([task_ids[i] for i in missing], [completions[i] for i in missing])
            for i, verdict in zip(missing, graded, strict=True):
                out[i] = verdict
        return [verdict for verdict in out if verdict is not None]

    def _take(self, key: tuple[str, str]) -> Verdict | None:
        waiting = self._ready.get(key)
        return waiting.pop(0) if waiting else None

    def close(self) -> None:
        self._ready = {}
        self.inner.close()


class BatchedSyncVectorEnv(gym.vector.SyncVectorEnv):
    """A `SyncVectorEnv` whose sub-envs share one grader and whose `step` grades all sub-envs'
    completions in a single `grade_many` batch (one type-checker run and one sandbox pass for the
    whole group instead of one per sub-env). Results and autoreset behaviour are exactly those of
    `SyncVectorEnv`."""

    def __init__(self, env_fns: Sequence[Any], grader: PrefetchingGrader, **kwargs: Any) -> None:
        self.grader = grader
        super().__init__(env_fns, **kwargs)

    def step(self, actions: Any) -> Any:
        pending_reset = getattr(self, "_autoreset_envs", np.zeros(self.num_envs, dtype=bool))
        ids: list[str] = []
        texts: list[str] = []
        for index, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            task = getattr(env.unwrapped, "task", None)
            if task is not None and isinstance(action, str) and not pending_reset[index]:
                ids.append(task.id)
                texts.append(action)
        if ids:
            self.grader.prefetch(ids, texts)
        return super().step(actions)

    def close_extras(self, **kwargs: Any) -> None:
        super().close_extras(**kwargs)
        self.grader.close()


def make_batched_vector_env(
    num_envs: int = 1,
    *,
    env_id: str = "rlvr/Code-v0",
    pack: str | TaskPack = "humaneval",
    executor: str = "local",
    ray_address: str | None = None,
    grader_options: dict[str, Any] | None = None,
    **env_kwargs: Any,
) -> BatchedSyncVectorEnv:
    """G sub-envs of `env_id` sharing one grader (on `executor`), graded one batch per step.

    This is the `vector_entry_point` of `rlvr/Code-v0`:
    `gym.make_vec("rlvr/Code-v0", num_envs=G, vectorization_mode="vector_entry_point", pack=...)`.
    Other keyword arguments reach every sub-env (`split`, `task_id`, `max_turns`, ...)."""
    from rlvr.executors import make_executor_grader

    resolved = resolve_pack(pack)
    grader = PrefetchingGrader(
        make_executor_grader(resolved, executor, ray_address, **(grader_options or {}))
    )

    def make_one() -> gym.Env[Any, Any]:
        return gym.make(env_id, pack=resolved, grader=grader, **env_kwargs)

    try:
        return BatchedSyncVectorEnv([make_one for _ in range(num_envs)], grader)
    except Exception:
        grader.close()
        raise
