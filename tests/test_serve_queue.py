"""`rlvr serve`'s admission by work: the item-bounded queue, merging across requests, the verdict
cache, cancellation (disconnect, deadline), /health and /metrics — with a gated toy grader, so every
state of the queue can be held still and looked at."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
prometheus_parser = pytest.importorskip("prometheus_client.parser")

from rlvr.core.pack import StaticPack  # noqa: E402
from rlvr.core.types import Task, Verdict  # noqa: E402
from rlvr.graders.base import Grader  # noqa: E402
from rlvr.integrations.batcher import MicroBatcher, QueueFull, RequestTooLarge  # noqa: E402
from rlvr.integrations.grader_state import concurrent_batches  # noqa: E402
from rlvr.integrations.openrlhf import ServerLimits, create_app  # noqa: E402
from rlvr.integrations.throughput import ThroughputMeter  # noqa: E402

PACK = StaticPack("toy", [Task(id=f"t{i}", prompt="p") for i in range(20)])


class GatedGrader(Grader):
    """Blocks every batch until `gate` opens; records each batch's (task id, completion) items.
    The reward is len(completion) / 10; "TIMEOUT" earns a timeout flag, "ERROR" an error."""

    def __init__(self, pack=PACK) -> None:
        super().__init__(pack)
        self.gate = threading.Event()
        self.batches: list[list[tuple[str, str]]] = []
        self.calls = 0  # batches started

    def grade_tasks(self, tasks, completions):
        self.calls += 1
        assert self.gate.wait(timeout=30), "test gate never opened"
        self.batches.append([(t.id, c) for t, c in zip(tasks, completions, strict=True)])
        out = []
        for task, completion in zip(tasks, completions, strict=True):
            if completion == "ERROR":
                out.append(Verdict.failure(task.id, "machinery fault", fault="grader"))
            elif completion == "TIMEOUT":
                out.append(Verdict(task.id, reward=0.0, flags=["timeout"]))
            else:
                out.append(Verdict(task.id, reward=len(completion) / 10, passed=True, flags=["toy"]))
        return out

    def graded_items(self) -> list[tuple[str, str]]:
        return [item for batch in self.batches for item in batch]


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def occupy(batcher: MicroBatcher, grader: GatedGrader) -> Future[list[Verdict]]:
    """Submit one item and wait until the grading thread is blocked on it."""
    before = grader.calls
    future = batcher.submit(["t0"], ["occupier"])
    wait_until(lambda: grader.calls > before, "the grading thread to take the item")
    return future


async def occupy_app(client, grader: GatedGrader) -> asyncio.Task:
    """POST one item and wait until the grading thread is blocked on it."""
    before = grader.calls
    busy = asyncio.create_task(client.post("/get_reward", json=body(["t0"], ["occupier"])))
    while grader.calls <= before:
        await asyncio.sleep(0.01)
    return busy


# ---------------------------------------------------------------------- the batcher's queue
def test_queue_admits_by_items_and_refuses_beyond_capacity():
    grader = GatedGrader()
    batcher = MicroBatcher(grader, capacity_items=3)
    first = occupy(batcher, grader)  # being graded: no longer waiting
    waiting = batcher.submit(["t1", "t2"], ["a", "b"])
    with pytest.raises(QueueFull) as full:
        batcher.submit(["t3", "t4"], ["c", "d"])
    assert full.value.retry_after > 0 and "3 items" in str(full.value)
    fits = batcher.submit(["t3"], ["c"])  # exactly fills the queue
    with pytest.raises(RequestTooLarge):
        batcher.submit(["t1"] * 4, ["x"] * 4)  # more than the whole queue holds
    stats = batcher.stats()
    assert (stats.queued_items, stats.queued_requests, stats.grading_items) == (3, 2, 1)
    grader.gate.set()
    assert [v.reward for v in waiting.result(timeout=10)] == [0.1, 0.1]
    assert [v.reward for v in fits.result(timeout=10)] == [0.1]
    assert first.result(timeout=10)[0].reward == pytest.approx(0.8)
    assert batcher.stats().queued_items == 0
    batcher.close()


def test_items_are_merged_across_requests_first_come_first_served():
    grader = GatedGrader()
    batcher = MicroBatcher(grader, max_batch=3)
    occupy(batcher, grader)
    a = batcher.submit(["t1", "t2"], ["a1", "a2"])
    b = batcher.submit(["t3", "t4", "t5", "t6"], ["b1", "b2", "b3", "b4"])  # split over two batches
    c = batcher.submit(["t7"], ["c1"])
    grader.gate.set()
    assert [v.task_id for v in a.result(timeout=10)] == ["t1", "t2"]
    assert [v.task_id for v in b.result(timeout=10)] == ["t3", "t4", "t5", "t6"]
    assert [v.task_id for v in c.result(timeout=10)] == ["t7"]
    completions = [[c for _, c in batch] for batch in grader.batches]
    assert completions == [["occupier"], ["a1", "a2", "b1"], ["b2", "b3", "b4"], ["c1"]]
    batcher.close()


def test_cancelling_a_request_frees_its_waiting_items():
    grader = GatedGrader()
    batcher = MicroBatcher(grader, capacity_items=4)
    occupy(batcher, grader)
    doomed = batcher.submit(["t1", "t2", "t3"], ["x1", "x2", "x3"])
    kept = batcher.submit(["t4"], ["k"])
    assert batcher.stats().queued_items == 4
    assert doomed.cancel()
    stats = batcher.stats()
    assert (stats.queued_items, stats.queued_requests) == (1, 1)
    again = batcher.submit(["t5", "t6", "t7"], ["y1", "y2", "y3"])  # the freed room is usable
    grader.gate.set()
    kept.result(timeout=10)
    again.result(timeout=10)
    graded = {completion for _, completion in grader.graded_items()}
    assert graded == {"occupier", "k", "y1", "y2", "y3"}  # the cancelled items never ran
    batcher.close()


def test_cache_answers_repeats_at_once_and_grades_duplicates_once():
    grader = GatedGrader()
    batcher = MicroBatcher(grader, capacity_items=4, cache_items=100)
    grader.gate.set()
    first = batcher.grade(["t1", "t2", "t3", "t1"], ["abc", "TIMEOUT", "ERROR", "abc"])
    assert [v.reward for v in first] == [0.3, 0.0, 0.0, 0.3]
    assert grader.graded_items() == [("t1", "abc"), ("t2", "TIMEOUT"), ("t3", "ERROR")]  # dup graded once
    grader.gate.clear()
    occupy(batcher, grader)
    batcher.submit(["t9"] * 4, ["fill1", "fill2", "fill3", "fill4"])  # the queue is now full
    cached = batcher.submit(["t1"], ["abc"])
    assert cached.done() and cached.result()[0].reward == pytest.approx(0.3)  # answered at once
    assert batcher.stats().cache_hits == 1
    # a timeout or an error depends on the machine: never cached, so it needs room in the queue
    with pytest.raises(QueueFull):
        batcher.submit(["t2"], ["TIMEOUT"])
    with pytest.raises(QueueFull):
        batcher.submit(["t3"], ["ERROR"])
    # same completion, another task: not the same item
    with pytest.raises(QueueFull):
        batcher.submit(["t4"], ["abc"])
    grader.gate.set()
    batcher.close()


def test_throughput_and_drain_estimate_come_from_graded_batches():
    grader = GatedGrader()
    batcher = MicroBatcher(grader)
    assert batcher.stats().items_per_second == 0.0
    grader.gate.set()
    batcher.grade([f"t{i}" for i in range(10)], ["x"] * 10)
    stats = batcher.stats()
    assert stats.items_graded == 10 and stats.batches_graded == 1 and stats.items_per_second > 0
    assert stats.drain_seconds == 0.0  # nothing waiting
    grader.gate.clear()
    occupy(batcher, grader)
    batcher.submit(["t1"] * 5, ["y"] * 5)
    assert batcher.drain_seconds() > 0
    grader.gate.set()
    batcher.close()


def test_two_grading_threads_grade_two_batches_at_once_and_keep_each_request_whole():
    grader = GatedGrader()
    batcher = MicroBatcher(grader, max_batch=3, threads=2)
    big = batcher.submit([f"t{i}" for i in range(1, 7)], [f"b{i}" for i in range(1, 7)])  # two batches
    wait_until(lambda: grader.calls == 2, "both threads to take a batch")  # one request woke both
    assert batcher.stats().grading_items == 6 and batcher.stats().queued_items == 0
    later = batcher.submit(["t7"], ["later"])
    grader.gate.set()
    assert [v.task_id for v in big.result(timeout=10)] == [f"t{i}" for i in range(1, 7)]
    assert [v.reward for v in big.result()] == [0.2] * 6
    assert later.result(timeout=10)[0].task_id == "t7"
    assert sorted(len(batch) for batch in grader.batches) == [1, 3, 3]
    batcher.close()


def test_only_a_local_code_grader_grades_batches_concurrently(humaneval_grader):
    assert concurrent_batches(humaneval_grader) == 2
    assert concurrent_batches(GatedGrader()) == 1
    with pytest.raises(ValueError, match="one batch at a time"):
        create_app(GatedGrader(), ServerLimits(grading_threads=2))


def test_serve_refuses_bad_queue_options(capsys):
    from rlvr.cli import main

    for option, value, message in [
        ("--queue-items", "0", "--queue-items must be at least 1"),
        ("--grading-threads", "0", "--grading-threads must be at least 1"),
        ("--max-concurrent", "0", "--max-concurrent must be at least 1"),
        ("--cache-items", "-1", "--cache-items must be 0"),
    ]:
        assert main(["serve", "--pack", "humaneval", option, value]) == 2
        assert message in capsys.readouterr().err


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_throughput_meter_counts_busy_time_once_however_many_batches_overlap():
    clock = FakeClock()
    meter = ThroughputMeter(window_seconds=60, prior_seconds_per_item=0.5, clock=clock)
    assert meter.seconds_per_item() == 0.5 and meter.items_per_second() == 0.0  # the prior
    meter.batch_started()
    clock.now += 2
    meter.batch_started()  # overlaps the first
    clock.now += 2
    meter.batch_finished(10)
    clock.now += 2
    meter.batch_finished(30)
    # 40 items in 6 busy seconds (not 2 + 4 + 4 = 10 summed per batch)
    assert meter.seconds_per_item() == pytest.approx(6 / 40)
    clock.now += 14  # idle: the wall-clock rate falls, the drain rate does not
    assert meter.items_per_second() == pytest.approx(40 / 20)
    assert meter.seconds_per_item() == pytest.approx(6 / 40)
    meter.batch_started()
    clock.now += 5
    meter.batch_finished(5)
    assert meter.seconds_per_item() == pytest.approx(11 / 45)
    clock.now += 58  # the first two batches leave the window; the last one is the window
    assert meter.seconds_per_item() == pytest.approx(5 / 5)
    clock.now += 60  # nothing in the window: the rate over the meter's life
    assert meter.items_per_second() == 0.0
    assert meter.seconds_per_item() == pytest.approx(11 / 45)


def test_drain_estimate_is_queued_items_at_the_measured_rate():
    grader = GatedGrader()
    clock = FakeClock()
    meter = ThroughputMeter(clock=clock)
    batcher = MicroBatcher(grader, capacity_items=10, meter=meter)
    meter.batch_started()
    clock.now += 4
    meter.batch_finished(20)  # 0.2 s per item
    occupy(batcher, grader)
    batcher.submit(["t1"] * 10, ["x"] * 10)
    with pytest.raises(QueueFull) as full:
        batcher.submit(["t2"], ["y"])
    # 10 queued items at 0.2 s each, plus at most 0.2 s left of the one being graded
    assert 2.0 <= full.value.retry_after <= 2.2
    grader.gate.set()
    batcher.close()


# ---------------------------------------------------------------------- the app, in process
def body(task_ids: list[str], completions: list[str]) -> dict[str, list[str]]:
    return {"query": ["p" + c for c in completions], "prompts": ["p"] * len(task_ids), "labels": task_ids}


def run_app(grader: Grader, limits: ServerLimits, scenario: Callable) -> object:
    """Run `scenario(client, app)` against the app with its lifespan (the grader is closed after)."""
    app = create_app(grader, limits)

    async def main() -> object:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=30) as client:
                return await scenario(client)

    return asyncio.run(main())


async def queue_depth(client) -> int:
    return (await client.get("/health")).json()["queue"]["items"]


def test_full_queue_is_503_with_retry_after_and_cached_requests_still_answer():
    grader = GatedGrader()

    async def scenario(client):
        warm = await client.post("/get_reward", json=body(["t1"], ["cached"]))
        assert warm.status_code == 200
        grader.gate.clear()
        busy = await occupy_app(client, grader)
        waiting = asyncio.create_task(client.post("/get_reward", json=body(["t1", "t2"], ["a", "b"])))
        while await queue_depth(client) < 2:
            await asyncio.sleep(0.01)
        full = await client.post("/get_reward", json=body(["t3"], ["c"]))
        too_big = await client.post("/get_reward", json=body(["t1", "t2", "t3"], ["x", "y", "z"]))
        cached = await client.post("/get_reward", json=body(["t1"], ["cached"]))
        grader.gate.set()
        return full, too_big, cached, await busy, await waiting

    grader.gate.set()
    full, too_big, cached, busy, waiting = run_app(grader, ServerLimits(queue_items=2), scenario)
    assert full.status_code == 503, full.text
    assert int(full.headers["retry-after"]) >= 1 and "queue full" in full.json()["error"]
    assert too_big.status_code == 413 and "capacity" in too_big.json()["error"]
    assert cached.status_code == 200 and cached.json()["rewards"] == [pytest.approx(0.6)]
    assert busy.status_code == 200 and waiting.status_code == 200
    assert waiting.json()["rewards"] == [pytest.approx(0.1), pytest.approx(0.1)]


def test_concurrent_requests_share_batches_and_get_their_own_rewards():
    grader = GatedGrader()
    requests = [(f"t{i}", "x" * i) for i in range(1, 10)]

    async def scenario(client):
        busy = await occupy_app(client, grader)
        posts = [
            asyncio.create_task(client.post("/get_reward", json=body([task_id], [completion])))
            for task_id, completion in requests
        ]
        while await queue_depth(client) < len(requests):
            await asyncio.sleep(0.01)
        grader.gate.set()
        await busy
        return await asyncio.gather(*posts)

    responses = run_app(grader, ServerLimits(max_batch=64), scenario)
    for (_, completion), response in zip(requests, responses, strict=True):
        assert response.status_code == 200
        assert response.json()["rewards"] == [pytest.approx(len(completion) / 10)]
    # nine requests waiting together became one grading batch, in arrival order
    assert [len(batch) for batch in grader.batches] == [1, 9]
    assert [c for _, c in grader.batches[1]] == [c for _, c in requests]


def test_deadline_header_answers_504_and_frees_the_items():
    grader = GatedGrader()

    async def scenario(client):
        busy = await occupy_app(client, grader)
        late = await client.post(
            "/get_reward", json=body(["t1", "t2"], ["a", "b"]), headers={"X-Deadline-Seconds": "0.3"}
        )
        depth_after = await queue_depth(client)
        malformed = await client.post(
            "/get_reward", json=body(["t1"], ["a"]), headers={"X-Deadline-Seconds": "soon"}
        )
        grader.gate.set()
        in_time = await client.post(
            "/get_reward", json=body(["t3"], ["c"]), headers={"X-Deadline-Seconds": "30"}
        )
        return late, depth_after, malformed, in_time, await busy

    late, depth_after, malformed, in_time, busy = run_app(grader, ServerLimits(), scenario)
    assert late.status_code == 504 and "deadline" in late.json()["error"]
    assert depth_after == 0
    assert malformed.status_code == 400 and "X-Deadline-Seconds" in malformed.json()["error"]
    assert in_time.status_code == 200 and busy.status_code == 200
    assert ("t1", "a") not in grader.graded_items()  # dropped, never graded


def test_health_reports_queue_throughput_and_workers():
    grader = GatedGrader()

    async def scenario(client):
        idle = (await client.get("/health")).json()
        busy = await occupy_app(client, grader)
        waiting = [
            asyncio.create_task(client.post("/get_reward", json=body(["t1", "t2", "t3"], [c, c, c])))
            for c in ("a", "b")
        ]
        while await queue_depth(client) < 6:
            await asyncio.sleep(0.01)
        loaded = (await client.get("/health")).json()
        grader.gate.set()
        await asyncio.gather(busy, *waiting)
        return idle, loaded, (await client.get("/health")).json()

    idle, loaded, after = run_app(grader, ServerLimits(queue_items=100), scenario)
    assert idle["queue"] == {
        "items": 0,
        "requests": 0,
        "grading_items": 0,
        "capacity_items": 100,
        "drain_seconds": 0.0,
    }
    assert idle["items_per_second_last_minute"] == 0.0
    assert loaded["queue"]["items"] == 6 and loaded["queue"]["requests"] == 2
    assert loaded["queue"]["grading_items"] == 1 and loaded["queue"]["drain_seconds"] > 0
    assert loaded["active_requests"] == 3
    assert after["queue"]["items"] == 0 and after["items_graded"] == 7
    assert after["items_per_second_last_minute"] > 0
    # a grader without a sandbox pool of its own says so rather than inventing a state
    assert after["sandbox"]["state"] == "unreported" and "workers" in after


def test_metrics_are_prometheus_text_with_queue_latency_and_verdicts():
    grader = GatedGrader()
    grader.gate.set()

    async def scenario(client):
        await client.post("/get_reward", json=body(["t1", "t2", "t3"], ["abc", "TIMEOUT", "ERROR"]))
        await client.post("/get_reward", json=body(["t1"], ["abc"]))  # from the cache
        await client.post("/get_reward", json={"query": 3})  # 422
        return await client.get("/metrics")

    response = run_app(grader, ServerLimits(), scenario)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in prometheus_parser.text_string_to_metric_families(response.text)
        for sample in family.samples
    }
    assert samples[("rlvr_queue_items", ())] == 0
    assert samples[("rlvr_queue_capacity_items", ())] == 20_000
    assert samples[("rlvr_items_graded_total", ())] == 3
    assert samples[("rlvr_cache_hits_total", ())] == 1
    assert samples[("rlvr_requests_total", (("status", "200"),))] == 2
    assert samples[("rlvr_requests_total", (("status", "422"),))] == 1
    assert samples[("rlvr_request_duration_seconds_count", ())] == 2
    assert samples[("rlvr_request_duration_seconds_bucket", (("le", "+Inf"),))] == 2
    assert samples[("rlvr_verdicts_total", (("outcome", "passed"),))] == 2
    assert samples[("rlvr_verdicts_total", (("outcome", "failed"),))] == 1
    assert samples[("rlvr_verdicts_total", (("outcome", "error"),))] == 1
    assert samples[("rlvr_verdict_flags_total", (("flag", "timeout"),))] == 1
    assert samples[("rlvr_verdict_flags_total", (("flag", "toy"),))] == 2


# ---------------------------------------------------------------------- a real uvicorn server
@pytest.fixture
def live_server() -> Iterator[tuple[str, GatedGrader]]:
    grader = GatedGrader()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        create_app(grader, ServerLimits()), host="127.0.0.1", port=port, log_level="error"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    wait_until(lambda: server.started, "uvicorn to start")
    try:
        yield url, grader
    finally:
        grader.gate.set()
        server.should_exit = True
        thread.join(timeout=30)


def test_client_that_disconnects_frees_its_items(live_server):
    url, grader = live_server
    with httpx.Client(base_url=url, timeout=30) as client:
        with ThreadedPost(url, body(["t0"], ["occupier"])) as busy:
            wait_until(lambda: grader.calls == 1, "the grading thread to take the first item")
            payload = httpx.Request("POST", f"{url}/get_reward", json=body(["t1", "t2"], ["gone1", "gone2"]))
            raw = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])))
            head = "POST /get_reward HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            head += f"Content-Length: {len(payload.read())}\r\n\r\n"
            raw.sendall(head.encode() + payload.read())
            wait_until(lambda: client.get("/health").json()["queue"]["items"] == 2, "the items to queue")
            raw.close()  # the rollout worker gave up
            wait_until(lambda: client.get("/health").json()["queue"]["items"] == 0, "the items to be freed")
            grader.gate.set()
        assert busy.response is not None and busy.response.status_code == 200
        assert all(not c.startswith("gone") for _, c in grader.graded_items())
        wait_until(lambda: 'rlvr_requests_total{status="499"} 1.0' in client.get("/metrics").text, "499")


class ThreadedPost:
    """POST in a background thread for the duration of a `with` block."""

    def __init__(self, url: str, payload: dict) -> None:
        self.url, self.payload = url, payload
        self.response: httpx.Response | None = None
        self.thread = threading.Thread(target=self._post, daemon=True)

    def _post(self) -> None:
        self.response = httpx.post(f"{self.url}/get_reward", json=self.payload, timeout=30)

    def __enter__(self) -> ThreadedPost:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join(timeout=30)
