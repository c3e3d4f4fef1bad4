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

from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.code.batch import run_groups
from rlvr.graders.code.evasions import allowed_kinds
from rlvr.graders.code.extract import Extraction, extract_program
from rlvr.graders.code.family import CodeFamilyGrader, candidates, place_verdicts
from rlvr.graders.code.oracle import CodeOracle, OracleError
from rlvr.graders.code.perf import PerfPlan, PerfResult, charge_load, perf_score
from rlvr.graders.code.programs.runner import ProgramTasks
from rlvr.graders.code.properties.stateful import sandbox_source
from rlvr.graders.code.properties.suite import record_counterexample
from rlvr.graders.code.signature import signature_losses
from rlvr.graders.code.syntax import MAX_SOURCE_CHARS, SyntaxReport, analyze
from rlvr.graders.code.typecheck.checker import TypeChecker, TypeReport
from rlvr.graders.code.typecheck.report import charge_evasions
from rlvr.graders.code.verdict import CANDIDATE_FAULTS, Findings, Judgement, compose, failed_run
from rlvr.graders.code.visible import literal_outputs_in_source
from rlvr.sandbox import build_sandbox
from rlvr.sandbox.pool import ExecResult, Job
from rlvr.sandbox.protocol import OVERSIZED_RESULTS, UNREPORTABLE_RESULTS
from rlvr.specs.programs import is_program_task

DEFAULT_TIMEOUT_SECONDS = 10.0
REFERENCE_TIMEOUT_FACTOR = 6


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


class CodeGrader(CodeFamilyGrader):
    """Four layers (syntax, types, tests, perf) with hard gates; options in `CodeOptions`."""

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        o = self.options
        self.weights = o.layer_weights()
        self.visible_feedback = o.feedback == "visible"
        # the deliberately weak mode: the reward sees only the prompt's examples (perf leaves it)
        self.weak_verifier = o.verifier == "visible"
        self.weak_weights = o.layer_weights(perf=False)
        self.timeout = float(o.timeout or DEFAULT_TIMEOUT_SECONDS)
        self.sandbox, self._owns_sandbox = build_sandbox(o.sandbox, o.jobs, o.runtime)
        self.type_checker = TypeChecker() if self.weights["types"] > 0 else None
        self.counterexample_db = o.counterexample_db
        self.oracles = o.oracle_cache()
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
        for index, task, completion in candidates(tasks, completions, verdicts):
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
            types_future = self._background.submit(
                self._check_types, [p.program for p in runnable], allowed, [p.task.prompt for p in runnable]
            )
        results = self._execute(runnable)
        type_reports, types_seconds = types_future.result() if types_future else ([], 0.0)

        place_verdicts(verdicts, prepared, runnable, results, type_reports, types_seconds, self._verdict)
        return [v if v is not None else Verdict.failure("", "internal: ungraded") for v in verdicts]

    # ------------------------------------------------------------------ layers
    def _check_types(
        self, programs: list[str], allowed: list[frozenset[str]], prompts: list[str]
    ) -> tuple[list[TypeReport], float]:
        """pyright's reports, each charged for the prompt's declared annotations the program drops
        or weakens (scored against the declared signature, so typing less never scores more)."""
        assert self.type_checker is not None
        started = time.perf_counter()
        reports = self.type_checker.check_many(programs, allowed)
        reports = [
            charge_evasions(report, signature_losses(prompt, program))
            if report.error is None and report.flag is None
            else report
            for report, prompt, program in zip(reports, prompts, programs, strict=True)
        ]
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
        if not jobs:
            return []
        results = run_groups(self.sandbox, {"reference": reference_jobs, "tests": jobs, "growth": perf_jobs})
        with self._lock:
            for task_id, result in zip(needs_reference, results["reference"], strict=True):
                if result.status == "ok":
                    self._reference_counts[task_id] = list(result.counts)
                    self._reference_peaks[task_id] = list(result.peaks)
                    self._reference_loads[task_id] = result.load_count
        for item, result in zip(growth, results["growth"], strict=True):
            item.perf = result
        return results["tests"]

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
            return charge_load(list(run.counts), run.load_count, reference_load, sizes)

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
        found = Findings(
            item.task.id,
            item.syntax,
            item.syntax_seconds,
            flags=item.flags(),
            setup_error=item.error,
            result=result if item.oracle is not None else None,
            types=types,
            types_seconds=types_seconds,
            # found by the syntax layer; comments are blanked before pyright
            source_flags=["suppression_comment"] if item.syntax.suppressions else [],
        )
        judge = None
        if item.syntax.ok and item.oracle is not None and result is not None and not result.sandbox_error:
            judge = self._judge(item, result)
        weights = self.weak_weights if self.weak_verifier and judge is not None else self.weights
        return compose(found, judge, weights, types_enabled=self.weights["types"] > 0)

    def _judge(self, item: _Prepared, result: ExecResult) -> Judgement:
        """The tests and perf layers of a run that finished (not a sandbox failure)."""
        task, oracle = item.task, item.oracle
        assert oracle is not None
        flags: list[str] = []
        feedback = ""
        outcome = oracle.judge(result.outcomes, visible=self.visible_feedback)
        if result.status != "ok" and outcome.passed:  # never pass a run that did not finish cleanly
            outcome.passed = False
        tests = Component(1.0 if outcome.passed else outcome.agreement, 1.0)
        visible_passed = oracle.visible_agreement(result.outcomes)
        if visible_passed and not outcome.passed:  # fits what the prompt shows, fails what it hides
            literal = literal_outputs_in_source(item.program, oracle.shown_examples())
            flags.append("special_cases_visible" + (":literal_outputs" if literal else ""))
        if not outcome.passed:
            feedback, ended = failed_run(result, outcome.failure)
            flags += ended
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
                record_counterexample(Path(self.counterexample_db), task.id, outcome.counterexample["input"])
        judgement = Judgement(tests, feedback, flags, visible_passed=visible_passed)
        if (
            self.weak_verifier
        ):  # the reward checks the visible examples only; `passed` stays the hidden tests'
            score = 0.0 if result.status == "protocol" else oracle.visible_score(result.outcomes)
            if score is None:
                judgement.errors.append(
                    "verifier='visible' cannot grade this task: its prompt shows no example among its calls"
                )
                score = 0.0
            judgement.tests = Component(score, 1.0, "the prompt's visible examples only")
            judgement.perf = Component(0.0, 0.0, "not scored: verifier='visible'")
            judgement.feedback = (
                "" if score == 1.0 else CANDIDATE_FAULTS.get(result.status, "a visible example failed")
            )
            judgement.flags.append("verifier:visible")
            judgement.passed = outcome.passed  # the hidden tests' result, beside a reward they did not decide
        elif outcome.passed:
            reference_counts = self._reference_counts.get(task.id)
            if reference_counts is None:
                judgement.errors.append("perf layer failed: the reference could not be measured")
            else:
                perf = self._perf(item, reference_counts, result)
                judgement.perf = Component(perf.score, 1.0, perf.detail)
        return judgement

    def close(self) -> None:
        self._background.shutdown(wait=True)
        if self.type_checker is not None:
            self.type_checker.close()
        if self._owns_sandbox:
            self.sandbox.close()
