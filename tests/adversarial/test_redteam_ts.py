"""Red-team attacks on TypeScript grading (each one a candidate an attacker who has the code would
write). Every test here failed before the fix it guards, or pins a route that is already closed."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import pytest

from rlvr.graders.base import Grader, make_grader
from rlvr.sandbox.pool import ExecResult, Job
from tests.conftest import NO_NODE

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason=NO_NODE)

TASK = "HumanEval-TS/3"  # below_zero(operations: number[]): boolean
HEAD = "function below_zero(operations: number[]): boolean {\n"
CORRECT = (
    HEAD + "  let b = 0;\n  for (const o of operations) {\n    b += o;\n    if (b < 0) return true;\n  }\n"
    "  return false;\n}\n"
)


@pytest.fixture(scope="module")
def grader(typescript_pack) -> Iterator[Grader]:
    grader = make_grader(typescript_pack, jobs=2, timeout=3.0)
    yield grader
    grader.close()


def _ops(verdict) -> int:
    return int(re.findall(r"(\d+) ops", verdict.components["perf"].detail)[0])


# ---------------------------------------------------------------- the shared compiler process
def test_a_checker_stack_overflow_is_the_candidates_failure_not_the_batchs(grader):
    """A call chain the checker infers recursively (flat syntax, so the syntax layer's depth limit does
    not see it) overflowed the compiler's stack; the process answered with an error, which was raised
    as a grading error for the whole batch. Now: that candidate alone is flagged `crash:types`."""
    chain = "".join(f"function f{i}() {{ return f{i + 1}(); }}\n" for i in range(5000))
    deep = chain + "function f5000() { return 1; }\n" + CORRECT
    honest_typed_wrong = CORRECT.replace("let b = 0;", 'let b = 0;\n  const s: number = "x";')
    verdicts = grader.grade_many([TASK] * 3, [CORRECT, deep, honest_typed_wrong])
    for verdict in verdicts:
        assert verdict.error is None and verdict.fault is None, verdict.error
    good, bad, typed_wrong = verdicts
    assert good.passed and good.components["types"].fraction == 1.0
    assert "crash:types" in bad.flags and bad.components["types"].fraction == 0.0
    assert typed_wrong.components["types"].fraction < 1.0 and typed_wrong.passed


def test_a_lib_reference_that_reaches_the_checker_loads_nothing_for_batch_mates(grader):
    """Defence in depth behind the comment blanking: a `/// <reference lib="dom" />` that reached the
    shared program loaded the DOM library for every candidate checked with it (a batch-mate's
    `document.title` then type-checked clean). Now the compiler removes and charges reference
    directives itself."""
    checker = grader.checker
    assert checker is not None
    directive, user = checker.check_many(
        ['/// <reference lib="dom" />\nexport {}\n', "export const n: number = document.title.length;\n"]
    )
    assert any("reference directive" in d["message"] for d in directive.diagnostics)
    assert any("document" in d["message"] for d in user.diagnostics), user.diagnostics


def test_a_global_augmentation_does_not_outlive_its_batch(grader):
    """`declare global` is checked alone; its merge into the shared standard library's symbols must
    not survive into a later batch either."""
    checker = grader.checker
    assert checker is not None
    augmenting = "declare global { interface Array<T> { secret: number } var leaked: number; }\n"
    assert (
        checker.check_many([augmenting + "export const a: number = [1].secret + leaked;\n"])[0].diagnostics
        == []
    )
    (later,) = checker.check_many(["export const b: number = [1].secret + leaked;\n"])
    assert len(later.diagnostics) == 2, later.diagnostics


def test_diagnostics_never_carry_half_a_surrogate_pair(grader):
    """A name of astral-plane letters placed so the 300-unit message cut fell inside a surrogate pair
    handed the trusted side a lone surrogate (a `Component.detail` no UTF-8 writer accepts)."""
    checker = grader.checker
    assert checker is not None
    name = "a" + "\U0001d465" * 200  # 'a' then MATHEMATICAL ITALIC SMALL X (two UTF-16 units each)
    (result,) = checker.check_many([f"export const n: number = {name};\n"])
    assert result.diagnostics
    for diagnostic in result.diagnostics:
        diagnostic["message"].encode("utf-8")  # raises on a lone surrogate


# ---------------------------------------------------------------- the op counter (perf)
SUM_TO = "function probe(n) {\n  __c();\n  let s = 0;\n  for (let i = 0; i < n; i++) {\n    __c();\n    s += i;\n  }\n  return s;\n}\n"
LAZY_GETTER = """function probe(n) {
  __c();
  const out = [];
  Object.defineProperty(out, 0, { enumerable: true, get() { let s = 0; for (let i = 0; i < n; i++) { __c(); s += i; } return s; } });
  return out;
}
"""
LAZY_PROXY = """function probe(n) {
  __c();
  return new Proxy([0], { get(t, k) {
    if (k === "0") { let s = 0; for (let i = 0; i < n; i++) { __c(); s += i; } return s; }
    return Reflect.get(t, k);
  } });
}
"""
LAZY_OBJECT = """function probe(n) {
  __c();
  return { get total() { let s = 0; for (let i = 0; i < n; i++) { __c(); s += i; } return s; } };
}
"""


def test_work_deferred_into_the_returned_value_is_counted(typescript_grader):
    """The count used to be read before the result was walked: a candidate returning an array or
    object whose getter (or Proxy trap) did the real work got that work for free (count 1 for an
    O(n) answer). Now the count is read after the walk."""
    sandbox = typescript_grader.sandbox
    n = 2000
    honest = sandbox.run(Job(SUM_TO, "probe", [(n,)], timeout=10, trace=True, runtime="node", counter="__c"))
    assert honest.status == "ok" and honest.counts[0] is not None and honest.counts[0] > n
    for source, expected in (
        (LAZY_GETTER, [n * (n - 1) // 2]),
        (LAZY_PROXY, [n * (n - 1) // 2]),
        (LAZY_OBJECT, {"total": n * (n - 1) // 2}),
    ):
        result = sandbox.run(
            Job(source, "probe", [(n,)], timeout=10, trace=True, runtime="node", counter="__c")
        )
        assert result.status == "ok", result.detail
        assert result.outcomes[0] is not None and result.outcomes[0].value == expected
        assert result.counts[0] is not None and result.counts[0] > n, (source, result.counts)


def test_code_built_from_strings_cannot_run_uncounted(grader):
    """eval / Function / indirect eval run code the trusted build never instrumented: an O(n^2)
    max_element written in an eval string counted ~2 ops and took the perf score of an O(n) one.
    Now the candidate's context builds no code from strings (the call throws: a scored failure)."""
    loops = "for (const a of l) { let best = true; for (const b of l) { if (b > a) best = false; } if (best) return a; } return l[0];"
    tricks = {
        "direct_eval": f"function max_element(l: number[]): number {{\n  return eval('(() => {{ {loops} }})()');\n}}\n",
        "indirect_eval": "function max_element(l: number[]): number {\n"
        + f"  return (0, eval)('(l) => {{ {loops} }}')(l);\n}}\n",
        "function_ctor": f"function max_element(l: number[]): number {{\n  return new Function('l', '{loops}')(l) as number;\n}}\n",
        "constructor_chain": "function max_element(l: number[]): number {\n"
        + f"  return (max_element as any).constructor('l', '{loops}')(l);\n}}\n",
    }
    verdicts = grader.grade_many(["HumanEval-TS/35"] * len(tricks), list(tricks.values()))
    for name, verdict in zip(tricks, verdicts, strict=True):
        assert verdict.error is None and verdict.fault is None, (name, verdict.error)
        assert not verdict.passed and verdict.gates == ["tests"], (name, verdict.feedback)


