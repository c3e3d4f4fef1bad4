"""Red-team holes in the math and proof graders: each case below passed (or ended as a grading error) before
its fix. Math answers go through `rlvr.verify` (the real grader and sympy worker); proof derivations through
the real ProofGrader."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import rlvr
from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.math.equiv import Rules, expressions_equal, parse_expression
from rlvr.graders.math.worker import WorkerCrash
from rlvr.graders.proof.grader import ProofGrader

# the eight points the math worker sampled at before (seed 1234, fixed): public, so an answer could vanish on them
_OLD_POINTS = ["151/21", "-293/18", "296/11", "-215/19", "63/37", "-283/10", "-284/51", "39/17"]
_VANISHES_ON_OLD_POINTS = "".join(f"(x - {point})" for point in _OLD_POINTS)


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("x^2", f"\\boxed{{x^2 + {_VANISHES_ON_OLD_POINTS}}}"),
        ("2x + 1", f"\\boxed{{2x + 1 + {_VANISHES_ON_OLD_POINTS}}}"),
    ],
)
def test_a_term_vanishing_at_the_sample_points_does_not_make_a_wrong_expression_equal(
    gold: str, answer: str
) -> None:
    verdict = rlvr.verify(gold, answer)
    assert not verdict.passed and verdict.error is None, verdict.feedback


def test_a_term_vanishing_at_every_small_denominator_rational_is_caught() -> None:
    # sin(97! pi x) is 0 at every rational whose denominator divides 97!: the old points all had one
    cheat = parse_expression("x^2 + \\sin(97! \\pi x)")
    assert not expressions_equal(cheat, parse_expression("x^2"), Rules())
    # guard: a true identity still passes at the new points
    assert expressions_equal(parse_expression("x(x+2)"), parse_expression("x^2 + 2x"), Rules())
    assert rlvr.verify("\\frac{x^2 - 1}{x - 1}", "\\boxed{x + 1}").passed


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("3", "\\boxed{3 + 0 \\cdot \\infty}"),  # the 0*oo term vanished in a - b
        ("5", "\\boxed{\\infty \\cdot 0 + 5}"),
        ("10^{-20}", "\\boxed{10^{-21}}"),  # math-verify's 15-digit chop overrode the exact verdict
        ("\\frac{1}{2^{60}}", "\\boxed{\\frac{1}{2^{61}}}"),
        ("e^{-50}", "\\boxed{0 + 0}"),
        ("10^{-20}", "\\boxed{\\sin(10^{-20})}"),
        ("10^{20}", "\\boxed{10^{20} + 10^{-20}}"),
        ("(10^{-20}, 1)", "\\boxed{(10^{-21}, 1)}"),
        ("\\{10^{-20}\\}", "\\boxed{\\{10^{-21}\\}}"),
    ],
)
def test_undefined_terms_and_tiny_differences_are_not_equal(gold: str, answer: str) -> None:
    verdict = rlvr.verify(gold, answer)
    assert not verdict.passed and verdict.error is None, verdict.feedback


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("10^{-20}", "\\boxed{\\frac{1}{10^{20}}}"),
        ("3", "\\boxed{3 + 0 \\cdot 5}"),
        ("e^{-50}", "\\boxed{\\frac{1}{e^{50}}}"),
        ("(10^{-20}, 1)", "\\boxed{(\\frac{1}{10^{20}}, 1)}"),
    ],
)
def test_tiny_and_rewritten_numbers_that_are_equal_still_pass(gold: str, answer: str) -> None:
    verdict = rlvr.verify(gold, answer)
    assert verdict.passed and verdict.error is None, verdict.feedback


# ---------------------------------------------------------------- proof: failures are scored, never errors


@pytest.fixture(scope="module")
def proof_grader() -> Iterator[ProofGrader]:
    tasks = [Task("sq", "p", "proof", hidden={"goal": "a^2 + b^2 >= 2ab"})]
    grader = ProofGrader(StaticPack("t", tasks, family="proof"))
    try:
        yield grader
    finally:
        grader.close()


@pytest.mark.parametrize("line", ["2^{0/0}", "(0/0)!"])
def test_a_line_sympy_cannot_evaluate_is_a_scored_failure(proof_grader: ProofGrader, line: str) -> None:
    verdict = proof_grader.grade("sq", f"a^2 + b^2\n= {line}\n>= 2ab")
    assert verdict.error is None and not verdict.passed and verdict.reward == 0.0
    assert "Some steps do not hold" in verdict.feedback
    honest = "a^2 + b^2\n= a^2 - 2ab + b^2 + 2ab\n= (a - b)^2 + 2ab\n>= 2ab"
    assert proof_grader.grade("sq", honest).passed  # the worker lives on


@pytest.mark.parametrize(
    ("reply", "flag"),
    [
        ({"ok": False, "error": "out of memory", "kind": "memory"}, "oversized:memory"),
        ({"ok": False, "error": "nested too deeply", "kind": "recursion"}, "oversized:nesting"),
    ],
)
def test_a_derivation_that_exhausts_the_worker_is_a_scored_failure(
    monkeypatch: pytest.MonkeyPatch, reply: dict[str, Any], flag: str
) -> None:
    tasks = [Task("sq", "p", "proof", hidden={"goal": "a^2 + b^2 >= 2ab"})]
    grader = ProofGrader(StaticPack("t", tasks, family="proof"))
    monkeypatch.setattr(grader._worker, "call", lambda request, timeout: reply)
    verdict = grader.grade("sq", "a^2 + b^2\n>= 2ab")
    assert verdict.error is None and not verdict.passed and flag in verdict.flags


def test_a_worker_that_dies_twice_on_a_derivation_is_a_scored_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tasks = [Task("sq", "p", "proof", hidden={"goal": "a^2 + b^2 >= 2ab"})]
    grader = ProofGrader(StaticPack("t", tasks, family="proof"))
    calls: list[int] = []

    def dies(request: dict[str, Any], timeout: float) -> dict[str, Any]:
        calls.append(1)
        raise WorkerCrash("math worker exited (code -9)")

    monkeypatch.setattr(grader._worker, "call", dies)
    verdict = grader.grade("sq", "a^2 + b^2\n>= 2ab")
    assert verdict.error is None and not verdict.passed and "crash:answer" in verdict.flags
    assert len(calls) == 2

    def cannot_start(request: dict[str, Any], timeout: float) -> dict[str, Any]:
        raise WorkerCrash("math worker failed to start: no python")

    monkeypatch.setattr(grader._worker, "call", cannot_start)
    machinery = grader.grade("sq", "a^2 + b^2\n= b^2 + a^2\n>= 2ab")
    assert machinery.error and "failed to start" in machinery.error  # the machinery's failure stays an error


@pytest.mark.parametrize(
    ("gold", "answer", "passed"),
    [
        ("3", "\\boxed{\\boxed{3}, 4}", False),  # math-verify graded only the inner box of a hedged list
        ("3", "\\boxed{4, \\fbox{3}}", False),
        ("3, 4", "\\boxed{\\boxed{3}, 4}", True),
        ("3", "\\boxed{\\boxed{3}}", True),  # a doubled box is still one answer
    ],
)
def test_a_box_inside_the_final_box_is_not_graded_alone(gold: str, answer: str, passed: bool) -> None:
    verdict = rlvr.verify(gold, answer)
    assert verdict.passed is passed and verdict.error is None, verdict.feedback


@pytest.mark.parametrize(
    "completion",
    [
        "answer" + " " * 2_500 + ":",  # adjacent \s* runs backtracked cubically: 2,000 spaces took 30 s
        "Final answer" + " " * 2_500 + "x",
        "the answer is" + " " * 2_500 + ":\n",
        "\\boxed{" * 28_000,  # every unclosed box rescanned the text to its end: quadratic
    ],
)
def test_answer_extraction_in_the_trusted_process_is_linear(completion: str) -> None:
    """It returns (the old code took 30 s here); its time against plain prose of the same length is a
    ratio in benchmarks/bench_guards.py, not a clock limit here."""
    from rlvr.graders.math.extract import extract

    extraction = extract(completion)
    assert extraction.source not in ("boxed", "boxes")  # no box is closed: none may be read as the answer
