"""Sandbox overhead and soak benchmarks (issue 3).

    .venv/bin/python benchmarks/bench_sandbox.py overhead [--runs 300] [--docker]
    .venv/bin/python benchmarks/bench_sandbox.py soak [--episodes 5000]
    .venv/bin/python benchmarks/bench_sandbox.py pristine [--runs 400]

overhead: median wall time per execution of one tiny candidate, measured in the same run for
  - bare fork: the baseline — a stdlib-only fork server (fresh interpreter, like a zygote) that forks,
    calls the function and returns the result over a pipe, with no isolation at all;
  - local sandbox (namespaces, the default) and local degraded (no namespaces), one warm worker;
  - docker (runc) and docker + runsc (gVisor), one warm container, with --docker.
  Overhead = median(backend) - median(bare fork).
pristine: candidates/s with the pristine-state mechanism (the sandbox's syscall filter + the
  scratch-directory check after every candidate) against the same sandbox with both switched off,
  interleaved in one run, for the namespaced and the degraded local sandbox, on a tiny candidate and
  on a syscall-heavy one (the filter's cost is per system call).
soak: the 5,000-episode soak (honest controls interleaved with every hostile case that does not need a
  timeout) through a 2-worker local pool: reports leaked processes, fds, temp entries and RSS growth.
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from adversarial.soak import soak  # noqa: E402

from rlvr.sandbox import Job, LocalSandbox, make_sandbox  # noqa: E402
from rlvr.sandbox.pool import ProcessWorker, ZygoteWorker  # noqa: E402

SOURCE = "def f(x):\n    return x + 1\n"


# The baseline: a bare fork server in a fresh stdlib-only interpreter with the zygote's warm imports —
# read a request, fork, run the function in the child, send the result back over a pipe, wait. No
# namespaces, rlimits, audit hook, seccomp, tokens or reaping.
BARE_FORK_SERVER = """
import json, os, struct, sys
# the same warm imports as the zygote, so both fork a process image of the same size
import bisect, collections, copy, fractions, functools, hashlib, heapq, itertools, operator, random, re
import statistics, string, typing, math, resource, select, signal, _json, gc
gc.collect()
gc.freeze()
def read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data
while True:
    request = json.loads(read(struct.unpack(">I", read(4))[0]))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        namespace = {}
        exec(compile(request["source"], "<candidate>", "exec"), namespace)
        value = namespace[request["entry"]](*request["args"])
        os.write(w, json.dumps({"ok": value}).encode())
        os._exit(0)
    os.close(w)
    body = os.read(r, 1 << 16)
    os.close(r)
    os.waitpid(pid, 0)
    os.write(1, struct.pack(">I", len(body)) + body)
"""


class BareForkServer:
    def __init__(self) -> None:
        import subprocess

        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", "-c", BARE_FORK_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def run_once(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        data = json.dumps({"source": SOURCE, "entry": "f", "args": [1]}).encode()
        self.process.stdin.write(struct.pack(">I", len(data)) + data)
        self.process.stdin.flush()
        (size,) = struct.unpack(">I", self.process.stdout.read(4))
        assert json.loads(self.process.stdout.read(size)) == {"ok": 2}

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def timed(run: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        samples.append(time.perf_counter() - started)
    return samples


def overhead(runs: int, docker: bool) -> dict[str, float]:
    job = Job(SOURCE, "f", [(1,)], timeout=5)

    def check(pool: object) -> Callable[[], object]:
        def once() -> object:
            result = pool.run(job)  # type: ignore[attr-defined]
            assert result.status == "ok" and result.outcomes[0].value == 2, result
            return result

        return once

    medians: dict[str, float] = {}
    backends: list[tuple[str, Callable[[], object]]] = [
        ("local", lambda: LocalSandbox(1, isolation="namespaces")),
        ("local-degraded", lambda: LocalSandbox(1, isolation="none")),
    ]
    if docker:
        backends += [
            ("docker", lambda: make_sandbox("docker", 1)),
            ("runsc", lambda: make_sandbox("docker", 1, runtime="runsc")),
        ]
    pools = {name: factory() for name, factory in backends}
    bare = BareForkServer()
    try:
        for pool in pools.values():
            timed(check(pool), 20)  # warm
        timed(bare.run_once, 20)
        # interleave rounds so machine noise hits every backend alike
        samples: dict[str, list[float]] = {name: [] for name in ["bare-fork", *pools]}
        for _ in range(max(1, runs // 50)):
            samples["bare-fork"] += timed(bare.run_once, 50)
            for name, pool in pools.items():
                samples[name] += timed(check(pool), 50)
    finally:
        bare.close()
        for pool in pools.values():
            pool.close()  # type: ignore[attr-defined]
    for name, values in samples.items():
        medians[name] = statistics.median(values)
    baseline = medians["bare-fork"]
    print(f"{'backend':16} {'median ms':>10} {'overhead ms':>12}  (n={len(samples['bare-fork'])} each)")
    for name, value in medians.items():
        print(f"{name:16} {value * 1e3:10.2f} {(value - baseline) * 1e3:12.2f}")
    return medians


SYSCALL_HEAVY = """
import os


