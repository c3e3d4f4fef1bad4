"""`rlvr packs mine SOURCE --out DIR`: make a Repo-v0 pack from a real Python project."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rlvr.mining.kinds import KINDS


def add_mine_parser(sub: Any) -> None:
    mine = sub.add_parser(
        "mine",
        help="mine Repo-v0 tasks from a Python project (a directory or an sdist .tar.gz) with a pytest suite",
    )
    mine.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="a project directory or an sdist (.tar.gz); several: one job each",
    )
    mine.add_argument(
        "--out",
        required=True,
        help="the pack directory to write (several sources: the directory that gets one pack per project)",
    )
    mine.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where the jobs run: one after another here, or as Ray tasks (default: local)",
    )
    mine.add_argument("--ray-address", default=None, help="an existing Ray cluster (default: a private one)")
    mine.add_argument("--name", default=None, help="pack and repository name (default: the project's)")
    mine.add_argument("--package", default=None, help="the package to mine (default: the project's main one)")
    mine.add_argument(
        "--kinds", default=",".join(KINDS), help=f"comma-separated task kinds (default: {','.join(KINDS)})"
    )
    mine.add_argument("--tasks", type=int, default=60, help="at most this many tasks (default: 60)")
    mine.add_argument("--seed", type=int, default=0)
    mine.add_argument(
        "--test-fraction",
        type=float,
        default=0.2,
        help="share of the package's modules held out: their tasks form the test split (default: 0.2)",
    )
    mine.add_argument(
        "--test-modules",
        default="",
        help="comma-separated dotted modules held out instead of --test-fraction",
    )
    mine.add_argument(
        "--time-budget", type=float, default=900.0, help="seconds for the whole run (default: 900)"
    )
    mine.add_argument(
        "--allow-failing",
        action="store_true",
        help="mine from the tests that pass on the reference when some fail (default: refuse, listing them)",
    )
    mine.add_argument(
        "--no-deps", action="store_true", help="do not install the project's declared dependencies"
    )
    mine.add_argument("--no-verify", action="store_true", help="skip grading each task's reference and no-op")
    mine.add_argument("--quiet", action="store_true", help="no progress bars")
    mine.set_defaults(func=run_mine)


def run_mine(args: argparse.Namespace) -> int:
    from rlvr.mining.environment import ProjectEnvironmentError
    from rlvr.mining.miner import MineOptions, Miner, MiningError

    try:
        options = MineOptions(
            kinds=tuple(k.strip() for k in args.kinds.split(",") if k.strip()),
            max_tasks=args.tasks,
            seed=args.seed,
            test_fraction=args.test_fraction,
            test_modules=tuple(m.strip() for m in args.test_modules.split(",") if m.strip()),
            time_budget=args.time_budget,
            allow_failing=args.allow_failing,
            install_deps=not args.no_deps,
            package=args.package,
            name=args.name,
            verify=not args.no_verify,
            progress=not args.quiet,
        )
    except ValueError as exc:
        print(f"rlvr packs mine: {exc}", file=sys.stderr)
        return 2
    if len(args.sources) > 1 or args.executor == "ray":
        return _mine_many(args, options)
    miner = Miner(options)
    try:
        summary = miner.mine(Path(args.sources[0]), Path(args.out))
    except (MiningError, ProjectEnvironmentError) as exc:
        print(f"rlvr packs mine: {exc}", file=sys.stderr)
        return 1
    finally:
        miner.close()
    for line in summary.lines():
        print(line)
    kept = sum(summary.kept.values())
    print(f"wrote {kept} task(s) to {args.out}")
    return 0 if kept else 1


def _mine_many(args: argparse.Namespace, options: Any) -> int:
    from rlvr.mining.scale import mine_many

    try:
        outcomes = mine_many(
            [Path(s) for s in args.sources], Path(args.out), options, args.executor, args.ray_address
        )
    except ValueError as exc:
        print(f"rlvr packs mine: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for outcome in outcomes:
        if outcome.error:
            failed += 1
            print(f"{outcome.source}: not mined: {outcome.error}", file=sys.stderr)
        else:
            print("\n".join(outcome.lines))
            print(f"  -> {outcome.out}")
    return 1 if failed else 0
