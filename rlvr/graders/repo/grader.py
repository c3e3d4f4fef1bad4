"""Grading a repository state: gates (patch applies, no protected path edited, syntax of every changed
file, no type error introduced over the base state, every hidden scenario behaves as the reference).

Trusted-oracle rule: the hidden scenarios are plain-data calls into the repository's public API. They
run in the sandbox twice — once on the candidate repository, once on the reference end state — and
only the two results, as plain data, come back here to be compared. Nothing the candidate's code
prints, returns as an exit code, or writes decides anything; the hidden spec never reaches the child
that runs candidate code, and no file of the workspace exists on any disk while that code runs.

Task hidden spec: `base` and `reference` ({path: source}), `scenarios` (see child_driver.py for the
kinds: call, object, cli, sqlite), `domains` (declared inputs of public functions; hypothesis generates
more call scenarios from them, see rlvr/specs/repo_domains.py), `perf` (scenarios run with counted
operations, see below), `protected` (glob patterns no edit may touch).

Perf (tasks that declare perf scenarios; not a gate): each perf scenario runs in a traced sandbox job on
the candidate's repository and on the reference state (deterministic Python line/call counts, returned
as plain data beside the outcomes). A scenario whose outcome differs from the reference's scores 0;
otherwise its counts are banded with the single-function rule (`rlvr.graders.code.perf.ops_score`: full
credit up to 2x the reference's count, then allowance / candidate), and the perf component is the mean
over the scenarios. Tasks without perf scenarios give perf no weight (their rewards are unchanged).

Visible tests (the repository's own, never rewarded: they run in the candidate's process): their
outcome is only `Verdict.visible_passed` and the `special_cases_visible` flag (a state that fails the
hidden checks, changes files, passes the visible tests the base state fails). `RepoOptions.visible_tests`
says when a submit runs them: "flag" (default) exactly when that flag can fire, in a second child after
the hidden checks; "always" on every submit; "never". Only the test files the change can affect run;
the others' outcomes are the base state's, and a mined pack's recorded failing tests are left out
(see visible_tests.py).
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from rlvr.core.flags import denial_feedback, denied_flag
from rlvr.core.pack import TaskPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.base import Grader
from rlvr.graders.code.perf import ops_score
from rlvr.graders.code.syntax import analyze
from rlvr.graders.compose import gated_reward, normalized_weights
from rlvr.graders.repo.checks import (
    TaskChecks,
    added_names,
    agrees,
    check_key,
    derived_checks,
    earlier_version_checks,
    exact_return_types,
    is_test_path,
    kept_by_reference,
    parameter_names,
    progress,
    shown_domains,
    visible_words,
    with_exact_types,
)
from rlvr.graders.repo.invisible_messages import message_patterns
from rlvr.graders.repo.options import RepoOptions
from rlvr.graders.repo.patch import PatchError, apply_completion
from rlvr.graders.repo.runner import ops_job, perf_ops, run_ops, same_value
from rlvr.graders.repo.sequences import with_observed_state
from rlvr.graders.repo.type_rules import charged_report, introduced_evasions, reference_kinds
from rlvr.graders.repo.visible_tests import (
    affected_test_files,
    files_failing,
    known_failing,
    merged_lines,
    tests_lines,
    visible_outcome,
)
from rlvr.graders.repo.whole_repo_types import CANDIDATE_FAILURES, RepoTypeChecker
from rlvr.graders.repo.workspace import DEFAULT_PROTECTED, Workspace, changed_paths, is_protected
from rlvr.sandbox import ExecResult, WorkerPool, build_sandbox
from rlvr.specs.repo_domains import domain_scenarios

REPO_WEIGHTS: dict[str, float] = {
    "patch": 0.05,
    "syntax": 0.05,
    "types": 0.2,
    "behaviour": 0.7,
    "perf": 0.1,  # only for tasks with perf scenarios (others: weight 0, the rest renormalized)
}
REPO_GATES: tuple[str, ...] = ("patch", "syntax", "types", "behaviour")
DEFAULT_TIMEOUT = 10.0
MAX_FEEDBACK_ITEMS = 3


def repo_reward(scores: dict[str, float], weights: dict[str, float]) -> tuple[float, list[str]]:
    """(reward, failed gates): the gated composition, and while the behaviour gate fails the reward is
    scaled by the behaviour score (progress on the checks the base state fails, times the share of the
    others still passed), so a no-op earns nothing for the many checks it already passes and a state
    that fails hidden checks scores below the same state passing them."""
    reward, failed = gated_reward(scores, weights, REPO_GATES)
    if all(scores.get(name, 0.0) >= 1.0 for name, weight in weights.items() if weight > 0):
        return 1.0, failed  # every component full: exactly 1.0, not a rounded sum of weights
    if "behaviour" in failed:
        reward *= min(1.0, max(0.0, float(scores.get("behaviour", 0.0))))
    return reward, failed


class ReferenceFault(RuntimeError):
    """The task's reference state could not be run: a fault of the pack, not of the candidate."""


