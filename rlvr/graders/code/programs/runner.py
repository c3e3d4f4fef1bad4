"""Grade program tasks: syntax, types, tests (one sandboxed run per test, compared here), perf.

Each test runs in its own fresh child (its own time, memory and public stdout limit; nothing it
leaves behind reaches the next test). Tests go to the sandbox in rounds of growing size bounded by
input size (never by anything about the expected outputs); with the default all-or-nothing gate a
candidate stops after its first round with a failing test. The layers and gates are the code
family's: syntax and tests are hard gates. Perf is the counted-ops ratio against the task's
reference program when it ships one; without a reference it is not measured and its weight is
spread over the other layers for that task.
"""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rlvr.core.flags import DENIED_OPS, denial_feedback, denied_flag
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.code.extract import BOM, PARSE_BUDGET_CHARS, last_fenced_block, parses
from rlvr.graders.code.perf import perf_score
from rlvr.graders.code.programs.compare import JudgeFn, JudgeRaised, load_judge, text_matches, value_matches
from rlvr.graders.code.programs.driver import CALL_ENTRY, RUN_ENTRY, driver_source
from rlvr.graders.code.syntax import analyze
from rlvr.graders.code.typecheck.checker import TypeChecker
from rlvr.graders.compose import CODE_GATES, gated_reward, normalized_weights
from rlvr.sandbox.pool import MAX_RESPONSE_BYTES, ExecResult, Job
from rlvr.specs.programs import ProgramSpec, ProgramSpecError, ProgramTest, parse_spec

ROUND_INPUT_BYTES = 4 << 20
ROUND_TESTS = (4, 16, 64)
"""Tests per round, growing: most wrong programs fail one of the first tests, and each test costs a
fresh child, so a short first round saves most of a wrong program's runs."""
OUTPUT_LIMIT_BYTES = 2 << 20
"""The stdout limit of every test of every program task (public: it is the same whatever the expected
output, so a program that probes it learns nothing hidden)."""
REPORT_LIMIT_BYTES = MAX_RESPONSE_BYTES - 4096
"""What the sandbox accepts from one test's child, counted outside the child's process."""
START_SECONDS = 0.1
"""CPU seconds a test's fresh child gets beyond the task's time limit, for the sandbox's own start."""
RUN_FAULTS = {
    "timeout": "timeout:tests",
    "crash": "crash",
    "output_limit": "output_limit",
    "protocol": "forged_output",
    "load_error": "load_error",
}


def extract_program(completion: str) -> str:
    """The program in a completion, by the function tasks' rule: the whole text when it is Python
    (a fence inside one of its strings is content), else its last fenced Python block, else the
    whole text for the syntax layer to report on. A BOM is dropped."""
    text = completion.lstrip(BOM)
    if len(text) <= PARSE_BUDGET_CHARS and parses(text) is not None:
        return text
    fenced = last_fenced_block(text)
    return fenced if fenced is not None else text


@dataclass
class _Candidate:
    index: int
    task: Task
    spec: ProgramSpec
    program: str
    passed: list[bool | None] = field(default_factory=list)  # per test; None: not run
    counts: list[int | None] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    failure: str = ""
    stopped: bool = False
    sandbox_error: str = ""
    wall: float = 0.0


def _rounds(spec: ProgramSpec) -> list[range]:
    """Consecutive test ranges run together (one fresh child per test), bounded by input size and
    count, so a problem with hundreds of multi-MB tests never holds all of them at once and a wrong
    program stops at its first failing round. Only the inputs decide, never the expected outputs."""
    out: list[range] = []
    start, input_bytes = 0, 0
    for i, test in enumerate(spec.tests):
        size_in = len(repr(test.input))
        most = ROUND_TESTS[min(len(out), len(ROUND_TESTS) - 1)]
        if i > start and (input_bytes + size_in > ROUND_INPUT_BYTES or i - start >= most):
            out.append(range(start, i))
            start, input_bytes = i, 0
        input_bytes += size_in
    out.append(range(start, len(spec.tests)))
    return out


def _check_output_sizes(spec: ProgramSpec) -> None:
    for number, test in enumerate(spec.tests, 1):
        if spec.call is None and isinstance(test.output, str):
            size = len(test.output.encode("utf-8", "surrogatepass"))
            if size > OUTPUT_LIMIT_BYTES:
                raise ProgramSpecError(
                    f"test {number} expects {size} bytes of output, more than the per-test stdout limit "
                    f"of {OUTPUT_LIMIT_BYTES} bytes"
                )


