"""`rlvr serve` under a training cluster's load (issue 20): many concurrent retrying clients.

Starts `rlvr serve --pack humaneval` on 127.0.0.1 (a free port; nothing leaves the machine) and
plays OpenRLHF's remote reward client against it: each try is a `POST /get_reward` with a 180 s
timeout (each client keeps one HTTP session); a non-200 answer or a transport error is retried
after 1 s, at most 5 tries, after which the training run would raise. Phases, in one run on one
warm server:

  warm-up   one request per task of the workload (unmeasured): oracles, property inputs and the
            reference's perf counts are cached per task, as they are after a training run's
            first step
  single    one client sends --single-requests requests one after another (every grading
            batch is one request of --items-per-request items)
  batched   one client sends --batched-requests requests of --batched-items items (default: the
            server's --max-batch) one after another: the single-client batch rate, the baseline
            the load phase must match
  load      --clients clients share --requests requests (each client sends its share one
            after another), all starting at once
            (single, batched and load alternate --rounds times, fresh items each time, so drift
            in the machine's load hits all alike; each is reported over all its rounds)
  cached    the first --clients requests of the load phase again, all at once: every item is
            in the server's verdict cache, so each request answers without queueing

Requests hold --items-per-request items of --tasks HumanEval tasks, mixed: the canonical
solution (correct), `return None` (wrong) and an unclosed parenthesis (malformed, a syntax
error) in the proportions of --mix. Every item is a distinct program: a trailing comment of a
length no other item of its task has (pyright's cache blanks comments to same-length spaces, and
the server's verdict cache keys on the exact text), so no phase reuses another's work — except
the cached phase, which is meant to.

After the load, the items of the single, batched and load phases are graded offline with `rlvr grade`
and every served reward is compared with it. Reported: success rate, tries, 503s seen,
p50/p95/max latency (first try to answer, as the training loop waits), items/s of each phase and
the load phase's ratio to both single-client phases, the server's mean batch size and CPU time
per item (its whole process tree) per phase, and the benchmark client's own CPU time per item (rates and CPU are per item answered with rewards). The run stops by itself: every
phase has a deadline (--max-seconds overall) and the server is stopped at the end.

Usage: .venv/bin/python benchmarks/bench_serve.py [--clients 64] [--requests 256]
       [--items-per-request 8] [--single-requests 32] [--batched-requests 4] [--jobs 2]
       [--out FILE] [-- SERVE ARGS]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from rlvr.task_packs.registry import load_pack

TRIES = 5  # OpenRLHF's request_api_wrapper: 5 tries, 1 s apart, 180 s timeout each
RETRY_SLEEP_SECONDS = 1.0
TRY_TIMEOUT_SECONDS = 180.0
TEMPLATE = "<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"
KINDS = ("correct", "wrong", "malformed")


@dataclass
class Item:
    task_id: str
    prompt: str
    completion: str
    kind: str


@dataclass
class Outcome:
    ok: bool = False
    tries: int = 0
    statuses: list[str] = field(default_factory=list)
    latency: float = 0.0
    rewards: list[float] = field(default_factory=list)


class Workload:
    """Distinct items of a few tasks: each item's trailing comment has a length unique to its task."""

    def __init__(self, tasks: int, mix: tuple[float, float, float], seed: int) -> None:
        pack = load_pack("humaneval")
        self.rng = random.Random(seed)
        self.tasks = self.rng.sample(pack.all_tasks(), tasks)
        self.mix = mix
        self._lengths: Counter[str] = Counter()

    def item(self, task: Any, kind: str) -> Item:
        self._lengths[task.id] += 1
        comment = f"\n# {'v' * self._lengths[task.id]}\n"
        body = {
            "correct": task.hidden["reference"],
            "wrong": task.prompt + "    return None\n",
            "malformed": task.prompt + "    return (\n",
        }[kind]
        return Item(task.id, TEMPLATE.format(prompt=task.prompt), body + comment, kind)

    def request(self, size: int) -> list[Item]:
        kinds = self.rng.choices(KINDS, weights=self.mix, k=size)
        return [self.item(self.rng.choice(self.tasks), kind) for kind in kinds]

    def warm_up(self) -> list[Item]:
        return [self.item(task, "correct") for task in self.tasks]


