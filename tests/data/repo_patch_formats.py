"""Patch formats language models emit, written by hand (not taken from any model or data set): each
turns BASE into its expected state. Used by tests/test_repo_patch_formats.py and
benchmarks/bench_repo_patches.py (acceptance before/after)."""

from __future__ import annotations

CALC = '''"""Calculator helpers."""


def add(a: int, b: int) -> int:
    """Sum."""
    return a + b


def scale(values: list[int], factor: int) -> list[int]:
    """Each value times factor."""   
    out = []

    for value in values:
        out.append(value * factor)
    return out


def label(name: str) -> str:
    return name.strip().title()
'''
UTIL = "def ident(x: int) -> int:\n    return x\n"
BASE = {"pkg/__init__.py": "", "pkg/calc.py": CALC, "pkg/util.py": UTIL}

FIXED = CALC.replace("out.append(value * factor)", "out.append(int(value * factor))")
BOTH = FIXED.replace(".title()", ".capitalize()")
ONE = {**BASE, "pkg/calc.py": FIXED}
TWO_HUNKS = {**BASE, "pkg/calc.py": BOTH}
TWO_FILES = {**BASE, "pkg/calc.py": FIXED, "pkg/util.py": UTIL.replace("return x", "return int(x)")}

HUNK = (
    "@@ -12,6 +12,6 @@ def scale(values: list[int], factor: int) -> list[int]:\n"
    "     out = []\n"
    " \n"
    "     for value in values:\n"
    "-        out.append(value * factor)\n"
    "+        out.append(int(value * factor))\n"
    "     return out\n"
    " \n"
)
HEADERS = "--- a/pkg/calc.py\n+++ b/pkg/calc.py\n"
GIT = "diff --git a/pkg/calc.py b/pkg/calc.py\nindex 3b18e51..a9c0d3f 100644\n" + HEADERS + HUNK
LABEL_HUNK = (
    "@@ -19,2 +19,2 @@\n"
    " def label(name: str) -> str:\n"
    "-    return name.strip().title()\n"
    "+    return name.strip().capitalize()\n"
)
UTIL_DIFF = "--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -1,2 +1,2 @@\n def ident(x: int) -> int:\n-    return x\n+    return int(x)\n"

FORMATS: dict[str, tuple[str, dict[str, str]]] = {
    "git diff": (GIT, ONE),
    "diff -u with timestamps, no a/ b/": (
        "--- pkg/calc.py\t2026-12-01 10:00:00.000000000 +0000\n"
        "+++ pkg/calc.py\t2026-12-02 10:00:00.000000000 +0000\n" + HUNK,
        ONE,
    ),
    "fenced ```diff with prose around": (
        "The bug is the missing conversion. Here is the fix:\n\n```diff\n" + GIT + "```\n\nThis keeps ints.",
        ONE,
    ),
    "hunk counts too small": (HEADERS + HUNK.replace("@@ -12,6 +12,6 @@", "@@ -12,2 +12,2 @@"), ONE),
    "hunk counts too large, then a fence and prose": (
        "```diff\n" + HEADERS + HUNK.replace("@@ -12,6 +12,6 @@", "@@ -12,12 +12,13 @@") + "```\nDone.\n",
        ONE,
    ),
    "bare @@": (HEADERS + "@@\n" + HUNK.split("\n", 1)[1], ONE),
    "@@ ... @@ placeholder header": (HEADERS + "@@ ... @@\n" + HUNK.split("\n", 1)[1], ONE),
    "wrong line numbers (offset)": (HEADERS + HUNK.replace("@@ -12,6 +12,6 @@", "@@ -40,6 +40,6 @@"), ONE),
    "trailing whitespace dropped from context": (
        HEADERS
        + '@@ -10,4 +10,4 @@\n     """Each value times factor."""\n     out = []\n \n     for value in values:\n'
        + "-        out.append(value * factor)\n+        out.append(int(value * factor))\n",
        ONE,
    ),
    "blank context lines without their space": (HEADERS + HUNK.replace("\n \n", "\n\n"), ONE),
    "two files in one diff": (HEADERS + HUNK + UTIL_DIFF, TWO_FILES),
    "two hunks, the second with wrong counts": (
        HEADERS + HUNK + LABEL_HUNK.replace("@@ -19,2 +19,2 @@", "@@ -19,5 +19,5 @@"),
        TWO_HUNKS,
    ),
    "new file from /dev/null": (
        "--- /dev/null\n+++ b/pkg/extra.py\n@@ -0,0 +1,2 @@\n+def extra() -> int:\n+    return 1\n",
        {**BASE, "pkg/extra.py": "def extra() -> int:\n    return 1\n"},
    ),
    "deleted file": (
        "--- a/pkg/util.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-def ident(x: int) -> int:\n-    return x\n",
        {k: v for k, v in BASE.items() if k != "pkg/util.py"},
    ),
    "CRLF line endings": (GIT.replace("\n", "\r\n"), ONE),
    "whole file, ```path": ("```pkg/calc.py\n" + FIXED + "```\n", ONE),
    "whole file, ```python path": ("Updated file:\n\n```python pkg/calc.py\n" + FIXED + "```\n", ONE),
    "whole file, ```python path=...": ("```python path=pkg/calc.py\n" + FIXED + "```\n", ONE),
    "whole file, **path** on the line before": ("**pkg/calc.py**\n```python\n" + FIXED + "```\n", ONE),
    "whole file, `path`: on the line before": ("`pkg/calc.py`:\n\n```python\n" + FIXED + "```\n", ONE),
    "whole file, path as first comment line": (
        "```python\n# pkg/util.py\n" + UTIL.replace("return x", "return int(x)") + "```\n",
        {**BASE, "pkg/util.py": "# pkg/util.py\n" + UTIL.replace("return x", "return int(x)")},
    ),
}

# Patches that must be refused, with what the feedback must name.
REFUSED: dict[str, tuple[str, str]] = {
    "context not in the file": (
        HEADERS + HUNK.replace("     for value in values:", "     for item in values:"),
        "hunk 1",
    ),
    "second hunk wrong": (HEADERS + HUNK + LABEL_HUNK.replace("title", "upper", 1), "hunk 2"),
}
