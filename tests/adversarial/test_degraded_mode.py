"""Host effects. The degraded mode (RLVR_SANDBOX_ISOLATION=none, or the automatic fallback where
namespaces are unavailable) runs candidates as the grader's own user on the host's file system: the
syscall filter and the audit hook must still stop every write, node, link, rename, permission or
time change, on the host or in the private scratch directory; the mode must be loud (a flag on
every result) and refusable (`require_isolation`, RLVR_REQUIRE_ISOLATION=1, --require-isolation).
Where namespaces work, the sandbox's /tmp is capped in inodes, not only in bytes."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from adversarial.docker_support import require_docker
from adversarial.isolation import namespaced_sandbox

from rlvr.cli import build_parser
from rlvr.cli.isolation import apply_require_isolation
from rlvr.sandbox import Job, LocalSandbox, SandboxUnavailable, make_sandbox
from rlvr.sandbox.pool import DEGRADED_FLAG, REQUIRE_ISOLATION_ENV, TMP_INODES, ProcessWorker

VANDAL = """
import os
import shutil
import stat
import sys


def _restored(name):
    sys.modules.pop(name, None)
    try:
        return __import__(name)
    except Exception:
        return None


def vandalize(target_dir, victim, elsewhere):
    done = []
    posix = _restored("posix") or os
    attempts = {
        "open_write": lambda d: open(os.path.join(d, "w.txt"), "w").write("x"),
        "os_open_create": lambda d: os.open(os.path.join(d, "o.txt"), os.O_CREAT | os.O_WRONLY),
        "mkdir": lambda d: os.mkdir(os.path.join(d, "dir")),
        "mkfifo": lambda d: posix.mkfifo(os.path.join(d, "fifo")),
        "mknod": lambda d: posix.mknod(os.path.join(d, "node"), 0o600 | stat.S_IFIFO),
        "symlink": lambda d: os.symlink(victim, os.path.join(d, "sym")),
        "link": lambda d: os.link(victim, os.path.join(d, "hard")),
        "copy": lambda d: shutil.copy(victim, os.path.join(d, "copy")),
        "rename_victim": lambda d: os.rename(victim, os.path.join(d, "moved")),
        "sqlite": lambda d: __import__("sqlite3").connect(os.path.join(d, "db.sqlite")).execute("create table t(x)"),
        "dbm": lambda d: __import__("dbm").open(os.path.join(d, "store"), "c"),
        "tempfile": lambda d: __import__("tempfile").mkstemp(dir=d),
    }
    for where in [target_dir, *elsewhere]:
        for name, attempt in attempts.items():
            try:
                attempt(where)
                done.append(name + "@" + where)
            except BaseException:
                pass
    for name, attempt in {
        "chmod": lambda: os.chmod(victim, 0o777),
        "posix_chmod": lambda: posix.chmod(victim, 0o777),
        "utime": lambda: os.utime(victim, (0, 0)),
        "truncate": lambda: os.truncate(victim, 0),
        "unlink": lambda: os.unlink(victim),
        "posix_unlink": lambda: posix.unlink(victim),
        "setxattr": lambda: os.setxattr(victim, "user.rlvr", b"x"),
    }.items():
        try:
            attempt()
            done.append(name)
        except BaseException:
            pass
    return done
