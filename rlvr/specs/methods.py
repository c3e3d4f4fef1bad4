"""Stateful-class tasks: method sequences as plain data, driven inside the sandbox.

A class task's hidden spec carries `"driver": {"entry": DRIVER_ENTRY, "source": ...}`. One hidden
call is one operation sequence `[["__init__", [args]], [method, [args]], ...]`. The sandbox runs
the candidate program with the driver appended: the driver builds a fresh instance of the
candidate's class and applies the operations, answering `[["ok", value] | ["raise", "TypeName"],
...]` as plain data. The trusted side runs the same driver over the reference class and compares.

Why a candidate gains nothing from the driver: it carries only the operations (inputs), never an
expected answer; it is appended after the candidate's code, so a candidate definition of the same
name is replaced; every method's return value is wrapped as `["ok", value]`, so no return value
can pose as a raised exception; method names come from the trusted sequence only (never a dunder
other than `__init__`); non-plain return values are refused by the sandbox codec.

Sequences are generated with hypothesis stateful testing (`RuleBasedStateMachine`): rules are the
task's methods, preconditions are checked against the trusted reference instance as the
sequence grows, and runs are seeded per task so the sequences repeat.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test, initialize, precondition, rule

from rlvr.specs.generation import ALL_HEALTH_CHECKS, isolated_generation

DRIVER_ENTRY = "_rlvr_drive_methods"


def driver_source(class_name: str) -> str:
    if not class_name.isidentifier():
        raise ValueError(f"not a class name: {class_name!r}")
    return f'''
def {DRIVER_ENTRY}(operations):
    """Apply (method, args) operations to a fresh {class_name}; plain-data results only."""
    results = []
    instance = None
    for name, args in operations:
        try:
            if name == "__init__":
                instance = {class_name}(*args)
                value = None
            else:
                value = getattr(instance, name)(*args)
        except Exception as exc:
            results.append(["raise", type(exc).__name__])
            continue
        results.append(["ok", value])
    return results
'''


def driver_spec(class_name: str) -> dict[str, str]:
    """The `hidden["driver"]` entry of a class task."""
    return {"entry": DRIVER_ENTRY, "source": driver_source(class_name)}


# ------------------------------------------------------------------------------------ generation
@dataclass(frozen=True)
class MethodRule:
    """One public method: its argument strategy and when it may be called (given the reference
    instance's state)."""

    name: str
    args: st.SearchStrategy[tuple[Any, ...]] = field(default_factory=lambda: st.just(()))
    allowed: Callable[[Any], bool] = lambda instance: True


def operation_sequences(
    reference_class: type,
    init_args: st.SearchStrategy[tuple[Any, ...]],
    rules: Sequence[MethodRule],
    *,
    count: int,
    steps: int,
    seed: int,
) -> list[list[list[Any]]]:
    """`count` operation sequences of up to `steps` method calls each (plus the constructor)."""
    sequences: list[list[list[Any]]] = []

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.operations: list[list[Any]] = []
            self.instance: Any = None

        @initialize(args=init_args)
        def construct(self, args: tuple[Any, ...]) -> None:
            self.operations = [["__init__", list(args)]]
            sequences.append(self.operations)
            self.instance = reference_class(*copy.deepcopy(args))

    for method in rules:
        _add_rule(Machine, method)

    test = get_state_machine_test(
        Machine,
        settings=settings(
            max_examples=count,
            stateful_step_count=steps,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=ALL_HEALTH_CHECKS,
        ),
    )
    with isolated_generation():
        hypothesis_seed(seed)(test)()
    unique: dict[str, list[list[Any]]] = {}
    for operations in sequences:
        unique.setdefault(repr(operations), operations)
    return list(unique.values())


def _add_rule(machine: type[RuleBasedStateMachine], method: MethodRule) -> None:
    def allowed(self: Any) -> bool:
        return self.instance is not None and method.allowed(self.instance)

    def call(self: Any, args: tuple[Any, ...]) -> None:
        self.operations.append([method.name, list(args)])
        try:
            getattr(self.instance, method.name)(*copy.deepcopy(args))
        except Exception:  # the reference's own exception is part of the expected behaviour
            pass

    call.__name__ = f"call_{method.name}"
    setattr(machine, call.__name__, precondition(allowed)(rule(args=method.args)(call)))