def payload(items: list[Item]) -> dict[str, list[str]]:
    return {
        "query": [i.prompt + i.completion for i in items],
        "prompts": [i.prompt for i in items],
        "labels": [i.task_id for i in items],
    }


class Session:
    """One rollout worker's HTTP connection to the server (stdlib `http.client`, kept alive and
    reopened after a failure): the lightest client, so the benchmark's own CPU use — it shares
    the machine with the server — stays small."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: bytes, timeout: float) -> tuple[int, bytes]:
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            self.connection.request("POST", path, body, {"Content-Type": "application/json"})
            response = self.connection.getresponse()
            return response.status, response.read()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def post_like_openrlhf(session: Session, items: list[Item], stop: threading.Event) -> Outcome:
    outcome = Outcome()
    started = time.monotonic()
    body = json.dumps(payload(items)).encode()
    for _ in range(TRIES):
        if stop.is_set():
            outcome.statuses.append("stopped")
            break
        outcome.tries += 1
        try:
            status, answer = session.post("/get_reward", body, TRY_TIMEOUT_SECONDS)
            outcome.statuses.append(str(status))
            if status == 200:
                outcome.ok = True
                outcome.rewards = json.loads(answer)["rewards"]
                break
        except (OSError, http.client.HTTPException) as exc:
            outcome.statuses.append(type(exc).__name__)
        time.sleep(RETRY_SLEEP_SECONDS)
    outcome.latency = time.monotonic() - started
    return outcome


def run_clients(
    port: int, requests: list[list[Item]], clients: int, stop: threading.Event
) -> tuple[list[Outcome], float]:
    """`clients` threads share `requests` round-robin; each sends its share one after another."""
    outcomes: list[Outcome | None] = [None] * len(requests)

    def client(index: int) -> None:
        session = Session(port)
        try:
            for position in range(index, len(requests), clients):
                outcomes[position] = post_like_openrlhf(session, requests[position], stop)
        finally:
            session.close()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    return [o if o is not None else Outcome(statuses=["not sent"]) for o in outcomes], wall


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def answered(outcomes: list[Outcome], requests: list[list[Item]]) -> int:
    """Items of the requests that were answered with rewards."""
    return sum(len(r) for r, o in zip(requests, outcomes, strict=True) if o.ok)


def summarize(outcomes: list[Outcome], requests: list[list[Item]], wall: float) -> dict[str, Any]:
    items = answered(outcomes, requests)
    latencies = [o.latency for o in outcomes if o.ok]
    statuses = Counter(s for o in outcomes for s in o.statuses)
    return {
        "requests": len(outcomes),
        "succeeded": sum(o.ok for o in outcomes),
        "success_rate": sum(o.ok for o in outcomes) / max(1, len(outcomes)),
        "tries": dict(sorted(Counter(o.tries for o in outcomes).items())),
        "statuses_seen": dict(statuses),
        "items_sent": sum(len(r) for r in requests),
        "items_answered": items,
        "wall_seconds": round(wall, 2),
        "items_per_second": round(items / wall, 2) if wall > 0 else None,
        "latency_p50_s": round(percentile(latencies, 0.50), 3),
        "latency_p95_s": round(percentile(latencies, 0.95), 3),
        "latency_max_s": round(max(latencies), 3) if latencies else None,
    }


@dataclass
class Phase:
    """One condition's requests and outcomes, accumulated over rounds."""

    name: str
    clients: int
    requests: list[list[Item]] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    wall: float = 0.0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    batches: int = 0
    graded: int = 0
    cache_hits: int = 0
    rates: list[float] = field(default_factory=list)  # items/s of each round

    def run(
        self, server: subprocess.Popen[str], port: int, requests: list[list[Item]], stop: threading.Event
    ) -> None:
        items = sum(len(r) for r in requests)
        print(
            f"{self.name}: {self.clients} client(s), {len(requests)} requests, {items} items", file=sys.stderr
        )
        url = f"http://127.0.0.1:{port}"
        before, cpu, client_cpu = health(url), tree_cpu_seconds(server.pid), time.process_time()
        outcomes, wall = run_clients(port, requests, self.clients, stop)
        after = health(url)
        self.server_cpu += tree_cpu_seconds(server.pid) - cpu
        self.client_cpu += time.process_time() - client_cpu
        self.batches += after["batches_graded"] - before["batches_graded"]
        self.graded += after["items_graded"] - before["items_graded"]
        self.cache_hits += after.get("cache_hits", 0) - before.get("cache_hits", 0)  # older servers: none
        self.requests += requests
        self.outcomes += outcomes
        self.wall += wall
        self.rates.append(round(answered(outcomes, requests) / wall, 2) if wall > 0 else 0.0)

    def summary(self) -> dict[str, Any]:
        items = answered(self.outcomes, self.requests)
        return summarize(self.outcomes, self.requests, self.wall) | {
            "items_per_second_by_round": self.rates,
            "mean_batch": round(self.graded / self.batches, 1) if self.batches else None,
            "items_graded": self.graded,
            "cache_hits": self.cache_hits,
            "server_cpu_ms_per_item": round(1000 * self.server_cpu / items, 2) if items else None,
            "client_cpu_ms_per_item": round(1000 * self.client_cpu / items, 2) if items else None,
        }


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by the server and everything under it (zygotes and their reaped
    candidate processes, pyright)."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return total
    for process in processes:
        try:
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
            continue
    return total


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def health(url: str) -> dict[str, Any]:
    return httpx.get(f"{url}/health", timeout=30).json()


