"""The grader interface every family implements, and the family -> grader registry."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from rlvr.core.pack import TaskPack, UnknownTaskError
from rlvr.core.types import Task, Verdict, grader_fault
from rlvr.core.validation import ValidationReport
from rlvr.core.verdict_cache import VerdictCache, VerdictKey
from rlvr.graders.options import GraderOptions
from rlvr.graders.receipts import ReceiptBook, candidate_digest

# family -> "module:Class"; the class takes (pack, **options) and checks them against its
# `options_class`.
GRADERS: dict[str, str] = {
    "code": "rlvr.graders.code:CodeGrader",
    "math": "rlvr.graders.math:MathGrader",
    "sql": "rlvr.graders.sql:SQLGrader",
    "tool": "rlvr.graders.tool:ToolGrader",
    "proof": "rlvr.graders.proof:ProofGrader",
    "repo": "rlvr.graders.repo:RepoGrader",
}


class Grader:
    """Grades completions for the tasks of one pack. `grade_many` is the batched path shared by the
    envs, `rlvr grade`, the trainer and the integrations; it never raises for bad input and keeps
    order: every item gets a Verdict, with `error` set where grading was impossible.

    Keyword options are resolved once, over the pack's own, into the family's `options_class`
    (a frozen dataclass): an unknown key or a value of the wrong type raises `OptionsError`."""

    family = ""
    options_class: type[GraderOptions] = GraderOptions

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        self.pack = pack
        self.options = self.options_class.resolve(pack, options)

    def resolve(self, task_id: str | Task) -> Task | Verdict:
        """The task (a `Task` is taken as given), or a flagged verdict for an unknown id."""
        if isinstance(task_id, Task):
            return task_id
        if not isinstance(task_id, str):
            return Verdict.failure("", f"task id must be a string or a Task, got {type(task_id).__name__}")
        try:
            return self.pack.get(task_id)
        except UnknownTaskError as exc:
            return Verdict.failure(task_id, str(exc))

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        raise NotImplementedError

    def grade_each(
        self,
        tasks: list[Task],
        completions: list[str],
        grade_one: Callable[[Task, str], Verdict],
        cache: VerdictCache | None = None,
    ) -> list[Verdict]:
        """`grade_tasks` for graders that grade one completion at a time: a non-string completion gets
        a failure verdict, an exception in `grade_one` a flagged `grader` gate (one completion never
        breaks a batch), and with a `cache` a repeated (task, completion) is served from it."""
        out: list[Verdict] = []
        for task, completion in zip(tasks, completions, strict=True):
            if not isinstance(completion, str):
                out.append(
                    Verdict.failure(task.id, f"completion must be a string, got {type(completion).__name__}")
                )
                continue
            key = self.verdict_key(task, completion) if cache is not None else None
            verdict = cache.get(key) if cache is not None else None
            if verdict is None:
                try:
                    verdict = grade_one(task, completion)
                except Exception as exc:  # never let one completion break a batch
                    verdict = grader_fault(task.id, exc)
                if cache is not None:
                    cache.put(key, verdict)
            out.append(verdict)
        return out

    def verdict_key(self, task: str | Task, completion: object) -> VerdictKey | None:
        """The verdict cache's key for grading `completion` for `task` here: this pack and grader,
        the options that decide verdicts, the task's content and the completion. None where there is
        nothing to reuse (an unknown task id, a completion that is not a string)."""
        resolved = self.resolve(task)
        if not isinstance(resolved, Task) or not isinstance(completion, str):
            return None
        book = self.receipt_book()
        return VerdictKey(
            grader=f"{book.pack}@{book.pack_version} {book.grader}",
            options=book.options,
            task_id=resolved.id,
            task=book.task_digest(resolved),
            completion=candidate_digest(completion),
        )

    def grade_many(self, task_ids: Sequence[str | Task], completions: Sequence[str]) -> list[Verdict]:
        resolved = [self.resolve(t) for t in task_ids]
        positions = [i for i, r in enumerate(resolved) if isinstance(r, Task)]
        tasks: list[Task] = [r for r in resolved if isinstance(r, Task)]
        graded = self._grade_confined(tasks, [completions[i] for i in positions])
        out: list[Verdict] = [r if isinstance(r, Verdict) else Verdict(task_id="") for r in resolved]
        book = self.receipt_book()
        for i, verdict in zip(positions, graded, strict=True):
            verdict.receipt = book.receipt(resolved[i], completions[i])  # type: ignore[arg-type]
            out[i] = verdict
        return out

    def receipt_book(self) -> ReceiptBook:
        """Makes the receipt every verdict carries (built on first use: options are final by then)."""
        book = self.__dict__.get("_receipt_book")
        if book is None:
            book = ReceiptBook(self.pack, pack_grader_class(self.pack), self.options)
            self.__dict__["_receipt_book"] = book
        return book

    def _grade_confined(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        """`grade_tasks`, with a fault confined to the item that caused it: if the batch raises (a
        grader bug some content reaches), each item is graded alone, and only the items that still
        raise get a `grader` fault verdict; the others keep their own verdicts."""
        try:
            graded = self.grade_tasks(tasks, completions)
            if len(graded) == len(tasks):
                return graded
            fault: Exception = RuntimeError(f"grader returned {len(graded)} verdicts for {len(tasks)} items")
        except Exception as exc:
            fault = exc
        if len(tasks) == 1:
            return [grader_fault(tasks[0].id, fault)]
        out: list[Verdict] = []
        for task, completion in zip(tasks, completions, strict=True):
            try:
                alone = self.grade_tasks([task], [completion])
                out.append(alone[0] if len(alone) == 1 else grader_fault(task.id, fault))
            except Exception as exc:
                out.append(grader_fault(task.id, exc))
        return out

    def grade(self, task_id: str | Task, completion: str) -> Verdict:
        return self.grade_many([task_id], [completion])[0]

    def close(self) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> Grader:
        # A grader is a handle to shared workers, not a value: `gymnasium.make` deep-copies its
        # kwargs, and every copy must keep using the same warm sandbox.
        return self

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def grade_or_fault(grader: Grader, task_ids: list[str], completions: list[str]) -> list[Verdict]:
    """`grader.grade_many`, with the one rule for a grader that breaks its promise not to raise (or
    returns the wrong number of verdicts): every item of the batch gets a `grader` fault verdict."""
    try:
        verdicts = grader.grade_many(task_ids, completions)
        if len(verdicts) != len(task_ids):
            raise RuntimeError(f"grader returned {len(verdicts)} verdicts for {len(task_ids)} items")
    except Exception as exc:
        return [grader_fault(task_id, exc) for task_id in task_ids]
    return verdicts


def grader_class(family: str) -> type[Grader]:
    target = GRADERS.get(family)
    if target is None:
        raise ValueError(f"no grader for family {family!r}; known families: {', '.join(GRADERS)}")
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)


# A family's grader for another language than Python, by (family, the pack's `language`).
LANGUAGE_GRADERS: dict[tuple[str, str], str] = {
    ("code", "typescript"): "rlvr.graders.code.typescript.grader:TypeScriptGrader",
}


def pack_grader_class(pack: TaskPack) -> type[Grader]:
    """The grader for `pack`: its family's, or the family's grader for the pack's `language`."""
    language = str(getattr(pack, "language", "python") or "python").lower()
    target = LANGUAGE_GRADERS.get((pack.family, language))
    if target is None:
        return grader_class(pack.family)
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)


