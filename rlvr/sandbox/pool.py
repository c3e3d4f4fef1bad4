"""Trusted side of the sandbox: a pool of warm zygotes, one per core, with a hard outer deadline.

The zygotes are fresh interpreters started from the zygote's source text — never forked from
the grader — so they hold no hidden data and none of the grader's memory. Each candidate runs in
a fresh fork of a zygote (see zygote.py); the trusted side sees only plain data.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rlvr.core.codec import CodecError, from_wire, to_wire
from rlvr.core.flags import DENIED_OPS
from rlvr.sandbox.node import node_binary, node_binds, node_header
from rlvr.sandbox.protocol import decode_child_stream, decode_forked_stream
from rlvr.sandbox.syscall_filter import build_program
from rlvr.sandbox.view import runtime_view

ZYGOTE_SOURCE = (Path(__file__).parent / "zygote.py").read_text()
LAUNCHER_SOURCE = (Path(__file__).parent / "launcher.py").read_text()
STARTUP_SECONDS = 20.0
DEGRADED_FLAG = "degraded:no-namespaces"
PARTIAL_ISOLATION_FLAGS = frozenset({DEGRADED_FLAG, "no-seccomp", "no-syscall-filter"})
"""Flags that say a run had less than full isolation; `require_isolation` refuses to start with any."""
REQUIRE_ISOLATION_ENV = "RLVR_REQUIRE_ISOLATION"
TMP_INODES = 1024
"""Inodes of the sandbox's /tmp (tmpfs `size=` caps bytes, not inodes; kernel memory grows per inode)."""


