"""`rlvr bench` (one policy on one or more packs) and `rlvr sweep CONFIG.toml` (a grid of benches)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rlvr.bench.policies import PolicyError, Settings, make_policy
from rlvr.bench.store import BenchError
from rlvr.cli.grader_flags import honoured
from rlvr.cli.isolation import add_require_isolation
from rlvr.executors import add_executor_arguments, grader_from_args
from rlvr.task_packs.registry import PackError


def _k_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--k must be comma-separated positive integers, got {text!r}"
        ) from None
    if not values or any(k < 1 for k in values):
        raise argparse.ArgumentTypeError(f"--k must be comma-separated positive integers, got {text!r}")
    return values


def _add_bench(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="evaluate a policy on task packs: pass@k, reward components, failure rates, report",
        description="Generate (or read) samples for every task, grade them, and write results.json, "
        "results.csv, tasks.csv, samples.jsonl, PNG plots and report.html into --out. Re-running with the "
        "same --out resumes: finished samples are skipped.",
    )
    parser.add_argument("--pack", action="append", required=True, help="pack name or directory (repeatable)")
    parser.add_argument("--policy", required=True, help="hf:MODEL_DIR | openai:URL | jsonl:FILE")
    parser.add_argument("--k", type=_k_list, default=[1], help="pass@k values, e.g. 1,8 (default 1)")
    parser.add_argument("--n", type=int, help="samples per task (default: largest k; jsonl: all in the file)")
    parser.add_argument(
        "--split", default="test", help="task split to evaluate (default test; 'all' for every split)"
    )
    parser.add_argument("--out", type=Path, required=True, help="run directory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    sampling = parser.add_argument_group("sampling")
    sampling.add_argument("--temperature", type=float, default=0.8)
    sampling.add_argument("--top-p", type=float, default=1.0)
    sampling.add_argument("--max-tokens", type=int, default=512)
    sampling.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    sampling.add_argument("--prompt-format", choices=("auto", "raw", "chat"), default="auto")
    sampling.add_argument("--system", help="system message for chat prompts")
    grading = parser.add_argument_group("grading")
    grading.add_argument("--jobs", type=int, help="grading workers (default: one per core)")
    grading.add_argument("--sandbox", choices=("local", "docker"), default="local")
    add_require_isolation(grading)
    add_executor_arguments(parser)
    options = parser.add_argument_group("policy options")
    options.add_argument("--batch-size", type=int, help="hf: prompts per generate call (default 8)")
    options.add_argument("--device", help="hf: torch device (default cpu)")
    options.add_argument("--dtype", help="hf: torch dtype name, e.g. float32")
    options.add_argument("--threads", type=int, help="hf: torch CPU threads (default: torch's own choice)")
    options.add_argument("--model", help="openai: model name (default: the server's first model)")
    options.add_argument("--concurrency", type=int, help="openai: requests in flight (default 8)")
    options.add_argument("--retries", type=int, help="openai: retries per request (default 4)")
    options.add_argument("--request-timeout", type=float, help="openai: seconds per request (default 120)")
    parser.set_defaults(func=run_bench_command)


def _add_sweep(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="run a grid of benches (policies x packs x settings) from a TOML config",
        description="Each grid cell is a resumable `rlvr bench` run under OUT/cells/; the combined table is "
        "OUT/sweep.csv and OUT/sweep.json, with plots and OUT/report.html. See rlvr.bench.sweep for the format.",
    )
    parser.add_argument("config", type=Path, help="sweep TOML file")
    parser.add_argument("--out", type=Path, help="sweep directory (default: the config's `out`)")
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    parser.set_defaults(func=run_sweep_command)


def add_parser(subparsers: Any) -> None:
    _add_bench(subparsers)
    _add_sweep(subparsers)


def _policy_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "batch_size": args.batch_size,
        "device": args.device,
        "dtype": args.dtype,
        "threads": args.threads,
        "model": args.model,
        "concurrency": args.concurrency,
        "retries": args.retries,
        "timeout": args.request_timeout,
    }


def _print_summary(results: dict[str, Any], out: Path) -> None:
    from rlvr.bench.report import flat_summary  # loads matplotlib: not on every `rlvr` start

    for name, metrics in results["packs"].items():
        row = flat_summary(metrics, results["k"])
        shown = ", ".join(
            f"{key}={value:.4f}" if isinstance(value, float) else f"{key}={value}"
            for key, value in row.items()
            if value is not None and not key.startswith(("component:", "grade_s", "latency_s_p95"))
        )
        print(f"{name}: {shown}")
    for note in results["notes"]:
        print(f"note: {note}", file=sys.stderr)
    print(f"report: {out / 'report.html'}")


def run_bench_command(args: argparse.Namespace) -> int:
    from rlvr.bench.runner import BenchSpec, GraderCache, run_bench

    try:
        settings = Settings(
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.max_tokens,
            stop=tuple(args.stop),
            prompt_format=args.prompt_format,
            system=args.system,
        )
        spec = BenchSpec(
            packs=list(args.pack),
            out=args.out,
            ks=args.k,
            n=args.n,
            split=args.split,
            seed=args.seed,
            progress=False if args.no_progress else None,
        )
        grader_options: dict[str, Any] = {"sandbox": args.sandbox}
        if args.jobs is not None:
            grader_options["jobs"] = args.jobs
        policy = make_policy(args.policy, settings, **_policy_options(args))
    except (BenchError, PolicyError, PackError) as exc:
        print(f"rlvr bench: {exc}", file=sys.stderr)
        return 2
    graders = GraderCache(
        lambda pack: grader_from_args(pack, args, **honoured(pack, grader_options, "rlvr bench"))
    )
    try:
        results = run_bench(spec, policy, graders)
    except (BenchError, PolicyError, PackError) as exc:
        print(f"rlvr bench: {exc}", file=sys.stderr)
        return 2
    finally:
        policy.close()
        graders.close()
    _print_summary(results, args.out)
    return 0


def run_sweep_command(args: argparse.Namespace) -> int:
    from rlvr.bench.sweep import load_config, run_sweep

    try:
        config = load_config(args.config)
    except BenchError as exc:
        print(f"rlvr sweep: {exc}", file=sys.stderr)
        return 2
    out = args.out or config.out
    if out is None:
        print('rlvr sweep: give --out or set `out = "..."` in the config', file=sys.stderr)
        return 2
    summary = run_sweep(config, out, progress=False if args.no_progress else None)
    for row in summary["cells"]:
        values = ", ".join(
            f"{k}={row[k]:.4f}" for k in row if k.startswith("pass@") and isinstance(row[k], float)
        )
        print(f"{row['cell']}: {row['error'] or values or 'no pass@k'}")
    print(f"report: {out / 'report.html'}")
    return 1 if summary["failed_cells"] else 0
