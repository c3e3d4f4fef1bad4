"""Trusted-side helpers for generated tests: run the reference under a deterministic operation
budget, and collect derandomized hypothesis examples.

The budget counts Python call and line events (like the sandbox's perf counter), so "the
reference is too slow on this input" is decided the same way on every machine.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from rlvr.core.codec import CodecError, dumps
from rlvr.specs.generation import ALL_HEALTH_CHECKS, isolated_generation


class _OverBudget(BaseException):
    """Raised inside the reference when it exceeds its budget (BaseException: `except Exception`
    in the reference does not swallow it; a bare `except:` might, so the flag decides)."""


@dataclass(frozen=True)
class ReferenceRun:
    ok: bool  # finished within budget, returned plain data, raised nothing
    value: Any = None
    ops: int = 0
    why: str = ""


def run_reference(function: Callable[..., Any], args: tuple[Any, ...], budget: int) -> ReferenceRun:
    """Call the trusted reference on a deep copy of `args`, counting Python events."""
    count = 0
    exceeded = False

    def local_trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count, exceeded
        if event == "line":
            count += 1
            if count > budget:
                exceeded = True
                raise _OverBudget
        return local_trace

    def global_trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count, exceeded
        count += 1
        if count > budget:
            exceeded = True
            raise _OverBudget
        return local_trace

    previous = sys.gettrace()
    sys.settrace(global_trace)
    try:
        value = function(*copy.deepcopy(args))
    except _OverBudget:
        return ReferenceRun(False, ops=count, why="over budget")
    except RecursionError:
        return ReferenceRun(False, ops=count, why="recursion")
    except Exception as exc:
        return ReferenceRun(False, ops=count, why=f"raises {type(exc).__name__}")
    finally:
        sys.settrace(previous)
    if exceeded:
        return ReferenceRun(False, ops=count, why="over budget")
    try:
        dumps(value)
    except (CodecError, RecursionError):
        return ReferenceRun(False, ops=count, why="output is not plain data")
    return ReferenceRun(True, value, count)


def hypothesis_examples(strategy: st.SearchStrategy[Any], count: int, seed: int) -> list[Any]:
    """`count` examples of `strategy`, the same ones on every run (seeded, no example database)."""
    if count <= 0:
        return []
    drawn: list[Any] = []

    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=ALL_HEALTH_CHECKS,
        derandomize=False,
        report_multiple_bugs=False,
    )
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    with isolated_generation():
        hypothesis_seed(seed)(collect)()
    return drawn
