"""Isolation properties of the local (namespace) sandbox, its degraded mode, and fault recovery."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from adversarial.corpus import descendants, process_table, stray_processes
from adversarial.isolation import namespaced_sandbox

from rlvr.sandbox import Job, LocalSandbox, SandboxUnavailable, make_sandbox
from rlvr.sandbox.pool import DEGRADED_FLAG, ProcessWorker
from rlvr.sandbox.view import runtime_view

PROBE = """
import os
import sys


def probe(what):
    if what == "listdir":
        return sorted(os.listdir("/"))
    if what == "ids":
        return [os.getuid(), os.getgid(), os.getpid()]
    if what == "environ":
        return dict(os.environ)
    if what == "hostname":
        return os.uname().nodename
    if what == "path":
        return [p for p in sys.path if p]
    if what == "exists":
        return [p for p in ("/work", "/home", "/proc/1", "/usr/bin", "/etc/passwd", "SITE") if os.path.exists(p)]
    if what == "tmp":
        return sorted(os.listdir("/tmp"))
    raise ValueError(what)
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalSandbox]:
    sandbox = namespaced_sandbox(2)
    yield sandbox
    sandbox.close()


def probe(pool: LocalSandbox, what: str) -> object:
    source = PROBE.replace("SITE", runtime_view().stdlib + "/site-packages/pip")
    result = pool.run(Job(source, "probe", [(what,)], timeout=5))
    assert result.status == "ok", result
    outcome = result.outcomes[0]
    assert outcome is not None and outcome.ok, outcome
    return outcome.value


def test_view_holds_only_runtime_dirs(pool: LocalSandbox) -> None:
    top = probe(pool, "listdir")
    assert isinstance(top, list) and set(top) <= {"dev", "etc", "lib", "lib64", "usr", "root", "opt", "tmp"}
    assert probe(pool, "exists") == []  # no project, home, /proc, binaries, passwd or site-packages
    assert probe(pool, "tmp") == []  # a fresh tmpfs, not the host's /tmp


def test_clean_identity_and_environment(pool: LocalSandbox) -> None:
    os.environ["RLVR_TEST_LEAK"] = "grader-secret"
    try:
        assert probe(pool, "environ") == {}
    finally:
        os.environ.pop("RLVR_TEST_LEAK")
    uid, gid, pid = probe(pool, "ids")  # type: ignore[misc]
    assert (uid, gid) == (0, 0)  # root only inside its user namespace (host `nobody` when run as root)
    assert pid > 1  # a fork of the namespace's init
    assert probe(pool, "hostname") == "sandbox"
    assert all(not p.startswith(str(Path.cwd())) for p in probe(pool, "path"))  # type: ignore[union-attr]


def test_host_uid_is_unprivileged(pool: LocalSandbox) -> None:
    worker = pool.workers[0]
    assert isinstance(worker, ProcessWorker) and worker.pid is not None
    inits = [pid for pid in descendants(worker.pid) if Path(f"/proc/{pid}/status").exists()]
    assert inits, "namespace init not found"
    status = Path(f"/proc/{inits[0]}/status").read_text()
    uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
    seccomp_line = next(line for line in status.splitlines() if line.startswith("Seccomp:"))
    effective_caps = next(line for line in status.splitlines() if line.startswith("CapEff:"))
    if os.geteuid() == 0:
        assert uid_line.split()[1:] == ["65534"] * 4
    else:
        assert uid_line.split()[1] == str(os.geteuid())
    assert int(effective_caps.split()[1], 16) == 0
    assert seccomp_line.split()[1] == ("2" if "no-seccomp" not in pool.flags else "0")


def test_every_result_reports_full_isolation(pool: LocalSandbox) -> None:
    result = pool.run(Job("def f():\n    return 1\n", "f", [()]))
    assert result.status == "ok" and result.flags == []


def test_degraded_mode_is_flagged_on_every_result() -> None:
    with pytest.raises(SandboxUnavailable), _without_namespaces():
        LocalSandbox(1, isolation="namespaces")
    with pytest.warns(RuntimeWarning, match="DEGRADED"), _without_namespaces():
        sandbox = LocalSandbox(1)
    try:
        result = sandbox.run(Job("def f():\n    return 1\n", "f", [()]))
        assert result.status == "ok" and result.outcomes[0] is not None and result.outcomes[0].value == 1
        assert result.flags == [DEGRADED_FLAG]
    finally:
        sandbox.close()
    with LocalSandbox(1, isolation="none") as explicit:
        assert explicit.run(Job("def f():\n    return 1\n", "f", [()])).flags == [DEGRADED_FLAG]


