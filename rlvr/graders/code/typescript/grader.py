"""The TypeScript code grader: syntax -> types -> tests -> perf, the code family's layers and gates.

* syntax: tree-sitter-typescript (`syntax.analyze`), a hard gate;
* types: the warm compiler process in strict mode, a batch per call, comments blanked first (no
  `@ts-ignore`/`@ts-expect-error`/`@ts-nocheck` buys anything); where the task forbids `any`
  (`hidden["forbid_any"]`), each `any` costs one error. Score 1 / (1 + errors) as for Python;
* tests: the candidate is transpiled in the trusted compiler process (with op counters under a
  name drawn per batch) and run as JavaScript in the sandbox (`Job(runtime="node")`) on plain-data
  arguments; results come back as plain data tagged with the run's token and are judged by the
  Python task's oracle (`oracle.TsOracle`), here. Exit codes and output decide nothing. A hard gate;
* perf: counted statements (deterministic; the module's load-time work beyond the reference's is
  charged to the last call, as for Python), banded against a TypeScript reference of the task
  (`hidden["ts_reference"]`) with the code family's rule (`rlvr.graders.code.perf`). A task without
  one has no perf layer: its weight is left out (the component says so), never faked.
"""

from __future__ import annotations

import secrets
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.code.batch import run_groups
from rlvr.graders.code.family import CodeFamilyGrader, candidates, place_verdicts
from rlvr.graders.code.grader import DEFAULT_TIMEOUT_SECONDS, REFERENCE_TIMEOUT_FACTOR
from rlvr.graders.code.oracle import OracleError
from rlvr.graders.code.perf import PerfPlan, PerfResult, charge_load, perf_score
from rlvr.graders.code.properties.suite import record_counterexample
from rlvr.graders.code.typecheck.report import MAX_MESSAGES, TypeReport, type_score
from rlvr.graders.code.typescript.compiler import CheckResult, TsCompiler
from rlvr.graders.code.typescript.extract import extract_program
from rlvr.graders.code.typescript.oracle import TsOracle, python_task
from rlvr.graders.code.typescript.signature import with_signature_check
from rlvr.graders.code.typescript.syntax import MAX_SOURCE_CHARS, TsSyntaxReport, analyze, blank_comments
from rlvr.graders.code.verdict import Findings, Judgement, compose, failed_run
from rlvr.graders.options import OptionsError
from rlvr.sandbox import build_sandbox
from rlvr.sandbox.pool import ExecResult, Job

REFERENCE_UNMEASURED = "the TypeScript reference could not be measured"
NO_REFERENCE = "no TypeScript reference to measure against"


@dataclass
class _Item:
    index: int
    task: Task
    program: str
    syntax: TsSyntaxReport
    oracle: TsOracle | None = None
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    js: str | None = None
    perf: ExecResult | None = None
    seconds: float = 0.0


def type_report(result: CheckResult, forbid_any: bool, suppressions: int) -> TypeReport:
    if result.flag:
        return TypeReport(
            0.0, 0, 0, [f"the type checker could not judge the source ({result.flag})"], flag=result.flag
        )
    errors = len(result.diagnostics)
    messages = [f"line {d.get('line')}: {d.get('message')}" for d in result.diagnostics[:MAX_MESSAGES]]
    if forbid_any and result.any_count:
        errors += result.any_count
        messages = [f"`any` used {result.any_count} time(s) where the task forbids it"] + messages
    if result.unchecked_casts:  # each one is a place the checker was told not to look
        errors += result.unchecked_casts
        messages = [
            f"{result.unchecked_casts} unchecked type assertion(s) (out of `unknown`/`any`, or through `never`)"
        ] + messages
    if suppressions:
        messages = [f"{suppressions} suppression comment(s) ignored"] + messages
    return TypeReport(type_score(errors), errors, 0, messages[:MAX_MESSAGES])


