"""The files pytest reads its configuration from, and whether a patch changed what they tell it.

pytest takes its options (`addopts = -p plugin`, `python_files`, `pythonpath`, ...) from the first of
these it finds walking up from the test files: `pytest.ini`, `.pytest.ini`, `pytest.toml`,
`.pytest.toml`, `pyproject.toml` (`[tool.pytest]` / `[tool.pytest.ini_options]`), `tox.ini`
(`[pytest]`) and `setup.cfg` (`[tool:pytest]`). A candidate that writes any of them can load a plugin
of its own before the report is written. The first four are pytest's alone: protected wherever they
are (`PROTECTED_PATTERNS`). The other three are the project's too (dependencies, packaging), so a patch
may edit them as long as what pytest reads from them stays the same (`changed_configuration`), read
with pytest's own parsers (iniconfig, tomllib); a file that no longer parses counts as changed.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

PYTEST_ONLY = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml")
PROTECTED_PATTERNS: tuple[str, ...] = tuple(p for name in PYTEST_ONLY for p in (name, f"*/{name}"))
SHARED = frozenset({"pyproject.toml", "tox.ini", "setup.cfg"})
INI_SECTIONS = ("pytest", "tool:pytest")
MAX_CONFIG_BYTES = 1 << 20


def is_shared_config(path: str) -> bool:
    """A project file pytest may read its configuration from (at any depth)."""
    return PurePosixPath(path).name in SHARED


def pytest_view(root: Path, path: str) -> Any:
    """What pytest reads from `root/path`: its pytest table or sections (None for a missing file or
    one without them), or the raw bytes of a file pytest's parsers refuse (any change then counts)."""
    target = root / path
    try:
        mode = os.lstat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(mode):
        return ("not a regular file", stat.S_IFMT(mode))
    import iniconfig  # pytest's own ini parser (a dependency of pytest, which this runner needs)

    data = target.read_bytes()[: MAX_CONFIG_BYTES + 1]
    try:
        text = data.decode("utf-8")
        if PurePosixPath(path).name == "pyproject.toml":
            tool = tomllib.loads(text).get("tool")
            return tool.get("pytest") if isinstance(tool, dict) else None
        parsed = iniconfig.IniConfig(str(target), data=text)
        return {name: dict(parsed[name].items()) for name in INI_SECTIONS if name in parsed}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, iniconfig.ParseError, RecursionError, ValueError):
        return ("unparsed", data)


def changed_configuration(before: dict[str, Any], root: Path) -> list[str]:
    """The shared config files (`before`: path -> `pytest_view` before the patch) whose pytest view
    the patch changed."""
    return [path for path, view in before.items() if pytest_view(root, path) != view]
