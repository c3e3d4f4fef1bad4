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

import re

from rlvr.graders.code.extract import BOM, Extraction
from rlvr.graders.code.typescript.syntax import defines, parse

_OPENER = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+.-]*)[^\n`]*$")
LANGUAGES = {"", "ts", "typescript", "js", "javascript", "tsx", "mts"}


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block, in order."""
    lines = text.split("\n")
    blocks: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        opener = _OPENER.match(lines[index])
        if opener is None:
            index += 1
            continue
        fence, language = opener.group(1), opener.group(2).lower()
        end = next(
            (
                j
                for j in range(index + 1, len(lines))
                if lines[j].strip().startswith(fence[0] * len(fence)) and not lines[j].strip().strip(fence[0])
            ),
            len(lines),
        )
        blocks.append((language, "\n".join(lines[index + 1 : end]) + "\n"))
        index = end + 1
    return blocks


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
