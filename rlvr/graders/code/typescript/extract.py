"""The TypeScript program in a completion, by the Python code tasks' rules (see
rlvr/graders/code/extract.py), with TypeScript's parser and fences:
  1. a whole program: it parses and declares the entry point (a ``` inside it is then content);
  2. a continuation of the prompt: prompt + completion parses and declares the entry point;
  3. markdown: fenced blocks tagged ts, typescript, js, javascript or untagged; the block graded is the
     last one that declares the entry point, else the last one that continues the prompt. A block
     ends at the first closing fence (plain markdown).
A leading byte-order mark is dropped; text that fits none of these is returned as it is (the syntax
layer then says what is wrong).
"""

from __future__ import annotations

from rlvr.graders.code.extract import BOM, Extraction
from rlvr.graders.code.extract import fenced_blocks as code_fenced_blocks
from rlvr.graders.code.typescript.syntax import defines, parse

LANGUAGES = {"", "ts", "typescript", "js", "javascript", "tsx", "mts"}


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block, in order: the code family's fence rules, a block ending
    at its first closing fence (a body always ends with a newline)."""
    return [
        (block.language, block.body if block.closed else block.body + "\n")
        for block in code_fenced_blocks(text, python_aware=False)
    ]


def _parses(source: str) -> bool:
    return not parse(source).has_error


def extract_program(prompt: str, completion: str, entry_point: str) -> Extraction:
    text = completion.lstrip(BOM)
    if _parses(text) and defines(text, entry_point):
        return Extraction(text, "whole")
    continued = prompt + text
    if _parses(continued) and defines(continued, entry_point):
        return Extraction(continued, "continuation")
    code = [body.lstrip(BOM) for language, body in fenced_blocks(text) if language in LANGUAGES]
    if not code:
        return Extraction(text, "raw")
    for chosen in reversed(range(len(code))):
        if _parses(code[chosen]) and defines(code[chosen], entry_point):
            return Extraction(code[chosen], f"block {chosen + 1} of {len(code)}")
    for chosen in reversed(range(len(code))):
        continued = prompt + code[chosen]
        if _parses(continued) and defines(continued, entry_point):
            return Extraction(continued, f"block {chosen + 1} of {len(code)}")
    return Extraction(code[-1], f"block {len(code)} of {len(code)}")
