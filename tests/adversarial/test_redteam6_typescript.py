"""Red team 6, TypeScript grading: type scores that reward less typing, round two.

Found (each test failed before its fix):
- widening or dropping the prompt's declared return type hid the type error it would expose:
  `): unknown`, `): number | string`, `): {}`, no return annotation, or a `const f = (...) => ...`
  with an inferred type all scored types 1.0 where the honest program with the same bug (the
  declared `number` kept) scored 0.5. Now the entry point must be assignable to the prompt's
  declared function type (`rlvr/graders/code/typescript/signature.py`): one error otherwise;
- a double assertion through `never` (`x as never as T`, or `y as never` assigned anywhere) went
  uncounted, though it is `as unknown as T` in all but the keyword. Now counted as an unchecked cast.

And a false failure of honest code: the sandbox runs the built JavaScript as a script, so any
`export` (`export function strlen`, `export {}`, `export default strlen`) failed "while loading"
(reward 0.12). The build now blanks the export syntax (the runner finds the entry point by name).

Controls: the honest program keeps 1.0; widening a *parameter* stays free (a function accepting
more is still a valid implementation); `benchmarks/bench_redteam6_ts_types.py` checks 153 honest
programs (independent solutions and the pack's references): none loses credit.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from rlvr.graders.base import Grader
from rlvr.graders.code.typescript.signature import declared_type

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")

TASK = "HumanEval-TS/23"  # strlen(string: string): number
HEAD = "function strlen(string: string): number {\n"
HONEST = HEAD + "  return string.length;\n}\n"
BUG = "  return string.length > 1e9 ? 'huge' : string.length;\n}\n"  # a string where number is declared


def _types(grader: Grader, program: str) -> float:
    verdict = grader.grade(TASK, program)
    assert verdict.error is None, verdict.error
    assert verdict.passed, verdict.feedback  # every program here works: only its typing differs
    return verdict.components["types"].score


@pytest.mark.parametrize(
    "program",
    [
        "function strlen(string: string): unknown {\n" + BUG,
        "function strlen(string: string): number | string {\n" + BUG,
        "function strlen(string: string): {} {\n" + BUG,
        "function strlen(string: string) {\n" + BUG,
        "const strlen = (string: string) => (string.length > 1e9 ? 'huge' : string.length);\n",
    ],
    ids=["unknown", "union", "empty object", "no return annotation", "inferred arrow"],
)
def test_widening_the_declared_return_type_never_raises_the_types_score(
    typescript_grader: Grader, program: str
) -> None:
    honest_with_the_same_bug = _types(typescript_grader, HEAD + BUG)
    assert honest_with_the_same_bug < 1.0
    assert _types(typescript_grader, program) <= honest_with_the_same_bug


@pytest.mark.parametrize(
    "program",
    [
        HEAD + "  return (string as never as string[]).length;\n}\n",
        HEAD + "  const n: number = (string.length as never);\n  return n;\n}\n",
        HEAD + "  const parts = <string[]>(<never>string);\n  return parts.length;\n}\n",
    ],
    ids=["as never as", "as never", "angle brackets"],
)
def test_assertions_through_never_cost_types(typescript_grader: Grader, program: str) -> None:
    assert _types(typescript_grader, program) < 1.0


@pytest.mark.parametrize(
    "program",
    [
        HONEST,
        "function strlen(string: string | string[]): number {\n  return string.length;\n}\n",
        "export function strlen(string: string): 0 | number {\n  return string.length;\n}\n",
        "const strlen = (string: string): number => string.length;\n",
        "function strlen(string: string, unused?: boolean): number {\n  return string.length;\n}\n",
    ],
    ids=["honest", "wider parameter", "export + same type", "typed arrow", "extra optional parameter"],
)
def test_honest_spellings_of_the_declared_signature_keep_full_credit(
    typescript_grader: Grader, program: str
) -> None:
    assert _types(typescript_grader, program) == 1.0


def test_the_declared_type_is_read_from_the_prompt(typescript_pack) -> None:
    task = typescript_pack.get(TASK)
    assert declared_type(task.prompt, "strlen") == "(string: string) => number"
    generic = "/** doc */\nfunction first<T>(xs: T[], fallback = 0): T | number {"
    assert (
        declared_type(generic, "first") == "<T>(xs: T[], fallback?) => T | number"
        or declared_type(generic, "first") is None
    )
    assert declared_type("function f(x) {", "f") is None  # nothing declared, nothing checked


@pytest.mark.parametrize(
    "program",
    [
        "export function strlen(string: string): number {\n  return string.length;\n}\n",
        "export const strlen = (string: string): number => string.length;\n",
        HONEST + "export {};\n",
        "export default function strlen(string: string): number {\n  return string.length;\n}\n",
        HONEST + "export default strlen;\n",
        HONEST + "export { strlen as len };\n",
    ],
    ids=[
        "export function",
        "export const",
        "export {}",
        "export default function",
        "export default",
        "export as",
    ],
)
def test_an_honest_program_that_exports_its_function_passes(typescript_grader: Grader, program: str) -> None:
    verdict = typescript_grader.grade(TASK, program)
    assert verdict.passed and verdict.reward == 1.0, verdict.feedback


# -- one candidate that is slow to type-check held up every candidate checked with it
SLOW_TO_CHECK = (
    "type K = "
    + " | ".join(f"{{ k: {j}; v{j}: string }}" for j in range(2000))
    + ";\n"
    + "".join(
        "export const o"
        + str(i)
        + ": K[] = ["
        + ", ".join(f"{{ k: {j}, v{j}: 'x' }}" for j in range(0, 2000, 7))
        + "];\n"
        for i in range(20)
    )
    + HONEST
)


def test_a_candidate_slow_to_type_check_delays_its_batch_by_its_own_limit_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 2,000-member union checked against 20 arrays of literals takes the checker ~20 s: past the
    batch's time limit. The batch was then split in halves, and every half holding the slow
    candidate ran to the limit again - log2(batch) full limits (123 s for 32 candidates, against 5 s
    without it). Now the checker reports its progress candidate by candidate: a batch that runs out
    of time keeps what it finished, the candidate it was checking is flagged, the rest is checked
    again - the limit is reached once. The limit is lowered to half what the slow candidate takes
    alone on this machine, and the signal is the number of requests that ran out of time, not a clock."""
    import time

    import rlvr.graders.code.typescript.compiler as compiler_module
    from rlvr.graders.code.typescript.compiler import CompilerFailed, TsCompiler

    assert len(SLOW_TO_CHECK) < 200_000  # within the source limit: it reaches the checker
    compiler = TsCompiler()
    started = time.monotonic()
    compiler.check_many([SLOW_TO_CHECK])  # how slow it is on this machine (it times out at 15 s or less)
    alone = time.monotonic() - started
    assert alone > 5.0, f"the checker took only {alone:.1f} s on the slow candidate: make it slower"
    # a limit half of that: the slow candidate exceeds it wherever it runs, honest ones take ~10 ms
    monkeypatch.setattr(compiler_module, "MIN_SECONDS", max(2.5, alone / 2))
    monkeypatch.setattr(compiler_module, "SECONDS_PER_FILE", 0.0)
    timeouts = 0
    request = compiler._request

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal timeouts
        try:
            return request(*args, **kwargs)
        except CompilerFailed as exc:
            timeouts += str(exc) == "timeout"
            raise

    monkeypatch.setattr(compiler, "_request", counted)
    try:
        results = compiler.check_many([HONEST] * 31 + [SLOW_TO_CHECK])
    finally:
        compiler.close()
    assert [r.flag for r in results[:31]] == [None] * 31 and results[31].flag == "timeout:types"
    assert all(not r.diagnostics for r in results[:31])
    assert timeouts == 1  # halving would have run the slow candidate to the limit log2(32) + 1 times


def test_a_diagnostic_about_a_lone_surrogate_literal_is_still_text(typescript_grader: Grader) -> None:
    """`const x: "a" = "\\uD800"` is plain ASCII, but the checker's message prints the literal's value:
    a lone surrogate in the verdict (its types detail), which no UTF-8 writer accepts - a JSON
    response of `rlvr serve --protocol openenv`, a log line. Now such code units become U+FFFD."""
    program = HEAD + '  const x: "a" = "\\uD800";\n  return string.length;\n}\n'
    verdict = typescript_grader.grade(TASK, program)
    assert verdict.error is None and verdict.components["types"].score < 1.0
    detail = verdict.components["types"].detail
    assert "is not assignable" in detail
    detail.encode("utf-8")
    json_text = __import__("json").dumps(verdict.to_json(), ensure_ascii=False)
    json_text.encode("utf-8")
