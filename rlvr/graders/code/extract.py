"""Turn a model completion into the program to grade, and say where in the completion it came from.

A completion is read, in this order, as
  1. a whole program: it parses as Python and defines the entry point (any ``` inside it are then
     string content, never fences);
  2. a HumanEval-style continuation of the prompt: prompt + completion parses;
  3. markdown: fenced code blocks, found line by line. A fence that closes a block must lie outside
     the block's string literals (a docstring may show a fenced example), and the block graded is
     the one that *defines the entry point*, found by parsing (the last such block if several do, as
     a later block revises an earlier one), not the last block by position (a usage example may
     follow the solution). A block that defines nothing is graded as a continuation of the prompt.
A leading UTF-8 byte-order mark is dropped. Text that fits none of these is returned as it is, so
the syntax layer reports what is wrong.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

BOM = "\ufeff"
_OPENER = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+.-]*)[^\n`]*$")
_CODE_LANGUAGES = {"", "python", "py", "python3", "py3"}
# Finding where a block ends parses candidate bodies; bound that work, so a completion of many
# fences cannot make extraction (which runs in the grading process) slow. Past the budget a block
# ends at its first closing fence, as in plain markdown.
MAX_CLOSERS_TRIED = 16
PARSE_BUDGET_CHARS = 1_000_000


@dataclass(frozen=True)
class Extraction:
    """The program to grade and where it came from: "whole", "continuation", "block i of n"
    (a fenced block, 1-based among the completion's code blocks) or "raw" (nothing fit)."""

    program: str
    origin: str

    @property
    def flag(self) -> str:
        return f"extracted:{self.origin}"


@dataclass(frozen=True)
class FencedBlock:
    language: str
    body: str
    closed: bool = True  # False: no closing fence, the block ran to the end of the text


def fenced_blocks(text: str, *, python_aware: bool = True) -> list[FencedBlock]:
    """The fenced blocks of `text`, in order. A block ends at the first closing fence (the opening
    run of backticks or tildes, at least as long, alone on its line) after which the body parses as
    Python - so a fence inside a docstring or string literal does not end it; if no closing fence
    gives a body that parses, the first one does (as in markdown). With `python_aware=False` (a
    language whose fences this module cannot parse) the first closing fence always ends it. An
    unterminated block runs to the end of the text."""
    lines = text.split("\n")
    blocks: list[FencedBlock] = []
    index = 0
    budget = PARSE_BUDGET_CHARS
    while index < len(lines):
        opener = _OPENER.match(lines[index])
        if opener is None:
            index += 1
            continue
        fence, language = opener.group(1), opener.group(2).lower()
        end = len(lines)  # unterminated: the block runs to the end of the text
        closers = _closing_fences(lines, index + 1, fence)  # lazily: a scan per opener would be quadratic
        for tried, j in enumerate(islice(closers, MAX_CLOSERS_TRIED if python_aware else 1)):
            if tried == 0:
                end = j  # if no body parses, the first closing fence ends the block
                if not python_aware:
                    break
            candidate = "\n".join(lines[index + 1 : j]) + "\n"
            budget -= len(candidate)
            if budget < 0:
                break
            if parses(candidate) is not None:
                end = j
                break
        body = "\n".join(lines[index + 1 : end])
        closed = end < len(lines)
        blocks.append(FencedBlock(language, body + "\n" if closed else body, closed))
        index = end + 1
    return blocks


def _closing_fences(lines: list[str], start: int, fence: str) -> Iterator[int]:
    """Indexes of the lines from `start` on that close `fence`: its character, at least as many
    times, alone on the line."""
    for j in range(start, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            yield j


def last_fenced_block(text: str) -> str | None:
    """The last fenced Python block of `text` (kept for callers that want position alone)."""
    blocks = [b.body for b in fenced_blocks(_strip_bom(text)) if b.language in _CODE_LANGUAGES]
    return blocks[-1] if blocks else None


def _strip_bom(text: str) -> str:
    return text.lstrip(BOM)


def parses(source: str) -> ast.Module | None:
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


def _top_level_names(module: ast.Module) -> set[str]:
    return {
        node.name
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def prompt_preamble(prompt: str, entry_point: str, redefined: frozenset[str] = frozenset()) -> str:
    """The prompt's code minus the entry point's own stub (a function, or a class whose methods are
    stubs) and minus every function or class the answer defines again (`redefined`): its imports and
    helper functions, which a full-program completion may rely on (e.g. HumanEval/32's `poly`). A kept
    stub or helper the answer repeats would be declared twice, which the type layer charges."""
    module = parses(prompt)
    if module is None:
        return ""
    lines = prompt.splitlines(keepends=True)
    keep = [True] * len(lines)
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            node.name == entry_point or node.name in redefined
        ):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            for index in range(first, node.end_lineno or node.lineno):
                keep[index] = False
    return "".join(line for line, kept in zip(lines, keep, strict=True) if kept)


def _with_preamble(prompt: str, body: str, entry_point: str) -> str:
    answer = parses(body)
    redefined = frozenset(_top_level_names(answer)) if answer is not None else frozenset()
    preamble = prompt_preamble(prompt, entry_point, redefined)
    if preamble.strip():
        joined = preamble.rstrip("\n") + "\n\n\n" + body
        if parses(joined) is not None:
            return joined
    return body


def extract_program(prompt: str, completion: str, entry_point: str) -> Extraction:
    """The source to grade and where it came from (see the module docstring for the order)."""
    text = _strip_bom(completion)
    module = parses(text)
    if module is not None and _defines(module, entry_point):
        return Extraction(_with_preamble(prompt, text, entry_point), "whole")
    if parses(prompt + text) is not None:
        return Extraction(prompt + text, "continuation")
    code = [b for b in fenced_blocks(text) if b.language in _CODE_LANGUAGES]
    if not code:
        return Extraction(text, "raw")
    parsed = [parses(_strip_bom(b.body)) for b in code]
    defining = [i for i, m in enumerate(parsed) if m is not None and _defines(m, entry_point)]
    if defining:
        chosen = defining[-1]
        body = _strip_bom(code[chosen].body)
        return Extraction(_with_preamble(prompt, body, entry_point), f"block {chosen + 1} of {len(code)}")
    for chosen in reversed(range(len(code))):  # a fenced continuation of the prompt
        continuation = prompt + _strip_bom(code[chosen].body)
        if parses(continuation) is not None:
            return Extraction(continuation, f"block {chosen + 1} of {len(code)}")
    return Extraction(_strip_bom(code[-1].body), f"block {len(code)} of {len(code)}")


def build_program(prompt: str, completion: str, entry_point: str) -> str:
    """The source to grade (see `extract_program`, which also says where it came from)."""
    return extract_program(prompt, completion, entry_point).program