def test_a_failed_reference_measurement_is_an_error_and_is_measured_again(grader, monkeypatch):
    """A reference run that failed once (a sandbox hiccup, a machine loaded past its wall limit) was
    remembered as "unmeasurable" for the grader's lifetime: every later correct candidate of the task
    got perf 0 as if it were its own fault, with no error. Now the verdict says the perf layer failed
    (as the Python grader does) and the next batch measures the reference again."""
    task = "HumanEval-TS/13"
    correct = "function greatest_common_divisor(a: number, b: number): number {\n  while (b) {\n    [a, b] = [b, a % b];\n  }\n  return a;\n}\n"
    grader._reference_counts.pop(task, None)
    real = grader.sandbox.run_many
    failed_once: list[bool] = []

    def run_many(jobs):
        results = real(jobs)
        if not failed_once:  # the first job of the batch is the reference's
            failed_once.append(True)
            results[0] = ExecResult(status="sandbox_error", detail="injected: the worker died")
        return results

    monkeypatch.setattr(grader.sandbox, "run_many", run_many)
    (first,) = grader.grade_many([task], [correct])
    assert first.error is not None and "reference could not be measured" in first.error
    (second,) = grader.grade_many([task], [correct])
    assert second.error is None and second.passed, second
    assert second.components["perf"].score > 0 and "ops" in second.components["perf"].detail


