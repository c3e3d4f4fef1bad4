"""Hostile TypeScript: every verdict comes from the trusted side, a candidate-caused failure is a scored
failure with a flag (never a grading error), and nothing is left behind."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlvr.graders.base import Grader, make_grader
from rlvr.sandbox.pool import Job
from tests.conftest import NO_NODE

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason=NO_NODE)

TASK = "HumanEval-TS/3"  # below_zero(operations: number[]): boolean
HEAD = "function below_zero(operations: number[]): boolean {\n"
CORRECT_BODY = "  let b = 0;\n  for (const o of operations) {\n    b += o;\n    if (b < 0) return true;\n  }\n  return false;\n"
RUNNER_MARKER = "counterpart of zygote.py"  # a line of node_runner.js, so of every node child's argv


@pytest.fixture(scope="module")
def grader(typescript_pack) -> Iterator[Grader]:
    grader = make_grader(typescript_pack, jobs=2, timeout=1.5)
    yield grader
    grader.close()


def _runner_processes() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if RUNNER_MARKER.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


HOSTILE = {
    "process_exit": HEAD + "  (globalThis as any).process.exit(0);\n  return false;\n}\n",
    "constructor_escape": HEAD
    + '  const p = ({} as any).constructor.constructor("return process")();\n  p.exit(0);\n  return false;\n}\n',
    "this_escape": HEAD
    + "  const g = (function (this: any) { return this; })();\n"
    + '  g.constructor.constructor("return process")().exit(0);\n  return false;\n}\n',
    "child_process": 'declare const require: any;\nconst cp = require("child_process");\n'
    + 'cp.execSync("touch /tmp/rlvr-ts-pwned");\n'
    + HEAD
    + "  return false;\n}\n",
    "import_fs": 'import * as fs from "fs";\n'
    + HEAD
    + '  return fs.readFileSync("/etc/passwd", "utf8").length > 0;\n}\n',
    "prototype_pollution": "(Object.prototype as any).toJSON = () => true;\n"
    + "(Array.prototype as any).toJSON = () => true;\n"
    + '(JSON as any).stringify = () => "true";\n'
    + "(Boolean.prototype as any).valueOf = () => true;\n"
    + 'Object.defineProperty(Object.prototype, "ok", { get: () => true });\n'
    + HEAD
    + "  return false;\n}\n",
    "global_tampering": '(globalThis as any).JSON = { stringify: () => \'["x","done",null]\' };\n'
    + "(globalThis as any).Array = function () { return [true]; };\n"
    + HEAD
    + "  return operations.length > 1000;\n}\n",
    "entry_not_a_function": "const below_zero = 5;\n",
    "deep_recursion": HEAD + "  return below_zero(operations);\n}\n",
    "microtask_forgery": HEAD
    + "  Promise.resolve().then(() => { for (;;) {} });\n  return operations.length === 0;\n}\n",
    "env_and_files": HEAD
    + "  const g: any = globalThis;\n"
    + "  return Boolean(g.process?.env?.HOME || g.require?.('fs') || g.Deno || g.Bun);\n}\n",
}


def test_hostile_candidates_fail_on_the_trusted_side(grader):
    names = list(HOSTILE)
    before = set(_runner_processes())
    verdicts = grader.grade_many([TASK] * len(names), [HOSTILE[name] for name in names])
    for name, verdict in zip(names, verdicts, strict=True):
        assert not verdict.passed, name
        assert verdict.error is None and verdict.fault is None, (name, verdict.error)
        assert verdict.gates == ["tests"], (name, verdict.gates)
    assert not Path("/tmp/rlvr-ts-pwned").exists()
    assert set(_runner_processes()) <= before  # no node child outlives its run


def test_limits_are_scored_failures_with_flags(grader):
    cases = {
        "timeout": HEAD + "  for (;;) {}\n}\n",
        "output": HEAD + '  return ("x".repeat(1 << 21) as unknown) as boolean;\n}\n',
        "memory": HEAD + "  const a: number[][] = [];\n  for (;;) a.push(new Array(1e6).fill(1));\n}\n",
    }
    verdicts = dict(zip(cases, grader.grade_many([TASK] * len(cases), list(cases.values())), strict=True))
    assert "timeout" in verdicts["timeout"].flags
    assert {"output_limit", "crash"} & set(verdicts["output"].flags)
    assert {"crash", "timeout"} & set(verdicts["memory"].flags)
    for verdict in verdicts.values():
        assert not verdict.passed and verdict.error is None and verdict.fault is None


def test_work_scheduled_after_the_result_never_runs(grader):
    correct = HEAD + "  Promise.resolve().then(() => { for (;;) {} });\n" + CORRECT_BODY + "}\n"
    (verdict,) = grader.grade_many([TASK], [correct])
    # had the endless microtask run, the child would have spun until its CPU budget: a timeout flag
    # (how long grading takes against the plain solution: benchmarks/bench_guards.py)
    assert verdict.passed, verdict.feedback
    assert "timeout" not in verdict.flags and not any(f.startswith("crash") for f in verdict.flags)


def test_the_candidate_reaches_no_host_capability(typescript_grader):
    """Run straight in the sandbox: every route to node's host API is closed inside the candidate."""
    probe = """function probe() {
  const found = [typeof process, typeof require, typeof Buffer, typeof setTimeout, typeof module];
  for (const make of [() => ({}).constructor.constructor("return typeof process")(),
                      () => (function () { return this; })().constructor.constructor("return typeof process")(),
                      () => probe.constructor("return typeof globalThis.process")()]) {
    try { found.push(String(make())); } catch (e) { found.push("threw"); }
  }
  return found;
}"""
    sandbox = typescript_grader.sandbox
    result = sandbox.run(Job(probe, "probe", [()], timeout=10, runtime="node", counter="__c"))
    assert result.status == "ok", result.detail
    outcome = result.outcomes[0]
    assert outcome is not None and outcome.ok
    # the constructor chains reach the context's own Function, which builds no code from strings (the
    # host realm's would: it would answer "object")
    assert outcome.value == ["undefined"] * 5 + ["threw", "threw", "threw"]


