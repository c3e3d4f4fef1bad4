"""Find the final answer in a math completion.

Order: the last `\\boxed{...}` (or `\\fbox{...}`, nested braces allowed); else the last line that starts
with `Answer:` / `Final answer:` or `####`. No answer → None (the grader's format gate fails).
"""

from __future__ import annotations

import re

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_ANSWER_LINE = re.compile(
    r"^\s*(?:[*_]{0,2})\s*(?:the\s+)?(?:final\s+)?answer\s*(?:is)?\s*(?:[*_]{0,2})\s*[:：]\s*(?:[*_]{0,2})(?P<answer>.+?)\s*$",
    re.IGNORECASE,
)
_HASH_LINE = re.compile(r"^\s*####\s*(?P<answer>.+?)\s*$")


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


def extract_answer(text: str) -> str | None:
    """The final answer, or None when the completion states none."""
    boxed = last_boxed(text)
    if boxed:
        return boxed
    for line in reversed(text.splitlines()):
        match = _HASH_LINE.match(line) or _ANSWER_LINE.match(line)
        if match:
            answer = _clean_line_answer(match.group("answer"))
            return answer or None
    return None
