"""Turn a model completion into the program to grade.

A completion may be a full program defining the entry point, fenced in ```python blocks (the last
block counts), or a HumanEval-style continuation of the prompt.
"""

from __future__ import annotations

import ast
import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CODE_LANGUAGES = {"", "python", "py", "python3"}


def last_fenced_block(text: str) -> str | None:
    blocks = [body for language, body in _FENCE.findall(text) if language.lower() in _CODE_LANGUAGES]
    return blocks[-1] if blocks else None


def _parses(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _defines(module: ast.Module, name: str) -> bool:
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return True
    return False


def prompt_preamble(prompt: str, entry_point: str) -> str:
    """The prompt's code minus the entry point's own stub: its imports and helper functions,
    which a full-program completion may rely on (e.g. HumanEval/32's `poly`)."""
    module = _parses(prompt)
    if module is None:
        return ""
    lines = prompt.splitlines(keepends=True)
    keep = [True] * len(lines)
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            for index in range(first, node.end_lineno or node.lineno):
                keep[index] = False
    return "".join(line for line, kept in zip(lines, keep, strict=True) if kept)


def build_program(prompt: str, completion: str, entry_point: str) -> str:
    """The source to grade. Falls back to the raw text so the syntax layer reports what is wrong."""
    fenced = last_fenced_block(completion)
    body = fenced if fenced is not None else completion
    module = _parses(body)
    if module is not None and _defines(module, entry_point):
        preamble = prompt_preamble(prompt, entry_point)
        if preamble.strip():
            joined = preamble.rstrip("\n") + "\n\n\n" + body
            if _parses(joined) is not None:
                return joined
        return body
    continuation = prompt + body
    if _parses(continuation) is not None:
        return continuation
    return body if fenced is not None or module is not None else continuation
