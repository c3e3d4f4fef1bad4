"""Exception messages of the reference that the agent cannot see, compared as any text (issue 31).

A command line that prints `error: {exc}` shows the message of the exception it caught. Where the
reference raises with a message that neither the issue text nor the base repository holds (a new
`raise ValueError(f"a stay must end after it starts ({start} -> {end})")` in a stubbed function),
a correct fix writes its own message, and the printed line differs only in that text. Derived in
the trusted process from trusted data only (the base and reference states, the issue text):

- `invisible_messages`: a pattern for each message of a `raise Name("...")` / `raise Name(f"...")`
  in the reference's package code whose literal text is not visible: its constant parts (the text
  around the formatted values) are not all found in the issue text or the base repository.
- `loosened`: `got` with every string that differs from `want`'s string at the same place only
  where `want` holds such a message (the same text before and after it, a non-empty text in its
  place, line by line) replaced by `want`'s: the rest of the output is still compared exactly.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from rlvr.graders.repo.source_modules import package_modules

MIN_MESSAGE = 8  # characters of constant text a message needs before it counts as one
MAX_DEPTH = 12


def _message_parts(node: ast.expr) -> list[str | None] | None:
    """The constant parts of a message (None where a value is formatted in), or None if the
    expression is not a string literal or an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts: list[str | None] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            else:
                parts.append(None)
        return parts
    return None


def invisible_messages(base: dict[str, str], reference: dict[str, str], prompt: str) -> list[str]:
    """Regular expressions matching each exception message the reference's package code raises with
    whose constant text the agent cannot read (see the module docstring)."""
    shown = prompt + "\n" + "\n".join(base.values())
    patterns: list[str] = []
    for _, tree in package_modules(reference):
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args):
                continue
            parts = _message_parts(node.exc.args[0])
            if parts is None:
                continue
            constant = [p for p in parts if p]
            if sum(len(p) for p in constant) < MIN_MESSAGE:
                continue
            if all(p.strip() in shown for p in constant if p.strip()):
                continue
            pattern = "".join(re.escape(p) if p is not None else ".*?" for p in parts)
            if pattern not in patterns:
                patterns.append(pattern)
    return patterns


def _loose_line(want: str, got: str, patterns: list[re.Pattern[str]]) -> bool:
    for pattern in patterns:
        match = pattern.search(want)
        if match is not None and match.group(0):
            head, tail = want[: match.start()], want[match.end() :]
            if (
                len(got) > len(head) + len(tail)
                and got.startswith(head)
                and got.endswith(tail)
                and got[len(head) : len(got) - len(tail)].strip()
            ):
                return True
    return False


def _loose_text(want: str, got: str, patterns: list[re.Pattern[str]]) -> bool:
    """Whether `got` is `want` with, on some lines, another non-empty message where `want`'s line holds
    an invisible one (every other line the same)."""
    wanted, given = want.split("\n"), got.split("\n")
    if len(wanted) != len(given):
        return False
    return all(w == g or _loose_line(w, g, patterns) for w, g in zip(wanted, given, strict=True))


def loosened(want: Any, got: Any, patterns: list[re.Pattern[str]], depth: int = 0) -> Any:
    """`got` with each string that differs from `want`'s only in an invisible message replaced by
    `want`'s string (mappings by key, lists and tuples of the same length by position)."""
    if not patterns or depth > MAX_DEPTH:
        return got
    if isinstance(want, str) and isinstance(got, str):
        return want if want != got and _loose_text(want, got, patterns) else got
    if isinstance(want, dict) and isinstance(got, dict):
        return {k: loosened(want[k], v, patterns, depth + 1) if k in want else v for k, v in got.items()}
    if isinstance(want, list | tuple) and isinstance(got, list | tuple) and len(want) == len(got):
        return type(got)(loosened(w, g, patterns, depth + 1) for w, g in zip(want, got, strict=True))
    return got


def message_patterns(
    base: dict[str, str], reference: dict[str, str], prompt: str
) -> tuple[re.Pattern[str], ...]:
    """`invisible_messages` compiled, for `checks.agrees`."""
    return tuple(re.compile(p) for p in invisible_messages(base, reference, prompt))
