"""`rlvr serve` (OpenRLHF remote reward protocol) on a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
text_string_to_metric_families = pytest.importorskip(
    "prometheus_client.parser"
).text_string_to_metric_families

from rlvr.core.pack import StaticPack  # noqa: E402
from rlvr.core.types import Task, Verdict  # noqa: E402
from rlvr.graders.base import Grader  # noqa: E402
from rlvr.integrations.openrlhf import ServerLimits, create_app  # noqa: E402

SUBSET = [f"HumanEval/{i}" for i in range(0, 160, 8)]
TEMPLATE = "<|user|>\n{prompt}<|assistant|>\n"
MAX_ITEMS = 50


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(*options: str) -> Iterator[str]:
    """`rlvr serve --pack humaneval OPTIONS` on a free loopback port, until the block ends."""
    port = free_port()
    command = [sys.executable, "-m", "rlvr", "serve", "--pack", "humaneval", "--host", "127.0.0.1"]
    command += ["--port", str(port), *options]
    log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: nobody reads it while serving
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"rlvr serve exited: {log.read()[-4000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("rlvr serve did not come up within 90 s")
            time.sleep(0.3)
        yield url
    finally:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving("--jobs", "1", "--max-items", str(MAX_ITEMS), "--max-body-mb", "0.5") as url:
        yield url


@pytest.fixture(scope="module")
def cases(humaneval_pack, humaneval_grader):
    tasks = [humaneval_pack.get(task_id) for task_id in SUBSET]
    ids = [t.id for t in tasks] * 2
    prompts = [TEMPLATE.format(prompt=t.prompt) for t in tasks] * 2
    completions = [t.hidden["reference"] for t in tasks] + [t.prompt + "    return None\n" for t in tasks]
    verdicts = humaneval_grader.grade_many(ids, completions)
    assert all(v.passed for v in verdicts[: len(tasks)]) and not any(v.passed for v in verdicts[len(tasks) :])
    return ids, prompts, completions, verdicts


def post(url: str, body: object) -> httpx.Response:
    return httpx.post(f"{url}/get_reward", json=body, timeout=120)


def test_health(server):
    response = httpx.get(f"{server}/health", timeout=10)
    assert response.status_code == 200
    health = response.json()
    assert health["status"] == "ok" and health["pack"] == "humaneval" and health["tasks"] == 164
    assert health["queue"]["capacity_items"] == 20_000 and health["queue"]["items"] >= 0
    assert health["workers"] == 1  # --jobs 1
    sandbox = health["sandbox"]
    assert sandbox["backend"] == "local" and sandbox["alive"] == 1
    # "degraded" only where the machine has no namespaces for the sandbox (flagged, never hidden)
    assert sandbox["state"] == ("ok" if sandbox["isolation"] == "namespaces" else "degraded")


def test_metrics_after_grading(server, cases):
    ids, prompts, completions, _ = cases
    queries = [p + c for p, c in zip(prompts[:4], completions[:4], strict=True)]
    assert post(server, {"query": queries, "prompts": prompts[:4], "labels": ids[:4]}).status_code == 200
    text = httpx.get(f"{server}/metrics", timeout=10).text
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert families["rlvr_items_graded"].samples[0].value > 0
    assert families["rlvr_request_duration_seconds"].type == "histogram"
    outcomes = {
        s.labels["outcome"]: s.value for s in families["rlvr_verdicts"].samples if s.name.endswith("_total")
    }
    assert outcomes.get("passed", 0) >= 2


def test_rewards_match_local_grading(server, cases):
    ids, prompts, completions, verdicts = cases
    queries = [p + c for p, c in zip(prompts, completions, strict=True)]
    response = post(server, {"query": queries, "prompts": prompts, "labels": ids})
    assert response.status_code == 200, response.text
    body = response.json()
    expected = [v.reward for v in verdicts]
    assert body["rewards"] == pytest.approx(expected, abs=1e-9)
    assert body["scores"] == pytest.approx(expected, abs=1e-9)
    logs = body["extra_logs"]
    assert logs["passed"] == [float(v.passed) for v in verdicts]
    assert logs["grading_error"] == [0.0] * len(ids)
    assert logs["tests"] == pytest.approx([v.components["tests"].score for v in verdicts])
    assert all(len(values) == len(ids) for values in logs.values())


def test_concurrent_requests_are_all_answered_correctly(server, cases):
    ids, prompts, completions, verdicts = cases

    def one(start: int) -> list[float]:
        part = slice(start, start + 10)
        queries = [p + c for p, c in zip(prompts[part], completions[part], strict=True)]
        response = post(server, {"query": queries, "prompts": prompts[part], "labels": ids[part]})
        assert response.status_code == 200, response.text
        return response.json()["rewards"]

    with ThreadPoolExecutor(max_workers=4) as pool:
        rewards = [r for part in pool.map(one, range(0, 40, 10)) for r in part]
    assert rewards == pytest.approx([v.reward for v in verdicts], abs=1e-9)


def test_empty_batch(server):
    response = post(server, {"query": [], "prompts": [], "labels": []})
    assert response.status_code == 200
    assert response.json() == {"rewards": [], "scores": [], "extra_logs": {}}


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"query": ["a", "b"], "prompts": ["a"], "labels": ["HumanEval/0"]}, 422, "same length"),
        ({"query": [3], "prompts": ["a"], "labels": ["HumanEval/0"]}, 422, "query.0"),
        ({"query": ["ax"], "prompts": ["a"], "labels": [None]}, 422, "labels.0"),
        ({"query": ["ax"], "labels": ["HumanEval/0"]}, 422, "prompts"),
        ([1, 2], 422, "expected"),
        (
            {
                "query": ["x"] * (MAX_ITEMS + 1),
                "prompts": [""] * (MAX_ITEMS + 1),
                "labels": ["HumanEval/0"] * (MAX_ITEMS + 1),
            },
            413,
            "limit",
        ),
        ({"query": ["x" * 600_000], "prompts": [""], "labels": ["HumanEval/0"]}, 413, "limit"),
    ],
)
def test_bad_requests_get_clear_4xx(server, body, status, needle):
    response = post(server, body)
    assert response.status_code == status, response.text
    assert needle in json.dumps(response.json())


def test_invalid_json_is_422(server):
    response = httpx.post(f"{server}/get_reward", content=b"{not json", timeout=30)
    assert response.status_code == 422
    assert "not valid JSON" in response.json()["error"]


def test_a_bad_item_gets_its_own_error_and_the_rest_is_graded(server):
    body = {
        "query": ["p1", "p2", "xq"],
        "prompts": ["p", "p", "p"],
        "labels": ["HumanEval/0", "nope", "HumanEval/0"],
    }
    response = post(server, body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert [e["index"] for e in answer["errors"]] == [1, 2]
    assert (
        "not a task id" in answer["errors"][0]["error"] and "does not start" in answer["errors"][1]["error"]
    )
    assert answer["rewards"][1] == answer["rewards"][2] == 0.0
    assert answer["extra_logs"]["grading_error"] == [0.0, 1.0, 1.0]  # item 0 was graded, not refused


@pytest.mark.slow  # a second Ray cluster start; the queue is covered locally
def test_executor_ray_serves_through_the_queue(cases):
    pytest.importorskip("ray")
    ids, prompts, completions, verdicts = cases
    with serving("--executor", "ray", "--ray-workers", "1", "--jobs", "1") as url:

        def one(start: int) -> list[float]:
            part = slice(start, start + 10)
            queries = [p + c for p, c in zip(prompts[part], completions[part], strict=True)]
            response = post(url, {"query": queries, "prompts": prompts[part], "labels": ids[part]})
            assert response.status_code == 200, response.text
            return response.json()["rewards"]

        with ThreadPoolExecutor(max_workers=4) as pool:
            rewards = [r for part in pool.map(one, range(0, 40, 10)) for r in part]
        health = httpx.get(f"{url}/health", timeout=10).json()
    assert rewards == pytest.approx([v.reward for v in verdicts], abs=1e-9)
    assert health["executor"] == "ray" and health["sandbox"]["backend"] == "ray"
    assert health["workers"] == 1 and health["sandbox"]["alive"] == 1
    assert health["items_graded"] == len(ids) and health["queue"]["items"] == 0


# ---------------------------------------------------------------------- concurrency limit (in process)
class _GatedGrader(Grader):
    def __init__(self, pack, gate: threading.Event) -> None:
        super().__init__(pack)
        self.gate = gate

    def grade_tasks(self, tasks, completions):
        self.gate.wait(timeout=20)
        return [Verdict(t.id, reward=0.5, passed=True) for t in tasks]


def test_requests_over_the_concurrency_limit_get_503():
    pack = StaticPack("toy", [Task(id="a", prompt="p")])
    gate = threading.Event()
    app = create_app(_GatedGrader(pack, gate), ServerLimits(max_concurrent_requests=1))
    body = {"query": ["px"], "prompts": ["p"], "labels": ["a"]}

    async def scenario() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            first = asyncio.create_task(client.post("/get_reward", json=body))
            while (await client.get("/health")).json()["active_requests"] < 1:
                await asyncio.sleep(0.01)
            second = await client.post("/get_reward", json=body)
            gate.set()
            return await first, second

    first, second = asyncio.run(scenario())
    assert second.status_code == 503 and second.headers["retry-after"] == "1"
    assert first.status_code == 200 and first.json()["rewards"] == [0.5]
