"""A killable sympy process: the math and proof graders parse untrusted answers here, never in-process.

sympy can hang (`9^{9^{9^9}}`) or exhaust memory on hostile input, and signal-based timeouts cannot interrupt
a long C-level big-integer operation. So the trusted grader talks to one long-lived child, waits with a
deadline, and on timeout kills the child and starts a fresh one. The child has an address-space limit.

Protocol, not stdout. Requests go to the child's stdin as JSON lines. Replies come back on a separate pipe
(a file descriptor the child receives at start; its stdout and stderr are /dev/null) as frames: a 4-byte
big-endian length, then JSON `[token, request_id, reply]`. The token is a random secret the child reads
from stdin before anything untrusted is parsed, so nothing an answer makes the child print (or write to
fd 1/2) can pose as a reply; a frame with a wrong token or request id is a protocol violation, reported as
`WorkerProtocolError`, and the child is killed.

Requests: `{"op": "rg_prepare", "spec"}` (build a generator's dataset before any answer is timed),
`{"op": "equiv", "candidate", "reference", "settings"}` (settings: rlvr/specs/math_settings.py;
a legacy `"tolerance"` key is still read), `{"op": "extract", "text"}` (math-verify's extraction of the
last stated answer in prose), `{"op": "rg_score", "spec", "candidate"}` (an allow-listed reasoning-gym
generator's own `score_answer`), and the ops a grader adds when it starts its worker (`handlers`: the
proof grader adds `{"op": "proof", ...}`, see rlvr/graders/proof/check.py).
Replies: `{"ok": true, ...}` or `{"ok": false, "error": "...", "kind": "memory" | "recursion" | "exception"}`.
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import struct
import subprocess
import sys
import threading
import time
from typing import Any

WORKER_MEMORY_BYTES = 2 * 1024**3
DEFAULT_TIMEOUT = 5.0
STARTUP_TIMEOUT = 60.0
MAX_FRAME_BYTES = 1 << 20
MAX_REQUEST_BYTES = 1 << 20


class WorkerTimeout(Exception):
    pass


class WorkerCrash(Exception):
    pass


class WorkerProtocolError(WorkerCrash):
    """The reply channel carried something that is not a genuine reply (forged or malformed)."""


class SympyWorker:
    """Client side: one child process, restarted after a timeout, crash or protocol violation.
    Thread-safe (one request at a time). `handlers` adds ops, {op: "module:function"} (the function
    takes the request and returns the reply's fields); the child imports them, so the family that owns
    an op names it and this module depends on no other family. `command` replaces the child's command
    line (tests only)."""

    def __init__(self, command: list[str] | None = None, handlers: dict[str, str] | None = None) -> None:
        ops = [f"{op}={target}" for op, target in sorted((handlers or {}).items())]
        self._command = command or [sys.executable, "-m", "rlvr.graders.math.worker", *ops]
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: int | None = None
        self._buffer = b""
        self._token = ""
        self._next_id = 0
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        read_end, write_end = os.pipe()
        try:
            process = subprocess.Popen(
                [*self._command, str(write_end)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                bufsize=0,
                close_fds=True,
                pass_fds=(write_end,),
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        self._process, self._replies, self._buffer = process, read_end, b""
        self._token, self._next_id = secrets.token_hex(16), 0
        assert process.stdin is not None
        try:
            process.stdin.write((self._token + "\n").encode())
            process.stdin.flush()
            ready = self._read_reply(0, STARTUP_TIMEOUT)
        except (WorkerTimeout, WorkerCrash, OSError) as exc:
            self.close()
            raise WorkerCrash(f"math worker failed to start: {exc}") from exc
        if ready.get("ready") is not True:
            self.close()
            raise WorkerCrash(f"math worker failed to start: {ready}")
        return process

    def _read_exactly(self, size: int, deadline: float) -> bytes:
        assert self._replies is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._replies, selectors.EVENT_READ)
            while len(self._buffer) < size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WorkerTimeout("no reply in time")
                if not selector.select(remaining):
                    continue
                chunk = os.read(self._replies, 65536)
                if not chunk:
                    code = self._process.poll() if self._process else None
                    raise WorkerCrash(f"math worker exited (code {code})")
                self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _read_reply(self, request_id: int, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        (size,) = struct.unpack(">I", self._read_exactly(4, deadline))
        if size > MAX_FRAME_BYTES:
            raise WorkerProtocolError(f"reply frame of {size} bytes")
        try:
            message = json.loads(self._read_exactly(size, deadline))
        except ValueError as exc:
            raise WorkerProtocolError("malformed reply frame") from exc
        if (
            type(message) is not list
            or len(message) != 3
            or not secrets.compare_digest(str(message[0]), self._token)
            or message[1] != request_id
            or type(message[2]) is not dict
        ):
            raise WorkerProtocolError("forged or out-of-order reply")
        return message[2]

    def call(self, request: dict[str, Any], timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The child's reply; raises WorkerTimeout / WorkerCrash / WorkerProtocolError (the child is then
        killed and restarted lazily on the next call)."""
        with self._lock:
            return self._call(request, timeout)

    def _call(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._process if self._process and self._process.poll() is None else self._start()
        assert process.stdin is not None
        self._next_id += 1
        line = json.dumps({**request, "id": self._next_id}) + "\n"
        if len(line) > MAX_REQUEST_BYTES:
            raise ValueError(f"request of {len(line)} bytes is larger than {MAX_REQUEST_BYTES}")
        try:
            process.stdin.write(line.encode())
            process.stdin.flush()
            return self._read_reply(self._next_id, timeout)
        except (WorkerTimeout, WorkerCrash, OSError, ValueError) as exc:
            self.close()
            if isinstance(exc, WorkerTimeout | WorkerCrash):
                raise
            raise WorkerCrash(str(exc)) from exc

    def close(self) -> None:
        process, self._process = self._process, None
        replies, self._replies = self._replies, None
        if replies is not None:
            os.close(replies)
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdin is not None:
            process.stdin.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# ---------------------------------------------------------------- child side


_HANDLERS: dict[str, Any] = {}  # op -> function, the ops the client added (`SympyWorker(handlers=)`)


def _handle(request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    if isinstance(op, str) and op in _HANDLERS:
        return {"ok": True, **_HANDLERS[op](request)}
    if op == "equiv":
        from rlvr.graders.math.equiv import equivalent, of_answer_kind
        from rlvr.specs.math_settings import MathSettings

        values = dict(request.get("settings") or {})
        if request.get("tolerance") is not None:
            values.setdefault("tolerance", request["tolerance"])
        settings = MathSettings.from_mapping(values)
        candidate, reference = str(request["candidate"]), str(request["reference"])
        equal, how = equivalent(candidate, reference, settings)
        return {
            "ok": True,
            "equal": equal,
            "how": how,
            "of_kind": equal or of_answer_kind(candidate, reference),
        }
    if op == "extract":
        from rlvr.graders.math.equiv import extract_stated_answer

        return {"ok": True, "answer": extract_stated_answer(str(request["text"]))}
    if op == "rg_prepare":  # build the generator's dataset (slow the first time) before any answer is timed
        _reasoning_gym_dataset(request["spec"])
        return {"ok": True}
    if op == "rg_score":
        score = _reasoning_gym_score(request["spec"], str(request["candidate"]))
        return {"ok": True, "equal": score >= 1.0, "score": score, "how": "reasoning-gym score_answer"}
    return {"ok": False, "error": f"unknown op {op!r}", "kind": "request"}


_RG_DATASETS: dict[tuple[str, int, int], Any] = {}


def _reasoning_gym_dataset(spec: dict[str, Any]) -> Any:
    from rlvr.specs.reasoning_gym_scorers import scorer_problem

    problem = scorer_problem(spec)
    if problem:
        raise PermissionError(f"reasoning_gym scorer refused: {problem}")
    import reasoning_gym

    key = (str(spec["dataset"]), int(spec["seed"]), int(spec["size"]))
    if key not in _RG_DATASETS:
        _RG_DATASETS[key] = reasoning_gym.create_dataset(key[0], size=key[2], seed=key[1])
    return _RG_DATASETS[key]


def _reasoning_gym_score(spec: dict[str, Any], candidate: str) -> float:
    dataset = _reasoning_gym_dataset(spec)
    score = float(dataset.score_answer(candidate, dataset[int(spec["index"])]) or 0.0)
    return min(1.0, max(0.0, score)) if score == score else 0.0


def _send(fd: int, token: str, request_id: Any, reply: dict[str, Any]) -> None:
    body = json.dumps([token, request_id, reply]).encode()
    if len(body) > MAX_FRAME_BYTES:
        body = json.dumps(
            [token, request_id, {"ok": False, "error": "reply too large", "kind": "size"}]
        ).encode()
    data = struct.pack(">I", len(body)) + body
    while data:
        data = data[os.write(fd, data) :]


def _silence_standard_streams() -> None:
    """fd 1 and 2 go to /dev/null: whatever parsing prints goes nowhere (replies have their own pipe)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (lives as long as the process)
    sys.stderr = sys.stdout


def _load_handlers(specs: list[str]) -> None:
    import importlib

    for spec in specs:
        op, _, target = spec.partition("=")
        module_name, _, function = target.partition(":")
        _HANDLERS[op] = getattr(importlib.import_module(module_name), function)


def serve(reply_fd: int, handlers: list[str] | None = None) -> None:
    import logging
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    logging.disable(logging.CRITICAL)
    sys.set_int_max_str_digits(5000)
    _silence_standard_streams()
    token = sys.stdin.readline().strip()
    import rlvr.graders.math.equiv  # noqa: F401  (warm: sympy + math-verify imported before "ready")

    _load_handlers(handlers or [])

    _send(reply_fd, token, 0, {"ready": True})
    for line in sys.stdin:
        request_id: Any = None
        try:
            request = json.loads(line)
            request_id = request.pop("id", None)
            reply = _handle(request)
        except MemoryError:
            reply = {"ok": False, "error": "out of memory", "kind": "memory"}
        except RecursionError:
            reply = {"ok": False, "error": "nested too deeply", "kind": "recursion"}
        except Exception as exc:  # any parse failure is a reply, never a dead worker
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500], "kind": "exception"}
        _send(reply_fd, token, request_id, reply)


if __name__ == "__main__":
    serve(int(sys.argv[-1]), sys.argv[1:-1])  # [op=module:function ...] reply_fd
