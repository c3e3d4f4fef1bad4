"""`rlvr serve`: an OpenRLHF-compatible reward server for one pack (see rlvr.integrations.openrlhf)."""

from __future__ import annotations

import argparse
import sys

from rlvr.cli.isolation import add_require_isolation
from rlvr.executors import add_executor_arguments, grader_from_args
from rlvr.task_packs.registry import PackError, load_pack


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "serve",
        help="serve rewards over HTTP (OpenRLHF --remote_rm_url protocol)",
        description=(
            "POST /get_reward with {query, prompts, labels} (labels are task ids; the completion is the "
            "query minus its prompt) returns {rewards, scores, extra_logs}. Requests wait in one "
            "first-come-first-served queue bounded in items; items of concurrent requests are graded in "
            "shared batches; a full queue answers 503 with Retry-After (its estimated drain time). "
            "Optional header X-Deadline-Seconds: answer 504 instead of waiting longer. "
            "GET /health (JSON) and GET /metrics (Prometheus)."
        ),
    )
    parser.add_argument("--pack", required=True, help="pack name or directory")
    parser.add_argument(
        "--protocol",
        choices=["openrlhf", "openenv"],
        default="openrlhf",
        help="openrlhf: the reward server (default); openenv: an OpenEnv environment server of the pack's "
        "agent env (WebSocket sessions; see rlvr.integrations.openenv)",
    )
    parser.add_argument("--split", default=None, help="openenv: the split whose tasks reset() draws from")
    parser.add_argument("--max-sessions", type=int, default=2048, help="openenv: concurrent sessions")
    parser.add_argument(
        "--idle-timeout", type=float, default=600.0, help="openenv: seconds before an idle session is closed"
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument(
        "--jobs", type=int, default=None, help="sandbox workers (per Ray actor with --executor ray)"
    )
    parser.add_argument("--max-items", type=int, default=1024, help="items per request (larger: 413)")
    parser.add_argument("--max-body-mb", type=float, default=16.0, help="request body size limit in MiB")
    parser.add_argument(
        "--queue-items",
        type=int,
        default=20_000,
        help="items waiting to be graded, all requests together (more: 503 with Retry-After; default: 20000)",
    )
    parser.add_argument(
        "--cache-items",
        type=int,
        default=65_536,
        help="verdicts remembered; a repeated (task, completion) is answered from them (0: no cache)",
    )
    parser.add_argument(
        "--max-concurrent",
        type=int,
        default=512,
        help="requests held at once, queued ones included; bounds request bodies in memory (default: 512)",
    )
    parser.add_argument("--max-batch", type=int, default=256, help="items merged into one grading batch")
    parser.add_argument(
        "--grading-threads",
        type=int,
        default=None,
        help="batches graded at once (default: 2 for a local code pack, else 1; above 1 needs a local code pack)",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    add_executor_arguments(parser)
    add_require_isolation(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.protocol == "openenv":
        from rlvr.cli.serve_openenv import run_openenv

        return run_openenv(args)
    try:
        import uvicorn

        from rlvr.integrations.openrlhf import ServerLimits, create_app
    except ImportError as exc:
        print(f"rlvr serve needs the serve extra (pip install 'rlvr[serve]'): {exc}", file=sys.stderr)
        return 2
    for name in ("max_items", "max_concurrent", "max_batch", "queue_items", "grading_threads"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            print(f"--{name.replace('_', '-')} must be at least 1", file=sys.stderr)
            return 2
    if args.cache_items < 0:
        print("--cache-items must be 0 (no cache) or more", file=sys.stderr)
        return 2
    try:
        pack = load_pack(args.pack)
    except PackError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    options = {"jobs": args.jobs} if args.jobs else {}
    grader = grader_from_args(pack, args, **options)
    limits = ServerLimits(
        max_items=args.max_items,
        max_body_bytes=int(args.max_body_mb * (1 << 20)),
        max_concurrent_requests=args.max_concurrent,
        max_batch=args.max_batch,
        queue_items=args.queue_items,
        cache_items=args.cache_items,
        grading_threads=args.grading_threads,
    )
    try:
        app = create_app(grader, limits, executor=args.executor)
    except ValueError as exc:
        grader.close()
        print(f"rlvr serve: {exc}", file=sys.stderr)
        return 2
    print(
        f"rlvr serve: pack {pack.name!r} on http://{args.host}:{args.port}/get_reward",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
