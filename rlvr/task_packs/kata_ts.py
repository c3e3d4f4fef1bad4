"""The `kata-ts` pack: the kata families in TypeScript (task ids `kata-ts/<family>/<difficulty>/<seed>`).

Each task is the kata task translated by rlvr's translator (rlvr/task_packs/typescript.py), reading the
types from the Python annotations, else from the reference's answers on the task's own hidden inputs;
the Python task stays hidden (`hidden["source"]`) and is the oracle, generated property inputs
included. Families that do not translate are left out and listed by `info()["skipped"]`: stateful
class tasks (their method driver is Python) and those whose types do not map. There is no TypeScript
reference, so verdicts have no perf layer (and say so). Like `kata`, any seed can be asked for by id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rlvr.core.pack import TaskPack, UnknownTaskError
from rlvr.core.types import Task
from rlvr.task_packs.kata import KataPack
from rlvr.task_packs.typescript import Unmappable, record_inputs, translate

PREFIX = "kata-ts/"


def translate_kata(task: Task) -> Task:
    """The TypeScript task for one kata task (raises Unmappable)."""
    hidden = task.hidden
    if hidden.get("driver"):
        raise Unmappable("a stateful class task (its method driver is Python)")
    if hidden.get("check"):
        raise Unmappable("a task graded by Python `check` code")
    inputs = list(hidden.get("calls") or []) + list((hidden.get("properties") or {}).get("inputs") or [])
    entry = str(hidden["entry_point"])
    translated = translate(task.prompt, entry, record_inputs(hidden["reference"], inputs, entry))
    return Task(
        id=PREFIX + task.id.removeprefix("kata/"),
        prompt=translated["prompt"],
        family="code",
        difficulty=task.difficulty,
        split=task.split,
        hidden={
            "entry_point": entry,
            "language": "typescript",
            "signature": translated["signature"],
            "forbid_any": True,
            "source": {"id": task.id, "prompt": task.prompt, "hidden": hidden},
        },
        meta={**task.meta, "source_task": task.id},
    )


class KataTsPack(TaskPack):
    name = "kata-ts"
    family = "code"
    language = "typescript"
    version = "1"
    description = "The kata families in TypeScript (rlvr's translator; the Python kata task is the oracle)."

    def __init__(self, seeds: int = 1, feedback: str = "hidden") -> None:
        super().__init__()
        self.kata = KataPack(seeds=seeds, feedback=feedback)
        self.options = dict(self.kata.options)
        self._skipped: dict[str, str] = {}

    def _translated(self, kata_ids: list[str]) -> list[Task]:
        out = []
        for kata_id in kata_ids:
            try:
                out.append(translate_kata(self.kata.get(kata_id)))
            except Unmappable as exc:
                self._skipped[kata_id.rsplit("/", 2)[0].removeprefix("kata/")] = str(exc)
        return out

    def _load(self) -> Iterable[Task]:
        return self._translated(self.kata.default_ids())

    def tasks(self, split: str | None = None) -> list[Task]:
        return self._translated(self.kata.default_ids(split))

    def get(self, task_id: str) -> Task:
        if not task_id.startswith(PREFIX):
            raise UnknownTaskError(f"unknown task id {task_id!r} in pack {self.name!r}")
        try:
            return translate_kata(self.kata.get("kata/" + task_id.removeprefix(PREFIX)))
        except Unmappable as exc:
            raise UnknownTaskError(f"{task_id}: not translated to TypeScript ({exc})") from None
        except (KeyError, ValueError) as exc:
            raise UnknownTaskError(f"unknown task id {task_id!r} in pack {self.name!r}: {exc}") from None

    def splits(self) -> list[str]:
        return self.kata.splits()

    def info(self) -> dict[str, Any]:
        info = super().info()
        info["language"] = self.language
        info["skipped"] = dict(sorted(self._skipped.items()))  # family -> why it does not translate
        return info
