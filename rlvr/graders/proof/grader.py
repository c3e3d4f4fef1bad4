"""Proof grader: a step-by-step derivation (one step a line) checked step by step with sympy.

Task hidden spec: `goal` (`left RELATION right`, e.g. `a^2 + b^2 >= 2ab`) and optional `assumptions`
(symbol -> real | positive | nonnegative; key `*` sets the default, which is real). The completion is the
chain itself, or the last fenced block of it (see rlvr/graders/proof/check.py for the format).

Components (each a fraction of 1): `outcome` (the chain proves the goal) and `process` (the fraction of
lines that hold and are one small rewrite of the previous line, as rlvr/graders/proof/rewrite.py measures).
Both are gates: a chain that reaches the goal through a step that is too large (or that restates the goal)
fails gate `process` with flag `answer_without_derivation:step_too_large`. Default weights outcome 1.0, process 0.0; with a process
weight w a passing derivation scores 1 and a failing one `w * process` (< 1), so every failing derivation
scores below every passing one. A derivation that runs the checker past its time limit is a scored failure
(flag `timeout:proof`), not a grading error.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.core.verdict_cache import VerdictCache
from rlvr.graders.base import Grader
from rlvr.graders.compose import normalized_weights
from rlvr.graders.math.extract import MATH_CHARACTERS
from rlvr.graders.math.worker import SympyWorker, WorkerCrash, WorkerProtocolError, WorkerTimeout
from rlvr.graders.options import GraderOptions, no_sandbox

DEFAULT_WEIGHTS = {"outcome": 1.0, "process": 0.0}
DEFAULT_TIMEOUT = 20.0
MAX_COMPLETION_CHARS = 40_000
# the worker's failure kinds as the limit flags of rlvr/core/flags.py (an exception is the task's goal failing
# to parse: every step's own failure is reported inside the reply)
_REPLY_FLAGS = {"memory": "oversized:memory", "recursion": "oversized:nesting", "size": "oversized:reply"}
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def extract_derivation(completion: str) -> str:
    blocks = _FENCE.findall(completion)
    return blocks[-1] if blocks else completion


@dataclass(frozen=True, kw_only=True)
class ProofOptions(GraderOptions):
    not_honoured: ClassVar[Mapping[str, str]] = no_sandbox(
        "a derivation is checked in a killable sympy worker process, never run in a sandbox"
    )


class ProofGrader(Grader):
    family = "proof"
    options_class = ProofOptions

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        # the outcome is the gated layer; the process score is a soft component beside it
        self.weights = normalized_weights(self.options.weights, DEFAULT_WEIGHTS, ("outcome",))
        self.timeout = float(self.options.timeout or DEFAULT_TIMEOUT)
        self._worker = SympyWorker(handlers={"proof": "rlvr.graders.proof.check:check_proof_request"})
        self._cache = VerdictCache()

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return self.grade_each(tasks, completions, self._grade_one, self._cache)

    def _grade_one(self, task: Task, completion: str) -> Verdict:
        started = time.perf_counter()
        goal = task.hidden.get("goal")
        if not isinstance(goal, str):
            return Verdict.failure(task.id, "task has no goal", fault="task")
        if len(completion) > MAX_COMPLETION_CHARS:
            return self._verdict(task.id, None, "derivation too long", started)
        derivation = extract_derivation(completion)
        for number, line in enumerate(derivation.splitlines(), start=1):
            strange = set(line.split("#", 1)[0]) - MATH_CHARACTERS - {"\r"}
            if strange:
                shown = ", ".join(repr(c) for c in sorted(strange)[:3])
                return self._verdict(
                    task.id, None, f"line {number} has characters that are not math ({shown})", started
                )
        request = {
            "op": "proof",
            "goal": goal,
            "text": derivation,
            "assumptions": task.hidden.get("assumptions"),
        }
        reply: dict[str, Any] = {}
        for attempt in (1, 2):
            try:
                reply = self._worker.call(request, self.timeout)
            except WorkerTimeout:
                problem = f"the proof check ran past its {self.timeout:g}s limit (a step too costly to check)"
                return self._verdict(task.id, None, problem, started, flags=["timeout:proof"])
            except WorkerProtocolError:
                problem = "the checker's reply channel was tampered with"
                return self._verdict(task.id, None, problem, started, flags=["forged_output"])
            except WorkerCrash as exc:
                if "failed to start" in str(exc):
                    return self._verdict(task.id, None, "", started, error=f"proof check failed: {exc}")
                if attempt == 1:
                    continue  # once more on a fresh worker: a crash that repeats is the derivation's doing
                problem = "the checker died on this derivation twice"
                return self._verdict(task.id, None, problem, started, flags=["crash:answer"])
            break
        if not reply.get("ok"):
            flag = _REPLY_FLAGS.get(str(reply.get("kind")))
            if flag:  # the derivation's own content exhausted a limit: a scored failure
                problem = f"the proof check failed on this derivation: {reply.get('error')}"
                return self._verdict(task.id, None, problem, started, flags=[flag])
            return self._verdict(task.id, None, "", started, error=f"proof check raised {reply.get('error')}")
        return self._verdict(task.id, reply, reply.get("problem", ""), started)

    def _verdict(
        self,
        task_id: str,
        report: dict[str, Any] | None,
        problem: str,
        started: float,
        error: str | None = None,
        flags: list[str] | None = None,
    ) -> Verdict:
        steps = (report or {}).get("steps") or []
        good = [s for s in steps if s.get("valid") and s.get("small", True)]
        process = len(good) / len(steps) if steps else 0.0
        proved = bool((report or {}).get("proved"))
        small = proved and len(good) == len(steps)
        passed = proved and small
        w_outcome, w_process = self.weights["outcome"], self.weights["process"]
        bad = [s for s in steps if not s.get("valid")] or [s for s in steps if not s.get("small", True)]
        feedback = "Proved." if passed else (problem or "not proved").capitalize() + "."
        if bad:
            feedback += f" First failing line: {bad[0]['line']} ({bad[0].get('rule') or bad[0]['why']})."
        gates = [] if passed else ["outcome"] if not proved else ["process"]
        return Verdict(
            task_id=task_id,
            reward=1.0 if passed else w_process * process,
            passed=passed,
            components={
                "outcome": Component(float(proved), 1.0, f"weight {w_outcome:g}"),
                "process": Component(
                    process, 1.0, f"{len(good)}/{len(steps)} lines hold as small steps; weight {w_process:g}"
                ),
            },
            gates=gates,
            feedback=feedback,
            timings={"grade": time.perf_counter() - started},
            error=error,
            flags=list(flags or []) + ["answer_without_derivation:step_too_large"] * (proved and not small),
        )

    def close(self) -> None:
        self._worker.close()