def _refused(value: Any, depth: int = 0) -> bool:
    """Did a scenario outcome record a sandbox refusal (the candidate tried a forbidden operation)?"""
    if depth > 8:
        return False
    if isinstance(value, dict):
        if value.get("raises") == "Refused" or value.get("exit") == "raises Refused":
            return True
        return any(_refused(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_refused(v, depth + 1) for v in value)
    return False


def _visible_for(scenario: dict[str, Any], visible: frozenset[str]) -> frozenset[str]:
    """Derived domain checks compare exceptions as raised or not (their inputs are ours, not the
    task's: which exception the reference raises there was never shown)."""
    return (
        frozenset()
        if scenario.get("derived")
        in ("call-domain", "cli-domain", "object-boundary", "call-fed", "object-callables")
        else visible
    )


def _check_label(scenario: dict[str, Any]) -> str:
    derived = scenario.get("derived")
    if derived == "api-surface":
        return f"{scenario.get('target')} must no longer exist"
    if derived == "api-exports":
        return f"`from {scenario.get('target')} import *` (its __all__) as the task's change leaves it"
    label = f"{scenario.get('kind')} {scenario.get('target')}"
    return f"{label}, {derived}" if derived else label


def _is_test(path: str) -> bool:
    return is_test_path(path)


def protected_patterns(task: Task) -> tuple[str, ...]:
    return tuple(DEFAULT_PROTECTED) + tuple(task.hidden.get("protected") or ())


@dataclass(frozen=True)
class PerfMeasure:
    """One perf scenario on one repository state: its outcome as plain data, the operations its run
    took ("measure") and those of turning its results into plain data ("collect")."""

    value: Any
    ops: int
    conversion: int


def perf_measures(result: ExecResult, size: int) -> list[PerfMeasure | None]:
    """Each of `size` perf scenarios run by `perf_ops` (scenario i: calls 3i+1 prepare, 3i+2 measure,
    3i+3 collect), or None where it did not finish."""
    measures: list[PerfMeasure | None] = []
    for index in range(size):
        calls = range(3 * index + 1, 3 * index + 4)
        outcomes = [result.outcomes[c] if c < len(result.outcomes) else None for c in calls]
        counts = [result.counts[c] if c < len(result.counts) else None for c in calls]
        collected = outcomes[2]
        if any(o is None or not o.ok for o in outcomes[1:]) or collected is None:
            measures.append(None)
        elif type(counts[1]) is not int or type(counts[2]) is not int:
            measures.append(None)
        else:
            measures.append(PerfMeasure(collected.value, int(counts[1] or 0), int(counts[2] or 0)))
    return measures


def perf_component(reference: list[PerfMeasure], result: ExecResult) -> tuple[Component, list[str]]:
    """The perf component of a candidate's traced run: each scenario that gives the reference's
    outcome is banded on its counted operations (`ops_score`); a differing or unfinished one scores 0.
    The candidate's count is its run's operations plus whatever its results' conversion to plain data
    took beyond the reference's (equal results convert alike; work hidden in a lazy attribute does not
    escape the count)."""
    flags = [] if result.status == "ok" else [f"{result.status}:perf"]
    scores: list[float] = []
    notes: list[str] = []
    for index, (want, got) in enumerate(zip(reference, perf_measures(result, len(reference)), strict=True)):
        if got is None or not same_value(want.value, got.value):
            scores.append(0.0)
            notes.append(f"perf scenario {index + 1}: " + ("did not finish" if got is None else "differs"))
            continue
        ops = got.ops + max(0, got.conversion - want.conversion)
        measured = ops_score([want.ops], [ops])
        scores.append(measured.score)
        notes.append(f"perf scenario {index + 1}: {measured.detail}")
    score = sum(scores) / len(scores) if scores else 0.0
    return Component(score, 1.0, "; ".join(notes[:MAX_FEEDBACK_ITEMS])), flags


class RepoGrader(Grader):
    """Grades patch-mode completions (`grade_many`) and agent-mode final states (`grade_state`)."""

    family = "repo"
    options_class = RepoOptions
    options: RepoOptions

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        chosen = dict(self.options.weights or {})
        if not self.options.types:
            chosen["types"] = 0.0
        self.weights = normalized_weights(chosen, REPO_WEIGHTS, REPO_GATES)
        self.weights_without_perf = normalized_weights(chosen | {"perf": 0.0}, REPO_WEIGHTS, REPO_GATES)
        self.timeout = float(self.options.timeout or DEFAULT_TIMEOUT)
        self._sandbox: WorkerPool | None = None
        self._owns_sandbox = False
        self._types: RepoTypeChecker | None = None
        self._reference: dict[str, TaskChecks] = {}
        self._allowed_kinds: dict[str, frozenset[str]] = {}
        self._reference_perf: dict[str, list[PerfMeasure]] = {}
        self._base_tests: dict[str, list[str]] = {}  # task id -> the base state's visible test lines
        self._lock = threading.Lock()
        self._types_pool: ThreadPoolExecutor | None = None
        self._types_pool_pid = 0

    # ------------------------------------------------------------------ shared machinery
    @property
    def sandbox(self) -> WorkerPool:
        with self._lock:
            if self._sandbox is None:
                self._sandbox, self._owns_sandbox = build_sandbox(
                    self.options.sandbox, self.options.jobs, self.options.runtime
                )
            return self._sandbox

    @property
    def type_checker(self) -> RepoTypeChecker:
        with self._lock:
            if self._types is None:
                self._types = RepoTypeChecker(
                    timeout=self.options.type_timeout, engine=self.options.type_engine
                )
            return self._types

    @property
    def types_pool(self) -> ThreadPoolExecutor:
        """Threads that run whole-repo pyright alongside the sandbox; a fresh pool in a forked child
        (the parent's threads do not exist there)."""
        with self._lock:
            if self._types_pool is None or self._types_pool_pid != os.getpid():
                self._types_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rlvr-repo-types")
                self._types_pool_pid = os.getpid()
            return self._types_pool

    def run(
        self, files: dict[str, str], ops: list[tuple[str, Any]], timeout: float | None = None
    ) -> ExecResult:
        return run_ops(self.sandbox, files, ops, timeout or self.timeout)

    def scenarios(self, task: Task) -> list[dict[str, Any]]:
        """The task's hidden scenarios: its listed ones, those hypothesis generates from its declared
        input domains, then the checks derived from both and from the task's states (see checks.py);
        deterministic, computed here in the trusted process."""
        listed = list(task.hidden.get("scenarios") or []) + domain_scenarios(
            list(task.hidden.get("domains") or [])
        )
        scenarios = with_observed_state(
            listed + derived_checks(listed, task.hidden["base"], task.hidden["reference"]),
            task.hidden["base"],
            task.hidden["reference"],
        )
        visible = visible_words(task.prompt, task.hidden["base"])
        return with_exact_types(scenarios, exact_return_types(task.hidden["reference"], visible))

    def checks(self, task: Task) -> TaskChecks:
        """The task's hidden checks with the reference's outcomes and those the base state fails, run
        once per task (reference and base in two sandbox children at the same time). A derived check the
        reference itself does not finish is dropped; a listed one is a fault of the task."""
        cached = self._reference.get(task.id)
        if cached is not None:
            return cached
        scenarios = self.scenarios(task)
        scenarios += self._earlier_version_checks(task, scenarios)
        ops = [("scenario", s) for s in scenarios]
        reference, base = self.sandbox.run_many(
            [
                ops_job(task.hidden["reference"], ops, self.timeout),
                ops_job(task.hidden["base"], ops + [("tests", {"paths": None})], self.timeout),
            ]
        )
        values = [o.value if o is not None and o.ok else None for o in reference.outcomes[1:]]
        values += [None] * (len(scenarios) - len(values))
        listed = [i for i, s in enumerate(scenarios) if "derived" not in s]
        if (
            reference.status != "ok"
            and reference.status != "timeout"
            or any(values[i] is None for i in listed)
        ):
            raise ReferenceFault(
                f"reference state of {task.id} failed its scenarios: {reference.status} {reference.detail}"
            )
        domains = shown_domains(scenarios, parameter_names(task.hidden["reference"]))
        kept = [
            i
            for i, value in enumerate(values)
            if value is not None and kept_by_reference(scenarios[i], value, values, domains)
        ]
        base_values = [o.value if o is not None and o.ok else None for o in base.outcomes[1:]]
        base_values += [None] * (len(scenarios) + 1 - len(base_values))
        visible = visible_words(task.prompt, task.hidden["base"])
        messages = message_patterns(task.hidden["base"], task.hidden["reference"], task.prompt)
        chosen = [scenarios[i] for i in kept]
        discriminating = frozenset(
            position
            for position, i in enumerate(kept)
            if not agrees(values[i], base_values[i], _visible_for(scenarios[i], visible), messages)
        )
        base_lines = tests_lines(base_values[len(scenarios)])
        self._base_tests[task.id] = base_lines or []
        base_visible = (
            None
            if base_lines is None
            else visible_outcome(base_lines, known_failing(task.hidden), need_a_pass=False)
        )
        checks = TaskChecks(
            chosen,
            [values[i] for i in kept],
            discriminating,
            base_visible,
            visible,
            frozenset(reference.denied) | frozenset(base.denied),
            messages,
        )
        self._reference[task.id] = checks
        return checks

    def _earlier_version_checks(self, task: Task, scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every listed sqlite scenario from each earlier schema version the reference's migration of
        its database passes through (traced in the sandbox, cut in `earlier_version_checks`)."""
        migrations = [s for s in scenarios if s.get("kind") == "sqlite" and "derived" not in s]
        if not migrations:
            return []
        traced = self.run(task.hidden["reference"], [("scenario", {**s, "trace": True}) for s in migrations])
        seen = {check_key(s) for s in scenarios}
        out: list[dict[str, Any]] = []
        for scenario, result in zip(migrations, traced.outcomes[1:], strict=False):
            trace = result.value.get("trace") if result is not None and result.ok else None
            for check in earlier_version_checks(scenario, trace if isinstance(trace, list) else []):
                key = check_key(check)
                if key not in seen:
                    seen.add(key)
                    out.append(check)
        return out

    def reference_perf(self, task: Task) -> list[PerfMeasure]:
        """The task's perf scenarios measured on the reference state (once per task)."""
        cached = self._reference_perf.get(task.id)
        if cached is not None:
            return cached
        scenarios = list(task.hidden.get("perf") or [])
        result = self.sandbox.run(ops_job(task.hidden["reference"], perf_ops(scenarios), self.timeout, True))
        measures = perf_measures(result, len(scenarios))
        if result.status != "ok" or any(m is None for m in measures):
            raise ReferenceFault(
                f"reference state of {task.id} failed its perf scenarios: {result.status} {result.detail}"
            )
        measured = [m for m in measures if m is not None]
        self._reference_perf[task.id] = measured
        return measured

    # ------------------------------------------------------------------ grading
    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return self.grade_each(tasks, completions, self._grade_completion)

    def _grade_completion(self, task: Task, completion: str) -> Verdict:
        workspace = Workspace.fresh(task.hidden["base"])
        started = time.perf_counter()
        try:
            apply_completion(workspace, completion)
        except PatchError as exc:
            components = {name: Component(0.0, 1.0) for name in REPO_WEIGHTS}
            components["patch"] = Component(0.0, 1.0, str(exc)[:300])
            return Verdict(
                task_id=task.id,
                reward=0.0,
                components=components,
                gates=["patch"],
                feedback=f"the patch does not apply: {str(exc)[:300]}",
                timings={"patch": time.perf_counter() - started},
            )
        patching = time.perf_counter() - started
        verdict = self.grade_state(task, workspace.files)
        verdict.timings["patch"] = patching
        return verdict

    def grade_state(self, task: Task, files: dict[str, str]) -> Verdict:
        """The verdict for a final repository state (agent mode's submit, or an applied patch)."""
        try:
            return self._grade_state(task, files)
        except ReferenceFault as exc:
            return Verdict.failure(task.id, str(exc), fault="task")

    def _grade_state(self, task: Task, files: dict[str, str]) -> Verdict:
        base: dict[str, str] = task.hidden["base"]
        timings: dict[str, float] = {}
        flags: list[str] = []
        components = {name: Component(0.0, 1.0) for name in REPO_WEIGHTS}
        changed = changed_paths(base, files)
        protected = [path for path in changed if is_protected(path, protected_patterns(task))]
        if protected:
            components["patch"] = Component(0.0, 1.0, "edits protected paths: " + ", ".join(protected[:5]))
            return Verdict(
                task_id=task.id,
                reward=0.0,
                components=components,
                gates=["patch"],
                feedback=f"protected paths were edited: {', '.join(protected[:5])} (tests and pack files are read-only)",
                flags=["protected_path_edit"]
                + (["test_tamper"] if any(_is_test(p) for p in protected) else []),
            )
        extra = added_names(base, task.hidden["reference"], files, changed)
        components["patch"] = Component(
            1.0,
            1.0,
            f"{len(changed)} file(s) changed"
            + (f"; adds names the reference does not have: {', '.join(extra[:5])}" if extra else ""),
        )

        started = time.perf_counter()
        syntax_problems = []
        for path in changed:
            if path.endswith(".py") and path in files:
                report = analyze(files[path])
                if not report.ok:
                    syntax_problems.append(f"{path}:{report.line or '?'}: {report.message}")
        timings["syntax"] = time.perf_counter() - started
        if syntax_problems:
            components["syntax"] = Component(0.0, 1.0, "; ".join(syntax_problems[:3]))
            reward, failed = repo_reward({"patch": 1.0}, self.weights)
            return Verdict(
                task_id=task.id,
                reward=reward,
                components=components,
                gates=failed,
                feedback="syntax error: " + "; ".join(syntax_problems[:MAX_FEEDBACK_ITEMS]),
                timings=timings,
            )
        components["syntax"] = Component(1.0, 1.0)

        # Whole-repo pyright (another process) and the behaviour scenarios (a sandbox child) are
        # independent: they run at the same time, so a submit costs the slower of the two.
        feedback: list[str] = []
        typing = (
            self.types_pool.submit(self._type_gate, task, base, files, changed)
            if self.options.types
            else None
        )
        try:
            behaviour, perf_result = self._behaviour(task, files, changed)
        finally:
            types_outcome = typing.result() if typing is not None else None
        if types_outcome is None:
            components["types"] = Component(1.0, 1.0, "disabled")
            timings["types"] = 0.0
        else:
            component, type_flags, type_feedback, fault, timings["types"] = types_outcome
            if fault is not None:
                return Verdict.failure(task.id, fault, fault="grader")
            components["types"] = component
            flags += type_flags
            feedback += type_feedback
        result, checks, timings["behaviour"], visible_paths = behaviour
        expected, scenarios = checks.expected, checks.scenarios
        if result.sandbox_error or result.status == "load_error":
            return Verdict.failure(
                task.id, f"sandbox failed: {result.detail or result.status}", fault="sandbox"
            )
        flags += result.flags
        if result.status != "ok":
            flags.append(f"{result.status}:behaviour")
        # an operation the reference or the base state is refused too (on these checks, or in the visible
        # tests) is the task's doing, not the candidate's
        denied = [
            op
            for op in dict.fromkeys(list(result.denied) + (list(perf_result.denied) if perf_result else []))
            if op not in checks.reference_denied
        ]
        flags += [denied_flag(op) for op in denied]
        if not denied and any(o is not None and o.ok and _refused(o.value) for o in result.outcomes[1:]):
            flags.append("sandbox:denied")
        if denied:  # what was refused, by operation name only (nothing hidden)
            feedback.insert(0, denial_feedback(denied))
        matches: list[bool] = []
        for index, (scenario, want) in enumerate(zip(scenarios, expected, strict=True)):
            outcome = result.outcomes[index + 1] if index + 1 < len(result.outcomes) else None
            got = outcome.value if outcome is not None and outcome.ok else None
            matches.append(agrees(want, got, _visible_for(scenario, checks.visible), checks.messages))
            if not matches[-1] and len(feedback) < MAX_FEEDBACK_ITEMS:
                feedback.append(f"hidden check {index + 1} ({_check_label(scenario)}) differs")
        share, kept = progress(checks, matches)
        fraction = share * kept
        components["behaviour"] = Component(
            fraction if matches else 0.0,
            1.0,
            f"{sum(matches)}/{len(matches)}; {sum(matches[i] for i in checks.discriminating)}/"
            f"{len(checks.discriminating)} of those the base state fails",
        )
        weights = self.weights_without_perf
        if perf_result is None:
            components["perf"] = Component(1.0, 1.0, "no perf scenarios")
        else:
            if perf_result.sandbox_error:
                return Verdict.failure(
                    task.id, f"sandbox failed: {perf_result.detail or perf_result.status}", fault="sandbox"
                )
            component, perf_flags = perf_component(self.reference_perf(task), perf_result)
            components["perf"] = component
            flags += perf_flags
            weights = self.weights
            if component.fraction < 1.0 and len(feedback) < MAX_FEEDBACK_ITEMS:
                feedback.append(f"slower than the reference ({component.detail})")
        scores = {name: c.fraction for name, c in components.items()}
        reward, failed = repo_reward(scores, weights)
        ran: list[str] | None = None
        if self.options.visible_tests == "always":
            tests = result.outcomes[len(scenarios) + 1] if len(result.outcomes) > len(scenarios) + 1 else None
            run = tests_lines(tests.value) if tests is not None and tests.ok else None
            ran = visible_paths
        elif self.options.visible_tests == "flag" and self._flag_can_fire(checks, failed, changed):
            ran = self._visible_selection(task, files, changed)
            run, visible_denied = self._run_visible(files, ran)
            new_denials = [
                op for op in visible_denied if op not in checks.reference_denied and op not in denied
            ]
            flags += [denied_flag(op) for op in new_denials]
        else:
            run = None
        visible_passed = (
            None
            if run is None
            else visible_outcome(
                merged_lines(self._base_tests.get(task.id, []), run, ran),
                known_failing(task.hidden),
                need_a_pass=True,
            )
        )
        if visible_passed and self._flag_can_fire(checks, failed, changed):
            # the edit made the visible tests pass and still fails hidden checks: fitted to what it saw
            flags.append("special_cases_visible")
        return Verdict(
            task_id=task.id,
            reward=reward,
            passed=not failed,
            visible_passed=visible_passed,
            components=components,
            gates=failed,
            feedback="; ".join(feedback) if feedback else "all hidden checks pass",
            timings=timings,
            flags=sorted(set(flags)),
        )

    @staticmethod
    def _flag_can_fire(checks: TaskChecks, failed: list[str], changed: list[str]) -> bool:
        """`special_cases_visible` needs a state that fails the hidden checks, changes files, and whose
        base state fails the visible tests; only then does the "flag" setting run them."""
        return "behaviour" in failed and checks.base_visible_passed is False and bool(changed)

    def _visible_selection(self, task: Task, files: dict[str, str], changed: list[str]) -> list[str] | None:
        """The test files to run on `files`: those the change can affect and those the base state fails
        (None: every one); see `visible_tests.py`."""
        affected = affected_test_files(task.hidden["base"], files, changed)
        if affected is None:
            return None
        failing = files_failing(self._base_tests.get(task.id, []), known_failing(task.hidden))
        return sorted(set(affected) | failing)

    def _run_visible(
        self, files: dict[str, str], ran: list[str] | None
    ) -> tuple[list[str] | None, list[str]]:
        """(the visible tests' lines, None if the run did not finish; the operations the sandbox
        refused) of the test files `ran` (None: all) on `files`, in a sandbox child of their own."""
        result = self.sandbox.run(ops_job(files, [("tests", {"paths": ran})], self.timeout))
        tests = result.outcomes[1] if len(result.outcomes) > 1 else None
        lines = tests_lines(tests.value) if tests is not None and tests.ok else None
        return lines, list(result.denied)

    def _type_gate(
        self, task: Task, base: dict[str, str], files: dict[str, str], changed: list[str]
    ) -> tuple[Component, list[str], list[str], str | None, float]:
        """(types component, flags, feedback, grader fault or None, seconds) of whole-repo pyright and
        the evasions the changed files add, charged by the rules of `type_rules`."""
        started = time.perf_counter()
        base_report = self.type_checker.check(base)
        if base_report.failure is not None:
            fault = f"pyright failed on the base state: {base_report.failure}"
            return Component(0.0, 1.0), [], [], fault, time.perf_counter() - started
        report = self.type_checker.check(files)
        seconds = time.perf_counter() - started
        if report.failure in CANDIDATE_FAILURES:
            # pyright timed out or died on this state while a trivial repository checks fine, or the
            # state has a path no checker workspace can hold: the candidate's content did it (pyright
            # never executes it) - a scored failure.
            component = Component(0.0, 1.0, f"pyright {report.failure} on this repository")
            return component, [f"{report.failure}:types"], [], None, seconds
        if report.failure is not None:
            return Component(0.0, 1.0), [], [], f"pyright failed: {report.failure}", seconds
        allowed = self._allowed_kinds.get(task.id)
        if allowed is None:
            allowed = self._allowed_kinds[task.id] = reference_kinds(task.hidden["reference"])
        evasions = introduced_evasions(base, files, allowed, changed)
        charged, base_charged = charged_report(report, files), charged_report(base_report, base)
        named = charged.introduced_over(base_charged) + [str(e) for e in evasions]
        introduced = charged.count_introduced_over(base_charged) + len(evasions)
        detail = "; ".join(named[:MAX_FEEDBACK_ITEMS])
        feedback = [f"{introduced} type error(s) introduced: {detail}"] if introduced else []
        return Component(1.0 / (1.0 + introduced), 1.0, detail), [], feedback, None, seconds

    def _behaviour(
        self, task: Task, files: dict[str, str], changed: list[str]
    ) -> tuple[tuple[ExecResult, TaskChecks, float, list[str] | None], ExecResult | None]:
        """The hidden scenarios (then, under `visible_tests="always"`, the visible tests the change can
        affect: their paths are returned, None for all) run on `files` in one sandbox child; the perf
        scenarios, if any, in another (traced) child at the same time."""
        started = time.perf_counter()
        checks = self.checks(task)
        scenarios = checks.scenarios
        perf = list(task.hidden.get("perf") or [])
        if perf:
            self.reference_perf(task)
        # The visible tests run last in the same child: their outcome is reported (`visible_passed`, for
        # the hacking gap) but never rewarded — they share a process with the candidate's code.
        ops: list[tuple[str, Any]] = [("scenario", s) for s in scenarios]
        visible_paths: list[str] | None = None
        if self.options.visible_tests == "always":
            visible_paths = self._visible_selection(task, files, changed)
            ops.append(("tests", {"paths": visible_paths}))
        job = ops_job(files, ops, self.timeout)
        if not perf:
            result, perf_result = self.sandbox.run(job), None
        else:
            traced = ops_job(files, perf_ops(perf), self.timeout, trace=True)
            result, perf_result = self.sandbox.run_many([job, traced])
        return (result, checks, time.perf_counter() - started, visible_paths), perf_result

    def close(self) -> None:
        with self._lock:
            sandbox, owned, types = self._sandbox, self._owns_sandbox, self._types
            pool, pool_pid = self._types_pool, self._types_pool_pid
            self._sandbox, self._types, self._types_pool = None, None, None
        if sandbox is not None and owned:
            sandbox.close()
        if types is not None:
            types.close()
        if pool is not None and pool_pid == os.getpid():
            pool.shutdown(wait=False)
