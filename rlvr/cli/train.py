"""`rlvr train [CONFIG.toml] [--set section.key=value ...] [--out DIR] | --resume DIR`.

With no arguments: the embedded-default demo (tiny local model, SFT warm start, GRPO on the
built-in `tiny-functions` pack, CPU). Every input problem is reported before any work starts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from rlvr.cli.isolation import add_require_isolation
from rlvr.trainer.config import ConfigError, TrainConfig, build_config, from_dict


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "train",
        help="GRPO training (no arguments: the CPU demo on a tiny local model)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", nargs="?", help="TOML file with [model] [sft] [grpo] [run] tables")
    parser.add_argument(
        "--set",
        dest="assignments",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override one setting, e.g. --set grpo.steps=10 (repeatable)",
    )
    parser.add_argument(
        "--model", help="local Hugging Face causal-LM directory (same as --set model.path=...)"
    )
    parser.add_argument("--pack", help="task pack name or directory (same as --set run.pack=...)")
    parser.add_argument("--steps", type=int, help="GRPO steps (same as --set grpo.steps=...)")
    parser.add_argument("--seed", type=int, help="random seed (same as --set run.seed=...)")
    parser.add_argument("--out", type=Path, help="run directory (default: runs/train-<timestamp>)")
    parser.add_argument(
        "--sandbox", choices=("local", "docker"), help="sandbox backend (same as --set run.sandbox=...)"
    )
    parser.add_argument(
        "--executor", choices=("local", "ray"), help="where graders run (same as --set run.executor=...)"
    )
    parser.add_argument(
        "--ray-address", help="Ray cluster for --executor ray (same as --set run.ray_address=...)"
    )
    parser.add_argument(
        "--resume", type=Path, metavar="DIR", help="continue an interrupted run from its last checkpoint"
    )
    add_require_isolation(parser)
    parser.set_defaults(func=run)


def _assignments(args: argparse.Namespace) -> list[str]:
    extra = list(args.assignments)
    for flag, key in (
        ("model", "model.path"),
        ("pack", "run.pack"),
        ("steps", "grpo.steps"),
        ("seed", "run.seed"),
        ("sandbox", "run.sandbox"),
        ("executor", "run.executor"),
        ("ray_address", "run.ray_address"),
    ):
        value = getattr(args, flag)
        if value is not None:
            extra.append(f"{key}={json.dumps(value)}")
    return extra


def preflight(config: TrainConfig) -> None:
    """Everything that can be checked without training: model path, pack, splits, grader, extras."""
    from rlvr.graders.base import GRADERS
    from rlvr.task_packs.registry import PackError, load_pack
    from rlvr.trainer.agent import check_rollout, uses_episodes
    from rlvr.trainer.model import check_model_path
    from rlvr.trainer.teachers import has_reference_turns

    if config.model.path:
        check_model_path(config.model.path)
    try:
        pack = load_pack(config.run.pack)
    except PackError as exc:
        raise ConfigError(f"[run] pack: {exc}") from exc
    if pack.family not in GRADERS:
        raise ConfigError(f"pack {pack.name!r} has family {pack.family!r}, which no grader handles")
    for key in ("train_split", "eval_split"):
        split = getattr(config.run, key)
        if not pack.tasks(split):
            raise ConfigError(
                f"[run] {key}: pack {pack.name!r} has no tasks in split {split!r}; its splits are {pack.splits()}"
            )
    episodes = uses_episodes(config, pack)
    teacher = has_reference_turns(pack, config.run.train_split) if episodes else hasattr(pack, "sft_examples")
    if (config.sft_steps > 0 or not config.model.path) and not teacher:
        what = "reference solutions in its tasks" if episodes else "sft_examples"
        raise ConfigError(
            f"pack {pack.name!r} has no warm-start teacher ({what}); set [sft] steps = 0 and give [model] path, "
            "or use the tiny-functions pack"
        )
    check_rollout(config, pack)
    if config.model.lora_rank > 0:
        try:
            import peft  # noqa: F401
        except ImportError as exc:
            raise ConfigError("[model] lora_rank > 0 needs peft: pip install 'rlvr[train]'") from exc


def run(args: argparse.Namespace) -> int:
    try:
        if args.resume is not None:
            if args.config or _assignments(args) or args.out:
                raise ConfigError(
                    "--resume continues with the run's saved config; drop CONFIG, --set, --out and the other flags"
                )
            saved = args.resume / "config.json"
            if not saved.is_file():
                raise ConfigError(
                    f"{str(args.resume)!r} is not a run directory (no config.json); start a run with --out DIR"
                )
            config, out, resume = from_dict(json.loads(saved.read_text())), args.resume, True
        else:
            config = build_config(args.config, _assignments(args))
            out = args.out or Path("runs") / time.strftime("train-%Y%m%d-%H%M%S")
            if (out / "config.json").exists():
                raise ConfigError(
                    f"{str(out)!r} already holds a run; continue it with --resume {out}, or pick another --out"
                )
            resume = False
        preflight(config)
    except ConfigError as exc:
        print(f"rlvr train: {exc}", file=sys.stderr)
        return 2

    from rlvr.trainer.canaries import CanaryAlarm
    from rlvr.trainer.grpo import train

    out.mkdir(parents=True, exist_ok=True)
    if not resume:
        (out / "config.json").write_text(json.dumps(config.to_dict(), indent=2))

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log(f"run directory: {out}")
    try:
        summary = train(config, out, resume=resume, log=log)
    except KeyboardInterrupt:
        log(f"interrupted; continue with: rlvr train --resume {out}")
        return 130
    except CanaryAlarm as exc:
        log(f"rlvr train: stopped by the canaries: {exc}")
        return 3
    before, after = summary["heldout"]["before"], summary["heldout"]["after"]
    print(
        f"held-out pass rate {before['pass_rate']:.3f} -> {after['pass_rate']:.3f} "
        f"(greedy {before['greedy']['pass_rate']:.3f} -> {after['greedy']['pass_rate']:.3f}); "
        f"{summary['steps']} steps in {summary['wall_seconds']:.0f}s; {out / 'summary.json'}"
    )
    return 0
