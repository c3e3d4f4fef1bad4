"""An OpenRLHF remote reward server (`rlvr serve`): FastAPI in front of a batching grader.

Protocol (OpenRLHF's `--remote_rm_url`):

    POST /get_reward  {"query": [str], "prompts": [str], "labels": [str]}
        query[i] is prompt + response; labels[i] is the rlvr task id; the graded completion is
        query[i] with its prompts[i] prefix removed.
    ->  200 {"rewards": [float], "scores": [float], "extra_logs": {name: [float]}}
    GET /health -> {"status": "ok", "pack": ..., ...}

`rewards` and `scores` are both the verdict reward in [0, 1]; `extra_logs` carries per-sample
`passed`, `grading_error` and one score per reward layer. Bad input is a 4xx with a message:
413 for a body or batch over the limits, 422 for malformed JSON, non-string items, mismatched
lengths, a query that does not start with its prompt, or unknown task ids; 503 (with
Retry-After) when the server already holds `max_concurrent_requests` requests. Concurrent
requests are merged into shared `grade_many` batches by one grading thread.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from rlvr.core.pack import UnknownTaskError
from rlvr.graders.base import Grader
from rlvr.integrations.batcher import MicroBatcher
from rlvr.integrations.scalars import layer_names, verdict_scalars


@dataclass(frozen=True)
class ServerLimits:
    max_items: int = 1024
    max_body_bytes: int = 16 << 20
    max_concurrent_requests: int = 16
    max_batch: int = 256


class RewardRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: list[StrictStr]
    prompts: list[StrictStr]
    labels: list[StrictStr]


class BadRequest(Exception):
    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.details = {"error": message, **details}


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BadRequest(413, f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest(413, f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_reward_request(body: bytes, grader: Grader, limits: ServerLimits) -> tuple[list[str], list[str]]:
    """Validate a /get_reward body; returns (task ids, completions) or raises BadRequest."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(422, f"body is not valid JSON: {exc}") from None
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
    for index, (query, prompt) in enumerate(zip(request.query, request.prompts, strict=True)):
        if not query.startswith(prompt):
            raise BadRequest(422, f"query[{index}] does not start with prompts[{index}]")
        completions.append(query[len(prompt) :])
    unknown = []
    for index, task_id in enumerate(request.labels):
        try:
            grader.pack.get(task_id)
        except UnknownTaskError:
            unknown.append({"index": index, "label": task_id})
    if unknown:
        raise BadRequest(
            422,
            f"{len(unknown)} labels are not task ids of pack {grader.pack.name!r}",
            unknown=unknown[:10],
        )
    return list(request.labels), completions


def create_app(grader: Grader, limits: ServerLimits | None = None, *, executor: str = "local") -> FastAPI:
    """The reward server app. It owns `grader` and closes it on shutdown."""
    limits = limits or ServerLimits()
    batcher = MicroBatcher(grader, max_batch=limits.max_batch)
    layers = layer_names(grader)
    state = {"active": 0, "served": 0}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await asyncio.to_thread(batcher.close)

    app = FastAPI(title="rlvr reward server", lifespan=lifespan)

    @app.exception_handler(BadRequest)
    async def bad_request(_request: Request, exc: BadRequest) -> JSONResponse:
        return JSONResponse(exc.details, status_code=exc.status)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "pack": grader.pack.name,
            "family": grader.pack.family,
            "tasks": len(grader.pack.all_tasks()),
            "executor": executor,
            "active_requests": state["active"],
            "requests_served": state["served"],
            "batches_graded": batcher.batches_graded,
            "items_graded": batcher.items_graded,
        }

    @app.post("/get_reward")
    async def get_reward(request: Request) -> JSONResponse:
        if state["active"] >= limits.max_concurrent_requests:
            return JSONResponse(
                {"error": f"server busy: {state['active']} requests in progress; retry later"},
                status_code=503,
                headers={"Retry-After": "1"},
            )
        state["active"] += 1
        try:
            body = await _read_body(request, limits.max_body_bytes)
            task_ids, completions = parse_reward_request(body, grader, limits)
            verdicts = await asyncio.wrap_future(batcher.submit(task_ids, completions)) if task_ids else []
        finally:
            state["active"] -= 1
        state["served"] += 1
        rewards = [float(v.reward) for v in verdicts]
        scalars = [verdict_scalars(v, layers) for v in verdicts]
        keys = [k for k in (scalars[0] if scalars else {}) if k != "score"]
        extra_logs = {key: [row[key] for row in scalars] for key in keys}
        return JSONResponse({"rewards": rewards, "scores": list(rewards), "extra_logs": extra_logs})

    return app
