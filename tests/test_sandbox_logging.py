"""Honest code that logs runs in the sandbox: `logging` reads a function's `__code__` while it loads
and walks frames to find each record's caller, both of which the child refuses, so before the zygote
warmed it (and switched the caller lookup off) every program that imported it failed to load. The
frame walks a candidate asks for itself stay refused and reported."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from adversarial.corpus import TASKS, credited, job_for
from adversarial.isolation import namespaced_sandbox

from rlvr.sandbox import LocalSandbox

ADD = TASKS["add"]

HONEST = {
    "import only": "import logging\n",
    "module logger, disabled level": """
import logging
log = logging.getLogger(__name__)
log.setLevel(logging.INFO)
""",
    "basicConfig with caller fields": """
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.DEBUG,
                    format="%(levelname)s %(filename)s:%(lineno)d %(funcName)s %(message)s")
log = logging.getLogger("calc")
""",
    "warning to the last-resort handler": "import logging\nlog = logging.getLogger()\n",
    "concurrent.futures (imports logging)": "import concurrent.futures, logging\nlog = logging.getLogger()\n",
}
BODY = """
def add(x, y):
    {call}
    return x + y
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalSandbox]:
    sandbox = namespaced_sandbox(2)
    yield sandbox
    sandbox.close()


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_logging_is_credited_and_refuses_nothing(pool: LocalSandbox, name: str) -> None:
    call = (
        "log.debug('adding %d and %d', x, y); log.warning('sum %d', x + y)"
        if "log =" in HONEST[name]
        else "pass"
    )
    result = pool.run(job_for(ADD, HONEST[name] + BODY.format(call=call)))
    assert credited(result, ADD), result
    assert result.denied == [], result.denied


LOCATING = """
import logging
def add(x, y):
    try:
        got = {call}
    except Exception:  # the removed sys._getframe: AttributeError
        got = None
    if type(got).__name__ == "frame" or (type(got) is tuple and got[0] != "(unknown file)"):
        return -1  # logging handed a frame, or a caller's location, to the candidate
    return x + y
"""


@pytest.mark.parametrize("call", ["logging.currentframe()", "logging.getLogger().findCaller()"])
def test_logging_hands_no_frame_to_the_candidate(pool: LocalSandbox, call: str) -> None:
    assert credited(pool.run(job_for(ADD, LOCATING.format(call=call))), ADD)


def test_exception_tracebacks_through_logging_stay_refused_and_reported(pool: LocalSandbox) -> None:
    source = "import logging\n" + BODY.format(
        call="try:\n        1 / 0\n    except ZeroDivisionError:\n        logging.exception('boom')"
    )
    result = pool.run(job_for(ADD, source))
    assert "introspection" in result.denied, (result.status, result.denied)
