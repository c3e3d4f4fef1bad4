"""Math grader: extract the final answer, then check it against the task's answer in the sympy worker.

Layers: `format` (an answer was stated: `\\boxed{}`, `Answer:` or `####`; a hard gate) and `answer`
(equivalent to the reference; a hard gate). Default weights format 0.1, answer 0.9, so a correct answer
(1.0) always beats a well-formatted wrong one (0.1), which beats no answer (0.0).
"""

from __future__ import annotations

import time
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.base import Grader
from rlvr.graders.cache import VerdictCache
from rlvr.graders.compose import normalized_weights
from rlvr.graders.math.extract import extract_answer_with_source, oversized_number
from rlvr.graders.sympy_worker import DEFAULT_TIMEOUT, SympyWorker, WorkerCrash, WorkerTimeout

DEFAULT_WEIGHTS = {"format": 0.1, "answer": 0.9}
MAX_COMPLETION_CHARS = 200_000


class MathGrader(Grader):
    family = "math"

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        # the answer is the gated layer: a wrong answer must score below a right one
        self.weights = normalized_weights(self.options.weights, DEFAULT_WEIGHTS, ("answer",))
        self.timeout = float(self.options.timeout or DEFAULT_TIMEOUT)
        self._worker = SympyWorker()
        self._cache = VerdictCache()

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return self.grade_each(tasks, completions, self._grade_uncached, self._cache)

    def _grade_uncached(self, task: Task, completion: str) -> Verdict:
        started = time.perf_counter()
        reference = task.hidden.get("answer")
        if reference is None:
            return Verdict.failure(task.id, "task has no reference answer", fault="task")
        answer, source = extract_answer_with_source(completion[-MAX_COMPLETION_CHARS:])
        if answer is None:
            return Verdict(
                task_id=task.id,
                components={
                    "format": Component(0.0, self.weights["format"]),
                    "answer": Component(0.0, self.weights["answer"]),
                },
                gates=["format"],
                feedback="No final answer found: end with \\boxed{...}, an 'Answer: ...' line or a '#### ...' line.",
                timings={"grade": time.perf_counter() - started},
            )
        equal, how, error = self._compare(answer, str(reference), task.hidden)
        verdict = Verdict(
            task_id=task.id,
            reward=self.weights["format"] + (self.weights["answer"] if equal else 0.0),
            passed=equal,
            components={
                "format": Component(
                    self.weights["format"], self.weights["format"], f"answer: {answer[:200]}"
                ),
                "answer": Component(self.weights["answer"] if equal else 0.0, self.weights["answer"], how),
            },
            gates=[] if equal else ["answer"],
            feedback="Correct." if equal else "The final answer is not equivalent to the expected answer.",
            error=error,
            flags=(["timeout"] if error and "timed out" in error else [])
            + (["bare_answer"] if source == "bare" else []),
        )
        verdict.timings["grade"] = time.perf_counter() - started
        return verdict

    def _compare(self, answer: str, reference: str, hidden: dict[str, Any]) -> tuple[bool, str, str | None]:
        scorer = hidden.get("reasoning_gym")
        if answer.strip() == reference.strip() and not scorer:
            return True, "identical", None
        if oversized_number(answer):
            return False, "answer is an astronomically large number", None
        if scorer:  # the generator's own score_answer decides (score 1.0 passes)
            request: dict[str, Any] = {"op": "rg_score", "spec": scorer, "candidate": answer}
        else:
            request = {
                "op": "equiv",
                "candidate": answer,
                "reference": reference,
                "tolerance": hidden.get("tolerance"),
            }
        try:
            reply = self._worker.call(request, self.timeout)
        except WorkerTimeout:
            return False, "timeout", f"equivalence check timed out after {self.timeout:g}s"
        except WorkerCrash as exc:
            return False, "crash", f"equivalence check failed: {exc}"
        if not reply.get("ok"):
            return False, "error", f"equivalence check raised {reply.get('error')}"
        return bool(reply["equal"]), str(reply.get("how", "")), None

    def close(self) -> None:
        self._worker.close()
