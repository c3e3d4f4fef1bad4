"""The trusted oracle for code tasks.

Everything here runs in the trusted process and touches only trusted task data and plain-data
results from the sandbox. For a task we derive, once:
  * the hidden calls (argument tuples) — recorded by running the task's original `check` against
    the reference solution, plus any explicit calls the task lists;
  * the reference's outputs for those calls.
A candidate's outputs then come back from the sandbox as plain data, and
  * the original `check` is *replayed* here with a stand-in that answers each call with the
    candidate's recorded output (so the original assertions, tolerances and all, decide), and
  * every output must have the reference's type structure as far as the task fixes it (the entry
    point's annotation or docstring; see `agreement`), recursively over keys and set members;
  * an output that agrees with the reference's (floats to a relative 1e-9) is handed to the replayed
    `check` as the reference's own value, so `assert f(x) == 0.3` accepts a reordered sum.
Exit codes, stdout and objects with odd `__eq__` decide nothing: only plain data reaches here.
"""

from __future__ import annotations

import copy
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlvr.core.codec import CodecError, dumps
from rlvr.core.types import Task
from rlvr.graders.code.agreement import ResultType, agrees, result_type, same_types
from rlvr.graders.code.visible import VisibleExample, visible_examples
from rlvr.sandbox.pool import CallOutcome

# `check` code may use the global `random` module; recording and replay must see the same stream,
# and graders may run on several threads, so both happen under one lock with a fixed seed.
_CHECK_LOCK = threading.Lock()
_CHECK_SEED = 1729


class OracleError(RuntimeError):
    """The task itself cannot be graded (its reference fails its own tests, non-plain arguments…)."""


@dataclass(frozen=True)
class Expected:
    """The reference's behaviour on one call: a value, or an exception type name."""

    value: Any = None
    raises: str | None = None


@dataclass
class TestOutcome:
    passed: bool
    agreement: float  # fraction of calls on which the candidate agrees exactly with the reference
    failure: str = ""  # short, public: never contains hidden inputs unless visible mode asks for it
    counterexample: dict[str, Any] | None = None  # input/expected/actual of the first disagreement
    failed: int = 0  # hidden calls the candidate got wrong (or never answered), of `total`
    total: int = 0

    def count_text(self) -> str:
        """`3 of 40 hidden checks failed`, or "" when no call disagreed (a check replay failed)."""
        return f"{self.failed} of {self.total} hidden checks failed" if self.failed else ""


Comparator = Callable[[tuple[Any, ...], Any, Any], bool]


@dataclass(frozen=True)
class GeneratedTests:
    """Hidden inputs generated for a task on the trusted side (see rlvr.graders.code.properties.suite).

    `calls` are judged after the task's own tests with `agree(args, expected, actual)` (default:
    `agreement.agrees` under the task's result type). `perf_calls` are inputs of growing size used only to
    measure operation counts (`perf_sizes[i]` is the n of `perf_calls[i]`)."""

    calls: tuple[tuple[Any, ...], ...] = ()
    agree: Comparator | None = None
    perf_calls: tuple[tuple[Any, ...], ...] = ()
    perf_sizes: tuple[int, ...] = ()


class _Divergence(Exception):
    """Replay asked for a call the recording never made."""


class _CandidateRaised(Exception):
    pass


def _exec_trusted(source: str, label: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"rlvr_trusted_{label}"}
    exec(compile(source, f"<{label}>", "exec"), namespace)  # trusted task code, never candidate code
    return namespace


