"""Final-answer extraction: boxed first, then Answer:/####/'the answer is' lines, then a bare answer line."""

from __future__ import annotations

import pytest

from rlvr.graders.math.extract import extract_answer, extract_answer_with_source, last_boxed, oversized_number


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
