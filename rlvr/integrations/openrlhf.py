"""An OpenRLHF remote reward server (`rlvr serve`): FastAPI in front of a queued, batching grader.

Protocol (OpenRLHF's `--remote_rm_url`):

    POST /get_reward  {"query": [str], "prompts": [str], "labels": [str]}
        query[i] is prompt + response; labels[i] is the rlvr task id; the graded completion is
        query[i] with its prompts[i] prefix removed.
    ->  200 {"rewards": [float], "scores": [float], "extra_logs": {name: [float]}}
    GET /health  -> queue depth, items/s over the last minute, workers and sandbox state (JSON)
    GET /metrics -> the same and more in Prometheus text format

`rewards` and `scores` are both the verdict reward in [0, 1]; `extra_logs` carries per-sample
`passed`, `grading_error` and one score per reward layer.

Admission is by work: a request's items wait in one first-come-first-served queue bounded in
items (`ServerLimits.queue_items`), and items of concurrent requests are merged into shared
`grade_many` batches. Items seen before are answered from a verdict cache, so a request whose
items are all cached answers at once, even when the queue is full. A client that disconnects
frees its items that have not started. An optional `X-Deadline-Seconds` header (seconds from
receipt) bounds the wait: at the deadline the request is answered 504 and its unstarted items
are dropped (items already being graded finish and are cached).

Bad input is a 4xx with a message: 413 for a body or batch over the limits (or more items than
the whole queue holds), 422 for malformed JSON (also nesting too deep for the parser or an integer
beyond Python's digit limit), non-string items or mismatched lengths, 400 for a malformed deadline
header. A bad *item* (an unknown task id, a query that does not start with its prompt) does not
reject the batch: it gets reward 0 with `grading_error` 1, the others are graded, and the answer
lists it under `errors` (`{"index", "label", "error"}`);
503 with `Retry-After` (the queue's estimated drain time) when the queue cannot take the items
or `max_concurrent_requests` requests are already held.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError
from starlette.requests import ClientDisconnect

from rlvr.core.jsonl import json_problem
from rlvr.core.pack import UnknownTaskError
from rlvr.core.types import Verdict
from rlvr.graders.base import Grader
from rlvr.integrations.batcher import MicroBatcher, QueueFull, RequestTooLarge
from rlvr.integrations.grader_state import concurrent_batches, describe_workers
from rlvr.integrations.scalars import layer_names, verdict_scalars
from rlvr.integrations.serve_metrics import ServeMetrics

DEADLINE_HEADER = "x-deadline-seconds"
CLIENT_CLOSED_REQUEST = 499  # recorded in metrics only: the client is gone


@dataclass(frozen=True)
class ServerLimits:
    """`max_items` per request; `max_body_bytes` per request body; `max_concurrent_requests` held
    at once (being received or waiting; it bounds the memory of bodies in flight); `max_batch`
    items per grading batch; `queue_items` items waiting; `cache_items` verdicts remembered;
    `grading_threads` batches graded at once (None: two for a local code grader, else one; more
    than one only for a local code grader)."""

    max_items: int = 1024
    max_body_bytes: int = 16 << 20
    max_concurrent_requests: int = 512
    max_batch: int = 256
    queue_items: int = 20_000
    cache_items: int = 65_536
    grading_threads: int | None = None  # batches graded at once; None: what the grader allows


class RewardRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: list[StrictStr]
    prompts: list[StrictStr]
    labels: list[StrictStr]


class BadRequest(Exception):
    """A request refused with a 4xx status and a message."""

    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.details = {"error": message, **details}


class ClientGone(Exception):
    """The client closed its connection before the answer."""


class DeadlinePassed(Exception):
    """The request's X-Deadline-Seconds passed before its verdicts were ready."""


def retry_after(seconds: float) -> dict[str, str]:
    """A Retry-After header (whole seconds, at least 1) for an estimated wait."""
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


