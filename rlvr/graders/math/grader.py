"""Math grader: extract the final answer, then check it against the task's answer in the sympy worker.

Layers: `format` (an answer of the task's kind was stated: boxes, an answer line, a bare answer, or an
answer math-verify's extraction finds in the prose; plain words such as `hello world` are no answer to a
mathematical reference and earn no format credit; a hard gate) and `answer` (equivalent to the reference; a hard gate).
Default weights format 0.1, answer 0.9, so a correct answer (1.0) always beats a well-formatted wrong one
(0.1), which beats no answer (0.0).

How answers compare is set per task (a task's own keys) or per pack (`[options]`): see
rlvr/specs/math_settings.py. A failure the answer causes by its own content — too big, nested too deep, a
sympy timeout, the worker running out of memory or dying on it — is a scored failure with a flag naming
the limit (`timeout:answer`, `oversized:answer`, ...; a tampered reply channel is `forged_output`), never
a grading error; only the machinery failing on
its own (the worker cannot start) is an error.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.core.verdict_cache import VerdictCache
from rlvr.graders.base import Grader
from rlvr.graders.compose import normalized_weights
from rlvr.graders.math.extract import Extraction, extract, size_problem
from rlvr.graders.math.worker import (
    DEFAULT_TIMEOUT,
    STARTUP_TIMEOUT,
    SympyWorker,
    WorkerCrash,
    WorkerProtocolError,
    WorkerTimeout,
)
from rlvr.graders.options import GraderOptions, no_sandbox
from rlvr.specs.math_settings import MathSettings, MathSettingsError, split_task_line
from rlvr.specs.reasoning_gym_scorers import scorer_problem

DEFAULT_WEIGHTS = {"format": 0.1, "answer": 0.9}
MAX_COMPLETION_CHARS = 200_000
_TASK_KEYS = frozenset({"answer", "reasoning_gym", *MathSettings.names()})


@dataclass(frozen=True, kw_only=True)
class MathOptions(GraderOptions):
    """Pack-wide comparison settings (a task's own keys override them); see rlvr/specs/math_settings.py."""

    tolerance: float | dict[str, float] | None = None
    precision: int | None = None
    significant_figures: int | None = None
    strict: bool = True
    relation: Literal["auto", "set", "tuple"] = "auto"
    boxes: Literal["all", "last", "first"] = "all"
    relation_as_set: bool = True
    not_honoured: ClassVar[Mapping[str, str]] = no_sandbox(
        "an answer is parsed in a killable sympy worker process, never run in a sandbox"
    )

    def settings(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in MathSettings.names()}


# the worker's failure kinds as the limit flags of rlvr/core/flags.py
_REPLY_FLAGS = {"memory": "oversized:memory", "recursion": "oversized:nesting", "size": "oversized:reply"}


class AnswerFault(Exception):
    """The answer's own content stopped the check (flag names the limit): a scored failure."""

    def __init__(self, flag: str, detail: str) -> None:
        super().__init__(detail)
        self.flag = flag


@dataclass(frozen=True)
class Comparison:
    equal: bool
    rule: str
    flags: tuple[str, ...] = ()
    of_kind: bool = True  # the answer is of the reference's kind (format credit needs it)


class MathGrader(Grader):
    family = "math"
    options_class = MathOptions

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        assert isinstance(self.options, MathOptions)
        self.math_options: MathOptions = self.options
        # the answer is the gated layer: a wrong answer must score below a right one
        self.weights = normalized_weights(self.options.weights, DEFAULT_WEIGHTS, ("answer",))
        self.timeout = float(self.options.timeout or DEFAULT_TIMEOUT)
        self._worker = SympyWorker()
        self._cache = VerdictCache()

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return self.grade_each(tasks, completions, self._grade_uncached, self._cache)

    def task_settings(self, task: Task) -> MathSettings:
        """The pack's settings overlaid with the task's own; raises MathSettingsError."""
        unknown = set(task.hidden) - _TASK_KEYS
        if unknown:
            raise MathSettingsError(
                f"task {task.id!r}: unknown keys {sorted(unknown)}; valid: {', '.join(sorted(_TASK_KEYS))}"
            )
        values = {**self.math_options.settings(), **split_task_line(task.hidden)}
        return MathSettings.from_mapping(values, where=f"task {task.id!r}")

    def grade_task(self, task: Task, completion: str) -> Verdict:
        """Grade one completion for a task that need not be in the pack (no cache; never raises)."""
        return self.grade_each([task], [completion], self._grade_uncached)[0]

    def search_answer(self, text: str) -> str | None:
        """The answer a prose text states (math-verify's extraction, run in the worker)."""
        answer = self._call({"op": "extract", "text": text[-MAX_COMPLETION_CHARS:]}).get("answer")
        return answer if isinstance(answer, str) and answer else None

    def _grade_uncached(self, task: Task, completion: str) -> Verdict:
        started = time.perf_counter()
        reference = task.hidden.get("answer")
        if reference is None:
            return Verdict.failure(task.id, "task has no reference answer", fault="task")
        scorer = task.hidden.get("reasoning_gym")
        try:
            settings = self.task_settings(task)
            if scorer is not None and scorer_problem(scorer):
                raise MathSettingsError(f"task {task.id!r}: reasoning_gym {scorer_problem(scorer)}")
        except MathSettingsError as exc:
            return Verdict.failure(task.id, str(exc), fault="task")
        try:
            found = self._find_answer(completion[-MAX_COMPLETION_CHARS:], settings)
        except AnswerFault as fault:
            found = Extraction(None, "none", (fault.flag,))
        if found.answer is None:
            return self._verdict(task, found, Comparison(False, "no answer"), started)
        if "conflicting_boxes" in found.flags:
            comparison = Comparison(False, "boxes that disagree (every boxed answer must be the same)")
        else:
            try:
                comparison = self._compare(found.answer, str(reference), settings, scorer)
            except AnswerFault as fault:
                comparison = Comparison(False, str(fault), (fault.flag,))
        return self._verdict(task, found, comparison, started)

    def _verdict(self, task: Task, found: Extraction, comparison: Comparison, started: float) -> Verdict:
        flags = [*found.flags, *comparison.flags]
        if found.source in ("bare", "prose"):
            flags.append(f"{found.source}_answer")
        if found.answer is None:
            return Verdict(
                task_id=task.id,
                components={
                    "format": Component(0.0, self.weights["format"]),
                    "answer": Component(0.0, self.weights["answer"]),
                },
                gates=["format"],
                feedback="No final answer found: end with \\boxed{...}, an 'Answer: ...' line or a '#### ...' line.",
                timings={"grade": time.perf_counter() - started},
                flags=flags,
            )
        equal = comparison.equal
        shown = found.answer if len(found.answer) <= 200 else found.answer[:200] + "..."
        stated = f"the answer `{shown}` (from {found.source.replace('_', ' ')})"
        if not comparison.of_kind:
            return Verdict(
                task_id=task.id,
                components={
                    "format": Component(0.0, self.weights["format"], "not an answer of the task's kind"),
                    "answer": Component(0.0, self.weights["answer"], comparison.rule),
                },
                gates=["format", "answer"],
                feedback=f"Not an answer: {stated} is words, and the task asks for a mathematical answer.",
                timings={"grade": time.perf_counter() - started},
                flags=flags,
            )
        feedback = (
            f"Correct: {stated} equals the expected answer (rule: {comparison.rule})."
            if equal
            else f"Not equivalent: {stated} is not the expected answer (rule: {comparison.rule})."
        )
        return Verdict(
            task_id=task.id,
            reward=self.weights["format"] + (self.weights["answer"] if equal else 0.0),
            passed=equal,
            components={
                "format": Component(self.weights["format"], self.weights["format"], f"answer: {shown}"),
                "answer": Component(
                    self.weights["answer"] if equal else 0.0, self.weights["answer"], comparison.rule
                ),
            },
            gates=[] if equal else ["answer"],
            feedback=feedback,
            flags=flags,
            timings={"grade": time.perf_counter() - started},
        )

    def _find_answer(self, completion: str, settings: MathSettings) -> Extraction:
        found = extract(completion, settings.boxes)
        if not found.needs_search or found.answer is None:
            return found
        answer = self.search_answer(found.answer)
        if answer is None:
            return Extraction(None, "none")
        return Extraction(answer, "prose", found.flags)

    def _compare(
        self, answer: str, reference: str, settings: MathSettings, scorer: dict[str, Any] | None
    ) -> Comparison:
        if scorer is None and answer.strip() == reference.strip():
            return Comparison(True, "identical")
        too_big = size_problem(answer)
        if too_big:
            return Comparison(False, f"answer over a size limit ({too_big})", (too_big,))
        if scorer is not None:  # the generator's own score_answer decides (score 1.0 passes)
            self._prepare_scorer(scorer)
            request: dict[str, Any] = {"op": "rg_score", "spec": scorer, "candidate": answer}
            rule = "reasoning-gym score_answer"
        else:
            request = {
                "op": "equiv",
                "candidate": answer,
                "reference": reference,
                "settings": settings.to_json(),
            }
            rule = ""
        reply = self._call(request)
        equal = bool(reply["equal"])
        return Comparison(
            equal, rule or str(reply.get("how", "")), of_kind=equal or bool(reply.get("of_kind", True))
        )

    def _prepare_scorer(self, scorer: dict[str, Any]) -> None:
        """Build the generator's dataset in the worker with the start-up budget: its cost is the machinery's,
        never charged to an answer's timeout (a failure here is a grader fault)."""
        try:
            reply = self._worker.call({"op": "rg_prepare", "spec": scorer}, STARTUP_TIMEOUT)
        except WorkerTimeout as exc:
            raise WorkerCrash(f"reasoning-gym generator did not load within {STARTUP_TIMEOUT:g}s") from exc
        if not reply.get("ok"):
            raise RuntimeError(f"reasoning-gym generator failed to load: {reply.get('error')}")

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        """The worker's reply. A timeout, running out of memory, a crash that repeats on a fresh worker or a
        forged reply is the answer's doing (AnswerFault); a worker that cannot start is the machinery's
        (WorkerCrash propagates and becomes a `grader` fault)."""
        for attempt in (1, 2):
            try:
                reply = self._worker.call(request, self.timeout)
            except WorkerTimeout as exc:
                raise AnswerFault("timeout:answer", f"timed out after {self.timeout:g}s") from exc
            except WorkerProtocolError as exc:
                raise AnswerFault("forged_output", "the worker's reply channel was tampered with") from exc
            except WorkerCrash as exc:
                if "failed to start" in str(exc):
                    raise
                if attempt == 2:
                    raise AnswerFault("crash:answer", "the worker died on this answer twice") from exc
                continue
            if reply.get("ok"):
                return reply
            kind = str(reply.get("kind", "exception"))
            if kind == "request":
                raise RuntimeError(f"math worker refused the request: {reply.get('error')}")
            flag = _REPLY_FLAGS.get(kind, "crash:answer")
            raise AnswerFault(flag, f"the check failed on this answer: {reply.get('error')}")
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._worker.close()