def f(x):
    total = 0
    for _ in range(200):  # ~600 system calls: open, read, close
        with open(os.__file__, "rb") as handle:
            total += len(handle.read(64))
    return x + 1 + total - 200 * 64
"""


class UnprotectedWorker(ProcessWorker):
    """The sandbox as it was before the pristine-state mechanism: no syscall filter, no scratch check.
    For this measurement only (it is not reachable from any option)."""

    def command(self) -> list[str]:
        command = super().command()
        config = json.loads(command[-1])
        config["syscall_filter"] = None
        zygote = config["zygote"]
        config["zygote"] = zygote.replace("pristine = scratch_is_pristine(scratch)", "pristine = True")
        assert config["zygote"] != zygote
        return [*command[:-1], json.dumps(config)]


class UnprotectedSandbox(LocalSandbox):
    def make_worker(self) -> ZygoteWorker:
        return UnprotectedWorker(self.isolation)


def pristine_cost(runs: int) -> dict[str, float]:
    jobs = {
        "tiny": Job(SOURCE, "f", [(1,)], timeout=5),
        "syscalls": Job(SYSCALL_HEAVY, "f", [(1,)], timeout=20),
    }
    pools = {
        ("namespaces", "on"): LocalSandbox(1, isolation="namespaces"),
        ("namespaces", "off"): UnprotectedSandbox(1, isolation="namespaces"),
        ("degraded", "on"): LocalSandbox(1, isolation="none"),
        ("degraded", "off"): UnprotectedSandbox(1, isolation="none"),
    }
    assert all("no-syscall-filter" in pool.flags for (_, state), pool in pools.items() if state == "off")
    samples: dict[tuple[str, str, str], list[float]] = {}
    try:
        for workload, job in jobs.items():

            def once(pool: LocalSandbox, job: Job = job) -> None:
                result = pool.run(job)
                assert result.status == "ok" and result.outcomes[0] is not None, result
                assert result.outcomes[0].value == 2, result

            for pool in pools.values():
                timed(lambda pool=pool: once(pool), 10)  # warm
            for _ in range(max(1, runs // 25)):  # interleaved rounds: load hits every variant alike
                for (mode, state), pool in pools.items():
                    key = (workload, mode, state)
                    samples.setdefault(key, []).extend(timed(lambda pool=pool: once(pool), 25))
    finally:
        for pool in pools.values():
            pool.close()
    rates: dict[str, float] = {}
    print(
        f"{'workload':10} {'sandbox':11} {'off c/s':>9} {'on c/s':>9} {'on/off':>7} {'ms/cand':>8}  (n={runs} each)"
    )
    for workload in jobs:
        for mode in ("namespaces", "degraded"):
            off = statistics.median(samples[(workload, mode, "off")])
            on = statistics.median(samples[(workload, mode, "on")])
            rates[f"{workload}/{mode}"] = off / on
            print(
                f"{workload:10} {mode:11} {1 / off:9.1f} {1 / on:9.1f} {off / on:7.3f} {(on - off) * 1e3:8.2f}"
            )
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    over = sub.add_parser("overhead")
    over.add_argument("--runs", type=int, default=300)
    over.add_argument("--docker", action="store_true")
    pristine = sub.add_parser("pristine")
    pristine.add_argument("--runs", type=int, default=400)
    soak_parser = sub.add_parser("soak")
    soak_parser.add_argument("--episodes", type=int, default=5000)
    args = parser.parse_args()
    if args.command == "overhead":
        overhead(args.runs, args.docker)
        return 0
    if args.command == "pristine":
        pristine_cost(args.runs)
        return 0
    report = soak(args.episodes)
    print(json.dumps(report.__dict__, indent=2))
    return 0 if report.clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
