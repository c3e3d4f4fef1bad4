"""`rlvr packs list|show|validate`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rlvr.core.pack import MissingExtra, Problem
from rlvr.core.validation import TRIVIAL_REWARD_LIMIT, TaskProof, ValidationReport
from rlvr.graders.base import NoProver, prove_pack_tasks
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.importers import FORMATS, import_dataset
from rlvr.task_packs.registry import PackError, available_names, list_packs, load_pack

PROVE_CHUNK = 200  # tasks per prover call (one grader each); one progress step
REPO_PROVE_CHUNK = 10  # repo tasks take seconds each


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("packs", help="list, inspect and validate task packs")
    sub = parser.add_subparsers(dest="packs_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="list available packs")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(func=run_list)
    show = sub.add_parser("show", help="describe one pack")
    show.add_argument("name", help="pack name or directory")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=run_show)
    validate = sub.add_parser(
        "validate", help="check a pack directory (pack.toml + tasks.jsonl) or a named pack"
    )
    validate.add_argument("path")
    validate.add_argument(
        "--format-only",
        action="store_true",
        help="check the files only (fields, types, file:line problems); do not grade references",
    )
    validate.add_argument(
        "--quiet", action="store_true", help="print problems and the summary, not every task"
    )
    validate.add_argument("--json", action="store_true", help="per-task proofs and problems as JSON")
    validate.set_defaults(func=run_validate)
    importing = sub.add_parser(
        "import", help="make a pack from a dataset file (APPS/TACO, CodeContests, LiveCodeBench, JSONL)"
    )
    importing.add_argument("file", help="a .jsonl, .json or .parquet file")
    importing.add_argument(
        "--format", required=True, choices=FORMATS, dest="layout", help="the file's layout"
    )
    importing.add_argument("--out", required=True, help="directory to write pack.toml and tasks.jsonl to")
    importing.add_argument("--name", default=None, help="pack name (default: the --out directory's name)")
    importing.add_argument("--split", default="train", help="split of rows that name none (default: train)")
    importing.set_defaults(func=run_import)
    from rlvr.cli.mine import add_mine_parser

    add_mine_parser(sub)


def run_import(args: argparse.Namespace) -> int:
    """Import every good row; report each bad one with file, row and field (exit 1 if any)."""
    source = Path(args.file)
    if not source.is_file():
        print(f"rlvr packs import: no such file: {source}", file=sys.stderr)
        return 2
    count, problems = import_dataset(source, args.layout, args.out, name=args.name, split=args.split)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"wrote {count} task(s) to {args.out}" + (f"; {len(problems)} row(s) skipped" if problems else ""))
    return 1 if problems else 0


def run_list(args: argparse.Namespace) -> int:
    packs = list_packs()
    if args.json:
        print(json.dumps([{k: p.get(k) for k in ("name", "family", "size", "splits")} for p in packs]))
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table("name", "family", "size", "splits", "description")
    for pack in packs:  # escaped: `rlvr[reasoning]` in a hint is text, not rich markup
        table.add_row(
            escape(pack["name"]),
            str(pack.get("family")),
            str(pack.get("size")),
            escape(",".join(pack.get("splits") or [])),
            escape(pack.get("error") or pack.get("description", "")),
        )
    Console().print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    try:
        pack = load_pack(args.name)
        info = pack.info()
    except (PackError, ValueError, MissingExtra) as exc:
        print(f"rlvr packs show: {exc}", file=sys.stderr)
        return 2
    tasks = pack.tasks()
    by_difficulty: dict[int, int] = {}
    for task in tasks:
        by_difficulty[task.difficulty] = by_difficulty.get(task.difficulty, 0) + 1
    info["difficulties"] = dict(sorted(by_difficulty.items()))
    info["weights"] = pack.weights
    info["example_task_ids"] = [t.id for t in tasks[:5]]
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        for key, value in info.items():
            print(f"{key:>18}: {value}")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    """Check the pack's files, then prove every task: its reference passes every gate with reward 1.0 and
    no trivial answer (empty, no-op, format-only) earns TRIVIAL_REWARD_LIMIT or more."""
    from rlvr.graders.tool.validation import reference_problems

    named = not Path(args.path).is_dir() and args.path in available_names()
    problems: list[Problem] = (
        [] if named else validate_directory(args.path, provers={"tool": reference_problems})
    )
    if problems:
        return _report_problems(problems, args.path)
    try:
        pack = load_pack(args.path)
        tasks = pack.tasks()
    except Exception as exc:  # a plugin that cannot load is the pack's problem, said in one line
        print(f"rlvr packs validate: {exc}", file=sys.stderr)
        return 2
    validate: Callable[[], list[Problem]] | None = getattr(pack, "validate", None) if named else None
    if validate is not None:
        problems += validate()
    if args.format_only:
        if not named and not problems:
            print(f"ok (format): {pack.name} ({pack.family}), {len(tasks)} tasks, splits {pack.splits()}")
            return 0
        if named and validate is None and pack.family == "code":
            from rlvr.graders.code.validation import validate_code_pack

            problems += validate_code_pack(pack)
        return _report_problems(problems, args.path) if problems else _ok(pack, len(tasks), None)
    try:
        report, seconds = _prove(pack, tasks, args.path)
    except NoProver as exc:
        print(f"rlvr packs validate: {exc}; only the files were checked", file=sys.stderr)
        return _report_problems(problems, args.path) if problems else _ok(pack, len(tasks), None)
    problems += report.problems
    if args.json:
        print(
            json.dumps(
                {"proofs": [asdict(p) for p in report.proofs], "problems": [asdict(p) for p in problems]}
            )
        )
    elif not args.quiet:
        for proof in report.proofs:
            print(_proof_line(proof))
    if report.proofs:
        _summary(report.proofs, seconds)
    return _report_problems(problems, args.path) if problems else _ok(pack, len(tasks), seconds)


def _prove(pack: Any, tasks: list[Any], where: str) -> tuple[ValidationReport, float]:
    """The family's prover over every task, in chunks (one progress step each)."""
    from rich.progress import Progress

    report = ValidationReport()
    started = time.perf_counter()
    with Progress(transient=True, console=_stderr_console()) as progress:
        bar = progress.add_task(f"proving {pack.name}", total=len(tasks))
        size = REPO_PROVE_CHUNK if pack.family == "repo" else PROVE_CHUNK
        for start in range(0, len(tasks), size):
            chunk = prove_pack_tasks(where, pack, tasks[start : start + size])
            report.problems += chunk.problems
            report.proofs += chunk.proofs
            progress.advance(bar, len(tasks[start : start + size]))
    return report, time.perf_counter() - started


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def _proof_line(proof: TaskProof) -> str:
    reference = "?" if proof.reference_reward is None else f"{proof.reference_reward:.3f}"
    trivial = "".join(f", {name} {reward:.3f}" for name, reward in proof.trivial_rewards.items())
    return f"{proof.task_id}: reference {reference}{trivial}"


def _summary(proofs: list[TaskProof], seconds: float) -> None:
    worst: dict[str, float] = {}
    for proof in proofs:
        for name, reward in proof.trivial_rewards.items():
            worst[name] = max(worst.get(name, 0.0), reward)
    graded = [p.reference_reward for p in proofs if p.reference_reward is not None]
    at_one = sum(reward >= 1.0 - 1e-9 for reward in graded)
    trivia = ", ".join(f"{name} {reward:.3f}" for name, reward in worst.items())
    print(
        f"proved {len(proofs)} task(s) in {seconds:.1f}s ({100 * seconds / max(1, len(proofs)):.1f}s per 100): "
        f"reference 1.0 on {at_one}/{len(graded)}; highest trivial rewards: {trivia or 'none'} "
        f"(limit {TRIVIAL_REWARD_LIMIT})"
    )


def _report_problems(problems: list[Problem], where: str) -> int:
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(problems)} problem(s) in {where}", file=sys.stderr)
    return 1


def _ok(pack: Any, size: int, seconds: float | None) -> int:
    proved = "" if seconds is None else ", every task proved"
    print(f"ok: {pack.name} ({pack.family}), {size} tasks, splits {pack.splits()}{proved}")
    return 0
