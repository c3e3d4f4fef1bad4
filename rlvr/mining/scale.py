"""Mining many projects: one job per project, in this process one after another ("local") or as Ray
tasks on the existing executor's cluster ("ray": a private loopback-only cluster unless an address is
given, see rlvr/executors/ray_cluster.py). Each job writes its own pack directory under `out_root`."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.mining.miner import MineOptions, Miner, MiningError

EXECUTORS = ("local", "ray")


@dataclass
class MineOutcome:
    source: str
    out: str
    summary: dict[str, Any] | None
    error: str | None
    lines: list[str]


def pack_dir_name(source: Path) -> str:
    """`boltons-26.2.0.tar.gz` -> `boltons`; a directory keeps its name."""
    name = source.name
    for suffix in (".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return re.sub(r"[-_]\d[\w.]*$", "", name).replace("_", "-").lower() or "project"


def mine_one(source: str, out: str, options: MineOptions) -> MineOutcome:
    """One project's job (also what a Ray worker runs): a summary or the error, never a raise."""
    from rlvr.mining.environment import ProjectEnvironmentError

    miner = Miner(options)
    try:
        summary = miner.mine(Path(source), Path(out))
    except (MiningError, ProjectEnvironmentError) as exc:
        return MineOutcome(source, out, None, str(exc), [])
    finally:
        miner.close()
    return MineOutcome(source, out, dataclasses.asdict(summary), None, summary.lines())


def mine_many(
    sources: list[Path],
    out_root: Path,
    options: MineOptions,
    executor: str = "local",
    ray_address: str | None = None,
) -> list[MineOutcome]:
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}")
    names = [pack_dir_name(s) for s in sources]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two sources would write the same pack directory: {', '.join(duplicates)}")
    jobs = [(str(s), str(out_root / n)) for s, n in zip(sources, names, strict=True)]
    quiet = dataclasses.replace(options, progress=False) if len(jobs) > 1 else options
    if executor == "local":
        return [mine_one(source, out, quiet) for source, out in jobs]
    from rlvr.executors.ray_cluster import connect

    ray, started = connect(ray_address)
    try:
        remote = ray.remote(num_cpus=1)(mine_one)
        return list(ray.get([remote.remote(source, out, quiet) for source, out in jobs]))
    finally:
        if started:
            ray.shutdown()