class _without_namespaces:
    """Make the launcher fail the way it does where user namespaces are disabled."""

    def __enter__(self) -> None:
        self.original = ProcessWorker.command

        def broken(worker: ProcessWorker) -> list[str]:
            if worker.isolation == "none":
                return self.original(worker)
            script = "import json, struct, os; d = json.dumps({'status': 'setup_error', 'detail': 'unshare: Operation not permitted'}).encode(); os.write(1, struct.pack('>I', len(d)) + d)"
            return [sys.executable, "-I", "-S", "-c", script]

        ProcessWorker.command = broken  # type: ignore[method-assign]

    def __exit__(self, *exc: object) -> None:
        ProcessWorker.command = self.original  # type: ignore[method-assign]


def test_make_sandbox_names() -> None:
    with pytest.raises(ValueError, match="unknown sandbox"):
        make_sandbox("vm")
    with pytest.raises(ValueError, match="docker sandbox only"):
        make_sandbox("local", runtime="runsc")


@pytest.mark.parametrize("target", ["launcher", "zygote"])
def test_sigkill_of_a_worker_mid_batch_is_flagged_and_recovered(target: str) -> None:
    slow = Job("import time\ndef f(x):\n    time.sleep(0.5)\n    return x\n", "f", [(1,)], timeout=5)
    fast = Job("def f(x):\n    return x\n", "f", [(2,)], timeout=5)
    with namespaced_sandbox(2) as sandbox:
        victims = [w.pid for w in sandbox.workers if isinstance(w, ProcessWorker)]
        import threading

        def kill_soon() -> None:
            time.sleep(0.2)
            for pid in victims:
                assert pid is not None
                table = process_table()
                zygotes = [child for child, parent in table.items() if parent == pid]
                for victim in [pid] if target == "launcher" else zygotes:
                    os.kill(victim, signal.SIGKILL)

        killer = threading.Thread(target=kill_soon)
        killer.start()
        results = sandbox.run_many([slow, slow, slow, slow])
        killer.join()
        affected = [r for r in results if r.status != "ok"]
        assert affected, "the kill landed after the batch; no episode was affected"
        assert all(r.sandbox_error and "worker failed" in r.detail for r in affected)
        assert all(r.status == "ok" and r.outcomes[0] is not None for r in results if r not in affected)
        after = sandbox.run(fast)  # served by a replacement worker (how fast: benchmarks/bench_sandbox.py)
        assert after.status == "ok" and after.outcomes[0] is not None and after.outcomes[0].value == 2
        assert (
            stray_processes([w.pid for w in sandbox.workers if isinstance(w, ProcessWorker) and w.pid]) == []
        )
        for pid in victims:
            assert pid is not None and not Path(f"/proc/{pid}").exists()  # killed and reaped


def test_closing_the_pool_leaves_nothing() -> None:
    before = descendants(os.getpid())
    sandbox = namespaced_sandbox(2)
    sandbox.run_many([Job("def f():\n    return 1\n", "f", [()])] * 4)
    sandbox.close()
    deadline = time.monotonic() + 5
    while descendants(os.getpid()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert descendants(os.getpid()) - before == set()


def _memory_contains(pid: int, needles: list[bytes]) -> list[bytes]:
    """Which needles occur in the writable memory of process `pid` (read through /proc/<pid>/mem)."""
    found: set[bytes] = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "w" not in fields[1] or "r" not in fields[1] or (len(fields) > 5 and fields[5] == "[vvar]"):
                continue
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            found.update(needle for needle in needles if needle in chunk)
    return sorted(found)


@pytest.mark.skipif(os.geteuid() != 0, reason="reading another process's memory needs root")
def test_zygote_keeps_no_job_or_result_after_a_run() -> None:
    """A reference solution's source, arguments and outputs are hidden data: after a run, none of them
    remains anywhere in the zygote's memory, so the next candidate's fork cannot inherit them."""
    import secrets

    source_marker = "source-" + secrets.token_hex(12)
    result_marker = "result-" + secrets.token_hex(12)
    argument = result_marker[::-1]
    source = f"def f(x):\n    return x[::-1]  # {source_marker}\n"
    with namespaced_sandbox(1) as sandbox:
        result = sandbox.run(Job(source, "f", [(argument,)], timeout=5))
        assert result.status == "ok" and result.outcomes[0] is not None
        assert result.outcomes[0].value == result_marker
        worker = sandbox.workers[0]
        assert isinstance(worker, ProcessWorker) and worker.pid is not None
        (zygote,) = [pid for pid in descendants(worker.pid)]
        needles = [m.encode() for m in (source_marker, result_marker, argument)]
        assert _memory_contains(zygote, needles) == []
        # the check can fail: a job still being read would be found
        assert _memory_contains(os.getpid(), [source_marker.encode()]) != []
