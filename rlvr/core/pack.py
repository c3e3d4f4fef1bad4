"""Task packs: named, versioned collections of tasks of one family."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rlvr.core.types import Task


class MissingExtra(ImportError):
    """Something needs an optional dependency group (`pip install 'rlvr[EXTRA]'`) that is not installed."""

    def __init__(self, what: str, extra: str) -> None:
        self.extra = extra
        super().__init__(f"{what} needs the `{extra}` extra: pip install 'rlvr[{extra}]'")


class UnknownTaskError(KeyError):
    """A task id that the pack does not hold."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "unknown task"


class TaskPack:
    """Base class. Subclasses provide `_load()` (all tasks) or override `tasks`/`get`.

    `weights` overrides the family's default reward weights (e.g. code: syntax/types/tests/perf);
    `options` carries pack-level grading settings (e.g. `{"feedback": "visible"}`).
    """

    name: str = ""
    family: str = "code"
    language: str = "python"  # code packs: the language candidates write ("python" or "typescript")
    version: str = "1"
    description: str = ""
    weights: dict[str, float] | None = None
    options: dict[str, Any]

    def __init__(self) -> None:
        self.options = dict(getattr(self, "options", {}) or {})
        self._by_id: dict[str, Task] | None = None

    # -- subclasses override one of these
    def _load(self) -> Iterable[Task]:
        raise NotImplementedError

    def all_tasks(self) -> list[Task]:
        if self._by_id is None:
            self._by_id = {task.id: task for task in self._load()}
        return list(self._by_id.values())

    def tasks(self, split: str | None = None) -> list[Task]:
        everything = self.all_tasks()
        return everything if split in (None, "all") else [t for t in everything if t.split == split]

    def get(self, task_id: str) -> Task:
        self.all_tasks()
        assert self._by_id is not None
        try:
            return self._by_id[task_id]
        except KeyError:
            raise UnknownTaskError(f"unknown task id {task_id!r} in pack {self.name!r}") from None

    def splits(self) -> list[str]:
        return sorted({t.split for t in self.all_tasks()})

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "family": self.family,
            "size": len(self.all_tasks()),
            "splits": self.splits(),
            "version": self.version,
            "description": self.description,
        }


class StaticPack(TaskPack):
    """A pack built from an in-memory list of tasks."""

    def __init__(
        self,
        name: str,
        tasks: list[Task],
        *,
        family: str = "code",
        version: str = "1",
        description: str = "",
        weights: dict[str, float] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.name, self.family, self.version, self.description = name, family, version, description
        self.weights = weights
        self.options = dict(options or {})
        super().__init__()
        self._tasks = tasks

    def _load(self) -> Iterable[Task]:
        return self._tasks


# The fields of a task line every family shares; the rest of a line is the family's hidden spec.
PUBLIC_FIELDS: frozenset[str] = frozenset({"id", "prompt", "difficulty", "split", "meta"})


@dataclass
class Problem:
    """One thing wrong with a pack: where (file, line, field) and what."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        return f"{where}: {self.field + ': ' if self.field else ''}{self.message}"
