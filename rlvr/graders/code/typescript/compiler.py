"""The warm TypeScript compiler process (js/compiler.js on the pinned `typescript`), from the trusted side.

One node process per grader, started on first use and kept: the standard library's declarations are
parsed once. `check_many` type-checks a batch (strict mode; CHUNK candidates per program on the node
side, each candidate its own module) and `build_many` transpiles candidates to JavaScript with op
counters inserted under a name drawn here. Requests are one JSON line each way (a check also reports its
progress, candidate by candidate, in lines of its own). A batch that times out keeps the candidates it
finished and blames the one it was checking; one that kills the process is split in halves, so one
pathological candidate cannot sink (or hold up) the others; a
candidate that still fails alone (a timeout, a crash, or an exception the process answers with, such
as the checker's stack overflowing), while a trivial source checks fine, gets a `timeout:types` /
`crash:types` flag, never a grading error (if the trivial source fails too, the machinery is at
fault and CompilerFailed is raised).
The process only ever parses and transforms candidate *text*; it never runs candidate code.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from rlvr.graders.code.typescript.toolchain import JS_DIR, check_toolchain

SECONDS_PER_FILE = 0.05  # ~8 ms each when warm; room for a loaded machine
MIN_SECONDS = 15.0
STARTUP_SECONDS = 60.0  # a fresh process parses the standard library once (a trivial check warms it)
TRIVIAL = "export const ok: number = 1;\n"


class CompilerFailed(RuntimeError):
    pass


@dataclass
class Progress:
    """What a check request reported before its answer: the results of the candidates it finished
    (by index in the request) and the candidate it was checking last, since when."""

    finished: dict[int, Any] = field(default_factory=dict)
    running: int | None = None
    running_since: float = 0.0

    def update(self, report: Any) -> None:
        if not isinstance(report, dict):
            return
        if isinstance(report.get("start"), int):
            self.running, self.running_since = report["start"], time.monotonic()
        elif isinstance(report.get("done"), int):
            self.finished[report["done"]] = report.get("result")
            self.running = None


@dataclass
class CheckResult:
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    any_count: int = 0  # `any` as the checker sees it (keywords and implicit)
    unchecked_casts: int = 0  # assertions out of `unknown`/`any` (`x as unknown as T`)
    flag: str | None = None  # the candidate's own text kept the checker from judging it


class TsCompiler:
    def __init__(self) -> None:
        self.node, self.modules = check_toolchain()
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ process
    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._buffer = b""
            self._process = subprocess.Popen(
                [self.node, "--max-old-space-size=2048", str(JS_DIR / "compiler.js"), str(self.modules)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )
            # warm it before any candidate's clock starts: start-up is not a candidate's time
            self._exchange(self._process, {"op": "check", "files": [{"text": TRIVIAL}]}, STARTUP_SECONDS)
        return self._process

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()

    def _request(
        self, request: dict[str, Any], timeout: float, progress: Progress | None = None
    ) -> dict[str, Any]:
        return self._exchange(self._start(), request, timeout, progress)

    def _exchange(
        self,
        process: subprocess.Popen[bytes],
        request: dict[str, Any],
        timeout: float,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
        except OSError as exc:
            self._kill()
            raise CompilerFailed(f"compiler process gone: {exc}") from exc
        deadline = time.monotonic() + timeout
        fd = process.stdout.fileno()
        while True:
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                    self._kill()
                    raise CompilerFailed("timeout")
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    self._kill()
                    raise CompilerFailed("crash")
                self._buffer += chunk
            line, _, self._buffer = self._buffer.partition(b"\n")
            answer = json.loads(line)
            if not (isinstance(answer, dict) and "progress" in answer):
                break
            if progress is not None:
                progress.update(answer["progress"])
        if "error" in answer:
            raise CompilerFailed(str(answer["error"])[:300])
        return answer

    def _batch(self, op: str, files: list[dict[str, Any]], extra: dict[str, Any]) -> list[Any]:
        """Results for `files`, splitting on failure; a single file that fails alone gets the
        failure's name ("timeout" or "crash") in place of a result.

        A crash is cheap to find again, so a crashed batch is split in halves. A batch that ran out
        of time keeps what it finished and blames the candidate it was checking (`_after_timeout`);
        halving re-ran the slow file to the limit at every level (log2 of the batch's size full
        limits, minutes, for every candidate of the batch)."""
        if not files:
            return []
        timeout = MIN_SECONDS + SECONDS_PER_FILE * len(files)
        progress = Progress()
        try:
            results = self._request({"op": op, "files": files, **extra}, timeout, progress)["results"]
            if len(results) != len(files):
                raise CompilerFailed("wrong number of results")
            return results
        except CompilerFailed as exc:
            ran_for = time.monotonic() - progress.running_since
            if (
                len(files) > 1
                and str(exc) == "timeout"
                and (progress.finished or progress.running is not None)
            ):
                return self._after_timeout(op, files, extra, progress, ran_for, exc)
            if len(files) == 1:
                # an exception the process answered with (e.g. the checker's stack overflowing on a
                # long inference chain) is, like a crash, this candidate's if a trivial source is fine
                reason = "timeout" if str(exc) == "timeout" else "crash"
                if not self._healthy(op):
                    raise  # the machinery's failure, not this candidate's
                return [reason]
            if str(exc) == "timeout":
                return [result for file in files for result in self._batch(op, [file], extra)]
            middle = len(files) // 2
            return self._batch(op, files[:middle], extra) + self._batch(op, files[middle:], extra)

    def _after_timeout(
        self,
        op: str,
        files: list[dict[str, Any]],
        extra: dict[str, Any],
        progress: Progress,
        ran_for: float,
        exc: CompilerFailed,
    ) -> list[Any]:
        """A batch that ran out of time: keep what it finished; the candidate it was checking, if that
        one alone ran past a single file's limit, is the culprit (a `timeout`, once a trivial source
        checks fine); the rest is checked again as a batch."""
        out: list[Any] = [None] * len(files)
        for index, result in progress.finished.items():
            if 0 <= index < len(files) and isinstance(result, dict):
                out[index] = result
        culprit = progress.running
        if culprit is not None and 0 <= culprit < len(files) and ran_for >= 0.9 * MIN_SECONDS:
            if not self._healthy(op):
                raise exc  # the machinery's failure, not this candidate's
            out[culprit] = "timeout"
        rest = [i for i, result in enumerate(out) if result is None]
        if len(rest) == len(files):  # nothing learned: one file at a time (see `_batch`)
            return [result for file in files for result in self._batch(op, [file], extra)]
        for index, result in zip(rest, self._batch(op, [files[i] for i in rest], extra), strict=True):
            out[index] = result
        return out

    def _healthy(self, op: str) -> bool:
        """Whether the compiler answers a trivial source (so a failure on one candidate is its own)."""
        try:
            return (
                len(
                    self._request({"op": op, "files": [{"text": TRIVIAL}], "counter": None}, MIN_SECONDS)[
                        "results"
                    ]
                )
                == 1
            )
        except CompilerFailed:
            return False

    # ------------------------------------------------------------------ API
    def check_many(self, sources: list[str]) -> list[CheckResult]:
        """Strict-mode diagnostics per source (comments must already be blanked by the caller)."""
        with self._lock:
            raw = self._batch("check", [{"text": s} for s in sources], {})
        out: list[CheckResult] = []
        for item in raw:
            if isinstance(item, str):
                out.append(CheckResult(flag=f"{item}:types"))
            else:
                out.append(
                    CheckResult(
                        list(item.get("diagnostics") or []),
                        int(item.get("any") or 0),
                        int(item.get("casts") or 0),
                    )
                )
        return out

    def build_many(self, sources: list[str], counter: str | None) -> list[str | None]:
        """JavaScript per source (with `counter()` calls inserted when a name is given); None where
        the compiler could not transform the text."""
        with self._lock:
            raw = self._batch("build", [{"text": s} for s in sources], {"counter": counter})
        return [item.get("js") if isinstance(item, dict) else None for item in raw]

    def close(self) -> None:
        with self._lock:
            self._kill()