def test_a_with_block_cannot_put_a_no_op_in_front_of_the_counter(grader):
    """The counter's name is in the candidate's own source text at run time; in sloppy mode a
    `with (obj)` block whose object holds a built-in no-op (Math.random) under that name shadows the
    counter for everything inside: an O(n^2) max_element counted 5 ops and scored perf 1.0 (reward
    0.87 against the honest O(n^2) one's 0.81, type errors for `with` included). The candidate now
    runs in strict mode (as the type check reads it), where `with` does not exist."""
    loops = (
        "    for (const a of l) {\n      let best = true;\n      for (const b of l) {\n"
        "        if (b > a) best = false;\n      }\n      if (best) return a;\n    }\n    return l[0];\n"
    )
    sneaky = (
        "function max_element(l: number[]): number {\n"
        "  const name = /(__rlvr_ops_[0-9a-f]+)/.exec(String(max_element))![1];\n"
        "  const quiet: Record<string, () => number> = {};\n"
        "  quiet[name] = Math.random;\n"
        "  with (quiet) {\n" + loops + "  }\n}\n"
    )
    honest = "function max_element(l: number[]): number {\n" + loops.replace("\n    ", "\n  ") + "}\n"
    plain, tricked = grader.grade_many(["HumanEval-TS/35"] * 2, [honest, sneaky])
    assert plain.passed and plain.error is None, plain.feedback
    assert tricked.error is None and tricked.fault is None
    assert not tricked.passed and tricked.reward < plain.reward, tricked


# ---------------------------------------------------------------- the CPU budget
NODE_SLEEPER = (
    "function probe(ms) {\n  __c();\n  const cell = new Int32Array(new SharedArrayBuffer(4));\n"
    "  Atomics.wait(cell, 0, 0, ms);\n  return 1;\n}\n"
)


def test_a_node_sleeper_holds_its_worker_only_to_the_wall_limit_and_fails_no_batch_mate() -> None:
    """The candidate's context has no timers, but `Atomics.wait` blocks the main thread without using
    CPU, so the CPU budget never ends it: the wall limit (WALL_LIMIT_FACTOR x budget) must, as a
    scored `timeout`; an honest job queued behind it on the one worker still gets its own full budget."""
    from rlvr.sandbox.pool import LocalSandbox

    sandbox = LocalSandbox(1, node=True)
    try:
        sleeper = Job(NODE_SLEEPER, "probe", [(60_000,)], timeout=0.5, runtime="node", counter="__c")
        honest = Job(SUM_TO, "probe", [(1000,)], timeout=0.5, trace=True, runtime="node", counter="__c")
        slept, fine = sandbox.run_many([sleeper, honest])
    finally:
        sandbox.close()
    # 60 s of `Atomics.wait` would have returned; the kill by the wall limit is the signal (how close to
    # the limit it lands: benchmarks/bench_guards.py)
    assert slept.status == "timeout", slept
    assert slept.outcomes == [] or slept.outcomes[0] is None
    assert fine.status == "ok" and fine.outcomes[0] is not None and fine.outcomes[0].value == 499500


# ---------------------------------------------------------------- results read "in the shape of the reference"
BZ = "function below_zero(operations: number[]): boolean {\n  let b = 0;\n  for (const o of operations) {\n    b += o;\n    if (b < 0) return {T};\n  }\n  return {F};\n}\n"
GCD = "function greatest_common_divisor(a: number, b: number): number {\n  while (b) {\n    [a, b] = [b, a % b];\n  }\n  return {R};\n}\n"
SP = "function sum_product(numbers: number[]): [number, number] {\n  let s = 0;\n  let p = 1;\n  for (const n of numbers) {\n    s += n;\n    p *= n;\n  }\n  return {R};\n}\n"
LONGEST = "function longest(strings: string[]): string | null {\n  if (strings.length === 0) return {EMPTY};\n  let best = strings[0];\n  for (const s of strings) {\n    if (s.length > best.length) best = s;\n  }\n  return best;\n}\n"
TRUNC = "function truncate_number(number: number): number {\n  return {R};\n}\n"


