"""Final-answer extraction: boxed first, then Answer:/####/'the answer is' lines, then a bare answer line."""

from __future__ import annotations

import pytest

from rlvr.graders.math.extract import (
    extract,
    extract_answer,
    extract_answer_with_source,
    last_boxed,
    oversized_number,
    size_problem,
)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("so \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
        ("\\boxed{1} then \\boxed{\\{1, \\{2\\}\\}}", "\\{1, \\{2\\}\\}"),  # the last box, nested braces
        ("\\boxed{x^{2}} and a broken \\boxed{3", "x^{2}"),  # an unclosed box does not count
        ("\\fbox{7}", "7"),
        ("\\boxed 5 is it", "5"),
        ("work\nAnswer: 42.", "42"),
        ("work\n**Final answer:** $x=3$", "$x=3$"),
        ("Answer: 1\nmore work\nAnswer: 2", "2"),
        ("steps\n#### 1,000", "1,000"),
        ("So the final answer is 7", "7"),
        ("0.5", "0.5"),
        ("x < 2 \\text{ or } x > 3", "x < 2 \\text{ or } x > 3"),
    ],
)
def test_extracts_the_final_answer(text: str, answer: str) -> None:
    assert extract_answer(text) == answer


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "I worked hard and think it is probably five",
        "日本語",
        "line one\nline two",
        "\\boxed{",
        "\x00\ud800",
    ],
)
def test_no_stated_answer_gives_none(text: str) -> None:
    assert extract_answer(text) is None


def test_source_is_reported() -> None:
    assert extract_answer_with_source("\\boxed{3}")[1] == "boxed"
    assert extract_answer_with_source("Answer: 3")[1] == "answer_line"
    assert extract_answer_with_source("3")[1] == "bare"
    assert extract_answer_with_source("no answer in this text")[1] == "none"


def test_last_boxed_ignores_escaped_braces() -> None:
    assert last_boxed("\\boxed{\\{1\\}}") == "\\{1\\}"


@pytest.mark.parametrize(
    ("answer", "oversized"),
    [("9^{9^{9}}", True), ("9**9**9**9", True), ("10^{6000}", True), ("100000!", True)]
    + [("2^{3^2}", False), ("10^{100}", False), ("20!", False), ("1e3", False)],
)
def test_oversized_numbers_are_spotted_without_computing_them(answer: str, oversized: bool) -> None:
    assert oversized_number(answer) is oversized


@pytest.mark.parametrize(
    ("text", "answer", "source", "flags"),
    [
        ("\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}", "(2, 2), (6, 2)", "boxes", ()),
        ("\\boxed{1},\\boxed{2},\\boxed{3}", "1, 2, 3", "boxes", ()),
        ("\\( y_1 = \\boxed{x} \\) and \\( y_2 = \\boxed{2x} \\)", "x, 2x", "boxes", ()),
        ("try \\boxed{5}. Check: yes. So \\boxed{5}", "5", "boxed", ()),
        ("try \\boxed{4}. Hmm, no. So \\boxed{5}", "5", "boxed", ("conflicting_boxes",)),
        (
            "step \\boxed{255} ... Final Answer: The final answer is $10,455$. I hope it is correct.",
            "$10,455$",
            "answer_line",
            (),
        ),
        ("Final Answer: The largest $n$ is 34.", "The largest $n$ is 34", "prose", ()),
        ("so the total is 120 apples overall", "so the total is 120 apples overall", "prose", ()),
    ],
)
def test_several_boxes_answer_lines_and_prose(text: str, answer: str, source: str, flags: tuple) -> None:
    found = extract(text)
    assert (found.answer, found.source, found.flags) == (answer, source, flags)


def test_box_rules() -> None:
    text = "\\boxed{4} first, then \\boxed{5}"
    assert extract(text, "first").answer == "4" and extract(text, "last").answer == "5"
    assert extract(text, "all").flags == ("conflicting_boxes",)


@pytest.mark.parametrize(
    ("answer", "flag"),
    [
        ("1e99999999", "oversized:answer"),
        ("\\sum_{k=1}^{1000000} k", "oversized:answer"),
        ("\\prod_{n=1}^{10^{9}} n", "oversized:answer"),
        ("(" * 100 + "1" + ")" * 100, "oversized:nesting"),
        ("x" * 2000, "oversized:answer"),
        ("3.5e10", None),
        ("\\sum_{k=1}^{10} k", None),
    ],
)
def test_size_guards(answer: str, flag: str | None) -> None:
    assert size_problem(answer) == flag
