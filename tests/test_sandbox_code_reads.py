"""Repository jobs (`Job(read_code=True)`) may read a function's `__code__`: real packages call
`inspect.signature` and `functools` helpers while they import (toolz does). What the refusal of
`__code__` protected stays refused: the sandbox's own code (the op counters know it by identity, its
constants and closures are the sandbox's state), frames, and building code objects. Jobs without the
option (candidate programs of the code family) keep the old rule."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from adversarial.isolation import namespaced_sandbox

from rlvr.sandbox import LocalSandbox
from rlvr.sandbox.pool import Job

INTROSPECTING = """
import functools, inspect

def scale(x, factor=2, *, offset=0):
    return x * factor + offset

SIGNATURE = str(inspect.signature(scale))
ARITY = scale.__code__.co_argcount

@functools.wraps(scale)
def wrapped(*args, **kwargs):
    return scale(*args, **kwargs)

def f(x):
    return [SIGNATURE, ARITY, str(inspect.signature(wrapped)), wrapped(x), len(inspect.signature(len).parameters)]
"""

# the zygote's own functions are reachable through its classes (object.__subclasses__); their code is
# what the refusal protects
SANDBOX_CODE = """
def f(x):
    for cls in object.__subclasses__():
        member = vars(cls).get("get")
        function = getattr(member, "__func__", None)
        if function is not None and getattr(function, "__module__", None) == "__main__":
            try:
                return ["read", len(function.__code__.co_consts)]
            except Exception as exc:
                return ["refused", type(exc).__name__]
    return ["not found"]
"""

FRAME = """
def f(x):
    try:
        raise ValueError
    except ValueError as exc:
        return exc.__traceback__.tb_frame.f_back is not None
"""

CODE_OBJECT = """
def template(x):
    return 0

def f(x):
    code = template.__code__.replace(co_consts=(None, 3))
    return 1
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalSandbox]:
    sandbox = namespaced_sandbox(2)
    yield sandbox
    sandbox.close()


def run(pool: LocalSandbox, source: str, read_code: bool) -> tuple[str, Any, list[str]]:
    result = pool.run(Job(source, "f", [(3,)], timeout=5.0, read_code=read_code))
    outcome = result.outcomes[0] if result.outcomes else None
    value = outcome.value if outcome is not None and outcome.ok else (outcome.exception if outcome else None)
    return result.status, value, result.denied


def test_a_repository_job_introspects_its_own_functions_at_import(pool: LocalSandbox) -> None:
    status, value, denied = run(pool, INTROSPECTING, read_code=True)
    assert status == "ok", (status, value)
    assert value == ["(x, factor=2, *, offset=0)", 2, "(x, factor=2, *, offset=0)", 6, 1]
    assert denied == []


def test_without_the_option_reading_code_is_still_refused(pool: LocalSandbox) -> None:
    status, value, denied = run(pool, INTROSPECTING, read_code=False)
    assert status == "load_error" and "introspection" in denied


@pytest.mark.parametrize("read_code", [True, False])
def test_the_sandbox_code_stays_refused(pool: LocalSandbox, read_code: bool) -> None:
    status, value, denied = run(pool, SANDBOX_CODE, read_code=read_code)
    assert status == "ok"
    assert value == ["refused", "Refused"], value
    assert "introspection" in denied


@pytest.mark.parametrize("read_code", [True, False])
def test_frames_and_code_construction_stay_refused(pool: LocalSandbox, read_code: bool) -> None:
    for source in (FRAME, CODE_OBJECT):
        status, value, denied = run(pool, source, read_code=read_code)
        assert value != 1 and value is not True, (source, value)
        assert "introspection" in denied, (source, denied)
