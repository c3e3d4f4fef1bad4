"""Where grading runs: in this process ("local") or on Ray actors ("ray").

CLIs add `--executor local|ray`, `--ray-address ADDR` and `--ray-workers N` with
`add_executor_arguments(parser)` and build their grader with `grader_from_args(pack, args, **opts)`;
library code calls `make_executor_grader(pack, executor, ray_address, **opts)` directly.
"""

from __future__ import annotations

import argparse
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.graders.base import Grader, make_grader
from rlvr.task_packs.registry import resolve_pack

EXECUTORS = ("local", "ray")


def make_executor_grader(
    pack: TaskPack | str,
    executor: str = "local",
    ray_address: str | None = None,
    **options: Any,
) -> Grader:
    """A grader for `pack` that runs on `executor`.

    "local" is `make_grader(pack, **options)`. "ray" is a `RayGrader` on the cluster at
    `ray_address` (None starts a private loopback-only cluster); `workers` (actors) and the other
    `RayGrader` keywords may be passed in `options`, the rest reach each actor's grader.
    """
    if executor == "local":
        if ray_address is not None:
            raise ValueError("--ray-address needs --executor ray")
        options.pop("workers", None)
        return make_grader(resolve_pack(pack), **options)
    if executor == "ray":
        from rlvr.executors.ray_grader import RayGrader

        return RayGrader(pack, address=ray_address, **options)
    raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """The `--executor`, `--ray-address` and `--ray-workers` options shared by grade/bench/train."""
    group = parser.add_argument_group("executor")
    group.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="where graders run: this process (local) or Ray actors (ray)",
    )
    group.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="Ray cluster to use (auto, HOST:PORT, ray://HOST:PORT); default: a private loopback cluster",
    )
    group.add_argument(
        "--ray-workers",
        type=int,
        default=None,
        metavar="N",
        help="grading actors on Ray (default: one per CPU of the cluster)",
    )


def grader_from_args(pack: TaskPack | str, args: argparse.Namespace, **options: Any) -> Grader:
    """`make_executor_grader` from parsed `add_executor_arguments` options."""
    executor = getattr(args, "executor", "local") or "local"
    if executor == "ray" and getattr(args, "ray_workers", None) is not None:
        options["workers"] = args.ray_workers
    return make_executor_grader(pack, executor, getattr(args, "ray_address", None), **options)
