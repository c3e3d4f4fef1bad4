"""A killable sympy process: the math and proof graders parse untrusted answers here, never in-process.

sympy can hang (`9^{9^{9^9}}`) or exhaust memory on hostile input, and signal-based timeouts cannot interrupt
a long C-level big-integer operation. So the trusted grader talks to one long-lived child over JSON lines
(`python -m rlvr.graders.sympy_worker`), waits with a deadline, and on timeout kills the child and starts a
fresh one. The child has an address-space limit; only JSON crosses the pipe.

Requests: `{"op": "equiv", "candidate", "reference", "tolerance"}`, `{"op": "rg_score", "spec", "candidate"}`
(a reasoning-gym generator's own `score_answer`) and `{"op": "proof", ...}` (see rlvr/graders/proof/check.py). Replies: `{"ok": true, ...}` or `{"ok": false, "error": "..."}`.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import threading
import time
from typing import Any

WORKER_MEMORY_BYTES = 2 * 1024**3
DEFAULT_TIMEOUT = 5.0
STARTUP_TIMEOUT = 60.0
MAX_LINE_BYTES = 1 << 20


class WorkerTimeout(Exception):
    pass


class WorkerCrash(Exception):
    pass


class SympyWorker:
    """Client side: one child process, restarted after a timeout or crash. Thread-safe (one request at a
    time goes through the pipe)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-m", "rlvr.graders.sympy_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
            close_fds=True,
        )
        self._process, self._buffer = process, b""
        ready = self._read_line(STARTUP_TIMEOUT)
        if ready.get("ready") is not True:
            self.close()
            raise WorkerCrash(f"math worker failed to start: {ready}")
        return process

    def _read_line(self, timeout: float) -> dict[str, Any]:
        process = self._process
        assert process is not None and process.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WorkerTimeout(f"no answer within {timeout:g}s")
                if not selector.select(remaining):
                    continue
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    raise WorkerCrash(f"math worker exited (code {process.poll()})")
                self._buffer += chunk
                if len(self._buffer) > MAX_LINE_BYTES:
                    raise WorkerCrash("math worker reply too large")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def call(self, request: dict[str, Any], timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The child's reply; raises WorkerTimeout / WorkerCrash (the child is then restarted lazily)."""
        with self._lock:
            return self._call(request, timeout)

    def _call(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._process if self._process and self._process.poll() is None else self._start()
        assert process.stdin is not None
        try:
            process.stdin.write((json.dumps(request) + "\n").encode())
            process.stdin.flush()
            return self._read_line(timeout)
        except (WorkerTimeout, WorkerCrash, OSError, ValueError) as exc:
            self.close()
            if isinstance(exc, WorkerTimeout | WorkerCrash):
                raise
            raise WorkerCrash(str(exc)) from exc

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# ---------------------------------------------------------------- child side


def _handle(request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    if op == "equiv":
        from rlvr.graders.math.equiv import Tolerance, equivalent

        tolerance = Tolerance.from_spec(request.get("tolerance"))
        equal, how = equivalent(str(request["candidate"]), str(request["reference"]), tolerance)
        return {"ok": True, "equal": equal, "how": how}
    if op == "rg_score":
        score = _reasoning_gym_score(request["spec"], str(request["candidate"]))
        return {"ok": True, "equal": score >= 1.0, "score": score, "how": "reasoning-gym score_answer"}
    if op == "proof":
        from rlvr.graders.proof.check import check_proof_request

        return {"ok": True, **check_proof_request(request)}
    return {"ok": False, "error": f"unknown op {op!r}"}


_RG_DATASETS: dict[tuple[str, int, int], Any] = {}


def _reasoning_gym_score(spec: dict[str, Any], candidate: str) -> float:
    import reasoning_gym

    key = (str(spec["dataset"]), int(spec["seed"]), int(spec["size"]))
    if key not in _RG_DATASETS:
        _RG_DATASETS[key] = reasoning_gym.create_dataset(key[0], size=key[2], seed=key[1])
    dataset = _RG_DATASETS[key]
    score = float(dataset.score_answer(candidate, dataset[int(spec["index"])]) or 0.0)
    return min(1.0, max(0.0, score)) if score == score else 0.0


def serve() -> None:
    import logging
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    logging.disable(logging.CRITICAL)
    sys.set_int_max_str_digits(5000)
    import rlvr.graders.math.equiv  # noqa: F401  (warm: sympy + math-verify imported before "ready")

    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            reply = _handle(json.loads(line))
        except MemoryError:
            reply = {"ok": False, "error": "out of memory"}
        except Exception as exc:  # any parse failure is a reply, never a dead worker
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    serve()