class CodeOracle:
    """Hidden calls, reference outputs and the replayable `check` of one code task."""

    def __init__(self, task: Task, extra_calls: Sequence[tuple[Any, ...]] = ()) -> None:
        hidden = task.hidden
        self.task_id = task.id
        self.entry_point: str = hidden["entry_point"]
        self._prompt_examples = visible_examples(task.prompt, hidden["entry_point"])
        self._visible_indices: list[int] | None = None
        driver = hidden.get("driver")  # stateful-class tasks: the sandbox calls a method driver
        if driver:
            self.entry_point = driver["entry"]
        reference_source = hidden["reference"] + ("\n\n" + driver["source"] if driver else "")
        namespace = _exec_trusted(reference_source, f"reference:{task.id}")
        reference = namespace.get(self.entry_point)
        if not callable(reference):
            raise OracleError(f"{task.id}: reference does not define {self.entry_point!r}")
        self.reference: Callable[..., Any] = reference
        # what the task fixes about the result's type: trusted source only, never the candidate's
        self.result_type: ResultType = result_type([reference_source, task.prompt], self.entry_point)
        self.check: Callable[[Callable[..., Any]], Any] | None = None
        self.calls: list[tuple[Any, ...]] = []
        self.expected: list[Expected] = []
        self.check_calls = 0
        self.generated_start: int | None = None  # calls from here on were generated (GeneratedTests)
        self.agree: Comparator | None = None
        self.perf_calls: list[tuple[Any, ...]] = []
        self.perf_sizes: tuple[int, ...] = ()
        self.perf_expected: list[Expected] = []
        if hidden.get("check"):
            check_namespace = dict(namespace)
            exec(compile(hidden["check"], f"<check:{task.id}>", "exec"), check_namespace)
            check = check_namespace.get("check")
            if not callable(check):
                raise OracleError(f"{task.id}: check code does not define check(candidate)")
            self.check = check
            self._record_check()
        for args in list(hidden.get("calls") or []) + list(extra_calls):
            self._add_call(tuple(args))
        if not self.calls and not (hidden.get("properties") or {}).get("inputs"):
            raise OracleError(
                f"{task.id}: no hidden calls (the task needs `check`, `calls` or property inputs)"
            )

    def add_generated(self, tests: GeneratedTests) -> None:
        """Append generated hidden calls (reference outputs computed here, on the trusted side)."""
        self.generated_start = len(self.calls)
        self.agree = tests.agree
        for args in tests.calls:
            self._add_call(tuple(args))
        self.perf_calls = [tuple(args) for args in tests.perf_calls]
        self.perf_sizes = tuple(tests.perf_sizes)
        self.perf_expected = []
        for args in self.perf_calls:
            try:
                self.perf_expected.append(Expected(value=self.reference(*copy.deepcopy(args))))
            except Exception as exc:
                self.perf_expected.append(Expected(raises=type(exc).__name__))

    def keep_generated(self, keep: Callable[[tuple[Any, ...], Expected], bool]) -> None:
        """Drop the generated calls (and growth calls) `keep` rejects; the task's own calls stay.
        (A second language keeps only the inputs and outputs it can represent.) Growth calls are
        dropped wholesale when fewer than two distinct sizes would remain."""
        start = self.generated_start
        if start is not None:
            kept = [i for i in range(start, len(self.calls)) if keep(self.calls[i], self.expected[i])]
            self.calls = self.calls[:start] + [self.calls[i] for i in kept]
            self.expected = self.expected[:start] + [self.expected[i] for i in kept]
            self._visible_indices = None
        chosen = [
            i
            for i, (args, expected) in enumerate(zip(self.perf_calls, self.perf_expected, strict=False))
            if keep(args, expected)
        ]
        if len({self.perf_sizes[i] for i in chosen}) < 2:
            chosen = []
        self.perf_calls = [self.perf_calls[i] for i in chosen]
        self.perf_expected = [self.perf_expected[i] for i in chosen]
        self.perf_sizes = tuple(self.perf_sizes[i] for i in chosen)

    def perf_agrees(self, outcomes: Sequence[CallOutcome | None]) -> bool:
        """Whether the candidate answered every growth input like the reference (a fast wrong
        answer on big inputs earns no perf credit)."""
        if len(outcomes) < len(self.perf_expected):
            return False
        for args, expected, outcome in zip(self.perf_calls, self.perf_expected, outcomes, strict=False):
            if outcome is None or expected.raises is not None or not outcome.ok:
                if not self._outcome_matches(expected, outcome):
                    return False
            elif self.agree is not None:
                try:
                    if not self.agree(copy.deepcopy(args), copy.deepcopy(expected.value), outcome.value):
                        return False
                except Exception:
                    return False
            elif not self.agrees(expected.value, outcome.value):
                return False
        return True

    def _matches(self, index: int, outcome: CallOutcome | None) -> bool:
        expected = self.expected[index]
        if self.generated_start is None or index < self.generated_start:
            return self._outcome_matches(expected, outcome)
        if outcome is None or expected.raises is not None or not outcome.ok:
            return self._outcome_matches(expected, outcome)
        if self.agree is not None:
            try:
                return bool(
                    self.agree(copy.deepcopy(self.calls[index]), copy.deepcopy(expected.value), outcome.value)
                )
            except Exception:  # a comparator that cannot read the candidate's value: disagreement
                return False
        return self.agrees(expected.value, outcome.value)

    def agrees(self, expected: Any, actual: Any) -> bool:
        """The candidate's value agrees with the reference's, types as far as the task fixes them."""
        try:
            return agrees(self.result_type, expected, actual)
        except RecursionError:
            return False

    # -- recording (trusted reference only)
    def _add_call(self, args: tuple[Any, ...]) -> Expected:
        try:
            dumps(list(args))
        except CodecError as exc:
            raise OracleError(f"{self.task_id}: hidden arguments are not plain data ({exc})") from exc
        frozen = copy.deepcopy(args)
        try:
            value = self.reference(*copy.deepcopy(args))
            expected = Expected(value=copy.deepcopy(value))
            dumps(value)
        except CodecError as exc:
            raise OracleError(f"{self.task_id}: reference output is not plain data ({exc})") from exc
        except Exception as exc:  # the reference's own exception is expected behaviour
            expected = Expected(raises=type(exc).__name__)
        self.calls.append(frozen)
        self.expected.append(expected)
        return expected

    def _record_check(self) -> None:
        assert self.check is not None

        def recorder(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                raise OracleError(f"{self.task_id}: check calls the candidate with keyword arguments")
            expected = self._add_call(args)
            if expected.raises is not None:
                return self.reference(*copy.deepcopy(args))  # re-raise the reference's own exception
            return copy.deepcopy(expected.value)

        with _CHECK_LOCK:
            state = random.getstate()
            random.seed(_CHECK_SEED)
            try:
                self.check(recorder)
            except OracleError:
                raise
            except Exception as exc:
                raise OracleError(
                    f"{self.task_id}: the reference fails its own check ({type(exc).__name__}: {exc})"
                ) from exc
            finally:
                random.setstate(state)
        self.check_calls = len(self.calls)

    # -- judging a candidate (plain data in, verdict out)
    def visible_agreement(self, outcomes: Sequence[CallOutcome | None]) -> bool | None:
        """Does the candidate agree with the reference on the hidden calls that are examples the
        prompt shows? None when no shown example is among the calls (nothing visible to measure)."""
        if self._visible_indices is None:
            shown = {repr(example.args) for example in self._prompt_examples}
            self._visible_indices = [i for i, args in enumerate(self.calls) if repr(tuple(args)) in shown]
        if not self._visible_indices:
            return None
        return all(i < len(outcomes) and self._matches(i, outcomes[i]) for i in self._visible_indices)

    def visible_score(self, outcomes: Sequence[CallOutcome | None]) -> float | None:
        """The fraction of shown examples (among the calls) the candidate gets right; None when the
        prompt shows none of them (the weak `verifier = "visible"` mode's test score)."""
        if self.visible_agreement(outcomes) is None or not self._visible_indices:
            return None
        right = sum(i < len(outcomes) and self._matches(i, outcomes[i]) for i in self._visible_indices)
        return right / len(self._visible_indices)

    def shown_examples(self) -> list[VisibleExample]:
        return list(self._prompt_examples)

    def judge(self, outcomes: Sequence[CallOutcome | None], *, visible: bool = False) -> TestOutcome:
        agree = 0
        first_bad: int | None = None
        bad: list[int] = []
        for index, outcome in enumerate(outcomes[: len(self.calls)]):
            if self._matches(index, outcome):
                agree += 1
            else:
                bad.append(index)
        # the counterexample shown in visible mode is the simplest failing input (generated inputs
        # are boundary-biased, so this is a shrunk one)
        first_bad = min(bad, key=self._input_size) if bad else None
        missing = len(self.calls) - min(len(outcomes), len(self.calls))
        if first_bad is None and missing:
            first_bad = len(outcomes)
        agreement = agree / len(self.calls)
        counterexample = self._counterexample(first_bad, outcomes) if first_bad is not None else None
        counts = {"failed": len(bad) + missing, "total": len(self.calls)}

        type_failure = next(
            (
                i
                for i, (expected, outcome) in enumerate(zip(self.expected, outcomes, strict=False))
                if expected.raises is None
                and outcome is not None
                and outcome.ok
                and not (
                    self.agree is not None
                    and i >= (self.generated_start or 0)
                    and self.generated_start is not None
                )
                and not self._same_types(expected.value, outcome.value)
            ),
            None,
        )
        if type_failure is not None:
            return TestOutcome(
                False,
                agreement,
                "a result has the wrong type",
                self._counterexample(type_failure, outcomes),
                **counts,
            )
        if any(o is None for o in outcomes[: len(self.calls)]) or missing:
            return TestOutcome(
                False, agreement, "the program stopped before answering every test", counterexample, **counts
            )

        if self.check is not None:
            passed, why = self._replay_check(outcomes)
            extra_ok = all(
                self._matches(i, o)
                for i, o in enumerate(outcomes[: len(self.calls)])
                if i >= self.check_calls
            )
            if passed and extra_ok:
                return TestOutcome(True, 1.0 if agreement == 1.0 else agreement)
            return TestOutcome(False, agreement, why or "hidden tests failed", counterexample, **counts)
        if first_bad is None:
            return TestOutcome(True, 1.0)
        return TestOutcome(False, agreement, "hidden tests failed", counterexample, **counts)

    def _outcome_matches(self, expected: Expected, outcome: CallOutcome | None) -> bool:
        if outcome is None:
            return False
        if expected.raises is not None:
            return not outcome.ok and outcome.exception == expected.raises
        return outcome.ok and self.agrees(expected.value, outcome.value)

    def _same_types(self, expected: Any, actual: Any) -> bool:
        try:
            return same_types(self.result_type, expected, actual)
        except RecursionError:
            return False

    def _input_size(self, index: int) -> tuple[int, int]:
        try:
            return (len(dumps(list(self.calls[index]))), index)
        except CodecError:
            return (1 << 30, index)

    def _counterexample(self, index: int, outcomes: Sequence[CallOutcome | None]) -> dict[str, Any]:
        expected = self.expected[index]
        outcome = outcomes[index] if index < len(outcomes) else None
        if outcome is None:
            actual: Any = "<no answer>"
        elif outcome.ok:
            actual = outcome.value
        else:
            actual = f"<raised {outcome.exception}>"
        return {
            "input": list(self.calls[index]),
            "expected": expected.value if expected.raises is None else f"<raises {expected.raises}>",
            "actual": actual,
        }

    def _replay_check(self, outcomes: Sequence[CallOutcome | None]) -> tuple[bool, str]:
        assert self.check is not None
        position = 0

        def stand_in(*args: Any, **kwargs: Any) -> Any:
            nonlocal position
            if (
                kwargs
                or position >= self.check_calls
                or dumps(list(args)) != dumps(list(self.calls[position]))
            ):
                raise _Divergence
            outcome = outcomes[position]
            expected = self.expected[position]
            position += 1
            if outcome is None:
                raise _CandidateRaised("no answer")
            if not outcome.ok:
                if expected.raises is not None and outcome.exception == expected.raises:
                    return self.reference(*copy.deepcopy(args))  # raises the same exception type
                raise _CandidateRaised(outcome.exception or "exception")
            if expected.raises is None and self.agrees(expected.value, outcome.value):
                return copy.deepcopy(expected.value)  # agreeing within tolerance is agreeing
            return copy.deepcopy(outcome.value)

        with _CHECK_LOCK:
            state = random.getstate()
            random.seed(_CHECK_SEED)
            try:
                self.check(stand_in)
                return True, ""
            except _Divergence:
                return False, "hidden tests failed"
            except _CandidateRaised:
                return False, "the program raised an exception on a hidden test"
            except AssertionError:
                return False, "hidden tests failed"
            except Exception as exc:
                return False, f"hidden tests failed ({type(exc).__name__})"
            finally:
                random.setstate(state)


@dataclass
class OracleCache:
    """Oracles are built once per task and reused (thread-safe)."""

    extra_calls: Callable[[Task], Sequence[tuple[Any, ...]]] | None = None
    # generated hidden tests, built from the task and its oracle (seeded by the recorded calls)
    generate: Callable[[Task, CodeOracle], GeneratedTests | None] | None = None
    _oracles: dict[str, CodeOracle | OracleError] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, task: Task) -> CodeOracle:
        with self._lock:
            cached = self._oracles.get(task.id)
        if cached is None:
            try:
                extra = self.extra_calls(task) if self.extra_calls else ()
                cached = CodeOracle(task, extra)
                generated = self.generate(task, cached) if self.generate else None
                if generated is not None:
                    cached.add_generated(generated)
            except OracleError as exc:
                cached = exc
            except Exception as exc:  # a broken task must be reported, not crash the grader
                cached = OracleError(f"{task.id}: task could not be prepared ({type(exc).__name__}: {exc})")
            with self._lock:
                self._oracles[task.id] = cached
        if isinstance(cached, OracleError):
            raise cached
        return cached
