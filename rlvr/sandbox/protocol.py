"""Trusted-side decoding of a child's raw output stream (the zygote forwards it undecoded).

The stream is a sequence of frames (4-byte big-endian length + JSON). Every genuine message is
`[token, kind, payload]` with the run's random token, which candidate code never sees. A message with
a wrong token, a malformed frame or a malformed payload marks the run `protocol` (forged output).
A `denied` message names an operation the sandbox refused (one of `DENIED_OPS`); it can only add a
`sandbox:denied:<op>` flag to a verdict, never credit.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from rlvr.core.flags import DENIED_OPS

UNREPORTABLE_RESULTS = {
    "ResultTooDeep": "a result was nested more than 64 levels deep",
    "ResultTooLarge": "a result held an integer of more than about 4,200 digits",
    "ResultNotPlainData": "a result was not plain data (None, bool, int, float, str, list, tuple, dict, set)",
}
"""Outcome names the sandbox child reports for a return value it cannot send back (zygote.py names
them too); the first two are size limits (flag `oversized:result`)."""
OVERSIZED_RESULTS = ("ResultTooDeep", "ResultTooLarge")


def decode_child_stream(
    stream: bytes, token: str, status: str | None, exit_status: int | None, wall: float
) -> dict[str, Any]:
    """The run's summary: status ok / crash / load_error / protocol (or the zygote's timeout /
    output_limit), per-call results, op counts and peak memory in call order, the operations the
    sandbox refused (`denied`, in order), and a detail line."""
    results: dict[int, Any] = {}
    denied: list[str] = []
    counts: dict[int, Any] = {}
    peaks: dict[int, Any] = {}
    detail = ""
    done = loaded = False
    load_count: int | None = None
    offset = 0
    try:
        while offset + 4 <= len(stream):
            (size,) = struct.unpack(">I", stream[offset : offset + 4])
            body = stream[offset + 4 : offset + 4 + size]
            if len(body) < size:
                break  # cut short by a kill or the output cap: the status already says so
            offset += 4 + size
            message = json.loads(body)
            if type(message) is not list or len(message) != 3 or message[0] != token or not token:
                raise ValueError("forged or malformed message")
            kind, payload = message[1], message[2]
            if kind == "loaded":
                loaded = True
                if type(payload) is int and payload >= 0:  # traced runs: the module's load-time ops
                    load_count = payload
            elif kind == "load":
                detail = "load error: " + str(payload)[:200]
            elif kind == "result":
                index, result, count, peak = payload  # peak: traced memory high-water mark, bytes
                if type(index) is not int or not 0 <= index < 1 << 20:
                    raise ValueError("bad call index")
                results[index] = result
                counts[index] = count
                peaks[index] = peak
            elif kind == "denied":
                if type(payload) is not str or payload not in DENIED_OPS:
                    raise ValueError("unknown denied operation")
                if payload not in denied:
                    denied.append(payload)
            elif kind == "done":
                done = True
            else:
                raise ValueError("unknown message kind")
    except (ValueError, TypeError, struct.error, RecursionError):
        status = status or "protocol"
        detail = detail or "forged or malformed message from the candidate process"
    if status is None:
        status = "ok" if done else ("load_error" if detail else "crash")
    size = max(results) + 1 if results else 0
    return {
        "status": status,
        "loaded": loaded,
        "load_count": load_count,
        "results": [results.get(i) for i in range(size)],
        "counts": [counts.get(i) for i in range(size)],
        "peaks": [peaks.get(i) for i in range(size)],
        "exit": exit_status,
        "wall": wall,
        "detail": detail,
        "denied": denied,
    }


CALL_STATUSES = (None, "timeout", "output_limit")
STOP_REASONS = ("failure", "budget", "dirty")


def decode_forked_stream(
    stream: bytes, token: str, status: str | None, exit_status: int | None, wall: float, n_calls: int
) -> dict[str, Any]:
    """A forked-calls parent's stream (see zygote.py `serve_forked`): the parent's own summary (as
    `decode_child_stream`, for its load), plus `calls` — call index → that call's child's summary,
    decoded from the raw bytes the parent relayed after each `call` message, under the child's own
    token — and `stopped`: [next index, reason] when the parent stopped early, else None. The
    parent frames every relayed stream by its size, so a child can forge nothing outside its own."""
    calls: dict[int, dict[str, Any]] = {}
    stopped: list[Any] | None = None
    parent = bytearray()
    offset = 0
    forged = False
    try:
        while offset + 4 <= len(stream):
            (size,) = struct.unpack(">I", stream[offset : offset + 4])
            body = stream[offset + 4 : offset + 4 + size]
            if len(body) < size:
                break
            message = json.loads(body)
            if type(message) is not list or len(message) != 3 or message[0] != token or not token:
                raise ValueError("forged or malformed message")
            kind, payload = message[1], message[2]
            if kind not in ("call", "stopped"):  # the parent's own messages: decoded below
                parent += stream[offset : offset + 4 + size]
                offset += 4 + size
                continue
            offset += 4 + size
            if kind == "stopped":
                if type(payload) is not list or len(payload) != 2 or payload[1] not in STOP_REASONS:
                    raise ValueError("bad stop")
                if type(payload[0]) is not int or not 0 < payload[0] <= n_calls:
                    raise ValueError("bad stop index")
                stopped = payload
                continue
            index, call_status, call_exit, call_wall, call_token, length = payload
            if type(index) is not int or not 0 <= index < n_calls or index in calls:
                raise ValueError("bad call index")
            if call_status not in CALL_STATUSES or type(call_token) is not str or not call_token:
                raise ValueError("bad call summary")
            if type(length) is not int or not 0 <= length <= len(stream) - offset:
                raise ValueError("bad call size")
            child = stream[offset : offset + length]
            offset += length
            calls[index] = decode_child_stream(
                child,
                call_token,
                call_status,
                call_exit if type(call_exit) is int else None,
                float(call_wall) if type(call_wall) in (int, float) else 0.0,
            )
    except (ValueError, TypeError, struct.error, RecursionError):
        forged = True
    summary = decode_child_stream(bytes(parent), token, status, exit_status, wall)
    if forged:
        summary["status"] = status or "protocol"
        summary["detail"] = summary["detail"] or "forged or malformed message from the sandbox"
    summary["calls"] = calls
    summary["stopped"] = stopped
    return summary