def parse_deadline(request: Request) -> float | None:
    """Seconds the client will wait (`X-Deadline-Seconds`), or None; raises BadRequest if malformed."""
    raw = request.headers.get(DEADLINE_HEADER)
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise BadRequest(400, f"X-Deadline-Seconds must be a positive number of seconds, got {raw!r}")
    return seconds


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BadRequest(413, f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    try:
        stream = [chunk async for chunk in _limited(request, limit)]
    except ClientDisconnect:
        raise ClientGone from None
    return b"".join(stream)


async def _limited(request: Request, limit: int) -> AsyncIterator[bytes]:
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest(413, f"request body exceeds the limit of {limit} bytes")
        yield chunk


def parse_reward_request(
    body: bytes, grader: Grader, limits: ServerLimits
) -> tuple[list[str], list[str], dict[int, str]]:
    """Validate a /get_reward body; returns (task ids, completions, errors of bad items by index) or
    raises BadRequest for a body that is wrong as a whole."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        # besides bad syntax: an integer beyond Python's digit limit, or nesting beyond the parser's
        raise BadRequest(422, f"body is not valid JSON: {json_problem(exc)}") from None
    try:
        request = RewardRequest.model_validate(data)
    except ValidationError as exc:
        problems = [
            {"field": ".".join(str(part) for part in error["loc"]), "message": error["msg"]}
            for error in exc.errors()[:10]
        ]
        raise BadRequest(
            422, "expected {query: [str], prompts: [str], labels: [str]}", problems=problems
        ) from None
    sizes = {"query": len(request.query), "prompts": len(request.prompts), "labels": len(request.labels)}
    if len(set(sizes.values())) != 1:
        raise BadRequest(422, f"query, prompts and labels must have the same length, got {sizes}")
    if sizes["query"] > limits.max_items:
        raise BadRequest(413, f"{sizes['query']} items exceed the limit of {limits.max_items} per request")
    completions = []
    errors: dict[int, str] = {}
    for index, (query, prompt) in enumerate(zip(request.query, request.prompts, strict=True)):
        if not query.startswith(prompt):
            errors[index] = f"query[{index}] does not start with prompts[{index}]"
        completions.append(query[len(prompt) :] if query.startswith(prompt) else "")
    for index, task_id in enumerate(request.labels):
        try:
            grader.pack.get(task_id)
        except UnknownTaskError:
            errors.setdefault(
                index,
                f"label {task_id!r} is not a task id of pack {grader.pack.name!r} (labels are task ids)",
            )
    return list(request.labels), completions, errors


def reward_body(verdicts: list[Verdict], layers: list[str]) -> dict[str, Any]:
    """The /get_reward answer for `verdicts`."""
    rewards = [float(v.reward) for v in verdicts]
    scalars = [verdict_scalars(v, layers) for v in verdicts]
    keys = [k for k in (scalars[0] if scalars else {}) if k != "score"]
    extra_logs = {key: [row[key] for row in scalars] for key in keys}
    return {"rewards": rewards, "scores": list(rewards), "extra_logs": extra_logs}


async def _client_disconnected(request: Request) -> None:
    """Returns when the client closes its connection (its body has been read by then)."""
    while True:
        try:
            message = await request.receive()
        except Exception:  # the connection broke: as good as gone
            return
        if message["type"] == "http.disconnect":
            return


async def wait_for_verdicts(
    request: Request, future: Future[list[Verdict]], timeout: float | None
) -> list[Verdict]:
    """The verdicts, unless the client disconnects (`ClientGone`) or `timeout` seconds pass
    (`DeadlinePassed`) first; either way the request's items that have not started are freed."""
    if future.done():
        return future.result()
    answer = asyncio.wrap_future(future)
    gone = asyncio.ensure_future(_client_disconnected(request))
    try:
        done, _ = await asyncio.wait({answer, gone}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if answer in done:
        return answer.result()
    if not future.cancel() and future.done():
        return future.result()  # finished just now
    if gone in done:
        raise ClientGone
    raise DeadlinePassed(f"the deadline of {timeout:.3g} s passed before every item was graded")


def create_app(grader: Grader, limits: ServerLimits | None = None, *, executor: str = "local") -> FastAPI:
    """The reward server app. It owns `grader` and closes it on shutdown."""
    limits = limits or ServerLimits()
    threads = limits.grading_threads or concurrent_batches(grader)
    if threads > 1 and concurrent_batches(grader) == 1:
        raise ValueError(
            f"{threads} grading threads need a grader that may grade batches concurrently (a local code "
            f"grader); this {type(grader).__name__} grades one batch at a time"
        )
    batcher = MicroBatcher(
        grader,
        max_batch=limits.max_batch,
        capacity_items=limits.queue_items,
        cache_items=limits.cache_items,
        threads=threads,
    )
    layers = layer_names(grader)
    state = {"active": 0, "served": 0}
    metrics = ServeMetrics(batcher, lambda: state["active"])

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await asyncio.to_thread(batcher.close)

    app = FastAPI(title="rlvr reward server", lifespan=lifespan)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        stats = batcher.stats()
        workers = describe_workers(grader)
        return {
            "status": "ok",
            "pack": grader.pack.name,
            "family": grader.pack.family,
            "tasks": len(grader.pack.all_tasks()),
            "executor": executor,
            "queue": {
                "items": stats.queued_items,
                "requests": stats.queued_requests,
                "grading_items": stats.grading_items,
                "capacity_items": stats.capacity_items,
                "drain_seconds": round(stats.drain_seconds, 3),
            },
            "items_per_second_last_minute": round(stats.items_per_second, 3),
            "workers": workers["workers"],
            "grading_threads": len(batcher.threads),
            "sandbox": workers,
            "active_requests": state["active"],
            "requests_served": state["served"],
            "batches_graded": stats.batches_graded,
            "items_graded": stats.items_graded,
            "cache_hits": stats.cache_hits,
        }

    @app.get("/metrics")
    async def prometheus_metrics() -> Response:
        body, content_type = metrics.render()
        return Response(body, headers={"Content-Type": content_type})

    async def grade_request(request: Request) -> JSONResponse:
        received = time.monotonic()
        deadline = parse_deadline(request)
        body = await _read_body(request, limits.max_body_bytes)
        task_ids, completions, errors = parse_reward_request(body, grader, limits)
        good = [i for i in range(len(task_ids)) if i not in errors]
        graded: list[Verdict] = []
        if good:
            try:
                future = batcher.submit([task_ids[i] for i in good], [completions[i] for i in good])
            except RequestTooLarge as exc:
                raise BadRequest(413, str(exc)) from None
            timeout = None if deadline is None else max(0.0, received + deadline - time.monotonic())
            graded = await wait_for_verdicts(request, future, timeout)
        by_index = dict(zip(good, graded, strict=True))
        verdicts = [
            by_index[i] if i in by_index else Verdict.failure(task_ids[i], errors[i])
            for i in range(len(task_ids))
        ]
        state["served"] += 1
        metrics.observe_verdicts(verdicts)
        answer = reward_body(verdicts, layers)
        if errors:
            answer["errors"] = [
                {"index": i, "label": task_ids[i], "error": message} for i, message in sorted(errors.items())
            ]
        return JSONResponse(answer)

    async def answer(request: Request) -> Response:
        if state["active"] >= limits.max_concurrent_requests:
            message = f"server busy: {state['active']} requests held, the limit; retry later"
            return JSONResponse({"error": message}, 503, headers=retry_after(batcher.drain_seconds()))
        state["active"] += 1
        try:
            return await grade_request(request)
        except BadRequest as exc:
            return JSONResponse(exc.details, exc.status)
        except QueueFull as exc:
            return JSONResponse({"error": str(exc)}, 503, headers=retry_after(exc.retry_after))
        except DeadlinePassed as exc:
            return JSONResponse({"error": str(exc)}, 504)
        except ClientGone:
            return Response(status_code=CLIENT_CLOSED_REQUEST)
        finally:
            state["active"] -= 1

    @app.post("/get_reward")
    async def get_reward(request: Request) -> Response:
        started = time.perf_counter()
        response = await answer(request)
        metrics.observe_request(response.status_code, time.perf_counter() - started)
        return response

    return app
