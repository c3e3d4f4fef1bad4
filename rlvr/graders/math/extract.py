"""Find the final answer in a math completion.

Order: the last `\\boxed{...}` (or `\\fbox{...}`, nested braces allowed); else the last line that starts
with `Answer:` / `Final answer:` / `The answer is` or `####`; else, when the whole completion is one short
line that is only an answer (`3/4`, `$x = 2$`, `(1, 2)`: no prose), that line. No answer → None (the
grader's format gate fails).
"""

from __future__ import annotations

import math
import re

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_ANSWER_LINE = re.compile(
    r"^\s*(?:[*_]{0,2})\s*(?:the\s+)?(?:final\s+)?answer\s*(?:is)?\s*(?:[*_]{0,2})\s*[:：]\s*(?:[*_]{0,2})(?P<answer>.+?)\s*$",
    re.IGNORECASE,
)
_HASH_LINE = re.compile(r"^\s*####\s*(?P<answer>.+?)\s*$")
_ANSWER_IS = re.compile(r"^.*?\b(?:final\s+)?answer\s+is\s*:?\s*(?P<answer>.+?)\s*$", re.IGNORECASE)
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{4,}")
MAX_BARE_CHARS = 120
_MATHY = re.compile(r"[0-9\\^=<>+*/()\[\]{}|≤≥π∞√-]")
# What plain math is written with: printable ASCII plus a few math symbols.
MATH_CHARACTERS = frozenset(map(chr, range(32, 127))) | frozenset("\t≤≥≠±·×÷−π∞√°∈∪")
_POWER_TOWER = re.compile(r"\d+(?:\s*(?:\^|\*\*)\s*[{(]?\s*\d+)+")
_FACTORIAL = re.compile(r"(\d+)\s*!")
MAX_ANSWER_DIGITS = 5000


def _balanced_group(text: str, start: int) -> str | None:
    """The content of the `{...}` group that opens at `start`, or None if it never closes."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            depth += 1
        elif char == "}" and (index == 0 or text[index - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return text[start + 1 : index]
    return None


def last_boxed(text: str) -> str | None:
    """The content of the last complete `\\boxed{...}`; `\\boxed 5` (no braces) takes one token."""
    ends = sorted(m.end() for command in _BOX_COMMANDS for m in re.finditer(re.escape(command), text))
    for end in reversed(ends):
        rest = text[end:]
        stripped = rest.lstrip()
        if stripped.startswith("{"):
            content = _balanced_group(text, end + (len(rest) - len(stripped)))
            if content is not None:
                return content.strip()
        elif rest[:1] == " " and stripped:
            token = re.match(r"[^\s$]+", stripped)
            if token:
                return token.group(0)
    return None


def _clean_line_answer(answer: str) -> str:
    """Drop markdown emphasis and a sentence-ending period ("5." is still 5)."""
    answer = answer.strip().strip("*_").strip()
    return answer.removesuffix(".").rstrip()


def _bare_answer(text: str) -> str | None:
    """A completion that is nothing but an answer: one short line, at most two long words outside LaTeX."""
    line = text.strip()
    if not line or len(line) > MAX_BARE_CHARS or not set(line) <= MATH_CHARACTERS:
        return None
    if any(command in line for command in _BOX_COMMANDS):  # a box that never closed is a format error
        return None
    if len(_PROSE_WORD.findall(re.sub(r"\\text\{[^{}]*\}", "", line))) > 2:
        return None
    if not _MATHY.search(line) and len(line.split()) > 2:  # words only: at most a short name ("New York")
        return None
    return _clean_line_answer(line)


def extract_answer_with_source(text: str) -> tuple[str | None, str]:
    """(answer, where it came from: boxed | answer_line | bare | none)."""
    boxed = last_boxed(text)
    if boxed:
        return boxed, "boxed"
    for line in reversed(text.splitlines()):
        match = _HASH_LINE.match(line) or _ANSWER_LINE.match(line) or _ANSWER_IS.match(line)
        if match:
            answer = _clean_line_answer(match.group("answer"))
            return (answer or None), "answer_line"
    bare = _bare_answer(text)
    return (bare, "bare") if bare else (None, "none")


def extract_answer(text: str) -> str | None:
    """The final answer, or None when the completion states none."""
    return extract_answer_with_source(text)[0]


def _tower_log10(numbers: list[int]) -> float:
    """log10 of a^(b^(c...)), without computing it (inf once it is astronomically large)."""
    log_value = math.log10(max(numbers[-1], 1))
    for base in reversed(numbers[:-1]):
        if log_value > 300:
            return math.inf
        log_value = (10**log_value) * math.log10(max(base, 1))
    return log_value


def oversized_number(answer: str) -> bool:
    """Whether the answer spells an integer with more than MAX_ANSWER_DIGITS digits (`9^{9^{9}}`, `100000!`).

    No reference answer is that large, and building one would stall the sympy worker until its timeout, so
    the grader rejects such answers up front (the worker's kill-on-timeout stays the backstop)."""
    for match in _POWER_TOWER.finditer(answer):
        numbers = [int(n) for n in re.findall(r"\d+", match.group(0)[:200])]
        if _tower_log10(numbers) > MAX_ANSWER_DIGITS:
            return True
    return any(int(m.group(1)[:7]) > 2000 for m in _FACTORIAL.finditer(answer))
