"""Which paths of a repository task are protected (shared by the repo pack format and the repo grader)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

# Tests and test configuration: an edit to them fails the patch gate (flag `protected_path_edit`).
DEFAULT_PROTECTED: tuple[str, ...] = ("tests/*", "tests/**", "**/conftest.py", "conftest.py")


def is_protected(path: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)
