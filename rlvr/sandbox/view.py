"""The minimal read-only view of the host a sandboxed interpreter needs: the interpreter binary, the
shared libraries it and the standard library's extension modules load, and the standard library
itself with its `site-packages` hidden. Nothing else — not this package, task data, the grader's
site-packages, the host's /tmp or home — is part of the view.

Both the local (namespace) backend and the docker backend mount exactly these paths read-only.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

LDD_LINE = re.compile(r"^\s*(?:\S+\s+=>\s+)?(/\S+)\s+\(0x[0-9a-f]+\)\s*$")
LOADER_CACHE = "/etc/ld.so.cache"


@dataclass(frozen=True)
class Bind:
    """Mount `source` (a real path on the host) read-only at `target` inside the sandbox."""

    source: str
    target: str
    is_dir: bool


@dataclass(frozen=True)
class RuntimeView:
    interpreter: str
    stdlib: str
    binds: tuple[Bind, ...]
    hidden_dirs: tuple[str, ...]
    """Directories inside a bound tree that are covered by an empty read-only tmpfs."""

    def to_config(self) -> dict[str, object]:
        return {
            "interpreter": self.interpreter,
            "stdlib": self.stdlib,
            "binds": [[b.source, b.target, b.is_dir] for b in self.binds],
            "hidden": list(self.hidden_dirs),
        }


def shared_libraries(files: list[str]) -> list[str]:
    """Absolute paths of the shared objects `files` load, as the dynamic loader resolves them."""
    if not files:
        return []
    try:
        output = subprocess.run(
            ["ldd", *files],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "LANG": "C"},
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    found: list[str] = []
    for line in output.splitlines():
        match = LDD_LINE.match(line)
        if match and match.group(1) not in found:
            found.append(match.group(1))
    return found


@functools.lru_cache(maxsize=1)
def runtime_view() -> RuntimeView:
    """The view for the interpreter running this process (its base interpreter, not a venv shim)."""
    interpreter = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    stdlib = os.path.dirname(os.path.realpath(os.__file__))
    dynload = Path(stdlib) / "lib-dynload"
    extensions = sorted(str(p) for p in dynload.glob("*.so")) if dynload.is_dir() else []
    binds: dict[str, Bind] = {}
    binds[interpreter] = Bind(interpreter, interpreter, False)
    binds[stdlib] = Bind(stdlib, stdlib, True)
    for library in shared_libraries([interpreter, *extensions]):
        if library.startswith(stdlib + os.sep):
            continue  # already inside the bound standard library
        real = os.path.realpath(library)
        if os.path.isfile(real):
            binds.setdefault(library, Bind(real, library, False))
    if os.path.isfile(LOADER_CACHE):
        binds.setdefault(LOADER_CACHE, Bind(LOADER_CACHE, LOADER_CACHE, False))
    hidden = tuple(
        str(path)
        for path in (Path(stdlib) / "site-packages", Path(stdlib) / "dist-packages")
        if path.is_dir()
    )
    return RuntimeView(
        interpreter=interpreter, stdlib=stdlib, binds=tuple(binds.values()), hidden_dirs=hidden
    )
