"""Where the TypeScript toolchain lives: node (rlvr.sandbox.node finds it) and the `typescript`
package pinned in the repository's node/package-lock.json, installed by `./run setup`
(`npm ci --prefix node`). Nothing is downloaded while grading; a missing toolchain is a loud error."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rlvr.sandbox.node import NodeUnavailable, node_binary

TYPESCRIPT_ENV = "RLVR_TYPESCRIPT_MODULES"
REPO_NODE_DIR = Path(__file__).resolve().parents[4] / "node"
JS_DIR = Path(__file__).parent / "js"


class ToolchainUnavailable(RuntimeError):
    """node or the pinned TypeScript compiler is missing."""


def node_modules() -> Path:
    """The node_modules directory holding the pinned `typescript` (RLVR_TYPESCRIPT_MODULES overrides)."""
    explicit = os.environ.get(TYPESCRIPT_ENV)
    return Path(explicit) if explicit else REPO_NODE_DIR / "node_modules"


def pinned_version() -> str | None:
    try:
        package = json.loads((REPO_NODE_DIR / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return str(package.get("dependencies", {}).get("typescript") or "") or None


def check_toolchain() -> tuple[str, Path]:
    """(node binary, node_modules dir), or ToolchainUnavailable saying how to install them."""
    try:
        node = node_binary()
    except NodeUnavailable as exc:
        raise ToolchainUnavailable(str(exc)) from exc
    modules = node_modules()
    manifest = modules / "typescript" / "package.json"
    try:
        installed = json.loads(manifest.read_text()).get("version")
    except (OSError, ValueError):
        raise ToolchainUnavailable(
            f"the TypeScript compiler is not installed under {modules}: run `./run setup` "
            "(npm ci --prefix node)"
        ) from None
    wanted = pinned_version()
    if wanted and installed != wanted:
        raise ToolchainUnavailable(
            f"typescript {installed} is installed but node/package.json pins {wanted}: run `./run setup`"
        )
    return node, modules
