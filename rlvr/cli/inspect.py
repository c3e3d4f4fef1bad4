"""`rlvr inspect RUN_DIR|RESULTS_DIR`: the top suspicious samples of a run, hard-coding first."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rlvr.bench.inspect import InspectError, suspicious_samples


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "inspect", help="list the most suspicious samples (exploit flags) of a bench or training run"
    )
    parser.add_argument("path", help="a `rlvr bench --out` directory or a `rlvr train` run directory")
    parser.add_argument("--top", type=int, default=20, help="how many samples to list (default 20)")
    parser.add_argument("--json", action="store_true", help="one JSON object per sample, for tooling")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        samples = suspicious_samples(args.path, top=args.top)
    except InspectError as exc:
        print(f"rlvr inspect: {exc}", file=sys.stderr)
        return 2
    if args.json:
        for sample in samples:
            print(json.dumps(sample.to_json()))
        return 0
    if not samples:
        print("no sample carries an exploit flag")
        return 0
    for rank, sample in enumerate(samples, start=1):
        step = f" step {sample.step}" if sample.step is not None else ""
        print(f"#{rank} {sample.task_id}{step} reward={sample.reward:.3f} flags={','.join(sample.flags)}")
        print(f"   why: {sample.reason}  ({sample.source})")
        preview = sample.completion.strip().splitlines()[:8]
        for line in preview:
            print(f"   | {line[:120]}")
    return 0