class TypeScriptGrader(CodeFamilyGrader):
    """Grades TypeScript completions of a pack with `language = "typescript"` (options: `CodeOptions`)."""

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        o = self.options
        if o.verifier != "hidden":  # the weak research mode exists for Python code packs only
            raise OptionsError(
                f"option 'verifier' = {o.verifier!r} is not supported for TypeScript packs; use 'hidden'"
            )
        self.weights = o.layer_weights()
        self.weights_without_perf = o.layer_weights(perf=False)
        self.timeout = float(o.timeout or DEFAULT_TIMEOUT_SECONDS)
        self.compiler = TsCompiler()  # builds (and checks when types are on); fails loudly without node
        self.checker = TsCompiler() if self.weights["types"] > 0 else None  # a second process: concurrent
        self.sandbox, self._owns_sandbox = build_sandbox(o.sandbox, o.jobs, o.runtime, node=True)
        self.oracles = o.oracle_cache()
        self._ts_oracles: dict[str, TsOracle | OracleError] = {}
        self._reference_counts: dict[str, list[int | None]] = {}
        self._reference_loads: dict[str, int | None] = {}  # the reference module's load-time work
        self._lock = threading.Lock()
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlvr-ts-types")

    # ------------------------------------------------------------------ oracle
    def oracle(self, task: Task) -> TsOracle:
        with self._lock:
            known = self._ts_oracles.get(task.id)
        if known is None:
            try:
                known = TsOracle(self.oracles.get(python_task(task)))
            except OracleError as exc:
                known = exc
            with self._lock:
                self._ts_oracles[task.id] = known
        if isinstance(known, OracleError):
            raise known
        return known

    # ------------------------------------------------------------------ batch
    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        verdicts: list[Verdict | None] = [None] * len(tasks)
        items: list[_Item] = []
        for index, task, completion in candidates(tasks, completions, verdicts):
            started = time.perf_counter()
            entry = str(task.hidden["entry_point"])
            if len(completion) > MAX_SOURCE_CHARS:
                program, origin = completion, "raw"
            else:
                extraction = extract_program(task.prompt, completion, entry)
                program, origin = extraction.program, extraction.origin
            item = _Item(index, task, program, analyze(program))
            if origin.startswith("block"):
                item.flags.append(f"extracted:{origin}")
            if item.syntax.ok:
                try:
                    item.oracle = self.oracle(task)
                except OracleError as exc:
                    item.error = f"task cannot be graded: {exc}"
            item.seconds = time.perf_counter() - started
            items.append(item)

        runnable = [i for i in items if i.syntax.ok and i.oracle is not None]
        types_future: Future[tuple[list[TypeReport], float]] | None = None
        if self.checker is not None and runnable:
            types_future = self._background.submit(self._types, runnable)
        results, perf_runs = self._run(runnable)
        reports, types_seconds = types_future.result() if types_future else ([], 0.0)
        place_verdicts(verdicts, items, runnable, results, reports, types_seconds, self._verdict)
        return [
            v if v is not None else Verdict.failure("", "internal: ungraded", fault="grader")
            for v in verdicts
        ]

    def _types(self, items: list[_Item]) -> tuple[list[TypeReport], float]:
        assert self.checker is not None
        started = time.perf_counter()
        checked = self.checker.check_many(
            [
                with_signature_check(
                    blank_comments(i.program), i.task.prompt, str(i.task.hidden["entry_point"])
                )
                for i in items
            ]
        )
        reports = [
            type_report(result, bool(i.task.hidden.get("forbid_any", True)), len(i.syntax.suppressions))
            for i, result in zip(items, checked, strict=True)
        ]
        return reports, time.perf_counter() - started

    def _job(self, js: str, task: Task, calls: list[Any], counter: str, timeout_factor: float = 1.0) -> Job:
        timeout = float(task.hidden.get("timeout") or self.timeout) * timeout_factor
        return Job(
            source=js,
            entry=str(task.hidden["entry_point"]),
            calls=calls,
            timeout=timeout,
            trace=True,
            runtime="node",
            counter=counter,
        )

    def _run(self, items: list[_Item]) -> tuple[list[ExecResult], list[ExecResult | None]]:
        if not items:
            return [], []
        counter = "__rlvr_ops_" + secrets.token_hex(8)  # unguessable per batch; only ever increments
        references: list[tuple[str, _Item]] = []
        with self._lock:
            for item in items:
                if item.task.hidden.get("ts_reference") and item.task.id not in self._reference_counts:
                    if all(item.task.id != r for r, _ in references):
                        references.append((item.task.id, item))
        sources = [i.program for i in items] + [str(i.task.hidden["ts_reference"]) for _, i in references]
        built = self.compiler.build_many(sources, counter)
        for item, js in zip(items, built[: len(items)], strict=True):
            item.js = js
        reference_jobs: list[Job] = []
        for position, (_, item) in enumerate(references):
            assert item.oracle is not None
            js = built[len(items) + position]
            calls = item.oracle.calls + item.oracle.perf_calls
            reference_jobs.append(self._job(js or "", item.task, calls, counter, REFERENCE_TIMEOUT_FACTOR))
        runs = [i for i in items if i.js is not None]
        growth = [
            i
            for i in runs
            if i.oracle is not None and i.oracle.perf_calls and i.task.hidden.get("ts_reference")
        ]
        results = run_groups(
            self.sandbox,
            {
                "reference": reference_jobs,
                "tests": [
                    self._job(i.js or "", i.task, i.oracle.calls if i.oracle else [], counter) for i in runs
                ],
                "growth": [
                    self._job(i.js or "", i.task, i.oracle.perf_calls if i.oracle else [], counter)
                    for i in growth
                ],
            },
        )
        with self._lock:
            for (task_id, _), result in zip(references, results["reference"], strict=True):
                if result.status == "ok":  # a failed measurement is not remembered: the next batch retries
                    self._reference_counts[task_id] = list(result.counts)
                    self._reference_loads[task_id] = result.load_count
        by_index = dict(zip([i.index for i in runs], results["tests"], strict=True))
        for item, result in zip(growth, results["growth"], strict=True):
            item.perf = result
        out: list[ExecResult] = []
        for item in items:
            result = by_index.get(item.index)
            out.append(result or ExecResult(status="load_error", detail="the program could not be compiled"))
        return out, [i.perf for i in items]

    # ------------------------------------------------------------------ composition
    def _perf(self, item: _Item, result: ExecResult) -> PerfResult | None:
        oracle = item.oracle
        if oracle is None or not item.task.hidden.get("ts_reference"):
            return None
        with self._lock:
            reference = self._reference_counts.get(item.task.id)
            reference_load = self._reference_loads.get(item.task.id)
        if reference is None:  # the machinery's failure, never the candidate's: a grading error (below)
            return PerfResult(0.0, 0, 0, REFERENCE_UNMEASURED)
        tests = len(oracle.calls)
        if not oracle.perf_calls:
            return perf_score(
                reference[:tests], charge_load(result.counts, result.load_count, reference_load)
            )
        run = item.perf
        if run is None or run.status != "ok":
            return PerfResult(0.0, 0, 0, "the program did not finish the growth inputs")
        if not oracle.perf_agrees(run.outcomes):
            return PerfResult(0.0, 0, 0, "wrong answer on a growth input")
        sizes = tuple(oracle.python.perf_sizes)
        counts = charge_load(run.counts, run.load_count, reference_load, sizes)
        return perf_score(reference[tests:], counts, PerfPlan(sizes))

    def _verdict(
        self, item: _Item, result: ExecResult | None, types: TypeReport | None, types_seconds: float
    ) -> Verdict:
        has_reference = bool(item.task.hidden.get("ts_reference"))
        found = Findings(
            item.task.id,
            item.syntax,
            item.seconds,
            flags=list(item.flags),
            setup_error=item.error,
            result=result if item.oracle is not None else None,
            types=types,
            types_seconds=types_seconds,
            perf_absent=None if has_reference else Component(0.0, 0.0, NO_REFERENCE),
        )
        judge = None
        if item.syntax.ok and item.oracle is not None and result is not None and not result.sandbox_error:
            judge = self._judge(item, result)
        weights = self.weights if has_reference else self.weights_without_perf
        return compose(found, judge, weights, types_enabled=self.weights["types"] > 0)

    def _judge(self, item: _Item, result: ExecResult) -> Judgement:
        """The tests and perf layers of a run that finished (not a sandbox failure)."""
        oracle = item.oracle
        assert oracle is not None
        flags: list[str] = []
        feedback = ""
        outcome = oracle.judge(result.outcomes, visible=self.options.feedback == "visible")
        passed_tests = outcome.passed and result.status == "ok"
        visible_passed = oracle.visible_agreement(result.outcomes)
        if visible_passed and not passed_tests:
            flags.append("special_cases_visible")
        if not passed_tests:
            feedback, ended = failed_run(result, outcome.failure)
            flags += ended
            if self.options.feedback == "visible" and outcome.counterexample:
                feedback += f"; counterexample: {outcome.counterexample}"
            if self.options.counterexample_db is not None and outcome.counterexample:
                record_counterexample(
                    Path(self.options.counterexample_db),
                    oracle.python.task_id,
                    outcome.counterexample["input"],
                )
        tests = Component(1.0 if passed_tests else outcome.agreement, 1.0)
        judgement = Judgement(tests, feedback, flags, visible_passed=visible_passed)
        perf = self._perf(item, result) if passed_tests else None
        if perf is not None:
            judgement.perf = Component(perf.score, 1.0, perf.detail)
            if perf.detail == REFERENCE_UNMEASURED:
                judgement.errors.append(f"perf layer failed: {REFERENCE_UNMEASURED}")
        return judgement

    def close(self) -> None:
        self._background.shutdown(wait=True)
        self.compiler.close()
        if self.checker is not None:
            self.checker.close()
        if self._owns_sandbox:
            self.sandbox.close()
