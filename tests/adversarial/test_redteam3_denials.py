"""Red team 3: the sandbox's refusals and its result channel.

Holes found (fixed in rlvr/sandbox/zygote.py):
- `os.eventfd_write(fd, n)` (and `signal.set_wakeup_fd`) are write primitives on any descriptor that
  were not removed with `os.write`: a candidate wrote raw bytes into its own result channel, silently
  (no `sandbox:denied` flag). Without the run's token it could only garble its stream; with a memory
  read (below) it could have forged results and op counts.
- `sqlite3` is preloaded by the zygote, so blocking `_sqlite3` did not keep it out, and SQLite opens
  its files from C with no "open" audit event: `sqlite3.connect(PATH)` opened any file the process
  could see, unreported, and `os.pread` on the descriptor it left open read the file's bytes. In the
  degraded mode (no namespaces) that is every file of the host, the grader's included. Now any
  database but an in-memory one is refused (`sandbox:denied:file_read`).

Blocked (guards): the denied channel cannot be flooded or given names outside DENIED_OPS, and one
candidate's refusals never reach a batch-mate's result.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from adversarial.isolation import namespaced_sandbox

from rlvr.sandbox import LocalSandbox
from rlvr.sandbox.pool import ExecResult, Job


def job(source: str, calls: int = 2) -> Job:
    return Job(source, "f", [(x,) for x in range(1, calls + 1)], timeout=5.0)


def answers(result: ExecResult) -> list[object]:
    return [o.value if o is not None and o.ok else None for o in result.outcomes]


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalSandbox]:
    sandbox = namespaced_sandbox(2)
    yield sandbox
    sandbox.close()


EVENTFD_WRITE = """
import os
def f(x):
    for fd in range(3, 32):
        try:
            os.eventfd_write(fd, 0x4142434445464748)
        except Exception:
            pass
    return x + 1
"""

WAKEUP_FD = """
import os, signal
def f(x):
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # Python handlers are refused
    for fd in range(3, 32):
        try:
            os.set_blocking(fd, False)
            signal.set_wakeup_fd(fd)
            signal.raise_signal(signal.SIGUSR1)
        except Exception:
            pass
    return x + 1
"""


def test_no_write_primitive_reaches_the_result_channel(pool: LocalSandbox) -> None:
    """Both candidates swallow whatever is refused and answer right: the stream must stay intact
    (status ok, both answers read) and the refusal must be reported."""
    eventfd, wakeup = pool.run_many([job(EVENTFD_WRITE), job(WAKEUP_FD)])
    assert (eventfd.status, answers(eventfd)) == ("ok", [2, 3]), eventfd.detail
    assert "file_write" in eventfd.denied
    assert (wakeup.status, answers(wakeup)) == ("ok", [2, 3]), wakeup.detail
    assert "descriptor" in wakeup.denied


SQLITE_FILE = """
import sqlite3
def f(x):
    try:
        sqlite3.connect({path!r})
    except PermissionError:
        return x + 1
    return "opened"
"""

SQLITE_READ = """
import os, sqlite3
def f(x):
    try:
        sqlite3.connect({path!r})
    except Exception:
        return "refused"
    out = []
    for fd in range(3, 32):
        try:
            out.append(os.pread(fd, 64, 0).decode("utf-8", "replace"))
        except OSError:
            pass
    return out
"""

SQLITE_MEMORY = """
import sqlite3
def f(x):
    a = sqlite3.connect(":memory:").execute("select ?", (x,)).fetchall()
    b = sqlite3.connect("file::memory:?cache=shared", uri=True).execute("select 1").fetchall()
    return a[0][0] + b[0][0]
"""


def test_sqlite_opens_no_file_and_says_so(pool: LocalSandbox) -> None:
    refused, uri, memory = pool.run_many(
        [
            job(SQLITE_FILE.format(path="/etc/hostname")),
            job(
                SQLITE_FILE.format(path="file:/etc/hostname?mode=ro").replace(
                    "connect(", "connect(uri=True, database="
                )
            ),
            job(SQLITE_MEMORY),
        ]
    )
    for result in (refused, uri):
        assert answers(result) == [2, 3] and result.denied == ["file_read"]
    assert (memory.status, answers(memory), memory.denied) == ("ok", [2, 3], [])


def test_sqlite_reads_no_host_file_in_the_degraded_mode(tmp_path: Path) -> None:
    secret = tmp_path / "grader-secret.txt"
    secret.write_text("HIDDEN-REFERENCE-OUTPUT\n")
    with LocalSandbox(1, isolation="none") as sandbox:
        result = sandbox.run(job(SQLITE_READ.format(path=str(secret)), calls=1))
    assert "HIDDEN-REFERENCE-OUTPUT" not in repr(answers(result))
    assert answers(result) == ["refused"] and result.denied == ["file_read"]


FLOOD = """
import sys
def f(x):
    for _ in range(20000):
        for op in ("socket", "subprocess", "no-such-op", 3):
            sys.audit("rlvr.denied", op)
        sys.audit("rlvr.denied", "socket", "extra")
    return x + 1
"""


def test_the_denied_channel_cannot_be_flooded_forged_or_shared(pool: LocalSandbox) -> None:
    """A candidate raising the report event itself adds its own (registered, deduplicated) names
    and nothing else; its honest batch-mate is untouched."""
    honest = "def f(x):\n    return x + 1\n"
    batch = pool.run_many([job(FLOOD), job(honest), job(FLOOD), job(honest)])
    for flooder in batch[0::2]:
        assert flooder.status == "ok" and answers(flooder) == [2, 3]
        assert flooder.denied == ["socket", "subprocess"]
    for result in batch[1::2]:
        assert (result.status, answers(result), result.denied) == ("ok", [2, 3], [])
