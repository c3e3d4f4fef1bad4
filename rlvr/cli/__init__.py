"""The `rlvr` command. Each subcommand lives in its own module exposing `add_parser(subparsers)`;
the parser it adds sets `func` to a callable(args) -> exit code."""

from __future__ import annotations

import argparse
import importlib
import sys

# Subcommand modules, in help order. A module that fails to import is reported, not fatal.
COMMANDS: list[str] = [
    "rlvr.cli.packs",
    "rlvr.cli.grade",
    "rlvr.cli.train",
    "rlvr.cli.bench",
    "rlvr.cli.serve",
    "rlvr.cli.inspect",
    "rlvr.cli.certify",
    "rlvr.cli.regrade",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlvr",
        description="Reinforcement learning with verifiable rewards: envs, trustworthy graders, GRPO.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # that command is not part of this build
                continue
            raise
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from rlvr.cli.isolation import apply_require_isolation
    from rlvr.core.pack import MissingExtra
    from rlvr.sandbox import SandboxUnavailable

    apply_require_isolation(args)
    try:
        return int(args.func(args) or 0)
    except (SandboxUnavailable, MissingExtra) as exc:
        print(f"rlvr {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
