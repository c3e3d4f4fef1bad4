"""Declared perf scenarios of a repository task: plain-data scenarios (the kinds of the hidden ones:
call, object, cli, sqlite) run with counted operations on the candidate's repository and on the
reference state, banded like single-function perf.

A task line may carry `"perf": [SCENARIO, ...]`. Large inputs are written compactly: inside any list
of a perf scenario, an item `{"$repeat": N, "each": TEMPLATE, "start": 0}` is replaced by N copies of
TEMPLATE (spliced into that list), copy i (i = start .. start+N-1) with every string "$i" replaced by
the integer i and every "{i}" inside a string replaced by str(i). Since JSON objects cannot hold
such an item, `{"$dict": [[KEY, VALUE], ...]}` stands for the dict of those pairs (after expansion).
For example

    {"kind": "object", "target": "ledger.accounts:Ledger", "steps": [["open", ["x"]],
     {"$repeat": 300, "start": 1, "each": ["deposit", ["x", "$i"]]},
     {"$repeat": 300, "each": ["balance", ["x"]]}]}

is 601 plain steps. The expansion happens in the trusted process (deterministic: the same line gives
the same scenarios anywhere); only the expanded plain data reaches the sandbox.
"""

from __future__ import annotations

import json
from typing import Any

REPEAT = "$repeat"
DICT = "$dict"
INDEX = "$i"
MAX_REPEAT = 5_000
MAX_EXPANDED_CHARS = 1_000_000
MAX_DEPTH = 12


class PerfSpecError(ValueError):
    """A perf scenario's `$repeat` expansion is malformed or too large."""


def _substitute(value: Any, index: int) -> Any:
    if isinstance(value, str):
        return index if value == INDEX else value.replace("{i}", str(index))
    if isinstance(value, list):
        return [_substitute(item, index) for item in value]
    if isinstance(value, dict):
        return {_substitute(key, index): _substitute(item, index) for key, item in value.items()}
    return value


def _is_repeat(value: Any) -> bool:
    return isinstance(value, dict) and REPEAT in value


def _expand(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise PerfSpecError(f"nested deeper than {MAX_DEPTH} levels")
    if _is_repeat(value):
        raise PerfSpecError(f'a "{REPEAT}" item must be inside a list (its copies are spliced into it)')
    if isinstance(value, dict) and DICT in value:
        pairs = _expand(value[DICT], depth + 1) if len(value) == 1 else None
        if not isinstance(pairs, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str | int) for pair in pairs
        ):
            raise PerfSpecError(f'"{DICT}" must be the only key, its value a list of [key, value] pairs')
        return {key: item for key, item in pairs}
    if isinstance(value, dict):
        return {key: _expand(item, depth + 1) for key, item in value.items()}
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for item in value:
        if not _is_repeat(item):
            out.append(_expand(item, depth + 1))
            continue
        unknown = sorted(set(item) - {REPEAT, "each", "start"})
        if unknown:
            raise PerfSpecError(
                f'unknown key(s) {", ".join(unknown)} beside "{REPEAT}" (allowed: each, start)'
            )
        times, start = item[REPEAT], item.get("start", 0)
        if type(times) is not int or not 0 <= times <= MAX_REPEAT:
            raise PerfSpecError(f'"{REPEAT}" must be an integer from 0 to {MAX_REPEAT}, got {times!r}')
        if type(start) is not int:
            raise PerfSpecError(f'"start" must be an integer, got {start!r}')
        if "each" not in item:
            raise PerfSpecError(f'a "{REPEAT}" item needs "each": the template of one copy')
        template = _expand(item["each"], depth + 1)
        if times * len(json.dumps(template)) > MAX_EXPANDED_CHARS:
            raise PerfSpecError(f"expands to more than {MAX_EXPANDED_CHARS} characters of JSON")
        out.extend(_substitute(template, index) for index in range(start, start + times))
    return out


def expand_perf(scenario: Any) -> dict[str, Any]:
    """The plain scenario a declared perf scenario stands for (PerfSpecError if malformed or larger
    than MAX_EXPANDED_CHARS once expanded)."""
    if not isinstance(scenario, dict):
        raise PerfSpecError("must be an object (a scenario)")
    expanded = _expand(scenario, 0)
    size = len(json.dumps(expanded))
    if size > MAX_EXPANDED_CHARS:
        raise PerfSpecError(f"expands to {size} characters of JSON (at most {MAX_EXPANDED_CHARS})")
    return expanded
