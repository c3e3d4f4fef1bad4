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
            "query minus its prompt) returns {rewards, scores, extra_logs}; GET /health."
        ),
    )
    parser.add_argument("--pack", required=True, help="pack name or directory")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument(
        "--jobs", type=int, default=None, help="sandbox workers (per Ray actor with --executor ray)"
    )
    parser.add_argument("--max-items", type=int, default=1024, help="items per request (larger: 413)")
    parser.add_argument("--max-body-mb", type=float, default=16.0, help="request body size limit in MiB")
    parser.add_argument(
        "--max-concurrent", type=int, default=16, help="requests held at once (more: 503 with Retry-After)"
    )
    parser.add_argument("--max-batch", type=int, default=256, help="items merged into one grading batch")
    parser.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    add_executor_arguments(parser)
    add_require_isolation(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from rlvr.integrations.openrlhf import ServerLimits, create_app
    except ImportError as exc:
        print(f"rlvr serve needs the serve extra (pip install 'rlvr[serve]'): {exc}", file=sys.stderr)
        return 2
    for name in ("max_items", "max_concurrent", "max_batch"):
        if getattr(args, name) < 1:
            print(f"--{name.replace('_', '-')} must be at least 1", file=sys.stderr)
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
    )
    app = create_app(grader, limits, executor=args.executor)
    print(
        f"rlvr serve: pack {pack.name!r} on http://{args.host}:{args.port}/get_reward",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
