"""Which paths of a repository task are protected (shared by the repo pack format and the repo grader)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

# Tests and test configuration, and any test-like file anywhere in the tree (a test module added inside
# the package is run by the visible tests too): creating, editing or deleting one fails the patch gate
# (flag `protected_path_edit`). fnmatch's `*` also matches "/", so each pattern covers every depth.
DEFAULT_PROTECTED: tuple[str, ...] = (
    "tests/*",
    "tests/**",
    "**/tests/*",
    "**/conftest.py",
    "conftest.py",
    "test_*.py",
    "**/test_*.py",
    "*_test.py",
)


def is_protected(path: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)
