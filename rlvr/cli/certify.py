"""`rlvr certify PACK`: a hackability certificate - exit 0 only when no exploit strategy gets through."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rlvr.cli.isolation import add_require_isolation


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "certify",
        help="run the shipped exploit strategies against a pack; exit 0 only when none gets through",
        description="Run every exploit strategy that applies to PACK's family (no-op and empty answers, "
        "format-only answers, special-casing the shown examples, limit and type escapes, sandbox probes, "
        "perf escapes, hedged math answers, hard-coded SQL, test tampering for repositories, ...) against "
        "a sample of its tasks, and print per strategy the best reward reached beside the honest "
        "reference's and the no-op's. Exit 0 when no strategy got through, 1 when one did, 2 when the "
        "pack could not be certified at all.",
    )
    parser.add_argument("pack", help="pack name or directory")
    parser.add_argument("--sample", type=int, default=6, help="tasks to attack (default 6; 0: every task)")
    parser.add_argument("--seed", type=int, default=0, help="which tasks are sampled")
    parser.add_argument("--json", action="store_true", help="print the certificate as one JSON object")
    parser.add_argument(
        "--timeout", type=float, help="seconds per candidate (default: the pack's; limit probes spend it)"
    )
    parser.add_argument(
        "--skip", action="append", default=[], metavar="STRATEGY", help="leave a strategy out"
    )
    parser.add_argument("--jobs", type=int, help="sandbox workers (default: one per core)")
    parser.add_argument("--sandbox", choices=("local", "docker"), default="local")
    add_require_isolation(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlvr.hacking.certify import certify_pack, format_certificate
    from rlvr.task_packs.registry import PackError, load_pack

    try:
        pack = load_pack(args.pack)
    except PackError as exc:
        print(f"rlvr certify: {exc}", file=sys.stderr)
        return 2
    if args.sample < 0:
        print("rlvr certify: --sample must be >= 0", file=sys.stderr)
        return 2
    try:
        options = {"jobs": args.jobs, "sandbox": args.sandbox, "timeout": args.timeout}
        report = certify_pack(pack, sample=args.sample, seed=args.seed, skip=set(args.skip), **options)
    except (TypeError, ValueError) as exc:  # a pack whose grader cannot be built
        print(f"rlvr certify: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        format_certificate(report)
    return 0 if report["certified"] else 1
