"""Receipts: what a verdict was computed from, in a few digests, so it can be replayed and audited.

A receipt names the candidate text, the task's whole content (prompt and hidden spec), the grader's
options, the pack's name and version and the grader's version (the family's grader class plus a
digest of the source it runs: that family's package, the shared grading modules, the sandbox and the
specs). Two verdicts with equal receipts came from the same inputs through the same code, so
`rlvr regrade` can tell "the grader changed" apart from "the grader is not deterministic".

Options that only say where untrusted code runs (`sandbox`, `jobs`, `runtime`) are recorded by
`plain_options` but left out of the digest: they must never change a verdict.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task

EXECUTION_OPTIONS = frozenset({"sandbox", "jobs", "runtime"})
DIGEST_CHARS = 32  # 128 bits of sha256: collisions are out of reach, lines stay short
RECEIPT_KEYS = ("candidate", "task", "options", "pack", "pack_version", "grader")

_RLVR_ROOT = Path(__file__).resolve().parents[1]
# Source that decides verdicts besides the family's own package (relative to the rlvr package).
_SHARED_SOURCE = ("core", "specs", "sandbox", "graders/*.py")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


def candidate_digest(completion: str) -> str:
    return digest(completion.encode("utf-8", "surrogatepass"))


def canonical(value: Any) -> Any:
    """`value` as JSON-ready data that is the same in every process: mappings sorted by key, sets
    sorted, floats by repr, callables and objects by qualified name (never by address)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, bytes | bytearray):
        return {"$bytes": digest(bytes(value))}
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Mapping):
        items = [(json.dumps(canonical(k), sort_keys=True), canonical(v)) for k, v in value.items()]
        return {"$map": sorted(items, key=lambda kv: kv[0])}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, set | frozenset):
        return {"$set": sorted(json.dumps(canonical(v), sort_keys=True) for v in value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"$dataclass": type(value).__qualname__, **fields}
    if callable(value):
        return {"$callable": f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', '?')}"}
    return {"$object": type(value).__qualname__}


def canonical_digest(value: Any) -> str:
    text = json.dumps(canonical(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return digest(text.encode("utf-8", "surrogatepass"))


def task_digest(task: Task) -> str:
    return canonical_digest(
        {
            "id": task.id,
            "prompt": task.prompt,
            "family": task.family,
            "difficulty": task.difficulty,
            "split": task.split,
            "hidden": task.hidden,
            "meta": task.meta,
        }
    )


def plain_options(options: Any) -> dict[str, Any]:
    """A grader's resolved options dataclass as plain data (for a run's `grading.json`)."""
    if not dataclasses.is_dataclass(options) or isinstance(options, type):
        return {}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        if f.name == "sandbox" and not isinstance(value, str | type(None)):
            value = type(value).__qualname__  # a built sandbox object: its kind is what matters
        out[f.name] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    return canonical(value)


def options_digest(options: Any) -> str:
    plain = plain_options(options)
    return canonical_digest({k: v for k, v in plain.items() if k not in EXECUTION_OPTIONS})


@functools.cache
def source_digest(package_dir: str) -> str:
    """A digest of the source files (`.py`, `.js`) a grader in `package_dir` runs on."""
    hasher = hashlib.sha256()
    roots = [_RLVR_ROOT / part for part in _SHARED_SOURCE]
    if package_dir:
        roots.append(Path(package_dir))
    files: set[Path] = set()
    for root in roots:
        if "*" in root.name:
            files.update(root.parent.glob(root.name))
        elif root.is_dir():
            files.update(p for p in root.rglob("*") if p.suffix in (".py", ".js"))
    for path in sorted(files):
        try:
            relative = path.resolve().relative_to(_RLVR_ROOT)
        except ValueError:
            relative = Path(path.name)
        hasher.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()[:12]


def grader_version(grader_class: type) -> str:
    """`family:Class@<rlvr version>+<source digest>` for the grader class that decides verdicts."""
    from importlib import import_module

    module = import_module(grader_class.__module__)
    module_file = Path(getattr(module, "__file__", "") or "")
    package_dir = module_file.parent
    if package_dir.resolve() == (_RLVR_ROOT / "graders").resolve():
        package_dir = module_file.with_suffix("")  # a single-module grader: its module is its source
    try:
        from importlib.metadata import version

        rlvr_version = version("rlvr")
    except Exception:  # running from a source tree that is not installed
        rlvr_version = "0"
    family = getattr(grader_class, "family", "") or "?"
    return f"{family}:{grader_class.__name__}@{rlvr_version}+{source_digest(str(package_dir))}"


class ReceiptBook:
    """Makes receipts for one grader: the task and options digests are computed once each."""

    def __init__(self, pack: TaskPack, grader_class: type, options: Any) -> None:
        self.pack = pack.name
        self.pack_version = str(pack.version)
        self.grader = grader_version(grader_class)
        self.options = options_digest(options)
        self.plain_options = plain_options(options)
        self.family = pack.family
        self._tasks: dict[tuple[str, int], tuple[Task, str]] = {}

    def entry(self, pack_ref: str | None) -> dict[str, Any]:
        """How this grader grades, for a run's `grading.json`: the pack reference it was loaded from
        (None for an in-memory pack), the versions and the options (plain data and their digest)."""
        return {
            "pack": pack_ref,
            "pack_version": self.pack_version,
            "family": self.family,
            "grader": self.grader,
            "options_digest": self.options,
            "options": self.plain_options,
        }

    def task_digest(self, task: Task) -> str:
        key = (task.id, id(task))
        cached = self._tasks.get(key)
        if cached is None or cached[0] is not task:
            cached = (task, task_digest(task))
            self._tasks[key] = cached
        return cached[1]

    def receipt(self, task: Task, completion: Any) -> dict[str, str]:
        text = completion if isinstance(completion, str) else canonical_digest(completion)
        return {
            "candidate": candidate_digest(text),
            "task": self.task_digest(task),
            "options": self.options,
            "pack": self.pack,
            "pack_version": self.pack_version,
            "grader": self.grader,
        }
