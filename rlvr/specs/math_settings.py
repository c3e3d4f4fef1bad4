"""How a math answer is compared with its reference: the per-task settings a pack may give.

Packs set them per task (a `tasks.jsonl` line's own keys, next to `answer`) or for the whole pack
(`[options]` in `pack.toml`); `rlvr.verify(gold, answer, **settings)` takes the same keywords. A key that
is not listed here, or a value of the wrong type, is an error naming the valid keys.

| key                  | default | meaning |
|----------------------|---------|---------|
| `tolerance`          | None    | numbers may differ by this much: `0.01` (absolute) or `{"abs": x, "rel": y}` |
| `precision`          | None    | decimal places: both numbers are compared rounded to this many places (`2`: 0.33 = 1/3) |
| `significant_figures`| None    | the answer must be the reference rounded to this many significant figures (more digits also pass when they round to it) |
| `strict`             | True    | False: variable names do not matter (`f(y)` = `f(x)`) and a set may equal a tuple of the same items |
| `relation`           | "auto"  | how a bare list `1, 2` compares: "auto" (order-free unless written as a tuple), "set" (always order-free), "tuple" (always ordered) |
| `boxes`              | "all"   | several `\\boxed{}`: "all" (adjacent boxes form one list answer; boxes elsewhere must agree with it), "last", "first" |
| `relation_as_set`    | True    | an inequality (`-2 \\le x \\le 7`) may equal the set it describes (`x \\in [-2, 7]`) |

Exactness is the default: without `tolerance`, `precision` or `significant_figures`, `0.333` is not `1/3`.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Relation = Literal["auto", "set", "tuple"]
BoxRule = Literal["all", "last", "first"]
RELATIONS: tuple[str, ...] = ("auto", "set", "tuple")
BOX_RULES: tuple[str, ...] = ("all", "last", "first")
MAX_DECIMAL_PLACES = 50


class MathSettingsError(ValueError):
    """A math setting that does not exist or has a value of the wrong type."""


@dataclass(frozen=True)
class MathSettings:
    tolerance: float | dict[str, float] | None = None
    precision: int | None = None
    significant_figures: int | None = None
    strict: bool = True
    relation: Relation = "auto"
    boxes: BoxRule = "all"
    relation_as_set: bool = True

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], *, where: str = "math settings") -> MathSettings:
        """Checked settings; raises MathSettingsError naming the key and the valid ones."""
        problems = cls.problems(values)
        if problems:
            raise MathSettingsError(
                f"{where}: " + "; ".join(f"{key}: {message}" for key, message in problems)
            )
        return cls(**dict(values))

    @classmethod
    def problems(cls, values: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(key, message) for every unknown key or badly typed value (empty when all is well)."""
        found: list[tuple[str, str]] = []
        valid = cls.names()
        for key, value in values.items():
            if key not in valid:
                close = difflib.get_close_matches(key, valid, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                found.append((key, f"unknown setting{hint}; valid settings: {', '.join(valid)}"))
                continue
            message = _check(key, value)
            if message:
                found.append((key, message))
        return found

    def to_json(self) -> dict[str, Any]:
        """Only the settings that differ from the defaults (what travels to the math worker)."""
        default = MathSettings()
        return {
            name: getattr(self, name)
            for name in self.names()
            if getattr(self, name) != getattr(default, name)
        }


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check(key: str, value: Any) -> str | None:
    if key == "tolerance":
        if value is None:
            return None
        if _is_number(value) and value >= 0:
            return None
        if (
            isinstance(value, dict)
            and value
            and set(value) <= {"abs", "rel"}
            and all(_is_number(v) and v >= 0 for v in value.values())
        ):
            return None
        return 'must be a non-negative number (absolute) or {"abs": x, "rel": y}'
    if key in ("precision", "significant_figures"):
        if value is None:
            return None
        low = 0 if key == "precision" else 1
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= MAX_DECIMAL_PLACES:
            return None
        return f"must be an integer from {low} to {MAX_DECIMAL_PLACES}"
    if key in ("strict", "relation_as_set"):
        return None if isinstance(value, bool) else "must be true or false"
    if key == "relation":
        return None if value in RELATIONS else f"must be one of {', '.join(RELATIONS)}"
    if key == "boxes":
        return None if value in BOX_RULES else f"must be one of {', '.join(BOX_RULES)}"
    return "unknown setting"


def split_task_line(line: Mapping[str, Any]) -> dict[str, Any]:
    """The settings among a math task's hidden keys (everything named in MathSettings)."""
    return {key: line[key] for key in MathSettings.names() if key in line}
