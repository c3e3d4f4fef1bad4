"""The TypeScript grader's pieces: syntax, extraction, the strict compiler process, the JSON reading of
results, the node child's process filter and the node path of the sandbox."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import threading

import pytest

from rlvr.graders.code.oracle import Expected
from rlvr.graders.code.typescript.extract import extract_program
from rlvr.graders.code.typescript.oracle import read_outcome, representable, shaped
from rlvr.graders.code.typescript.syntax import analyze, blank_comments, defines
from rlvr.sandbox.pool import CallOutcome, Job
from rlvr.sandbox.syscall_filter import build_thread_only_program
from tests.conftest import NO_NODE

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason=NO_NODE)

SIGNATURE = "function add(a: number, b: number): number {\n"


# ---------------------------------------------------------------- syntax
def test_syntax_reports_the_error_location():
    report = analyze("function f(x: number) {\n  return x +;\n}\n")
    assert not report.ok
    assert (report.line, report.column) == (2, 13)
    assert analyze(SIGNATURE + "  return a + b;\n}\n").ok


def test_syntax_finds_suppressions_and_imports():
    source = '// @ts-ignore\nimport fs from "fs";\n/* @ts-expect-error */ const x = require("y");\n'
    report = analyze(source)
    assert report.ok
    assert [c.line for c in report.suppressions] == [1, 3]
    assert report.imports == ["fs", "require"]


def test_blank_comments_keeps_positions_and_strings():
    source = 'const s = "// not a comment"; // @ts-ignore\n/* a\n b */ const t = 1;\n'
    blanked = blank_comments(source)
    assert len(blanked) == len(source) and blanked.count("\n") == source.count("\n")
    assert "@ts-ignore" not in blanked and '"// not a comment"' in blanked
    assert blanked.splitlines()[2].endswith("const t = 1;")


def test_defines_sees_functions_and_bindings():
    assert defines("export function add() {}", "add")
    assert defines("const add = (a: number) => a;", "add")
    assert not defines("function other() { function add() {} }", "add")


# ---------------------------------------------------------------- extraction
def test_extract_whole_fenced_and_continuation():
    whole = SIGNATURE + "  return a + b;\n}\n"
    assert extract_program(SIGNATURE, whole, "add").origin == "whole"
    continuation = extract_program(SIGNATURE, "  return a + b;\n}\n", "add")
    assert continuation.origin == "continuation" and continuation.program.startswith(SIGNATURE)
    fenced = "Here:\n```typescript\n" + whole + "```\nUsage:\n```ts\nconsole.log(add(1, 2));\n```\n"
    chosen = extract_program(SIGNATURE, fenced, "add")
    assert chosen.origin == "block 1 of 2" and chosen.program == whole
    python_block = "```python\ndef add(a, b):\n    return a + b\n```\n"
    assert extract_program(SIGNATURE, python_block, "add").origin == "raw"


# ---------------------------------------------------------------- the JSON reading of results
def test_representable_is_what_json_carries_into_javascript():
    assert representable([1, 2.5, "x", None, True, (1, 2), {"k": [1]}])
    for value in (2**53, float("nan"), float("inf"), {1: 2}, {1, 2}, b"x", 1j):
        assert not representable([value])


def test_results_are_read_in_the_shape_of_the_reference():
    assert shaped((1, 2.0), [1, 2]) == (1, 2.0) and type(shaped((1, 2.0), [1, 2])[1]) is float
    assert shaped(3, 3.0) == 3 and type(shaped(3, 3.0)) is int
    assert shaped(True, 1) == 1 and type(shaped(True, 1)) is int  # booleans stay apart from numbers
    assert shaped((1, 2), [1, 2, 3]) == [1, 2, 3]  # a wrong length is not made a tuple
    assert shaped({"a": 1.0}, {"a": 1, "b": 2}) == {"a": 1.0, "b": 2}


def test_any_throw_matches_a_raising_reference_but_not_plain_data():
    raising = Expected(raises="ValueError")
    assert read_outcome(raising, CallOutcome(ok=False, exception="Error")) == CallOutcome(
        ok=False, exception="ValueError"
    )
    # `return undefined` is not plain data, and is never taken for a throw
    not_plain = CallOutcome(ok=False, exception="NotPlainData")
    assert read_outcome(raising, not_plain) == not_plain


# ---------------------------------------------------------------- the node child's process filter
def test_thread_only_filter_denies_processes_and_allows_threads():
    program = build_thread_only_program()
    if program is None:
        pytest.skip(f"no syscall table for {os.uname().machine}")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        try:

            class SockFprog(ctypes.Structure):
                _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

            libc = ctypes.CDLL(None, use_errno=True)
            buffer = ctypes.create_string_buffer(program, len(program))
            fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
            assert libc.prctl(38, 1, 0, 0, 0) == 0 and libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0
            thread_ran = []
            worker = threading.Thread(target=lambda: thread_ran.append(True))
            worker.start()
            worker.join()
            try:
                child = os.fork()
                if child == 0:
                    os._exit(0)
                forked = "forked"
            except PermissionError:
                forked = "denied"
            os.write(write_end, json.dumps([bool(thread_ran), forked]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    answer = json.loads(os.read(read_end, 1024) or b"null")
    os.close(read_end)
    os.waitpid(pid, 0)
    assert answer == [True, "denied"]


# ---------------------------------------------------------------- the sandbox's node path
@needs_node
def test_node_jobs_run_in_the_sandbox_with_deterministic_counts():
    from rlvr.sandbox import make_sandbox

    source = "function f(n) { __c(); let s = 0; for (let i = 0; i < n; i++) { __c(); s += i; } __c(); return [s, n / 2]; }"
    job = Job(source, "f", [(10,), (3,)], timeout=10, trace=True, runtime="node", counter="__c")
    with make_sandbox("local", 1, node=True) as sandbox:
        first, second = sandbox.run_many([job, job])
        python_job = sandbox.run(Job("def f(n):\n    return n\n", "f", [(1,)]))
    assert first.status == "ok", first.detail
    assert [o.value for o in first.outcomes if o] == [[45, 5], [3, 1.5]]
    assert first.counts == second.counts == [12, 5]
    assert python_job.status == "ok" and python_job.outcomes[0] == CallOutcome(ok=True, value=1)


@needs_node
def test_a_sandbox_without_node_refuses_node_jobs():
    from rlvr.sandbox import make_sandbox

    with make_sandbox("local", 1) as sandbox:
        result = sandbox.run(Job("function f() { return 1 }", "f", [()], runtime="node", counter="__c"))
    assert result.sandbox_error and "node" in result.detail


# ---------------------------------------------------------------- the compiler process
@needs_node
def test_strict_checks_blank_suppressions_and_charge_any(typescript_grader):
    checker = typescript_grader.checker
    assert checker is not None
    sources = [
        SIGNATURE + "  return a + b;\n}\n",
        SIGNATURE + "  // @ts-ignore\n  return 'x';\n}\n",
        SIGNATURE + "  // @ts-expect-error\n  return 'x';\n}\n",
        "function add(a, b) { return a + b; }\n",  # implicit any under strict
        "function add(a: any, b: number): number { return (a as any) + b; }\n",
    ]
    results = checker.check_many([blank_comments(s) for s in sources])
    assert [len(r.diagnostics) > 0 for r in results] == [False, True, True, True, False]
    assert results[4].any_count == 2


@needs_node
def test_a_global_augmentation_cannot_reach_another_candidate(typescript_grader):
    checker = typescript_grader.checker
    assert checker is not None
    augment = "declare global { interface Number { shout(): string } }\nexport {};\n"
    user = "function f(n: number): string { return n.shout(); }\n"
    results = checker.check_many([augment, user])
    assert not results[0].diagnostics
    assert any("shout" in d["message"] for d in results[1].diagnostics)


@needs_node
def test_builds_insert_the_counter_under_the_given_name(typescript_grader):
    js = typescript_grader.compiler.build_many([SIGNATURE + "  return a + b;\n}\n"], "__rlvr_ops_x")
    assert js[0] is not None and "__rlvr_ops_x()" in js[0] and ": number" not in js[0]


@pytest.mark.slow  # two compiler restarts (~12 s on a loaded 2-core machine)
@needs_node
def test_a_candidate_that_hangs_the_checker_is_flagged_alone(typescript_grader, monkeypatch):
    """A batch that times out is split; the candidate that still times out alone gets `timeout:types`
    (a scored 0), the others their own reports."""
    from rlvr.graders.code.typescript import compiler as module
    from rlvr.graders.code.typescript.compiler import TsCompiler

    # type-level recursion that makes the checker work exponentially (bounded here by a short timeout)
    heavy = (
        "type T<N extends unknown[]> = N['length'] extends 24 ? N : T<[...N, N]> | T<[...N, 0]>;\n"
        "type X = T<[]>;\nexport const x: X = [] as any;\n"
    )
    monkeypatch.setattr(module, "MIN_SECONDS", 2.0)
    monkeypatch.setattr(module, "SECONDS_PER_FILE", 0.0)
    checker = TsCompiler()
    try:
        results = checker.check_many([SIGNATURE + "  return a + b;\n}\n", heavy])
    finally:
        checker.close()
    assert results[0].flag is None and not results[0].diagnostics
    assert results[1].flag in ("timeout:types", "crash:types")


@needs_node
def test_the_compiler_charges_directives_that_reach_it(typescript_grader):
    """Defence in depth: a directive the blanking missed costs an error in the compiler process itself."""
    checker = typescript_grader.checker
    assert checker is not None
    raw = [
        SIGNATURE + "  // @ts-ignore\n  return 'x';\n}\n",
        "// @ts-nocheck\n" + SIGNATURE + "  return 'x';\n}\n",
        SIGNATURE + "  return a + b;\n}\n",
    ]
    results = checker.check_many(raw)
    assert [any("suppression" in d["message"] for d in r.diagnostics) for r in results] == [True, True, False]
    # and the directives hid nothing: the type error under them is reported too
    assert all(any("not assignable" in d["message"] for d in r.diagnostics) for r in results[:2])


def test_the_weak_visible_verifier_is_refused_for_typescript_packs() -> None:
    from rlvr.graders.base import make_grader
    from rlvr.graders.options import OptionsError
    from rlvr.task_packs.registry import load_pack

    with pytest.raises(OptionsError, match="verifier"):
        make_grader(load_pack("humaneval-ts"), verifier="visible")