"""


@pytest.fixture
def host(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    target = tmp_path / "target"
    target.mkdir()
    target.chmod(0o777)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    victim.chmod(0o644)
    yield target, victim


def test_degraded_candidate_cannot_touch_the_host(host: tuple[Path, Path]) -> None:
    target, victim = host
    before = victim.stat()
    token = f"rlvr-vandal-{os.getpid()}"
    host_tmp_before = {p for p in os.listdir("/tmp") if token in p}
    with LocalSandbox(1, isolation="none") as pool:
        worker = pool.workers[0]
        assert isinstance(worker, ProcessWorker) and worker.scratch is not None
        scratch = Path(worker.scratch)
        call = (str(target), str(victim), [".", "/tmp"])  # the host dir, the scratch dir, the host's /tmp
        result = pool.run(Job(VANDAL, "vandalize", [call], timeout=20))
        assert result.status == "ok" and result.outcomes[0] is not None, result
        assert result.outcomes[0].value == []  # every attempt failed inside the sandbox
        assert result.flags[0] == DEGRADED_FLAG  # and the result says it ran degraded
        assert list(scratch.iterdir()) == []
    assert list(target.iterdir()) == []
    after = victim.stat()
    assert victim.read_text() == "keep me"
    assert (after.st_mode, after.st_mtime_ns, after.st_size) == (
        before.st_mode,
        before.st_mtime_ns,
        before.st_size,
    )
    assert {p for p in os.listdir("/tmp") if token in p} == host_tmp_before
    assert not scratch.exists()  # the private scratch directory goes with its worker


def test_the_vandal_succeeds_without_a_sandbox(host: tuple[Path, Path]) -> None:
    """The check above can fail: run directly, the same code does damage."""
    target, victim = host
    namespace: dict[str, object] = {}
    exec(VANDAL, namespace)
    done = namespace["vandalize"](str(target), str(victim), [])  # type: ignore[operator]
    assert "mkfifo@" + str(target) in done and "open_write@" + str(target) in done
    assert any(name.startswith("rename_victim") for name in done) or "unlink" in done


def test_require_isolation_refuses_the_degraded_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailable, match="contradicts require_isolation"):
        LocalSandbox(1, isolation="none", require_isolation=True)
    monkeypatch.setenv(REQUIRE_ISOLATION_ENV, "1")
    with pytest.raises(SandboxUnavailable, match="contradicts require_isolation"):
        LocalSandbox(1, isolation="none")
    monkeypatch.setattr(ProcessWorker, "command", _failing_namespaces(ProcessWorker.command))
    with pytest.raises(SandboxUnavailable):
        LocalSandbox(1)  # "auto" would fall back; required isolation refuses instead
    monkeypatch.delenv(REQUIRE_ISOLATION_ENV)
    with pytest.warns(RuntimeWarning, match="DEGRADED"):
        fallback = LocalSandbox(1)
    with fallback:
        assert fallback.flags == [DEGRADED_FLAG]


def _failing_namespaces(original):  # type: ignore[no-untyped-def]
    def command(worker: ProcessWorker) -> list[str]:
        if worker.isolation == "none":
            return original(worker)
        script = (
            "import json, struct, os; d = json.dumps({'status': 'setup_error', 'detail': "
            "'unshare: Operation not permitted'}).encode(); os.write(1, struct.pack('>I', len(d)) + d)"
        )
        return [sys.executable, "-I", "-S", "-c", script]

    return command


@pytest.mark.parametrize("command", ["grade", "bench", "train", "serve"])
def test_cli_flag_sets_the_requirement(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = {
        "grade": ["grade", "--pack", "p", "--completions", "c", "--out", "o"],
        "bench": ["bench", "--pack", "p", "--policy", "jsonl:x", "--out", "o"],
        "train": ["train"],
        "serve": ["serve", "--pack", "p"],
    }[command]
    monkeypatch.setenv(REQUIRE_ISOLATION_ENV, "")  # so that teardown restores the variable's absence
    monkeypatch.delenv(REQUIRE_ISOLATION_ENV)
    parser = build_parser()
    plain = parser.parse_args(argv)
    apply_require_isolation(plain)
    assert REQUIRE_ISOLATION_ENV not in os.environ
    required = parser.parse_args([*argv, "--require-isolation"])
    apply_require_isolation(required)
    assert os.environ[REQUIRE_ISOLATION_ENV] == "1"


TMP_PROBE = """
import os


def tmp():
    stats = os.statvfs("/tmp")
    return [stats.f_files, stats.f_blocks * stats.f_frsize]
"""


def test_sandbox_tmp_is_capped_in_inodes() -> None:
    with namespaced_sandbox(1) as pool:
        result = pool.run(Job(TMP_PROBE, "tmp", [()], timeout=10))
    assert result.status == "ok" and result.outcomes[0] is not None, result
    inodes, size = result.outcomes[0].value
    assert inodes == TMP_INODES and size <= 16 << 20


@pytest.mark.docker
def test_docker_tmp_is_capped_in_inodes() -> None:
    require_docker("runc")
    with make_sandbox("docker", 1) as pool:
        result = pool.run(Job(TMP_PROBE, "tmp", [()], timeout=10))
    assert result.status == "ok" and result.outcomes[0] is not None, result
    inodes, size = result.outcomes[0].value
    assert inodes == TMP_INODES and size <= 16 << 20


PATH_PATCHER = """
import os
import posixpath


def read_through_patched_paths(secret, stdlib_file):
    # make os.path.realpath answer a standard-library path for every file, then read a host file
    posixpath._joinrealpath = lambda path, rest, strict, seen: (stdlib_file, True)
    posixpath.abspath = lambda path: stdlib_file
    posixpath.realpath = lambda *args, **kwargs: stdlib_file
    try:
        with open(secret) as handle:
            return handle.read()
    except BaseException as exc:
        return type(exc).__name__
"""


def test_patching_the_path_helpers_does_not_open_host_files(tmp_path: Path) -> None:
    """Degraded mode sees the host's files: the audit hook lets only standard-library files be read, and
    resolves the path with functions bound before the candidate ran, not with `posixpath`'s live helpers."""
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    with LocalSandbox(1, isolation="none") as pool:
        call = (str(secret), os.__file__)
        result = pool.run(Job(PATH_PATCHER, "read_through_patched_paths", [call], timeout=20))
    assert result.status == "ok" and result.outcomes[0] is not None, result
    assert result.outcomes[0].value != "host secret"
    assert "file_read" in result.denied
