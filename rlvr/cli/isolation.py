"""`--require-isolation`, shared by every command that grades: refuse to run candidates without full
sandbox isolation instead of falling back to the degraded (no namespaces) mode."""

from __future__ import annotations

import argparse
import os

from rlvr.sandbox.pool import REQUIRE_ISOLATION_ENV


def add_require_isolation(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument(
        "--require-isolation",
        action="store_true",
        help="fail instead of grading in a degraded sandbox (no namespaces, no syscall filter); "
        f"same as {REQUIRE_ISOLATION_ENV}=1",
    )


def apply_require_isolation(args: argparse.Namespace) -> None:
    """Set for every sandbox this process (and the worker processes it starts) creates."""
    if getattr(args, "require_isolation", False):
        os.environ[REQUIRE_ISOLATION_ENV] = "1"
