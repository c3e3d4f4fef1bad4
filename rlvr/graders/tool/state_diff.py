"""Compare a whole world state with the state the reference trajectory leaves.

States are JSON-like data. A state is flattened into leaves keyed by a path: dict keys are path steps, and a
list is a multiset of its items (order never matters, each distinct item is one leaf whose value is its
count). Numbers compare by value (`10` equals `10.0`).

`classify` splits the leaves that differ between the agent's final state and the expected state:
- `missing`: leaves the reference changes that the agent did not leave as the reference does (the goal is
  not reached);
- `side_effects`: leaves the reference leaves alone that the agent changed (an unauthorized side effect).

`allowed` key-path patterns (each step an `fnmatch` pattern against a dict key, or `*` for every list item)
are removed from all three states before comparing: the differences a task declares acceptable.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Path = tuple[str, ...]
MAX_REPORTED_PATHS = 5


def canonical(value: Any) -> str:
    """A text form equal for equal values: sorted keys, numbers by value, lists order-free."""
    return json.dumps(_canonical_data(value), sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def _canonical_number(value: int | float) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return {"non-finite": repr(value)}
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        return float(f"{value:.12g}")
    return value


def _canonical_data(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return _canonical_number(value)
    if isinstance(value, dict):
        return {str(k): _canonical_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return sorted(
            (_canonical_data(item) for item in value),
            key=lambda item: json.dumps(item, sort_keys=True, separators=(",", ":")),
        )
    return repr(value)


def strip_allowed(state: Any, patterns: list[list[str]]) -> Any:
    """A copy of `state` without the parts any pattern names."""
    for pattern in patterns:
        state = _strip(state, [str(step) for step in pattern])
    return state


def _strip(value: Any, pattern: list[str]) -> Any:
    if not pattern:
        return value
    head, rest = pattern[0], pattern[1:]
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if fnmatch.fnmatchcase(str(key), head):
                if rest:
                    kept[key] = _strip(item, rest)
            else:
                kept[key] = item
        return kept
    if isinstance(value, list) and head == "*":
        return [_strip(item, rest) for item in value] if rest else []
    return value


def leaves(state: Any, prefix: Path = ()) -> dict[Path, str]:
    """Path -> canonical value; a list contributes one leaf per distinct item (value: its count)."""
    out: dict[Path, str] = {}
    if isinstance(state, dict):
        if not state:
            out[prefix] = "{}"
        for key, value in state.items():
            out.update(leaves(value, (*prefix, str(key))))
    elif isinstance(state, list | tuple):
        counts = Counter(canonical(item) for item in state)
        if not counts:
            out[prefix] = "[]"
        for item, count in counts.items():
            out[(*prefix, f"[{item}]")] = f"x{count}"
    else:
        out[prefix] = canonical(state)
    return out


@dataclass
class StateDiff:
    missing: list[Path] = field(default_factory=list)
    side_effects: list[Path] = field(default_factory=list)

    @staticmethod
    def describe(paths: list[Path]) -> str:
        shown = ["/".join(path) or "(the whole state)" for path in paths[:MAX_REPORTED_PATHS]]
        more = len(paths) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def classify(initial: Any, expected: Any, actual: Any, allowed: list[list[str]] | None = None) -> StateDiff:
    """Which differences between `actual` and `expected` the reference made, and which only the agent made."""
    patterns = list(allowed or [])
    before, want, got = (leaves(strip_allowed(s, patterns)) for s in (initial, expected, actual))
    diff = StateDiff()
    for path in sorted(set(want) | set(got)):
        if want.get(path) == got.get(path):
            continue
        if want.get(path) != before.get(path):
            diff.missing.append(path)
        else:
            diff.side_effects.append(path)
    return diff


def frame_violations(
    initial: Any, actual: Any, touched: list[list[str]], allowed: list[list[str]]
) -> list[Path]:
    """Without an expected state: leaves the agent changed outside every path the goal names."""
    prefixes = [tuple(str(step) for step in path) for path in touched]
    patterns = list(allowed)
    before, got = leaves(strip_allowed(initial, patterns)), leaves(strip_allowed(actual, patterns))
    return [
        path
        for path in sorted(set(before) | set(got))
        if before.get(path) != got.get(path) and not any(path[: len(p)] == p for p in prefixes)
    ]