def grade_offline(items: list[Item], jobs: int, workdir: Path, timeout: float) -> list[float]:
    """Rewards from `rlvr grade` for the items, in order."""
    source, verdicts = workdir / "items.jsonl", workdir / "verdicts.jsonl"
    with source.open("w") as handle:
        for item in items:
            handle.write(json.dumps({"task_id": item.task_id, "completion": item.completion}) + "\n")
    command = [sys.executable, "-m", "rlvr", "grade", "--pack", "humaneval", "--completions", str(source)]
    command += ["--out", str(verdicts), "--jobs", str(jobs)]
    subprocess.run(command, check=True, timeout=timeout, stdout=subprocess.DEVNULL)
    return [json.loads(line)["reward"] for line in verdicts.read_text().splitlines()]


def start_server(
    port: int, jobs: int, extra: list[str], log: Any, pythonpath: Path | None
) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "rlvr", "serve", "--pack", "humaneval", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--jobs", str(jobs), *extra]
    env, cwd = dict(os.environ), None
    if pythonpath is not None:  # `-m` puts the working directory first: start in the other checkout
        env["PYTHONPATH"] = cwd = str(pythonpath.resolve())
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, text=True, env=env, cwd=cwd)


def wait_until_up(url: str, process: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("rlvr serve exited while starting (see its log)")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"rlvr serve did not come up within {timeout:.0f} s")


