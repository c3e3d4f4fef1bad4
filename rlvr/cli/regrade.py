"""`rlvr regrade RUN_DIR`: re-score a run's stored candidates and report the verdicts that flip."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rlvr.cli.isolation import add_require_isolation


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "regrade",
        help="re-score a bench or training run's stored candidates; report flips by task and flag",
        description="Re-grade every stored candidate of RUN_DIR (a `rlvr bench --out` or `rlvr train` "
        "directory) with today's grader and the run's recorded options (or --pack / --set), and report "
        "the verdicts that flip (fail->pass, pass->fail) by task and by exploit flag, with the "
        "candidates, and how the run's curves would move. --compare A B grades the same candidates "
        "under two configurations: 'recorded' (the stored verdicts), 'current', option=value[,...] or "
        "a .json/.toml file of options. Exit 0 when it ran (whatever flipped), 2 when it could not.",
    )
    parser.add_argument("run_dir", type=Path, help="a bench or training run directory")
    parser.add_argument("--pack", help="grade with this pack (name or directory) instead of the run's")
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="a grader option for the regrade, e.g. verifier=visible (repeatable; JSON values)",
    )
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two grader configurations")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--plot", type=Path, help="write the before/after curves to this PNG")
    parser.add_argument("--top", type=int, default=10, help="flips and tasks listed in the text report")
    add_require_isolation(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlvr.hacking.regrade import (
        Configuration,
        RegradeError,
        format_report,
        parse_configuration,
        parse_settings,
        regrade_run,
    )
    from rlvr.trainer.candidates import CandidateStoreError

    try:
        overrides = parse_settings(args.settings)
        if args.compare:
            before, after = (parse_configuration(text) for text in args.compare)
            if overrides:
                before = Configuration(before.label, before.recorded, {**before.overrides, **overrides})
                after = Configuration(after.label, after.recorded, {**after.overrides, **overrides})
        else:
            before = None
            label = ",".join(args.settings) if args.settings else "current"
            after = Configuration(label, overrides=overrides)
        report = regrade_run(args.run_dir, pack=args.pack, before=before, after=after)
    except (RegradeError, CandidateStoreError) as exc:
        print(f"rlvr regrade: {exc}", file=sys.stderr)
        return 2
    if args.plot:
        from rlvr.hacking.plots import regrade_curves

        regrade_curves(args.plot, report)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        format_report(report, top=args.top)
    return 0
