"""`rlvr grade`: grade a JSONL file of completions; one verdict line per input line, same order."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlvr.cli.completions import read_completions
from rlvr.cli.grader_flags import honoured
from rlvr.cli.isolation import add_require_isolation
from rlvr.cli.swebench import add_options as add_swebench_options
from rlvr.cli.swebench import run_swebench
from rlvr.core.types import Verdict
from rlvr.graders.base import Grader, grade_or_fault, make_grader
from rlvr.task_packs.registry import PackError, load_pack


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "grade",
        help="grade completions from a JSONL file",
        description="Grade completions against a pack's tasks (--pack), or candidate patches against "
        "SWE-bench-style instances run in docker (--swebench INSTANCES.jsonl; verdicts flagged "
        "untrusted_runner).",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pack", help="pack name (see `rlvr packs list`) or directory")
    source.add_argument(
        "--swebench",
        type=Path,
        metavar="INSTANCES.jsonl",
        help="SWE-bench-style instances (instance_id, repo: a local git repository, base_commit, "
        "FAIL_TO_PASS, PASS_TO_PASS, optional test_patch); completions are patches, one line "
        '{"task_id"|"instance_id", "completion"|"model_patch"} each; runs pytest in docker; --jobs = '
        "concurrent containers (default 1)",
    )
    parser.add_argument(
        "--completions", required=True, type=Path, help='JSONL: {"task_id", "completion"} per line'
    )
    parser.add_argument("--out", required=True, type=Path, help="where to write one verdict per line")
    parser.add_argument("--jobs", type=int, default=None, help="sandbox workers (default: one per core)")
    parser.add_argument("--sandbox", default="local", choices=["local", "docker"], help="sandbox backend")
    parser.add_argument("--runtime", default=None, help="docker runtime, e.g. runsc (gVisor)")
    parser.add_argument("--executor", default="local", choices=["local", "ray"], help="where graders run")
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (with --executor ray)")
    parser.add_argument("--batch-size", type=int, default=512, help="lines graded per batch")
    parser.add_argument("--no-types", action="store_true", help="skip the type layer (its weight becomes 0)")
    add_swebench_options(parser)
    add_require_isolation(parser)
    parser.set_defaults(func=run)


def read_lines(path: Path) -> Iterator[tuple[int, str | None, str | None, str | None]]:
    """(line number, task_id, completion, error) for every non-blank line; never raises on content."""
    return read_completions(path)


def _grader(args: argparse.Namespace, pack: Any) -> Grader:
    options: dict[str, Any] = {"sandbox": args.sandbox, "jobs": args.jobs, "runtime": args.runtime}
    options = honoured(pack, options, "rlvr grade")
    if args.no_types:
        options["types"] = False
    if args.executor == "ray":
        try:
            from rlvr.executors import make_executor_grader
        except ImportError as exc:
            raise SystemExit(
                f"rlvr grade: --executor ray needs the ray extra: pip install 'rlvr[ray]' ({exc})"
            ) from exc
        return make_executor_grader(pack, executor="ray", ray_address=args.ray_address, **options)
    return make_grader(pack, **options)


def _progress(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="line", desc="grading", disable=not sys.stderr.isatty(), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    if args.swebench is not None:
        return run_swebench(args)
    if not args.completions.is_file():
        print(f"rlvr grade: {args.completions} does not exist", file=sys.stderr)
        return 2
    try:
        pack = load_pack(args.pack)
        pack.all_tasks()
    except (PackError, ValueError) as exc:
        print(f"rlvr grade: {exc}", file=sys.stderr)
        return 2
    lines = list(read_lines(args.completions))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with (
        _grader(args, pack) as grader,
        args.out.open("w", encoding="utf-8", errors="backslashreplace") as out,
        _progress(len(lines)) as bar,
    ):
        for start in range(0, len(lines), max(1, args.batch_size)):
            batch = lines[start : start + args.batch_size]
            good = [(n, t, c) for n, t, c, e in batch if e is None and t is not None and c is not None]
            graded = grade_or_fault(grader, [t for _, t, _ in good], [c for _, _, c in good]) if good else []
            by_line: dict[int, Verdict] = {n: v for (n, _, _), v in zip(good, graded, strict=True)}
            for number, task_id, _, error in batch:
                verdict = by_line.get(number) or Verdict.failure(task_id or "", error or "ungraded")
                out.write(json.dumps({"line": number, **verdict.to_json()}, ensure_ascii=False) + "\n")
                written += 1
            out.flush()
            bar.update(len(batch))
    flagged = sum(1 for _, _, _, e in lines if e)
    print(
        f"graded {written} lines -> {args.out}" + (f" ({flagged} malformed, flagged)" if flagged else ""),
        file=sys.stderr,
    )
    return 0 if written == len(lines) else 1
