"""Inputs next to the literals a function compares against: a word cut short, extended, and behind a prefix (issue 31).

Derived in the trusted process from trusted data only (the task's scenarios and base state). A
command name, a route's literal segment, a section header or an environment prefix is compared by
the reference exactly; a fix that compares by prefix (`startswith`), by containment (`in`), strips
a set of characters instead of one delimiter, or keeps an old or shorter spelling as an alias,
agrees with it on every input the scenarios list and differs only next to the literal:

- **Words cut and extended**: a word (a CLI command, a script's verb, a literal path segment) with
  its last character dropped (`stays` -> `stay`: a plural kept as an alias, a prefix test reversed)
  and with one more character after it and before it (`/health` -> `/healthx`, `x/health`: a prefix,
  suffix or containment test where equality was written).
- **Keys behind a prefix**: a mapping's string keys with one more word in front (`APP_DB__PORT` ->
  `XAPP_DB__PORT`): a prefix filter written as a containment test keeps them.
- **One word in another case**: a string of several words (a route pattern, a spec) with one word at a
  time upper-cased (`/files/<name>/<rev:int>` -> `/files/<NAME>/<rev:int>`): case normalisation
  added to one part of it (a parameter's name) shows where changing the whole string's case only
  makes it invalid (its converter unknown).
- **Delimiters inside the delimited value**: a bracketed line of a text of lines with the brackets
  doubled (`[server]` -> `[[server]]`): a strip of every bracket character eats the inner ones, one
  delimiter cut from each end does not.
"""

from __future__ import annotations

import re
from typing import Any

EXTENSION = "x"
KEY_PREFIX = "X"
MAX_WORD_VARIANTS = 4  # per word
MAX_TOKEN_CASES = 4  # per string
TOKEN = re.compile(r"[A-Za-z]{2,}")
HAS_DIGIT = re.compile(r"\d")
LITERAL_SEGMENT = re.compile(r"(?<=/)[A-Za-z_][A-Za-z_-]*(?=/|$)")
BRACKET_LINE = re.compile(r"^(\s*)\[([^\[\]\n]+)\](\s*)$")


def word_variants(word: str) -> list[str]:
    """A word with no digit run (a command, a verb, a path of literal segments) cut by its last
    character, extended after and before it, and, a path, its first literal segment extended and cut
    ([] for an empty word, a flag, or one holding digits: those are numbers, not literals)."""
    if len(word) < 2 or word.startswith("-") or HAS_DIGIT.search(word) or word != word.strip():
        return []
    out = [word[:-1], word + EXTENSION, EXTENSION + word]
    segment = LITERAL_SEGMENT.search(word)
    if segment is not None and segment.end() < len(word):  # a literal segment before the last one
        inside = word[: segment.end()] + EXTENSION + word[segment.end() :]
        out.append(inside)
    return [v for v in dict.fromkeys(out) if v != word][:MAX_WORD_VARIANTS]


def prefixed_keys(value: Any) -> list[Any]:
    """A mapping with string keys again with every key behind one more prefix ([] otherwise)."""
    if not isinstance(value, dict) or not value or not all(isinstance(k, str) and k for k in value):
        return []
    return [{KEY_PREFIX + key: item for key, item in value.items()}]


def nested_brackets(value: str) -> list[str]:
    """A text of lines holding `[name]` lines again with each such line's brackets doubled
    (`[[name]]`); [] when it holds none."""
    if "\n" not in value.strip():
        return []
    lines = value.split("\n")
    changed = [
        BRACKET_LINE.sub(lambda m: f"{m.group(1)}[[{m.group(2)}]]{m.group(3)}", line) for line in lines
    ]
    return ["\n".join(changed)] if changed != lines else []


def token_case_variants(value: str) -> list[str]:
    """A string of two or more words with one word at a time in the other case (upper-cased, or
    lower-cased where it has capitals), for its first MAX_TOKEN_CASES words."""
    tokens = list(TOKEN.finditer(value))
    if len(tokens) < 2:
        return []
    out: list[str] = []
    for token in tokens[:MAX_TOKEN_CASES]:
        word = token.group(0)
        other = word.lower() if word != word.lower() else word.upper()
        out.append(value[: token.start()] + other + value[token.end() :])
    return [v for v in dict.fromkeys(out) if v != value]
