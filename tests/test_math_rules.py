"""Issue 14/12 math rules, end to end through `rlvr.verify` (the real grader and sympy worker): every item of
a list, times, ratios, and/or lists, undefined values, thousands separators, words that change a value,
relations that keep one side, several boxes, answers in prose, and the per-task settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rlvr
from rlvr.specs.math_settings import MathSettings, MathSettingsError
from rlvr.task_packs.directory import validate_directory


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("19, 46, and 82", "21, 36, and 82"),  # only the last item matches
        ("19, 46, and 82", "19, 46"),
        ("1:00", "12:00"),  # clock times, not ratios
        ("2:30", "1:15"),
        ("\\frac{2}{0}", "\\frac{1}{0}"),  # undefined never equals anything
        ("\\infty", "\\frac{1}{0}"),
        ("25", "25 thousand"),  # words that change the value are not units
        ("25", "25 \\text{ thousand}"),
        ("25", "25 or more"),
        ("25", "at least 25"),
        ("25", "26 \\sim 25"),  # a relation keeping one side
        ("3", "3 \\approx x"),  # `x \\approx 3` is the unknown's value (tests/test_math_suite_rules.py)
        ("10/9", "\\frac{1}{2} = \\frac{10}{9}"),
        ("5", "\\boxed{5} or maybe \\boxed{6}"),  # hedging with boxes elsewhere
        ("1, 2", "1, 2, 2"),  # every item counts
        ("(1, 2)", "\\{1, 2\\}"),  # a set is not a tuple
        ("1, 22", "1.22"),  # a spaced comma in a reference separates items; it is not a decimal comma
        ("1,222", "1.222"),  # a thousands group
        ("7:32", "14:64"),
    ],
)
def test_false_passes_of_the_audit_fail(gold: str, answer: str) -> None:
    verdict = rlvr.verify(gold, answer)
    assert not verdict.passed and verdict.error is None, verdict.feedback


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("19, 46, and 82", "$19, 46, \\text{ and } 82$"),
        ("21, 16, 11", "$21,16$ or $11$"),
        ("1:00", "1:00"),
        ("13:30", "1:30 pm"),
        ("S_{MBCN}:S = 7:32", "7:32"),  # a labelled reference
        ("11111111100", "is $\\boxed{11,\\! 111,\\! 111,\\! 100}$"),
        ("14916", "$\\boxed{14{,}916}$"),
        ("16386.20", "worth $\\boxed{\\$16,\\!386.20}$"),
        ("1000.99", "1000,99"),
        ("10", "\\boxed{10 \\text{ dollars}}"),
        ("28\\%", "28 percent"),
        ("25", "x = 25"),
        ("(5, 8), (8, 5)", "\\boxed{(x, y) = (5, 8) \\quad \\text{and} \\quad (8, 5)}"),
        ("(2, 2), (6, 2)", "$$\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}$$"),
        ("\\{1, 2, 3\\}", "\\boxed{1},\\boxed{2},\\boxed{3}"),
        (
            "120",
            "so the volume is $5 \\times 6 \\times 4 = 120$.\nFinal Answer: The volume of $ABCDEFGH$ is 120.",
        ),
        ("2/3", "Therefore, the probability that Alice wins the game is 2/3."),
        ("x \\geq 5", "Therefore $x >= 5$ is the solution."),
        ("(5, 2), (7, 2)", "p=5,q=2;p=7,q=2"),  # answer and reference swapped below
        (
            "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{15+2\\sqrt{33}}",
            "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{2\\sqrt{33}+15}",
        ),  # a nested radical that used to time out
        ("12:00", "The meeting starts at $12:00$."),
    ],
)
def test_honest_answers_pass(gold: str, answer: str) -> None:
    if answer.startswith("p="):
        gold, answer = answer, gold
    verdict = rlvr.verify(gold, answer)
    assert verdict.passed and verdict.error is None, verdict.feedback


def test_the_one_liner_and_what_the_verdict_says() -> None:
    verdict = rlvr.verify("\\frac{1}{2}", "0.5")
    assert verdict.passed and verdict.reward == pytest.approx(1.0)
    assert "`0.5`" in verdict.feedback and "rule:" in verdict.feedback
    wrong = rlvr.verify("\\frac{1}{2}", "The answer is \\boxed{0.25}.")
    assert not wrong.passed and "`0.25`" in wrong.feedback and "boxed" in wrong.feedback
    assert "frac" not in wrong.feedback  # the reference never leaks


def test_import_rlvr_loads_no_grader_until_verify_is_called() -> None:
    code = "import sys, rlvr; print(any(m.startswith('rlvr.graders') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    ("gold", "answer", "settings", "passed"),
    [
        ("3.14159", "3.14", {"significant_figures": 3}, True),
        ("3.14159", "3.1416", {"significant_figures": 3}, True),  # more digits that round to it
        ("3.14159", "3.1", {"significant_figures": 3}, False),
        ("3.14159", "3.15", {"significant_figures": 3}, False),
        ("0.000123456", "0.000123", {"significant_figures": 3}, True),
        ("\\frac{1}{3}", "0.3333", {}, True),  # rounds a number with no finite decimal, 4 significant digits
        ("\\frac{1}{3}", "0.333", {}, False),  # exact by default below 4 significant digits
        ("\\frac{1}{3}", "0.3333", {"precision": 4}, True),
        ("\\frac{1}{3}", "0.333", {"precision": 4}, False),
        ("(\\frac{3}{5}, \\frac{8}{3}]", "(0.6, 2.6667]", {"precision": 2}, True),
        ("(\\frac{3}{5}, \\frac{8}{3}]", "[0.6, 2.6667]", {"precision": 2}, False),
        ("1.41", "\\sqrt{2}", {"tolerance": 0.01}, True),
        ("f(x)", "f(y)", {}, False),
        ("f(x)", "f(y)", {"strict": False}, True),
        ("1, 2", "2, 1", {}, True),
        ("1, 2", "2, 1", {"relation": "tuple"}, False),
        ("(1, 2)", "(2, 1)", {"relation": "set"}, True),
        ("x \\in [-2, 7]", "-2 \\le x \\le 7", {}, True),
        ("x \\in [-2, 7]", "-2 \\le x \\le 7", {"relation_as_set": False}, False),
        ("-2 \\le x \\le 7", "x \\in [-2, 7]", {"relation_as_set": False}, True),
        ("5", "\\boxed{4} then \\boxed{5}", {}, False),
        ("5", "\\boxed{4} then \\boxed{5}", {"boxes": "last"}, True),
        ("4", "\\boxed{4} then \\boxed{5}", {"boxes": "first"}, True),
    ],
)
def test_settings(gold: str, answer: str, settings: dict, passed: bool) -> None:
    verdict = rlvr.verify(gold, answer, **settings)
    assert verdict.passed is passed, verdict.feedback


def test_settings_are_typed() -> None:
    with pytest.raises(MathSettingsError, match="did you mean 'precision'"):
        rlvr.verify("1", "1", precison=3)
    with pytest.raises(MathSettingsError, match="relation: must be one of"):
        rlvr.verify("1", "1", relation="bag")
    with pytest.raises(MathSettingsError, match="significant_figures"):
        MathSettings.from_mapping({"significant_figures": 0})
    assert MathSettings.from_mapping({"strict": False}).to_json() == {"strict": False}


def test_directory_packs_check_settings_and_scorers(tmp_path: Path) -> None:
    (tmp_path / "pack.toml").write_text('name = "s"\nfamily = "math"\n')
    lines = [
        {"id": "ok", "prompt": "p", "answer": "3.14", "significant_figures": 3, "relation": "set"},
        {"id": "typo", "prompt": "p", "answer": "1", "precison": 2},
        {"id": "type", "prompt": "p", "answer": "1", "strict": "yes"},
        {
            "id": "rg-ok",
            "prompt": "p",
            "answer": "2",
            "reasoning_gym": {"dataset": "gcd", "seed": 1, "size": 4, "index": 0},
        },
        {
            "id": "rg-eval",
            "prompt": "p",
            "answer": "2",
            "reasoning_gym": {"dataset": "countdown", "seed": 1, "size": 4, "index": 0},
        },
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    problems = [str(p) for p in validate_directory(tmp_path)]
    assert len(problems) == 3, problems
    assert ":2: precison: unknown setting (did you mean 'precision'?)" in problems[0]
    assert ":3: strict: must be true or false" in problems[1]
    assert ":5: reasoning_gym: generator 'countdown' is not allowed" in problems[2]


def test_pack_wide_settings_and_task_overrides() -> None:
    from rlvr.core.pack import StaticPack
    from rlvr.core.types import Task
    from rlvr.graders.math.grader import MathGrader
    from rlvr.graders.options import OptionsError

    tasks = [
        Task("third", "p", "math", hidden={"answer": "\\frac{1}{3}"}),
        Task("exact", "p", "math", hidden={"answer": "\\frac{1}{3}", "precision": None}),
        Task("typo", "p", "math", hidden={"answer": "1", "precison": 2}),
    ]
    grader = MathGrader(StaticPack("s", tasks, family="math", options={"precision": 2}), timeout=20)
    try:
        third, exact, typo = grader.grade_many(["third", "exact", "typo"], ["\\boxed{0.33}"] * 3)
    finally:
        grader.close()
    assert third.passed and not exact.passed
    assert typo.error and typo.fault == "task" and "precison" in typo.error
    with pytest.raises(OptionsError, match="relation"):
        MathGrader(StaticPack("s", [], family="math", options={"relation": "bag"}))