def check_options(pack: TaskPack, **options: Any) -> GraderOptions:
    """Resolve `options` for the pack's grader without building it (raises `OptionsError`)."""
    return pack_grader_class(pack).options_class.resolve(pack, options)


def make_grader(pack: TaskPack, **options: Any) -> Grader:
    return pack_grader_class(pack)(pack, **options)


# family -> "module:function(where, tasks, **options) -> ValidationReport"
PROVERS: dict[str, str] = {
    "code": "rlvr.graders.code.prove:prove_code_tasks",
    "math": "rlvr.graders.math.prove:prove_math_tasks",
    "sql": "rlvr.graders.sql.prove:prove_sql_tasks",
    "proof": "rlvr.graders.proof.prove:prove_proof_tasks",
    "tool": "rlvr.graders.tool.prove:prove_tool_tasks",
    "repo": "rlvr.graders.repo.prove:prove_repo_tasks",
}


class NoProver(LookupError):
    """The family has no prover here (the message says which)."""


def prove_pack_tasks(where: str, pack: TaskPack, tasks: list[Task]) -> ValidationReport:
    """`rlvr packs validate`: the family's prover (`graders/<family>/prove.py`) over `tasks` of `pack`
    (its weights and options apply)."""
    target = PROVERS.get(pack.family)
    if target is None:
        raise NoProver(f"no prover for family {pack.family!r}")
    module_name, _, function_name = target.partition(":")
    try:
        prover = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as exc:
        raise NoProver(f"the {pack.family} prover ({target}) is not available: {exc}") from exc
    if pack.family == "repo":  # the caller shows the progress
        return prover(where, tasks, progress=False)
    return prover(where, tasks, pack=pack)
