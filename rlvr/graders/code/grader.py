"""The code grading pipeline: syntax -> types -> tests -> perf, composed with hard gates.

One batch costs one type-checker run and one sandbox pass (each candidate a fresh fork of a warm
zygote); the two run concurrently. Hidden data stays in this (trusted) process.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rlvr.core.flags import DENIED_OPS, denial_feedback, denied_flag
from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.base import Grader
from rlvr.graders.code.evasions import allowed_kinds
from rlvr.graders.code.extract import Extraction, extract_program
from rlvr.graders.code.options import CodeOptions
from rlvr.graders.code.oracle import CodeOracle, OracleCache, OracleError
from rlvr.graders.code.perf import PerfPlan, PerfResult, perf_score
from rlvr.graders.code.programs.runner import ProgramTasks
from rlvr.graders.code.properties.stateful import sandbox_source
from rlvr.graders.code.properties.suite import PropertyConfig, PropertyTests, record_counterexample
from rlvr.graders.code.syntax import MAX_SOURCE_CHARS, SyntaxReport, analyze
from rlvr.graders.code.typecheck.checker import TypeChecker, TypeReport
from rlvr.graders.code.visible import literal_outputs_in_source
from rlvr.graders.compose import CODE_GATES, CODE_WEIGHTS, gated_reward, normalized_weights
from rlvr.sandbox import make_sandbox
from rlvr.sandbox.pool import ExecResult, Job
from rlvr.sandbox.protocol import OVERSIZED_RESULTS, UNREPORTABLE_RESULTS
from rlvr.specs.programs import is_program_task

DEFAULT_TIMEOUT_SECONDS = 10.0
REFERENCE_TIMEOUT_FACTOR = 6
CANDIDATE_FAULTS = {
    "timeout": "the program exceeded its time limit",
    "crash": "the program's process ended before answering every test",
    "output_limit": "the program produced too much output",
    "protocol": "the program tampered with the result channel",
    "load_error": "the program failed while loading",
}


def exited_early(result: ExecResult) -> bool:
    """The program ended its own process (or raised SystemExit) before its results were all reported:
    the move a test runner that reads exit codes would count as success. Here it earns nothing; the
    verdict flags it as `exit_forgery`."""
    if result.status == "crash" and result.exit == 0:
        return True
    if result.status == "load_error" and result.detail in (
        "load error: SystemExit",
        "load error: KeyboardInterrupt",
    ):
        return True
    return any(o is not None and not o.ok and o.exception == "SystemExit" for o in result.outcomes)


@dataclass
class _Prepared:
    index: int
    task: Task
    program: str
    syntax: SyntaxReport
    oracle: CodeOracle | None = None
    error: str | None = None
    syntax_seconds: float = 0.0
    perf: ExecResult | None = None  # the growth-input run (tasks with a perf plan)
    extracted_from: str | None = None  # a flag naming the fenced block graded, if one was

    def flags(self) -> list[str]:
        return [self.extracted_from] if self.extracted_from else []


class CodeGrader(Grader):
    """Four layers (syntax, types, tests, perf) with hard gates; options in `CodeOptions`."""

    family = "code"
    options_class = CodeOptions
    options: CodeOptions

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        o = self.options
        defaults = {**CODE_WEIGHTS, **({} if o.types else {"types": 0.0})}
        self.weights = normalized_weights(o.weights, defaults, CODE_GATES)
        self.visible_feedback = o.feedback == "visible"
        # the deliberately weak mode: the reward sees only the prompt's examples (perf leaves it)
        self.weak_verifier = o.verifier == "visible"
        self.weak_weights = normalized_weights({**self.weights, "perf": 0.0}, defaults, CODE_GATES)
        self.timeout = float(o.timeout or DEFAULT_TIMEOUT_SECONDS)
        self.sandbox = make_sandbox(o.sandbox, o.jobs, o.runtime) if isinstance(o.sandbox, str) else o.sandbox
        self.type_checker = TypeChecker() if self.weights["types"] > 0 else None
        self.counterexample_db = o.counterexample_db
        generate: PropertyTests | None = None
        if o.properties is not False:
            config = o.properties if isinstance(o.properties, PropertyConfig) else PropertyConfig()
            if self.counterexample_db is not None:
                config = replace(config, counterexample_db=Path(self.counterexample_db))
            generate = PropertyTests(config)
        self.oracles = OracleCache(extra_calls=o.extra_calls, generate=generate)
        self._reference_counts: dict[str, list[int | None]] = {}
        self._allowed: dict[str, frozenset[str]] = {}
        self._reference_peaks: dict[str, list[int | None]] = {}  # bytes per call, beside the counts
        self._reference_loads: dict[str, int | None] = {}  # the reference module's load-time ops
        self._lock = threading.Lock()
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlvr-types")
        self._programs: ProgramTasks | None = None

    # ------------------------------------------------------------------ batch entry point
    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        """Function tasks here; whole-program (stdin/stdout) tasks through `ProgramTasks`."""
        is_program = [is_program_task(t.hidden) for t in tasks]
        if not any(is_program):
            return self._grade_functions(tasks, completions)
        verdicts: list[Verdict | None] = [None] * len(tasks)
        for wanted, grade in ((False, self._grade_functions), (True, self._grade_programs)):
            positions = [i for i, flag in enumerate(is_program) if flag is wanted]
            if positions:
                graded = grade([tasks[i] for i in positions], [completions[i] for i in positions])
                for i, verdict in zip(positions, graded, strict=True):
                    verdicts[i] = verdict
        return [
            v if v is not None else Verdict.failure("", "internal: ungraded", fault="grader")
            for v in verdicts
        ]

    def _grade_programs(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        if self.weak_verifier:
            return [
                Verdict.failure(t.id, "verifier='visible' grades function tasks only", fault="grader")
                for t in tasks
            ]
        out: list[Verdict | None] = [None] * len(tasks)
        runnable = []
        for index, completion in enumerate(completions):
            if not isinstance(completion, str) or not completion.strip():
                out[index] = Verdict.failure(tasks[index].id, "empty completion")
            else:
                runnable.append(index)
        if self._programs is None:
            self._programs = ProgramTasks(self.sandbox, self.type_checker, self.weights)
        graded = self._programs.grade([tasks[i] for i in runnable], [completions[i] for i in runnable])
        for i, verdict in zip(runnable, graded, strict=True):
            out[i] = verdict
        return [
            v if v is not None else Verdict.failure("", "internal: ungraded", fault="grader") for v in out
        ]

    def _grade_functions(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        verdicts: list[Verdict | None] = [None] * len(tasks)
        prepared: list[_Prepared] = []
        for index, (task, completion) in enumerate(zip(tasks, completions, strict=True)):
            if not isinstance(completion, str) or not completion.strip():
                verdicts[index] = Verdict.failure(task.id, "empty completion")
                continue
            started = time.perf_counter()
            if len(completion) > MAX_SOURCE_CHARS:  # the syntax layer rejects it without parsing
                extraction = Extraction(completion, "raw")
            else:
                extraction = extract_program(task.prompt, completion, task.hidden["entry_point"])
            program = extraction.program
            report = analyze(program)
            item = _Prepared(index, task, program, report, syntax_seconds=time.perf_counter() - started)
            if extraction.origin.startswith("block"):
                item.extracted_from = extraction.flag
            if report.ok:
                try:
                    item.oracle = self.oracles.get(task)
                except OracleError as exc:
                    item.error = f"task cannot be graded: {exc}"
            prepared.append(item)

        runnable = [p for p in prepared if p.syntax.ok and p.oracle is not None]
        types_future: Future[tuple[list[TypeReport], float]] | None = None
        if self.type_checker is not None and runnable:
            allowed = [self._allowed_evasions(p.task) for p in runnable]
            types_future = self._background.submit(self._check_types, [p.program for p in runnable], allowed)
        results = self._execute(runnable)
        type_reports, types_seconds = types_future.result() if types_future else ([], 0.0)

        by_index = {p.index: i for i, p in enumerate(runnable)}
        for item in prepared:
            position = by_index.get(item.index)
            verdicts[item.index] = self._verdict(
                item,
                results[position] if position is not None else None,
                type_reports[position] if position is not None and type_reports else None,
                types_seconds / max(1, len(runnable)),
            )
        return [v if v is not None else Verdict.failure("", "internal: ungraded") for v in verdicts]

    # ------------------------------------------------------------------ layers
    def _check_types(
        self, programs: list[str], allowed: list[frozenset[str]]
    ) -> tuple[list[TypeReport], float]:
        assert self.type_checker is not None
        started = time.perf_counter()
        reports = self.type_checker.check_many(programs, allowed)
        return reports, time.perf_counter() - started

    def _allowed_evasions(self, task: Task) -> frozenset[str]:
        """What the task's own reference does that would otherwise cost type credit (e.g. `eval`)."""
        with self._lock:
            known = self._allowed.get(task.id)
        if known is None:
            known = allowed_kinds(task.hidden.get("reference") or "")
            with self._lock:
                self._allowed[task.id] = known
        return known

    def _execute(self, runnable: list[_Prepared]) -> list[ExecResult]:
        jobs: list[Job] = []
        needs_reference: list[str] = []
        with self._lock:
            for item in runnable:
                assert item.oracle is not None
                if item.task.id not in self._reference_counts and item.task.id not in needs_reference:
                    needs_reference.append(item.task.id)
        reference_jobs = []
        for task_id in needs_reference:
            item = next(p for p in runnable if p.task.id == task_id)
            assert item.oracle is not None
            calls = item.oracle.calls + item.oracle.perf_calls  # the reference is measured on both
            job = self._job(item.task.hidden["reference"], item.oracle, item.task, calls, memory=True)
            # trusted and measured once per task: a slow reference gets room (tracing slows it down)
            reference_jobs.append(replace(job, timeout=job.timeout * REFERENCE_TIMEOUT_FACTOR))
        growth: list[_Prepared] = []
        for item in runnable:
            assert item.oracle is not None
            # with growth inputs, perf is measured there, so the test run needs no tracing
            jobs.append(self._job(item.program, item.oracle, item.task, trace=not item.oracle.perf_calls))
            if item.oracle.perf_calls:
                growth.append(item)
        perf_jobs = [
            self._job(p.program, p.oracle, p.task, p.oracle.perf_calls, memory=True)
            for p in growth
            if p.oracle
        ]
        results = self.sandbox.run_many(reference_jobs + jobs + perf_jobs) if jobs else []
        with self._lock:
            for task_id, result in zip(needs_reference, results[: len(reference_jobs)], strict=True):
                if result.status == "ok":
                    self._reference_counts[task_id] = list(result.counts)
                    self._reference_peaks[task_id] = list(result.peaks)
                    self._reference_loads[task_id] = result.load_count
        for item, result in zip(growth, results[len(reference_jobs) + len(jobs) :], strict=True):
            item.perf = result
        return results[len(reference_jobs) : len(reference_jobs) + len(jobs)]

    def _job(
        self,
        source: str,
        oracle: CodeOracle,
        task: Task,
        calls: list[Any] | None = None,
        trace: bool = True,
        memory: bool = False,
    ) -> Job:
        timeout = float(task.hidden.get("timeout") or self.timeout)
        return Job(
            source=sandbox_source(task, source),
            entry=oracle.entry_point,
            calls=oracle.calls if calls is None else calls,
            timeout=timeout,
            trace=trace,
            memory=memory,  # peak memory is scored on the growth inputs (and measured for the reference)
        )

    def _perf(self, item: _Prepared, reference_counts: list[int | None], result: ExecResult) -> PerfResult:
        oracle = item.oracle
        assert oracle is not None
        tests = len(oracle.calls)
        reference_peaks = self._reference_peaks.get(item.task.id, [])
        reference_load = self._reference_loads.get(item.task.id)

        def charged(run: ExecResult, sizes: tuple[int, ...] = ()) -> list[int | None]:
            """The run's counts, its load-time work beyond the reference's added to its (largest) last
            call: answers tabulated while the module loads are work, not free."""
            counts = list(run.counts)
            last = max(range(len(counts)), key=lambda i: (sizes[i], i)) if len(sizes) == len(counts) else -1
            if counts and type(counts[last]) is int and type(run.load_count) is int:
                counts[last] = int(counts[last] or 0) + max(0, run.load_count - int(reference_load or 0))
            return counts

        if not oracle.perf_calls:
            return perf_score(
                reference_counts[:tests], charged(result), None, reference_peaks[:tests], result.peaks
            )
        run = item.perf
        if run is None or run.status != "ok":
            detail = "the program did not finish the growth inputs" + (f" ({run.status})" if run else "")
            return PerfResult(0.0, 0, 0, detail)
        if not oracle.perf_agrees(run.outcomes):
            return PerfResult(0.0, 0, 0, "wrong answer on a growth input")
        return perf_score(
            reference_counts[tests:],
            charged(run, tuple(oracle.perf_sizes)),
            PerfPlan(oracle.perf_sizes),
            reference_peaks[tests:],
            run.peaks,
        )

    # ------------------------------------------------------------------ composition
    def _verdict(
        self, item: _Prepared, result: ExecResult | None, types: TypeReport | None, types_seconds: float
    ) -> Verdict:
        task, syntax = item.task, item.syntax
        timings = {"syntax": item.syntax_seconds}
        components = {name: Component(0.0, 1.0) for name in ("syntax", "types", "tests", "perf")}
        if not syntax.ok:
            where = f" (line {syntax.line})" if syntax.line else ""
            components["syntax"] = Component(0.0, 1.0, syntax.message)
            return Verdict(
                task.id,
                0.0,
                False,
                components,
                ["syntax"],
                f"syntax error{where}: {syntax.message}",
                timings,
                flags=item.flags() + ([syntax.limit] if syntax.limit else []),
            )
        components["syntax"] = Component(1.0, 1.0)
        if item.error or item.oracle is None or result is None:
            return Verdict(
                task.id, 0.0, False, components, ["tests"], "", timings, item.error or "not executed"
            )

        flags = item.flags() + list(getattr(result, "flags", []) or [])
        denied = [op for op in getattr(result, "denied", []) or [] if op in DENIED_OPS]
        flags += [denied_flag(op) for op in denied]  # flags only: a refusal never earns credit
        errors: list[str] = []
        if types is not None:
            components["types"] = Component(types.score, 1.0, "; ".join(types.messages[:3]))
            timings["types"] = types_seconds
            if types.error:  # the checker's own failure; the candidate's (types.flag) is a scored 0
                errors.append(f"types layer failed: {types.error}")
            if types.flag:
                flags.append(types.flag)
        elif self.weights["types"] == 0:
            components["types"] = Component(0.0, 0.0, "disabled")

        if item.syntax.suppressions:  # found by the syntax layer; comments are blanked before pyright
            flags.append("suppression_comment")
        timings["tests"] = result.wall
        feedback = ""
        visible_passed: bool | None = None
        if result.sandbox_error:
            errors.append(f"sandbox failure: {result.detail or result.status}")
            outcome = None
        else:
            outcome = item.oracle.judge(result.outcomes, visible=self.visible_feedback)
            if result.status != "ok" and outcome.passed:  # never pass a run that did not finish cleanly
                outcome.passed = False
            components["tests"] = Component(1.0 if outcome.passed else outcome.agreement, 1.0)
            visible_passed = item.oracle.visible_agreement(result.outcomes)
            if visible_passed and not outcome.passed:  # fits what the prompt shows, fails what it hides
                literal = literal_outputs_in_source(item.program, item.oracle.shown_examples())
                flags.append("special_cases_visible" + (":literal_outputs" if literal else ""))
            if not outcome.passed:
                feedback = CANDIDATE_FAULTS.get(result.status, outcome.failure or "hidden tests failed")
                if result.status == "protocol":
                    flags.append("forged_output")
                elif result.status in CANDIDATE_FAULTS:
                    flags.append(result.status)  # machine-readable: timeout, crash, output_limit, load_error
                if exited_early(result):
                    flags.append("exit_forgery")
                unreportable = [o.exception for o in result.outcomes if o is not None and not o.ok]
                unreportable = [name for name in unreportable if name in UNREPORTABLE_RESULTS]
                if unreportable:
                    feedback = UNREPORTABLE_RESULTS[unreportable[0]]
                    if any(name in OVERSIZED_RESULTS for name in unreportable):
                        flags.append("oversized:result")
                if outcome.count_text():
                    feedback += f" ({outcome.count_text()})"
                # a held-out task never shows its inputs, whatever the pack's feedback option says
                if self.visible_feedback and outcome.counterexample and task.split != "test":
                    feedback += f"; counterexample (the first failing input): {outcome.counterexample}"
                if self.counterexample_db is not None and outcome.counterexample:
                    record_counterexample(
                        Path(self.counterexample_db), task.id, outcome.counterexample["input"]
                    )

        weights = self.weights
        weak = self.weak_verifier and outcome is not None
        if weak:  # the reward checks the visible examples only; `passed` stays the hidden tests'
            weights = self.weak_weights
            score = 0.0 if result.status == "protocol" else item.oracle.visible_score(result.outcomes)
            if score is None:
                errors.append(
                    "verifier='visible' cannot grade this task: its prompt shows no example among its calls"
                )
                score = 0.0
            components["tests"] = Component(score, 1.0, "the prompt's visible examples only")
            components["perf"] = Component(0.0, 0.0, "not scored: verifier='visible'")
            feedback = "" if score == 1.0 else CANDIDATE_FAULTS.get(result.status, "a visible example failed")
            flags.append("verifier:visible")
        if denied:  # say plainly what was refused (operation names only, nothing hidden)
            feedback = "; ".join(part for part in (denial_feedback(denied), feedback) if part)
        if outcome is not None and outcome.passed and not weak:
            reference_counts = self._reference_counts.get(task.id)
            if reference_counts is None:
                errors.append("perf layer failed: the reference could not be measured")
            else:
                perf = self._perf(item, reference_counts, result)
                components["perf"] = Component(perf.score, 1.0, perf.detail)

        scores = {name: c.fraction for name, c in components.items()}
        reward, failed = gated_reward(scores, weights, CODE_GATES)
        passed = not failed and not result.sandbox_error
        if weak:  # the hidden tests' result, recorded beside a reward they did not decide
            passed = outcome is not None and outcome.passed
        return Verdict(
            task_id=task.id,
            reward=reward,
            passed=passed,
            components=components,
            gates=failed,
            feedback=feedback,
            timings=timings,
            error="; ".join(errors) or None,
            flags=flags,
            fault="sandbox" if result.sandbox_error else None,
            visible_passed=visible_passed,
        )

    def close(self) -> None:
        self._background.shutdown(wait=True)
        if self.type_checker is not None:
            self.type_checker.close()
        close = getattr(self.sandbox, "close", None)
        if close is not None and isinstance(self.options.sandbox, str):
            close()
