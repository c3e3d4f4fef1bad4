"""Patch intake acceptance: the hand-written formats of tests/data/repo_patch_formats.py through the
patch parser of a git revision (default `main`, before) and of this checkout (after).

Usage: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_repo_patches.py [--before main]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from rlvr.graders.repo import patch as after
from rlvr.graders.repo.workspace import Workspace
from tests.data.repo_patch_formats import BASE, FORMATS, REFUSED

ROOT = Path(__file__).resolve().parents[1]


def _module_at(revision: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{revision}:rlvr/graders/repo/patch.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location("patch_before", handle.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _accepts(module: ModuleType, patch: str, expected: dict[str, str]) -> str:
    workspace = Workspace.fresh(BASE)
    try:
        module.apply_completion(workspace, patch)
    except ValueError as exc:
        return f"refused: {str(exc)[:90]}"
    return "ok" if workspace.files == expected else "applied, wrong result"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", default="main")
    args = parser.parse_args()
    before = _module_at(args.before)
    counts = {"before": 0, "after": 0}
    print(f"| format | before ({args.before}) | after |\n|---|---|---|")
    for name, (patch, expected) in FORMATS.items():
        old, new = _accepts(before, patch, expected), _accepts(after, patch, expected)
        counts["before"] += old == "ok"
        counts["after"] += new == "ok"
        print(f"| {name} | {old} | {new} |")
    print(f"| **accepted** | **{counts['before']}/{len(FORMATS)}** | **{counts['after']}/{len(FORMATS)}** |")
    for name, (patch, _) in REFUSED.items():
        workspace = Workspace.fresh(BASE)
        try:
            after.apply_completion(workspace, patch)
            print(f"refused patch {name!r}: APPLIED (wrong)")
        except after.PatchError as exc:
            print(f"refused patch {name!r}: {exc}")
    return 0 if counts["after"] >= len(FORMATS) - 1 else 1


if __name__ == "__main__":
    sys.exit(main())