def test_a_counter_name_found_at_run_time_only_adds(grader):
    """A candidate that reads the counter's name from its own source and tries to replace the counter
    (even by a direct eval, in the counter's own scope) gets no smaller count: perf is unchanged."""
    slow = (
        "function max_element(l: number[]): number {\n"
        "  for (const a of l) {\n    let best = true;\n    for (const b of l) {\n      if (b > a) best = false;\n    }\n"
        "    if (best) return a;\n  }\n  return l[0];\n}\n"
    )
    trick = (
        "  const name = /(__rlvr_ops_[0-9a-f]+)/.exec(String(max_element))?.[1];\n"
        "  if (name) {\n    try { eval(name + ' = () => {}'); } catch (e) { }\n"
        "    try { (0, eval)(name + ' = () => {}'); } catch (e) { }\n  }\n"
    )
    sneaky = slow.replace("number {\n", "number {\n" + trick, 1)
    honest, tricked = grader.grade_many(["HumanEval-TS/35"] * 2, [slow, sneaky])
    assert honest.passed and tricked.passed, (honest.feedback, tricked.feedback)
    ops = [int(re.findall(r"(\d+) ops", v.components["perf"].detail)[0]) for v in (honest, tricked)]
    assert ops[1] >= ops[0] > 0
    assert tricked.components["perf"].score <= honest.components["perf"].score < 1.0


def test_each_batch_draws_a_new_counter_name(grader):
    source = HEAD + CORRECT_BODY + "}\n"
    unique = uuid.uuid4().hex
    built = grader.compiler.build_many([source], "__rlvr_ops_" + unique)[0]
    assert built is not None and unique in built


DENIALS = {
    "process_control": HEAD + "  (globalThis as any).process.exit(0);\n  return false;\n}\n",
    "import": 'declare const require: any;\nconst cp = require("child_process");\n'
    + HEAD
    + "  return false;\n}\n",
    "socket": HEAD + '  (globalThis as any).fetch("http://127.0.0.1:1/");\n  return false;\n}\n',
}


def test_reaching_for_the_host_api_is_reported_like_the_python_sandbox(grader):
    """Node's host API is absent from the candidate's realm; reaching for it by name is reported as the
    Python sandbox reports its refusals (`sandbox:denied:<op>` and a sentence in the feedback), whether
    the candidate lets the error escape or swallows it, at load time or in a call."""
    swallowed = HEAD + "  try { (globalThis as any).require('fs'); } catch (e) {}\n" + CORRECT_BODY + "}\n"
    names = list(DENIALS)
    verdicts = grader.grade_many(
        [TASK] * (len(names) + 2), [*DENIALS.values(), swallowed, HEAD + CORRECT_BODY + "}\n"]
    )
    for op, verdict in zip(names, verdicts, strict=False):
        assert not verdict.passed and f"sandbox:denied:{op}" in verdict.flags, (op, verdict.flags)
        assert "the sandbox refused" in verdict.feedback
    swallowed_verdict, honest = verdicts[-2:]
    assert swallowed_verdict.passed and "sandbox:denied:import" in swallowed_verdict.flags
    assert honest.passed and not [f for f in honest.flags if f.startswith("sandbox:denied")], honest.flags
