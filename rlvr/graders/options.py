"""Typed grading options: one frozen dataclass per family, resolved once when a grader is built.

A grader's settings come from two places, the pack (`[options]` and `[weights]` in `pack.toml`, or
a built-in pack's attributes) and the caller (`make_grader(pack, timeout=5)`, `gym.make(...,
timeout=5)`, `rlvr grade --jobs 2`); the caller's value wins. A key that the family does not know, or
a value of the wrong type, is an error that names the key and the valid ones — never silently
ignored.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

from rlvr.core.pack import TaskPack

OptionsT = TypeVar("OptionsT", bound="GraderOptions")


class OptionsError(ValueError):
    """A grading option that does not exist or has a value of the wrong type."""


@dataclass(frozen=True, kw_only=True)
class GraderOptions:
    """Settings every family takes. `weights` overrides the family's reward weights per component
    (merged over the pack's own); `timeout` is seconds per candidate (None: the family's default).
    `sandbox` ("local", "docker" or a built sandbox object), `jobs` (sandbox workers) and `runtime`
    (the docker runtime, e.g. "runsc") say where untrusted code runs, for the families that run it."""

    weights: Mapping[str, float] | None = None
    timeout: float | None = None
    sandbox: Any = "local"
    jobs: int | None = None
    runtime: str | None = None
    # Settings above that a family cannot honour, each with why: a value other than the default is
    # refused (`rlvr grade` passes `sandbox="local"` and `jobs=None` to every family; those stand).
    not_honoured: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def resolve(cls: type[OptionsT], pack: TaskPack, options: Mapping[str, Any]) -> OptionsT:
        """The pack's options overlaid with the caller's, checked against this dataclass."""
        merged: dict[str, Any] = dict(pack.options or {})
        merged.update({k: v for k, v in options.items() if v is not None or k not in merged})
        weights = {**(pack.weights or {}), **(options.get("weights") or {})}
        merged["weights"] = weights or None
        return cls.from_mapping(merged, family=pack.family)

    @classmethod
    def from_mapping(cls: type[OptionsT], values: Mapping[str, Any], *, family: str = "") -> OptionsT:
        fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in cls.not_honoured}
        hints = typing.get_type_hints(cls)
        who = f"the {family} grader" if family else cls.__name__
        for key, value in values.items():
            if key in cls.not_honoured:
                if value != _default(cls, key):
                    raise OptionsError(f"{who} does not take option {key!r}: {cls.not_honoured[key]}")
                continue
            if key not in fields:
                close = difflib.get_close_matches(key, fields, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                valid = f"Valid options: {', '.join(sorted(fields))}" if fields else "It takes no options."
                raise OptionsError(f"unknown option {key!r} for {who}{hint} {valid}")
            if not _matches(value, hints[key]):
                raise OptionsError(f"option {key!r} for {who} must be {_describe(hints[key])}, got {value!r}")
        return cls(**values)


def no_sandbox(why: str) -> dict[str, str]:
    """`not_honoured` entries for a family that runs no candidate code in a sandbox."""
    return dict.fromkeys(("sandbox", "jobs", "runtime"), why)


def _default(cls: type[GraderOptions], name: str) -> Any:
    (field,) = [f for f in dataclasses.fields(cls) if f.name == name]
    return None if field.default is dataclasses.MISSING else field.default


def _matches(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin in (Union, types.UnionType):
        return any(_matches(value, arm) for arm in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is not None and isinstance(origin, type):
        return isinstance(value, origin)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _describe(hint: Any) -> str:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(arm) for arm in get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(hint))
    if hint is type(None):
        return "None"
    return getattr(origin or hint, "__name__", str(hint))
