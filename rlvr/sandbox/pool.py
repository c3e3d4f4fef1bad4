"""Trusted side of the sandbox: a pool of warm zygotes, one per core, with a hard outer deadline.

The zygotes are fresh interpreters started from the zygote's source text — never forked from
the grader — so they hold no hidden data and none of the grader's memory. Each candidate runs in
a fresh fork of a zygote (see zygote.py); the trusted side sees only plain data.
"""

from __future__ import annotations

import json
import os
import queue
import select
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.sandbox.codec import CodecError, from_wire, to_wire

ZYGOTE_SOURCE = (Path(__file__).parent / "zygote.py").read_text()
RESPONSE_MARGIN_SECONDS = 5.0
MAX_RESPONSE_BYTES = 8 << 20


@dataclass(frozen=True)
class Job:
    """One candidate program and the calls to make on its entry point (arguments are plain data)."""

    source: str
    entry: str
    calls: list[tuple[Any, ...]]
    timeout: float = 10.0
    trace: bool = False
    mem_mb: int = 1024
    max_output: int = 1 << 20


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
    exit: int | None = None
    wall: float = 0.0
    detail: str = ""

    @property
    def sandbox_error(self) -> bool:
        return self.status == "sandbox_error"


def _read_exact(stream: Any, size: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    fd = stream.fileno()
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
    """One warm zygote process. Not thread-safe: the pool hands each to one thread at a time."""

    def __init__(self, command: list[str] | None = None) -> None:
        self.command = command or [sys.executable, "-I", "-S", "-B", "-c", ZYGOTE_SOURCE]
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            cwd="/",
            close_fds=True,
        )

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
        if self.process:
            self.process.wait()

    def restart(self) -> None:
        self.kill()
        self.restarts += 1
        self.start()

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self.process
        if process is None or process.poll() is not None:
            self.restart()
            process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
        deadline = time.monotonic() + timeout
        try:
            process.stdin.write(struct.pack(">I", len(data)) + data)
            process.stdin.flush()
            (size,) = struct.unpack(">I", _read_exact(process.stdout, 4, deadline))
            if size > MAX_RESPONSE_BYTES:
                raise ValueError("oversized response")
            return json.loads(_read_exact(process.stdout, size, deadline))
        except (OSError, EOFError, TimeoutError, ValueError) as exc:
            self.restart()
            return {"status": "sandbox_error", "detail": f"worker failed: {type(exc).__name__}: {exc}"}

    def run(self, job: Job) -> ExecResult:
        try:
            calls = [to_wire(list(args)) for args in job.calls]
        except CodecError as exc:
            return ExecResult(status="sandbox_error", detail=f"task arguments are not plain data: {exc}")
        message = {
            "op": "run",
            "source": job.source,
            "entry": job.entry,
            "calls": calls,
            "timeout": job.timeout,
            "trace": job.trace,
            "mem_mb": job.mem_mb,
            "max_output": job.max_output,
        }
        raw = self.request(message, job.timeout + RESPONSE_MARGIN_SECONDS)
        return decode_response(raw, len(job.calls))


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
    exit_code = raw.get("exit")
    return ExecResult(
        status=status,
        outcomes=outcomes,
        counts=counts,
        exit=exit_code if type(exit_code) is int else None,
        wall=float(raw.get("wall") or 0.0),
        detail=str(raw.get("detail") or "")[:500],
    )


class LocalSandbox:
    """A pool of warm zygotes. `run_many` keeps input order; each worker serves one job at a time."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.size = max(1, workers or os.cpu_count() or 1)
        self.workers = [ZygoteWorker() for _ in range(self.size)]
        self._idle: queue.Queue[ZygoteWorker] = queue.Queue()
        for worker in self.workers:
            self._idle.put(worker)
        self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="rlvr-sandbox")
        self._lock = threading.Lock()
        self.closed = False

    def run(self, job: Job) -> ExecResult:
        worker = self._idle.get()
        try:
            return worker.run(job)
        finally:
            self._idle.put(worker)

    def run_many(self, jobs: list[Job]) -> list[ExecResult]:
        return list(self._executor.map(self.run, jobs))

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self._executor.shutdown(wait=True)
        for worker in self.workers:
            worker.kill()

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
