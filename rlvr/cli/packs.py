"""`rlvr packs list|show|validate`."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlvr.core.pack import Problem, TaskPack
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.importers import FORMATS, import_dataset
from rlvr.task_packs.registry import PackError, available_names, list_packs, load_pack


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
    from rich.table import Table

    table = Table("name", "family", "size", "splits", "description")
    for pack in packs:
        table.add_row(
            pack["name"],
            str(pack.get("family")),
            str(pack.get("size")),
            ",".join(pack.get("splits") or []),
            pack.get("error") or pack.get("description", ""),
        )
    Console().print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    try:
        pack = load_pack(args.name)
        info = pack.info()
    except (PackError, ValueError) as exc:
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
    if not Path(args.path).is_dir() and args.path in available_names():
        return _validate_named_pack(args.path)
    from rlvr.graders.tool.validation import reference_problems

    problems = validate_directory(args.path, provers={"tool": reference_problems})
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"{len(problems)} problem(s) in {args.path}", file=sys.stderr)
        return 1
    pack = load_pack(args.path)
    if pack.family == "repo" and _prove_repo(pack, args.path):
        return 1
    print(f"ok: {pack.name} ({pack.family}), {len(pack.tasks())} tasks, splits {pack.splits()}")
    return 0


def _prove_repo(pack: TaskPack, where: str) -> int:
    """Repo packs are proved by running every task (reference, base state, no-op reward per task)."""
    from rlvr.graders.repo.prove import prove_repo_tasks

    report = prove_repo_tasks(where, pack.tasks())
    for proof in report.proofs:
        noop = proof.trivial_rewards.get("no-op")
        reference = "?" if proof.reference_reward is None else f"{proof.reference_reward:.3f}"
        print(f"{proof.task_id}: reference {reference}, no-op {'?' if noop is None else f'{noop:.3f}'}")
    for problem in report.problems:
        print(problem, file=sys.stderr)
    if report.problems:
        print(f"{len(report.problems)} problem(s) in {where}", file=sys.stderr)
    return len(report.problems)


def _validate_named_pack(name: str) -> int:
    """A plugin pack validates itself when it offers `validate() -> list[problem]`; a code pack is
    checked task by task (hidden spec, reference, oracle and generated hidden tests)."""
    pack = load_pack(name)
    validate: Callable[[], list[Problem]] | None = getattr(pack, "validate", None)
    if validate is None and pack.family == "code":
        from rlvr.graders.code.validation import validate_code_pack

        validate = functools.partial(validate_code_pack, pack)
    if validate is None:
        print(f"rlvr packs validate: pack {name!r} has no validator; pass a pack directory", file=sys.stderr)
        return 2
    problems = validate()
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in pack {name}", file=sys.stderr)
        return 1
    if pack.family == "repo" and _prove_repo(pack, name):
        return 1
    print(f"ok: {pack.name} ({pack.family}), {len(pack.tasks())} tasks, splits {pack.splits()}")
    return 0
