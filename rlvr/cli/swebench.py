"""`rlvr grade --swebench INSTANCES.jsonl --completions PATCHES.jsonl --out OUT.jsonl`: grade candidate
patches for SWE-bench-style instances (a local git repository + base commit + FAIL_TO_PASS /
PASS_TO_PASS pytest ids; see rlvr/graders/repo/swebench.py) by running the repository's tests in
docker. Same contract as `rlvr grade`: one verdict line per non-blank input line, in order, with its
line number; a malformed line is a flagged verdict, never a crash. Every verdict decided by pytest
carries the flag `untrusted_runner` (README: what it means).

PATCHES.jsonl lines are `{"task_id": INSTANCE_ID, "completion": PATCH}` (rlvr's form) or SWE-bench's
predictions form `{"instance_id": ..., "model_patch": ...}`; a patch is a unified diff or whole-file
blocks. Malformed instance lines are reported on stderr with their line number and skipped; a patch for
such an instance gets a verdict saying which line is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rlvr.cli.completions import read_completions
from rlvr.core.types import Verdict
from rlvr.graders.repo.swebench import SweBenchRunner, SweInstance, read_instances

NO_ENGINE_HELP = (
    "start the docker engine (e.g. `sudo systemctl start docker`, or `bash scripts/services/docker.sh` "
    "in an rlvr checkout) or point DOCKER_HOST at a running one, then rerun"
)
ID_KEYS = ("task_id", "instance_id")
PATCH_KEYS = ("completion", "model_patch")


def read_patches(path: Path) -> Iterator[tuple[int, str | None, str | None, str | None]]:
    """(line number, instance id, patch, error) for every non-blank line; never raises on content.
    A line is rlvr's `{"task_id", "completion"}` or SWE-bench's `{"instance_id", "model_patch"}`."""
    return read_completions(path, ID_KEYS, PATCH_KEYS)


def check_engine(runner: SweBenchRunner) -> str | None:
    """None if a docker engine answers (its client is kept by `runner`), else what to tell the user."""
    from rlvr.sandbox import SandboxUnavailable

    try:
        runner.connect()
    except SandboxUnavailable as exc:
        reason = str(exc)
        if "pip install" in reason:
            return f"{reason}; then rerun"
        return f"{reason}\n  --swebench runs each instance's tests in a docker container: {NO_ENGINE_HELP}"
    return None


def run_swebench(args: argparse.Namespace) -> int:
    prog = "rlvr grade --swebench"
    for path, what in ((args.swebench, "instances"), (args.completions, "completions")):
        if not path.is_file():
            print(f"{prog}: the {what} file {path} does not exist", file=sys.stderr)
            return 2
    if args.executor != "local":
        print(
            f"{prog}: --executor {args.executor} is not supported; instances run here, in docker",
            file=sys.stderr,
        )
        return 2
    instances, problems = read_instances(args.swebench)
    broken: dict[str, str] = {}
    for number, problem, named in problems:
        print(f"{args.swebench}:{number}: {problem} (instance line skipped)", file=sys.stderr)
        if named is not None and named not in instances:
            broken.setdefault(named, f"{args.swebench}:{number}: {problem}")
    lines = list(read_patches(args.completions))
    runner = SweBenchRunner(timeout=args.timeout, image=args.image, runtime=args.runtime)
    try:
        return _grade(args, prog, runner, instances, broken, lines)
    finally:
        runner.close()


def _instance_for(
    instance_id: str | None, instances: dict[str, tuple[int, SweInstance]], broken: dict[str, str]
) -> tuple[SweInstance | None, str | None]:
    if instance_id is None:
        return None, None
    if instance_id in instances:
        return instances[instance_id][1], None
    if instance_id in broken:
        return None, f"the instance is malformed: {broken[instance_id]}"
    return None, f"no instance {instance_id!r} in the instances file"


def _grade(
    args: argparse.Namespace,
    prog: str,
    runner: SweBenchRunner,
    instances: dict[str, tuple[int, SweInstance]],
    broken: dict[str, str],
    lines: list[tuple[int, str | None, str | None, str | None]],
) -> int:
    verdicts: dict[int, Verdict] = {}
    pending: list[tuple[int, SweInstance, str]] = []
    for number, instance_id, patch, error in lines:
        instance, missing = _instance_for(instance_id, instances, broken)
        if error is not None or patch is None:
            verdicts[number] = Verdict.failure(instance_id or "", error or "no patch")
        elif instance is None:
            fault = "task" if instance_id in broken else "input"
            verdicts[number] = Verdict.failure(instance_id or "", f"line {number}: {missing}", fault=fault)
        else:
            decided = runner.decided_without_running(instance, patch)
            if decided is not None:
                verdicts[number] = decided
            else:
                pending.append((number, instance, patch))
    if pending:
        problem = check_engine(runner)
        if problem is not None:
            print(f"{prog}: {problem}", file=sys.stderr)
            return 2
    jobs = max(1, args.jobs or 1)
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="rlvr-swe") as pool:
        graded = pool.map(lambda item: runner.grade(item[1], item[2]), pending)
        for (number, _, _), verdict in zip(pending, graded, strict=True):
            verdicts[number] = verdict
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", errors="backslashreplace") as out:
        for number, *_ in lines:
            out.write(json.dumps({"line": number, **verdicts[number].to_json()}, ensure_ascii=False) + "\n")
    flagged = sum(1 for *_, error in lines if error)
    resolved = sum(1 for v in verdicts.values() if v.passed)
    print(
        f"graded {len(lines)} lines -> {args.out}: {resolved} resolved"
        + (f" ({flagged} malformed, flagged)" if flagged else "")
        + (" [untrusted_runner: the repositories' own pytest decided these; see README]" if pending else ""),
        file=sys.stderr,
    )
    return 0


def add_options(parser: Any) -> None:
    """The `rlvr grade` options that only apply with --swebench."""
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per instance's test run (with --swebench)"
    )
    parser.add_argument(
        "--image", default=None, help="local docker image for the test runs (with --swebench; default: empty)"
    )