def test_right_values_in_the_wrong_shape_never_pass(grader):
    """Each candidate computes the right values but returns them as something the Python reference's
    value is not (numbers for booleans, `true` for 1, a BigInt, a string, an array-like object, an
    extra `undefined`, `undefined` for null, NaN): the int/float/tuple reading must not turn any of them
    into a pass. The first of each group is the honest control and must pass."""
    cases = [
        ("HumanEval-TS/3", BZ.replace("{T}", "true").replace("{F}", "false"), True),
        (
            "HumanEval-TS/3",
            BZ.replace("{T}", "1 as unknown as boolean").replace("{F}", "0 as unknown as boolean"),
            False,
        ),
        ("HumanEval-TS/13", GCD.replace("{R}", "a"), True),
        ("HumanEval-TS/13", GCD.replace("{R}", "(a === 1 ? true : a) as number"), False),
        ("HumanEval-TS/13", GCD.replace("{R}", "BigInt(a) as unknown as number"), False),
        ("HumanEval-TS/13", GCD.replace("{R}", "String(a) as unknown as number"), False),
        ("HumanEval-TS/13", GCD.replace("{R}", "[a] as unknown as number"), False),
        ("HumanEval-TS/8", SP.replace("{R}", "[s, p]"), True),
        (
            "HumanEval-TS/8",
            SP.replace("{R}", "{ 0: s, 1: p, length: 2 } as unknown as [number, number]"),
            False,
        ),
        ("HumanEval-TS/8", SP.replace("{R}", "[s, p, undefined] as unknown as [number, number]"), False),
        ("HumanEval-TS/8", SP.replace("{R}", "[s, p, 0] as unknown as [number, number]"), False),
        ("HumanEval-TS/8", SP.replace("{R}", "[s, String(p)] as unknown as [number, number]"), False),
        ("HumanEval-TS/12", LONGEST.replace("{EMPTY}", "null"), True),
        ("HumanEval-TS/12", LONGEST.replace("{EMPTY}", "undefined as unknown as null"), False),
        ("HumanEval-TS/12", LONGEST.replace("{EMPTY}", '""'), False),
        ("HumanEval-TS/2", TRUNC.replace("{R}", "number - Math.floor(number)"), True),
        ("HumanEval-TS/2", TRUNC.replace("{R}", "number === 3.5 ? 0.5 : NaN"), False),
        ("HumanEval-TS/2", TRUNC.replace("{R}", "number === 3.5 ? 0.5 : Infinity"), False),
    ]
    verdicts = grader.grade_many([task for task, _, _ in cases], [source for _, source, _ in cases])
    for (task, source, honest), verdict in zip(cases, verdicts, strict=True):
        assert verdict.error is None and verdict.fault is None, (task, verdict.error)
        assert verdict.passed is honest, (task, source, verdict.feedback)
        if not honest:
            assert verdict.gates == ["tests"], (task, source, verdict.gates)


# ---------------------------------------------------------------- the vm context
STACK_PROBE = """function probe() {
  const found = [];
  let frames = [];
  Error.prepareStackTrace = (_e, s) => { frames = s; return "x"; };
  const e = new Error();
  void e.stack;
  Error.prepareStackTrace = undefined;
  for (const f of frames) {
    const file = String(f.getFileName());
    if (file === "candidate.js") continue;  // the candidate's own (sloppy) frames: its own objects
    let reach = "none";
    for (const get of [() => f.getThis(), () => f.getFunction()]) {
      try {
        const v = get();
        if (v !== undefined) reach = typeof v;
      } catch (x) { reach = "threw"; }
    }
    let realm = "context";
    try { realm = String(f.constructor.constructor("return typeof process")()); } catch (x) { realm = "no-codegen"; }
    found.push(file + ":" + reach + ":" + realm);
  }
  return found;
}
"""


def test_stack_frames_of_the_runner_hand_the_candidate_nothing(typescript_grader):
    """`Error.prepareStackTrace` gives the candidate CallSite objects for every frame on the stack,
    the runner's and node's own included: none may hand out a `this` or a function of the host realm,
    and the CallSites' constructors are the context's (which builds no code), not the host's."""
    sandbox = typescript_grader.sandbox
    result = sandbox.run(Job(STACK_PROBE, "probe", [()], timeout=10, runtime="node", counter="__c"))
    assert result.status == "ok", result.detail
    outcome = result.outcomes[0]
    assert outcome is not None and outcome.ok and outcome.value, outcome
    for frame in outcome.value:
        assert frame.endswith(":none:no-codegen"), outcome.value