def _all_passed(candidate: _Candidate) -> bool:
    return bool(candidate.passed) and all(p is True for p in candidate.passed)


class ProgramTasks:
    """Grades the program tasks of a batch for the code grader, with its sandbox and type checker."""

    def __init__(self, sandbox: Any, type_checker: TypeChecker | None, weights: dict[str, float]) -> None:
        self.sandbox = sandbox
        self.type_checker = type_checker
        self.weights = weights
        self._judges: dict[str, JudgeFn] = {}
        self._reference_counts: dict[str, list[int | None] | None] = {}
        self._generated: dict[str, tuple[ProgramTest, ...]] = {}

    def grade(self, tasks: Sequence[Task], completions: Sequence[str]) -> list[Verdict]:
        verdicts: list[Verdict | None] = [None] * len(tasks)
        candidates: list[_Candidate] = []
        syntax_seconds: dict[int, float] = {}
        for index, (task, completion) in enumerate(zip(tasks, completions, strict=True)):
            try:
                spec = self._with_generated_tests(task, parse_spec(task.hidden))
                _check_output_sizes(spec)
                if spec.judge is not None and task.id not in self._judges:
                    self._judges[task.id] = load_judge(spec.judge)
            except ProgramSpecError as exc:
                verdicts[index] = Verdict.failure(task.id, f"task cannot be graded: {exc}", fault="task")
                continue
            started = time.perf_counter()
            program = extract_program(completion)
            report = analyze(program)
            syntax_seconds[index] = time.perf_counter() - started
            if not report.ok:
                where = f" (line {report.line})" if report.line else ""
                components = {name: Component(0.0, 1.0) for name in ("syntax", "types", "tests", "perf")}
                components["syntax"] = Component(0.0, 1.0, report.message)
                verdicts[index] = Verdict(
                    task.id,
                    0.0,
                    False,
                    components,
                    ["syntax"],
                    f"syntax error{where}: {report.message}",
                    {"syntax": syntax_seconds[index]},
                )
                continue
            tests = len(spec.tests)
            candidates.append(_Candidate(index, task, spec, program, [None] * tests, [None] * tests))

        started = time.perf_counter()
        types = self.type_checker.check_many([c.program for c in candidates]) if self.type_checker else []
        types_seconds = (time.perf_counter() - started) / max(1, len(candidates))
        self._run_tests(candidates)
        self._measure_references(candidates)
        for position, candidate in enumerate(candidates):
            verdicts[candidate.index] = self._verdict(
                candidate,
                types[position] if types else None,
                {"syntax": syntax_seconds[candidate.index], "types": types_seconds, "tests": candidate.wall},
            )
        return [
            v if v is not None else Verdict.failure("", "internal: ungraded", fault="grader")
            for v in verdicts
        ]

    # ------------------------------------------------------------------ generated tests
    def _with_generated_tests(self, task: Task, spec: ProgramSpec) -> ProgramSpec:
        """Differential tests: the pack's generator draws stdin texts (seeded by the task id) and the
        reference program's outputs, run in the sandbox like any program, become extra hidden
        tests. Inputs on which the reference fails are dropped. Computed once per task."""
        if spec.generator is None or spec.reference is None:
            return spec
        extra = self._generated.get(task.id)
        if extra is None:
            extra = self._generate(task, spec)
            self._generated[task.id] = extra
        return replace(spec, tests=spec.tests + extra)

    def _generate(self, task: Task, spec: ProgramSpec) -> tuple[ProgramTest, ...]:
        namespace: dict[str, Any] = {"__name__": "rlvr_generator"}
        try:
            exec(compile(spec.generator or "", "<generator>", "exec"), namespace)
            generate = namespace["generate"]
            rng = random.Random(zlib.crc32(task.id.encode()))
            inputs = [str(generate(rng)) for _ in range(spec.generated_tests)]
        except Exception as exc:
            raise ProgramSpecError(f"generator failed: {type(exc).__name__}: {exc}") from exc
        probe = replace(spec, tests=tuple(ProgramTest(i, "") for i in inputs), call=None)
        results = self._run_rounds(
            [(probe, spec.reference or "", tests, False) for tests in _rounds(probe)], trace=False
        )
        if any(result is None or result.sandbox_error for result in results):
            raise ProgramSpecError("the reference could not be run on the generated inputs (sandbox failure)")
        tests = []
        for stdin, result in zip(inputs, results, strict=True):
            assert result is not None
            outcome = result.outcomes[0] if result.status == "ok" and result.outcomes else None
            value = outcome.value if outcome is not None and outcome.ok else None
            if (
                isinstance(value, list)
                and len(value) == 5
                and value[1] == 0
                and value[2] is None
                and not value[4]
            ):
                tests.append(ProgramTest(stdin, value[0]))
        return tuple(tests)

    # ------------------------------------------------------------------ tests
    def _job(
        self, spec: ProgramSpec, program: str, tests: range, trace: bool = True, stop: bool = False
    ) -> Job:
        """A round of tests, one fresh child each (`run_each`: the sandbox loads the driver once and
        forks a child per test from it): each its own time limit, memory limit and stdout limit,
        nothing shared with any other test. The limits are the task's public ones, never the
        expected output's. `stop`: the sandbox stops at the first test whose child did not finish
        cleanly (the all-or-nothing gate cannot pass after it)."""
        calls: list[tuple[Any, ...]] = []
        for test in tests:
            if spec.call is None:
                calls.append((spec.tests[test].input, OUTPUT_LIMIT_BYTES))
            else:
                calls.append((spec.call, spec.tests[test].input, OUTPUT_LIMIT_BYTES))
        return Job(
            source=driver_source(program),
            entry=RUN_ENTRY if spec.call is None else CALL_ENTRY,
            calls=calls,
            timeout=spec.time_limit + START_SECONDS,
            trace=trace,
            mem_mb=spec.memory_mb,
            max_output=REPORT_LIMIT_BYTES,
            stop_on_failure=stop,
        )

    def _run_rounds(
        self, rounds: list[tuple[ProgramSpec, str, range, bool]], trace: bool = True
    ) -> list[ExecResult | None]:
        """Each (spec, program, tests, stop) round through `run_each`, split so every worker of the
        sandbox has a piece when there are fewer rounds than workers; one result per test, in order
        (None: not run, after a failure that stopped its round)."""
        workers = int(getattr(self.sandbox, "size", 1) or 1)
        pieces = max(1, -(-workers // max(1, len(rounds))))
        jobs = []
        for spec, program, tests, stop in rounds:
            step = max(1, -(-len(tests) // pieces))
            for start in range(0, len(tests), step):
                part = tests[start : start + step]
                jobs.append(self._job(spec, program, part, trace=trace, stop=stop))
        return [result for results in self.sandbox.run_each_many(jobs) for result in results]

    def _run_tests(self, candidates: list[_Candidate]) -> None:
        plans = {id(c): _rounds(c.spec) for c in candidates}
        round_number = 0
        while True:
            active = [c for c in candidates if not c.stopped and round_number < len(plans[id(c)])]
            if not active:
                return
            rounds = [
                (c.spec, c.program, plans[id(c)][round_number], not c.spec.partial_credit) for c in active
            ]
            results = iter(self._run_rounds(rounds))
            for candidate in active:
                for i in plans[id(candidate)][round_number]:
                    result = next(results)
                    if result is not None and not candidate.stopped:
                        self._score_test(candidate, i, result)
            for candidate in active:
                if False in candidate.passed and not candidate.spec.partial_credit:
                    candidate.stopped = True  # the gate is all-or-nothing: the rest cannot change it
            round_number += 1

    def _score_test(self, candidate: _Candidate, i: int, result: ExecResult) -> None:
        candidate.wall += result.wall
        for flag in [*result.flags, *(denied_flag(op) for op in result.denied if op in DENIED_OPS)]:
            if flag not in candidate.flags:
                candidate.flags.append(flag)
        if result.sandbox_error:
            candidate.sandbox_error = result.detail or result.status
            candidate.stopped = True
            return
        spec = candidate.spec
        outcome = result.outcomes[0] if result.outcomes else None
        candidate.counts[i] = result.counts[0] if result.counts else None
        ok = False
        if result.status == "ok" and outcome is not None and outcome.ok and isinstance(outcome.value, list):
            ok = self._test_passes(candidate, spec, i, outcome.value)
        candidate.passed[i] = ok
        if not ok and not candidate.failure:
            why = "exceeded its time limit" if result.status == "timeout" else "failed"
            candidate.failure = f"test {i + 1} of {len(spec.tests)} {why}"
        if result.status != "ok":
            flag = RUN_FAULTS.get(result.status, result.status)
            if flag not in candidate.flags:
                candidate.flags.append(flag)

    def _test_passes(self, candidate: _Candidate, spec: ProgramSpec, i: int, value: list[Any]) -> bool:
        test = spec.tests[i]
        if spec.call is not None:
            if len(value) != 2 or value[0] is not None:
                return False
            return value_matches(spec, test.output, value[1])
        if len(value) != 5:
            return False
        output, exit_code, raised, _stderr_bytes, truncated = value
        if truncated:
            if "output_limit" not in candidate.flags:
                candidate.flags.append("output_limit")
            return False
        if raised is not None or exit_code != 0 or not isinstance(output, str):
            return False
        try:
            return text_matches(spec, test.input, test.output, output, self._judges.get(candidate.task.id))
        except JudgeRaised:
            if "judge_raised" not in candidate.flags:
                candidate.flags.append("judge_raised")
            return False

    # ------------------------------------------------------------------ perf
    def _measure_references(self, candidates: list[_Candidate]) -> None:
        needed = {
            c.task.id: c
            for c in candidates
            if c.spec.reference and c.task.id not in self._reference_counts and _all_passed(c)
        }
        if not needed or self.weights.get("perf", 0.0) <= 0:
            return
        items = list(needed.values())
        rounds = [(c.spec, c.spec.reference or "", tests, False) for c in items for tests in _rounds(c.spec)]
        results = iter(self._run_rounds(rounds))
        for candidate in items:
            runs = [next(results) for _ in candidate.spec.tests]
            counts = [r.counts[0] if r is not None and r.counts else None for r in runs]
            usable = all(r is not None and r.status == "ok" for r in runs) and any(counts)
            self._reference_counts[candidate.task.id] = counts if usable else None

    # ------------------------------------------------------------------ verdict
    def _verdict(self, c: _Candidate, types: Any, timings: dict[str, float]) -> Verdict:
        components = {"syntax": Component(1.0, 1.0)}
        flags = list(c.flags)
        weights = dict(self.weights)
        if types is not None:
            components["types"] = Component(types.score, 1.0, "; ".join(types.messages[:3]))
        else:
            components["types"] = Component(0.0, 0.0, "disabled")
        total = len(c.spec.tests)
        passed_all = not c.sandbox_error and _all_passed(c)
        tests_score = sum(p is True for p in c.passed) / total if c.spec.partial_credit else float(passed_all)
        components["tests"] = Component(tests_score, 1.0, c.failure)
        reference_counts = self._reference_counts.get(c.task.id)
        if passed_all and reference_counts is not None and c.counts and any(n for n in c.counts):
            perf = perf_score(reference_counts, c.counts)
            components["perf"] = Component(perf.score, 1.0, perf.detail)
        elif passed_all:  # nothing to measure against: perf leaves this task's reward
            weights["perf"] = 0.0
            components["perf"] = Component(0.0, 0.0, "not measured: the task ships no reference program")
            weights = normalized_weights(weights, self.weights, CODE_GATES)
        else:
            components["perf"] = Component(0.0, 1.0)
        scores = {
            name: (1.0 if name == "tests" and passed_all else comp.fraction)
            for name, comp in components.items()
        }
        reward, failed = gated_reward(scores, weights, CODE_GATES)
        error = f"sandbox failure: {c.sandbox_error}" if c.sandbox_error else None
        if types is not None and types.error:
            flags.append("types_unavailable")
        feedback = "" if passed_all else (c.failure or "hidden tests failed")
        denied = [f.removeprefix("sandbox:denied:") for f in flags if f.startswith("sandbox:denied:")]
        if denied:  # say plainly what was refused (operation names only, nothing hidden)
            feedback = "; ".join(part for part in (denial_feedback(denied), feedback) if part)
        return Verdict(
            task_id=c.task.id,
            reward=reward,
            passed=passed_all and not failed,
            components=components,
            gates=failed,
            feedback=feedback,
            timings=timings,
            error=error,
            flags=flags,
            fault="sandbox" if error else None,
        )