def isolation_required(explicit: bool | None = None) -> bool:
    """`require_isolation` if given, else the RLVR_REQUIRE_ISOLATION environment variable."""
    if explicit is not None:
        return explicit
    return os.environ.get(REQUIRE_ISOLATION_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def syscall_filter_hex() -> str | None:
    program = build_program()
    return program.hex() if program else None


RESPONSE_MARGIN_SECONDS = 5.0
WALL_LIMIT_FACTOR = 3.0
"""A job's `timeout` is CPU seconds; the child may take this many times as long in wall time (a
loaded machine shares its cores) before it is stopped as a sleeper."""
MAX_RESPONSE_BYTES = 8 << 20
FORK_PARENT_SECONDS = 1.0
"""`run_each`: CPU seconds the round's parent may use itself (its load; a call's child has its own)..."""
FORK_CALL_SECONDS = 0.05
"""...plus this much per call (its fork, collecting its output)."""
FORK_CALL_WALL = 0.5
"""`run_each`: wall seconds the round's parent may take per call beyond the call's own wall limit."""


@dataclass(frozen=True)
class Job:
    """One candidate program and the calls to make on its entry point (arguments are plain data)."""

    source: str
    entry: str
    calls: list[tuple[Any, ...]]
    timeout: float = 10.0
    trace: bool = False
    memory: bool = False  # with trace: also report each call's peak traced memory (tracemalloc)
    # repository code: reading a function's `__code__` (inspect.signature, functools) is allowed, except
    # on the sandbox's own functions (frames stay refused)
    read_code: bool = False
    mem_mb: int = 1024
    max_output: int = 1 << 20
    runtime: str = "python"  # or "node": `source` is JavaScript, run by rlvr/sandbox/node_runner.js
    counter: str | None = None  # node: the name of the op counter the trusted build inserted
    # `run_each` only: stop at the first call whose child did not finish cleanly (a timeout, a crash,
    # the output limit); the calls after it are not run
    stop_on_failure: bool = False

    @property
    def wall_limit(self) -> float:
        """Wall-clock seconds before a child that sleeps or blocks is stopped (`timeout` is CPU time)."""
        return self.timeout * WALL_LIMIT_FACTOR


@dataclass
class CallOutcome:
    ok: bool
    value: Any = None
    exception: str | None = None


@dataclass
class ExecResult:
    """What came back from the sandbox. `status` is one of ok, timeout, crash, output_limit,
    protocol, load_error, sandbox_error. `sandbox_error` means grading was disrupted."""

    status: str
    outcomes: list[CallOutcome | None] = field(default_factory=list)
    counts: list[int | None] = field(default_factory=list)
    peaks: list[int | None] = field(default_factory=list)  # bytes (tracemalloc peak), `memory` runs only
    exit: int | None = None
    wall: float = 0.0
    detail: str = ""
    flags: list[str] = field(default_factory=list)
    """Isolation caveats that apply to this run (e.g. `degraded:no-namespaces`); copy into Verdict.flags."""
    denied: list[str] = field(default_factory=list)
    """Operations the sandbox refused this candidate (`rlvr.core.flags.DENIED_OPS` names, in order)."""
    load_count: int | None = None
    """Traced runs: operations the program's module did while loading (its own code, not the import
    machinery nor the standard-library modules it imports); counted in no call."""

    @property
    def sandbox_error(self) -> bool:
        return self.status == "sandbox_error"


class SandboxUnavailable(RuntimeError):
    """The requested isolation cannot be set up on this machine."""


def read_exact(fd: int, size: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    while size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("sandbox worker did not answer in time")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, min(size, 1 << 16))
        if not chunk:
            raise EOFError("sandbox worker exited")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


class ZygoteWorker:
    """One warm zygote speaking the length-prefixed JSON protocol. Subclasses say how it is started,
    how bytes reach it and how it is killed. Not thread-safe: the pool hands each to one thread."""

    node = False  # whether node is part of this worker's view (node jobs need it)

    def __init__(self) -> None:
        self.restarts = 0
        self.flags: list[str] = []
        self.start()

    # ---- transport, implemented by subclasses
    def start(self) -> None:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def send_bytes(self, data: bytes) -> None:
        raise NotImplementedError

    def receive_exact(self, size: int, deadline: float) -> bytes:
        raise NotImplementedError

    # ---- protocol
    def restart(self) -> None:
        self.kill()
        self.restarts += 1
        self.start()

    def receive_message(self, deadline: float) -> dict[str, Any]:
        (size,) = struct.unpack(">I", self.receive_exact(4, deadline))
        if size > MAX_RESPONSE_BYTES:
            raise ValueError("oversized response")
        message = json.loads(self.receive_exact(size, deadline))
        if not isinstance(message, dict):
            raise ValueError("malformed response")
        return message

    def request(
        self, header: dict[str, Any], job: bytes, timeout: float, n_calls: int | None = None
    ) -> dict[str, Any]:
        """Send one run (header frame + raw job bytes); return the decoded summary of the child's
        stream (with `n_calls`, a forked-calls parent's stream: see `decode_forked_stream`)."""
        try:
            if not self.alive():
                self.restart()
        except (SandboxUnavailable, OSError) as exc:
            return {"status": "sandbox_error", "detail": f"worker could not be restarted: {exc}"}
        data = json.dumps(header | {"size": len(job)}, separators=(",", ":"), allow_nan=False).encode()
        deadline = time.monotonic() + timeout
        try:
            self.send_bytes(struct.pack(">I", len(data)) + data + job)
            summary = self.receive_message(deadline)
            (size,) = struct.unpack(">I", self.receive_exact(4, deadline))
            if size > MAX_RESPONSE_BYTES:
                raise ValueError("oversized response")
            stream = self.receive_exact(size, deadline)
        except (OSError, EOFError, TimeoutError, ValueError, struct.error) as exc:
            try:
                self.restart()
            except (SandboxUnavailable, OSError):
                pass  # the next request retries; this one is already flagged
            return {"status": "sandbox_error", "detail": f"worker failed: {type(exc).__name__}: {exc}"}
        if summary.get("recycle"):  # the zygote found its scratch dirty and exited: start a fresh one
            try:
                self.restart()
            except (SandboxUnavailable, OSError):
                pass  # the next request retries
        if summary.get("status") == "sandbox_error":
            return summary
        status = summary.get("status")
        exit_status = summary.get("exit")
        arguments = (
            stream,
            str(summary.get("token") or ""),
            status if status in ("timeout", "output_limit") else None,
            exit_status if type(exit_status) is int else None,
            float(summary.get("wall") or 0.0),
        )
        if n_calls is not None:
            return decode_forked_stream(*arguments, n_calls)
        return decode_child_stream(*arguments)

    def _payload(self, job: Job, extra: dict[str, Any] | None = None) -> bytes | ExecResult:
        try:
            calls = [to_wire(list(args)) for args in job.calls]
            body = {
                "source": job.source,
                "entry": job.entry,
                "calls": calls,
                "trace": job.trace,
                "memory": job.memory,
                "read_code": job.read_code,
                "mem_mb": job.mem_mb,
            }
            if job.runtime == "node":
                body["counter"] = job.counter
            return json.dumps(body | (extra or {}), separators=(",", ":"), allow_nan=False).encode()
        except (CodecError, ValueError, UnicodeEncodeError) as exc:
            return ExecResult(
                status="sandbox_error",
                detail=f"job is not plain data: {exc}",
                flags=list(self.flags),
            )

    def run_each(self, job: Job) -> list[ExecResult | None]:
        """Each call of `job` in its own child, one request per round: the sandbox's child loads the
        job's module once (it must be the grader's own code: a driver holding the candidate as data),
        then forks one child per call from that loaded state, each with the job's CPU, wall and
        output limits (counted outside its process) and nothing it changes visible to the next.
        One result per call, as `run` gives for a job of that call alone; None for a call not run
        because `stop_on_failure` stopped at an earlier one. A round whose outputs do not fit one
        response continues in further requests (each call's result is its own either way)."""
        if job.runtime != "python":
            return [ExecResult(status="sandbox_error", detail="run_each runs Python jobs only")] * len(
                job.calls
            )
        results: list[ExecResult | None] = [None] * len(job.calls)
        start = 0
        while start < len(job.calls):
            part = replace(job, calls=job.calls[start:])
            decoded = self._request_each(part)
            if isinstance(decoded, ExecResult):
                results[start:] = [decoded] * (len(job.calls) - start)
                return results
            calls: dict[int, dict[str, Any]] = decoded["calls"]
            denied = list(decoded.get("denied") or [])
            for index, summary in calls.items():
                result = decode_response(summary, 1)
                result.flags = list(self.flags)
                result.denied = list(dict.fromkeys(denied + result.denied))
                result.load_count = decoded.get("load_count")
                results[start + index] = result
            stopped = decoded.get("stopped")
            if stopped is not None and stopped[1] == "failure":
                return results
            if stopped is not None and calls:  # budget or a dirty scratch: the rest in a new request
                start += int(stopped[0])
                continue
            if len(calls) == len(part.calls):
                return results
            if calls:  # the round's parent ended early (not the calls' doing): the rest again
                start += max(calls) + 1
                continue
            # nothing ran: the parent's own outcome (a load error, a load that timed out) is every call's
            failed = decode_response(decoded, 0)
            failed.flags = list(self.flags)
            if failed.status == "ok":
                failed.status, failed.detail = "sandbox_error", "the round's parent ran no call"
            results[start:] = [replace(failed) for _ in range(len(job.calls) - start)]
            return results
        return results

    def _request_each(self, job: Job) -> dict[str, Any] | ExecResult:
        n = len(job.calls)
        budget = MAX_RESPONSE_BYTES - 4096
        payload = self._payload(
            job,
            {
                "fork_calls": True,
                "call_timeout": job.timeout,
                "call_wall": job.wall_limit,
                "call_output": job.max_output,
                "budget": budget,
                "stop_on_failure": job.stop_on_failure,
            },
        )
        if isinstance(payload, ExecResult):
            return payload
        cpu = job.timeout + FORK_PARENT_SECONDS + n * FORK_CALL_SECONDS
        wall = n * (job.wall_limit + FORK_CALL_WALL) + FORK_PARENT_SECONDS * WALL_LIMIT_FACTOR
        header = {"op": "run", "timeout": cpu, "wall": wall, "max_output": budget}
        raw = self.request(header, payload, wall + RESPONSE_MARGIN_SECONDS, n_calls=n)
        if raw.get("status") == "sandbox_error" and "calls" not in raw:
            return ExecResult(
                status="sandbox_error", detail=str(raw.get("detail") or "")[:500], flags=list(self.flags)
            )
        return raw

    def run(self, job: Job) -> ExecResult:
        payload = self._payload(job)
        if isinstance(payload, ExecResult):
            return payload
        header: dict[str, Any] = {
            "op": "run",
            "timeout": job.timeout,
            "wall": job.wall_limit,
            "max_output": job.max_output,
        }
        if job.runtime == "node":
            if not self.node:
                return ExecResult(
                    status="sandbox_error",
                    detail="this sandbox was made without node (make_sandbox(..., node=True))",
                    flags=list(self.flags),
                )
            header |= node_header()
        elif job.runtime != "python":
            return ExecResult(status="sandbox_error", detail=f"unknown runtime {job.runtime!r}")
        raw = self.request(header, payload, job.wall_limit + RESPONSE_MARGIN_SECONDS)
        result = decode_response(raw, len(job.calls))
        result.flags = list(self.flags)
        return result


class ProcessWorker(ZygoteWorker):
    """A zygote in a local child process: namespaced through the launcher, or (degraded) bare."""

    def __init__(self, isolation: str = "namespaces", node: bool = False) -> None:
        if isolation not in ("namespaces", "none"):
            raise ValueError(f"unknown isolation {isolation!r}")
        self.isolation = isolation
        self.node = node
        self.process: subprocess.Popen[bytes] | None = None
        self.scratch: str | None = None
        """Degraded mode: the private directory that is the zygote's cwd (removed with the worker)."""
        super().__init__()

    def command(self) -> list[str]:
        config: dict[str, Any] = {
            "zygote": ZYGOTE_SOURCE,
            "interpreter": sys.executable,
            "syscall_filter": syscall_filter_hex(),
            "tmp_inodes": TMP_INODES,
        }
        if self.isolation == "none":
            self.scratch = tempfile.mkdtemp(prefix="rlvr-sandbox-")
            config |= {"mode": "bare", "scratch": self.scratch, "subreaper": True}
        else:
            config |= runtime_view().to_config() | {"mode": "namespaces", "scratch": "/tmp"}
            if self.node:
                bound = {target for _, target, _ in config["binds"]}
                config["binds"] = config["binds"] + [
                    [b.source, b.target, b.is_dir] for b in node_binds() if b.target not in bound
                ]
        return [sys.executable, "-I", "-S", "-B", "-c", LAUNCHER_SOURCE, json.dumps(config)]

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"LANG": "C.UTF-8"},
            cwd="/",
            close_fds=True,
        )
        try:
            hello = self.receive_message(time.monotonic() + STARTUP_SECONDS)
        except (OSError, EOFError, TimeoutError, ValueError) as exc:
            self.kill()
            raise SandboxUnavailable(f"sandbox launcher failed: {type(exc).__name__}: {exc}") from exc
        expected = "ready" if self.isolation == "none" else "isolated"
        if hello.get("status") != expected:
            self.kill()
            what = "sandbox" if self.isolation == "none" else "namespace sandbox"
            raise SandboxUnavailable(f"{what} unavailable: {hello.get('detail', hello)}")
        self.flags = [str(flag) for flag in hello.get("flags") or []]
        if self.isolation == "none":
            self.flags = [DEGRADED_FLAG, *self.flags]

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def send_bytes(self, data: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def receive_exact(self, size: int, deadline: float) -> bytes:
        assert self.process is not None and self.process.stdout is not None
        return read_exact(self.process.stdout.fileno(), size, deadline)


def decode_response(raw: dict[str, Any], n_calls: int) -> ExecResult:
    status = str(raw.get("status", "sandbox_error"))
    outcomes: list[CallOutcome | None] = []
    for item in list(raw.get("results") or [])[:n_calls]:
        if not isinstance(item, dict):
            outcomes.append(None)
        elif "ok" in item:
            try:
                outcomes.append(CallOutcome(ok=True, value=from_wire(item["ok"])))
            except (CodecError, RecursionError):
                outcomes.append(CallOutcome(ok=False, exception="UndecodableResult"))
        else:
            outcomes.append(CallOutcome(ok=False, exception=str(item.get("exc", "Exception"))[:80]))
    outcomes += [None] * (n_calls - len(outcomes))
    counts_raw = list(raw.get("counts") or [])[:n_calls]
    counts = [c if type(c) is int and c >= 0 else None for c in counts_raw]
    counts += [None] * (n_calls - len(counts))
    peaks_raw = list(raw.get("peaks") or [])[:n_calls]
    peaks = [p if type(p) is int and p >= 0 else None for p in peaks_raw]
    peaks += [None] * (n_calls - len(peaks))
    exit_code = raw.get("exit")
    denied = [op for op in raw.get("denied") or [] if isinstance(op, str) and op in DENIED_OPS]
    load_count = raw.get("load_count")
    return ExecResult(
        status=status,
        outcomes=outcomes,
        counts=counts,
        peaks=peaks,
        exit=exit_code if type(exit_code) is int else None,
        wall=float(raw.get("wall") or 0.0),
        detail=str(raw.get("detail") or "")[:500],
        denied=list(dict.fromkeys(denied)),
        load_count=load_count if type(load_count) is int and load_count >= 0 else None,
    )


class WorkerPool:
    """Warm workers, one job each at a time. `run_many` keeps input order. Subclasses make workers."""

    name = "pool"

    def __init__(self, workers: int | None = None, require_isolation: bool = False) -> None:
        self.size = max(1, workers or os.cpu_count() or 1)
        self.workers: list[ZygoteWorker] = []
        try:
            for _ in range(self.size):
                self.workers.append(self.make_worker())
            partial = sorted(PARTIAL_ISOLATION_FLAGS.intersection(self.flags))
            if require_isolation and partial:
                raise SandboxUnavailable(
                    f"full isolation was required but this sandbox runs with {', '.join(partial)}; "
                    f"unset {REQUIRE_ISOLATION_ENV} / drop --require-isolation to accept it"
                )
        except BaseException:
            for worker in self.workers:
                worker.kill()
            raise
        self._idle: queue.Queue[ZygoteWorker] = queue.Queue()
        for worker in self.workers:
            self._idle.put(worker)
        self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix=f"rlvr-{self.name}")
        self._lock = threading.Lock()
        self.closed = False

    def make_worker(self) -> ZygoteWorker:
        raise NotImplementedError

    @property
    def flags(self) -> list[str]:
        return sorted({flag for worker in self.workers for flag in worker.flags})

    def run(self, job: Job) -> ExecResult:
        if self.closed:
            return ExecResult(status="sandbox_error", detail="sandbox is closed")
        worker = self._idle.get()
        try:
            return worker.run(job)
        finally:
            self._idle.put(worker)

    def run_many(self, jobs: list[Job]) -> list[ExecResult]:
        return list(self._executor.map(self.run, jobs))

    def run_each(self, job: Job) -> list[ExecResult | None]:
        """Every call of `job` in its own fresh child, in one request (see `ZygoteWorker.run_each`)."""
        if self.closed:
            return [ExecResult(status="sandbox_error", detail="sandbox is closed")] * len(job.calls)
        worker = self._idle.get()
        try:
            return worker.run_each(job)
        finally:
            self._idle.put(worker)

    def run_each_many(self, jobs: list[Job]) -> list[list[ExecResult | None]]:
        return list(self._executor.map(self.run_each, jobs))

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self._executor.shutdown(wait=True)
        for worker in self.workers:
            worker.kill()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalSandbox(WorkerPool):
    """Zygotes in Linux namespaces (see launcher.py). `isolation`: "namespaces" refuses to run without
    them; "auto" (the default) falls back to bare zygotes with a warning and the
    `degraded:no-namespaces` flag on every result; "none" asks for the degraded mode outright (it is
    flagged just the same). Bare zygotes still run under the sandbox's syscall filter (no file system
    writes, no other process addressable) and the audit hook, in a private scratch directory.
    `require_isolation` (or RLVR_REQUIRE_ISOLATION=1) refuses anything less than full isolation."""

    name = "local"

    def __init__(
        self,
        workers: int | None = None,
        isolation: str | None = None,
        require_isolation: bool | None = None,
        node: bool = False,
    ) -> None:
        self.node = node
        if node:
            node_binary()  # NodeUnavailable now, not at the first run
        requested = isolation or os.environ.get("RLVR_SANDBOX_ISOLATION") or "auto"
        if requested not in ("auto", "namespaces", "none"):
            raise ValueError(f"isolation must be auto, namespaces or none, not {requested!r}")
        required = isolation_required(require_isolation)
        if required and requested == "none":
            raise SandboxUnavailable(
                "isolation 'none' (RLVR_SANDBOX_ISOLATION=none) contradicts require_isolation "
                f"(--require-isolation / {REQUIRE_ISOLATION_ENV}=1); drop one of them"
            )
        self.isolation = "none" if requested == "none" else "namespaces"
        try:
            super().__init__(workers, require_isolation=required)
        except SandboxUnavailable as exc:
            if requested == "namespaces" or required:
                raise
            message = f"rlvr sandbox running DEGRADED (no namespace isolation): {exc}"
            warnings.warn(message, RuntimeWarning, stacklevel=2)  # shown once per call site
            logging.getLogger("rlvr.sandbox").warning(message)
            self.isolation = "none"
            super().__init__(workers)

    def make_worker(self) -> ZygoteWorker:
        return ProcessWorker(self.isolation, node=self.node)
