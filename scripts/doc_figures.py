"""The numbers the README and docs state about the data, computed from the data.

Each figure is a regular expression around the number in a doc file and the function that computes it.
`--check` (the default) exits 1 listing every figure that drifted; `--write` rewrites them in place.
tests/test_doc_figures.py runs the check.

    PYTHONPATH=. .venv/bin/python scripts/doc_figures.py [--write]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def humaneval_ts_counts() -> tuple[int, int]:
    data = json.loads((ROOT / "rlvr" / "task_packs" / "humaneval_ts.json").read_text())
    return len(data["tasks"]), len(data["skipped"])


def kata_families() -> int:
    from rlvr.task_packs.registry import load_pack

    return len({task.id.split("/")[1] for task in load_pack("kata").tasks()})


def repo_tasks() -> int:
    from rlvr.task_packs.registry import load_pack

    return len(load_pack("repo-tasks").tasks())


@dataclass(frozen=True)
class Figure:
    name: str
    file: str
    pattern: str  # one group: the number
    value: Callable[[], int]


FIGURES = [
    Figure(
        "humaneval-ts tasks",
        "README.md",
        r"JSDoc from the docstrings, (\d+) tasks; the \d+ whose",
        lambda: humaneval_ts_counts()[0],
    ),
    Figure(
        "humaneval-ts skipped",
        "README.md",
        r"JSDoc from the docstrings, \d+ tasks; the (\d+) whose",
        lambda: humaneval_ts_counts()[1],
    ),
    Figure("kata families", "README.md", r"`kata` \((\d+) procedural code families", kata_families),
    Figure(
        "repo-tasks tasks", "README.md", r"and (\d+) tasks generated and validated in the sandbox", repo_tasks
    ),
]


def drifted() -> list[tuple[Figure, str | None, int]]:
    """(figure, the number the doc states or None if the sentence is gone, the number the data gives)."""
    found = []
    for figure in FIGURES:
        text = (ROOT / figure.file).read_text(encoding="utf-8")
        match = re.search(figure.pattern, text)
        value = figure.value()
        if match is None or int(match.group(1)) != value:
            found.append((figure, match.group(1) if match else None, value))
    return found


def write() -> None:
    for figure, stated, value in drifted():
        if stated is None:
            raise SystemExit(f"{figure.file}: the sentence of figure {figure.name!r} is gone; update FIGURES")
        path = ROOT / figure.file
        text = path.read_text(encoding="utf-8")
        match = re.search(figure.pattern, text)
        assert match is not None
        path.write_text(text[: match.start(1)] + str(value) + text[match.end(1) :], encoding="utf-8")
        print(f"{figure.file}: {figure.name}: {stated} -> {value}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="rewrite drifted figures in place")
    if parser.parse_args().write:
        write()
        return 0
    problems = drifted()
    for figure, stated, value in problems:
        print(f"{figure.file}: {figure.name}: the doc says {stated}, the data gives {value}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