def stop_server(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--requests", type=int, default=256, help="requests of the load phase")
    parser.add_argument("--items-per-request", type=int, default=8)
    parser.add_argument("--single-requests", type=int, default=32, help="requests of the single-client phase")
    parser.add_argument("--batched-requests", type=int, default=4, help="requests of the batched phase")
    parser.add_argument("--batched-items", type=int, default=256, help="items per batched-phase request")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the three measured phases")
    parser.add_argument("--tasks", type=int, default=32, help="HumanEval tasks the items are drawn from")
    parser.add_argument(
        "--mix", type=float, nargs=3, default=(0.5, 0.3, 0.2), metavar=("CORRECT", "WRONG", "MALFORMED")
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="sandbox workers of the server and of `rlvr grade`"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="stop the run after this long")
    parser.add_argument(
        "--server-source",
        type=Path,
        default=None,
        metavar="DIR",
        help="run the server from another checkout of rlvr (its directory goes first on PYTHONPATH), "
        "e.g. an export of an earlier commit to compare with; offline grading stays with this one",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/bench_serve.json"))
    parser.add_argument("serve_args", nargs="*", help="extra `rlvr serve` options (after --)")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.max_seconds
    stop = threading.Event()
    watchdog = threading.Timer(args.max_seconds, stop.set)
    watchdog.daemon = True
    watchdog.start()

    workload = Workload(args.tasks, tuple(args.mix), args.seed)
    single = Phase("single", 1)
    batched = Phase("batched", 1)
    load = Phase("load", args.clients)
    cached = Phase("cached", args.clients)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    result: dict[str, Any] = {
        "settings": {k: v for k, v in vars(args).items() if k != "out"} | {"cpus": os.cpu_count()},
    }
    with (
        tempfile.TemporaryDirectory(prefix="rlvr-bench-serve-") as tmp,
        open(Path(tmp) / "serve.log", "w+") as log,
    ):
        process = start_server(port, args.jobs, args.serve_args, log, args.server_source)
        try:
            wait_until_up(url, process, timeout=300)
            print(f"server up on {url}; warming up on {args.tasks} tasks", file=sys.stderr)
            warm = post_like_openrlhf(Session(port), workload.warm_up(), stop)
            if not warm.ok:
                raise RuntimeError(f"warm-up failed: {warm.statuses}")
            size = args.items_per_request
            for _ in range(args.rounds):  # alternated, so drift in the machine's load hits all alike
                single.run(process, port, [workload.request(size) for _ in range(args.single_requests)], stop)
                batch_requests = [workload.request(args.batched_items) for _ in range(args.batched_requests)]
                batched.run(process, port, batch_requests, stop)
                load.run(process, port, [workload.request(size) for _ in range(args.requests)], stop)
            cached.run(process, port, load.requests[: args.clients], stop)
            result["server_health_at_end"] = health(url)
        finally:
            stop_server(process)
            log.seek(0)
            server_log = log.read()
        if process.returncode not in (0, -signal.SIGTERM):
            result["server_log_tail"] = server_log[-2000:]
        for phase in (single, batched, load, cached):
            result[phase.name] = phase.summary()

        print("grading the same items offline with `rlvr grade`", file=sys.stderr)
        graded_phases = (single, batched, load)
        graded_items = [i for phase in graded_phases for r in phase.requests for i in r]
        served = [r for phase in graded_phases for o in phase.outcomes for r in o.rewards]
        offline = grade_offline(
            graded_items, args.jobs, Path(tmp), timeout=max(60.0, deadline - time.monotonic())
        )
    outcomes = [o for phase in (*graded_phases, cached) for o in phase.outcomes]
    all_ok = all(o.ok for o in outcomes)
    mismatches = sum(1 for s, o in zip(served, offline, strict=True) if abs(s - o) > 1e-6) if all_ok else None
    by_kind = Counter(i.kind for i in graded_items)
    result["rewards_vs_rlvr_grade"] = {
        "items_compared": len(served) if all_ok else 0,
        "mismatches": mismatches,
        "items_by_kind": dict(by_kind),
        "mean_reward_by_kind": {
            kind: round(
                statistics.fmean(r for i, r in zip(graded_items, offline, strict=True) if i.kind == kind), 4
            )
            for kind in by_kind
        },
    }
    load_rate = result["load"]["items_per_second"]
    for baseline in (single, batched):
        rate = result[baseline.name]["items_per_second"]
        result[f"load_vs_{baseline.name}_items_per_second"] = round(load_rate / rate, 2) if rate else None
        result[f"load_vs_{baseline.name}_by_round"] = [
            round(mine / theirs, 2) if theirs else None
            for mine, theirs in zip(load.rates, baseline.rates, strict=True)
        ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(json.dumps(result, indent=2, default=str))
    return 0 if all_ok and mismatches == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
