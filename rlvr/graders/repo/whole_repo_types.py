"""pyright over a whole repository: which type errors does a candidate state introduce relative to the
base state? A rename that breaks a caller in another module shows up here even if no scenario calls it.

Each check sees the repository's Python files with comments blanked (so no `# pyright:` directive or
`# type: ignore` buys anything) and without `__builtins__.py` files (pyright's builtins override), under pyright isolated as the single-file type layer is (empty
virtualenv, no python on PATH, own HOME). Two engines give the same reports:

- "server" (default): one warm `pyright-langserver` per checker, fed only the files that differ from
  the state it checked last (see `types_server.py`); a submit costs tens of milliseconds.
- "cli": one `pyright --outputjson` per check over a fresh temporary directory, removed when the
  check ends; a submit costs pyright's start-up (seconds).

Results are cached by content hash, so the base state of a task is checked once. A check that times
out or crashes pyright is attributed to the candidate only if pyright then checks a trivial repository
fine (`failure` "timeout" / "crash"); otherwise the machinery is at fault (any other `failure`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from rlvr.graders.code.syntax import neutralize_comments
from rlvr.graders.code.typecheck.bundle import PyrightBundle, make_empty_venv, pyright_config
from rlvr.graders.code.typecheck.cli import CliRunner
from rlvr.graders.code.typecheck.run import RunFailure
from rlvr.graders.repo.types_server import CONFIG_NAME, RepoDiagnostic, RepoServerEngine

WORKDIR_PREFIX = "rlvr-repo-types-"
NO_STUBS = "no-stubs"
# Directories pyright's CLI never reports on, whatever `include`/`exclude` say (the language server
# checks an open file anywhere), while the sandbox imports `pkg/node_modules/x.py` like any module.
UNCHECKED_DIRECTORIES = ("node_modules", "__pycache__")
# Checked after a candidate state fails: if this fails too, pyright (or the machine) is at fault.
CANARY_STATE = {"canary.py": "def canary(x: int) -> int:\n    return x + 1\n"}
# Candidate-attributed failures (scored failures with a flag, never grading errors): pyright could not
# finish the state, or the state has a path no checker workspace can hold (`unrepresentable`: a name
# longer than the file system allows, or a directory where the checker's own pyrightconfig.json is).
# `unchecked_path`: a Python file in a directory pyright does not check (UNCHECKED_DIRECTORIES), refused
# by both engines alike so the engine chosen never decides whether such code is type-checked.
CANDIDATE_FAILURES = ("timeout", "crash", "unrepresentable", "unchecked_path")
MAX_NAME_BYTES = 255


BUILTINS_OVERRIDE = "__builtins__.py"


def is_builtins_override(path: str) -> bool:
    """A `__builtins__.py` replaces the builtins scope for pyright (not for Python): defining a name there
    hides every "is not defined" error of it, aliasing `int = Any` hides every mismatch with `int`. Such
    files are left out of every check, base and candidate alike (and charged as an evasion by the grader)."""
    return path.rsplit("/", 1)[-1] == BUILTINS_OVERRIDE


def unrepresentable(path: str) -> bool:
    """Whether `path` cannot be written into a checker workspace (whose root holds CONFIG_NAME)."""
    parts = path.split("/")
    return parts[0] == CONFIG_NAME or any(
        len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in parts
    )


@dataclass
class RepoTypeReport:
    """Errors per (file, message) — line numbers left out, so moving code is not a new error."""

    errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    lines: dict[tuple[str, str], int] = field(default_factory=dict)
    where: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # every line of each error
    failure: str | None = None

    def introduced_over(self, base: RepoTypeReport) -> list[str]:
        """Errors this state has beyond the base's, as `path:line: message` (at most 20)."""
        extra = self.errors - base.errors
        out = [f"{path}:{self.lines.get((path, message), 0)}: {message}" for path, message in sorted(extra)]
        return out[:20] if len(out) > 20 else out

    def count_introduced_over(self, base: RepoTypeReport) -> int:
        return sum((self.errors - base.errors).values())


class RepoTypeChecker:
    """Thread-safe; `close()` kills a running pyright. engine="server" (default) keeps one warm
    pyright-langserver; engine="cli" starts one pyright process per (uncached) check."""

    def __init__(self, timeout: float = 60.0, cache_size: int = 256, *, engine: str = "server") -> None:
        if engine not in ("server", "cli"):
            raise ValueError(f"engine must be 'server' or 'cli', got {engine!r}")
        self.bundle = PyrightBundle.locate()
        self.timeout = timeout
        self.cache_size = cache_size
        self.engine = engine
        self._home = Path(tempfile.mkdtemp(prefix="rlvr-repo-pyright-"))
        make_empty_venv(self._home)
        # No stub directory inside the repository: pyright's default stubPath is `<root>/typings`, where a
        # candidate's `typings/pkg/module.py` would shadow the real module for every importer.
        (self._home / NO_STUBS).mkdir()
        self._config = pyright_config(self._home) | {"stubPath": str(self._home / NO_STUBS)}
        self._cache: OrderedDict[str, RepoTypeReport] = OrderedDict()
        self._lock = threading.Lock()
        self._cli = CliRunner(self.bundle)
        self._owner = os.getpid()
        self._server = (
            RepoServerEngine(self.bundle, self._config, self._home, timeout) if engine == "server" else None
        )

    def check(self, files: dict[str, str]) -> RepoTypeReport:
        sources = {
            path: neutralize_comments(text.replace("\r\n", "\n").replace("\r", "\n"))
            for path, text in sorted(files.items())
            if path.endswith(".py") and not is_builtins_override(path)
        }
        key = hashlib.sha256(json.dumps(sources, sort_keys=True).encode("utf-8", "replace")).hexdigest()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        report = self._run(sources)
        if report.failure in ("timeout", "crash"):
            canary = self._run(dict(CANARY_STATE))
            if canary.failure is not None:
                report = RepoTypeReport(
                    failure=f"pyright failed on the candidate ({report.failure}) and on a trivial "
                    f"repository ({canary.failure})"
                )
        if report.failure is None:
            with self._lock:
                self._cache[key] = report
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return report

    def _run(self, sources: dict[str, str]) -> RepoTypeReport:
        for path in sources:  # paths were checked by the workspace; never trust twice
            if path.startswith("/") or ".." in path.split("/"):
                return RepoTypeReport(failure=f"path escapes the repository: {path}")
        if any(unrepresentable(path) for path in sources):
            return RepoTypeReport(failure="unrepresentable")
        if any(part in UNCHECKED_DIRECTORIES for path in sources for part in path.split("/")[:-1]):
            return RepoTypeReport(failure="unchecked_path")
        if self._server is not None:
            outcome = self._server.run(sources)
            if isinstance(outcome, RunFailure):
                if outcome.timed_out:
                    return RepoTypeReport(failure="timeout")
                if "exited unexpectedly" in outcome.reason:
                    return RepoTypeReport(failure="crash")
                return RepoTypeReport(failure=outcome.reason)
            return _report(outcome)
        return self._run_cli(sources)

    def _run_cli(self, sources: dict[str, str]) -> RepoTypeReport:
        with tempfile.TemporaryDirectory(prefix=WORKDIR_PREFIX) as workdir:
            root = Path(workdir).resolve()
            for path, text in sources.items():
                target = (root / path).resolve()
                if not target.is_relative_to(root):  # paths were checked by the workspace; never trust twice
                    return RepoTypeReport(failure=f"path escapes the repository: {path}")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8", errors="replace")
            (root / CONFIG_NAME).write_text(json.dumps(self._config))
            items = self._cli.check(root, self._home, self.timeout)
            if isinstance(items, RunFailure):
                return RepoTypeReport(failure="timeout" if items.timed_out else items.reason)
            errors = []
            for file, (line, severity, message) in items:
                try:
                    path = file.resolve().relative_to(root).as_posix()
                except ValueError:
                    continue
                if severity == "error":
                    errors.append((path, line, message))
            return _report(errors)

    def close(self) -> None:
        self._cli.close()
        if self._server is not None:
            self._server.close()
        if os.getpid() == self._owner:
            shutil.rmtree(self._home, ignore_errors=True)


def _report(diagnostics: list[RepoDiagnostic]) -> RepoTypeReport:
    report = RepoTypeReport()
    for path, line, message in diagnostics:
        key = (path, _first_line(message))
        report.errors[key] += 1
        report.lines.setdefault(key, line)
        report.where.setdefault(key, []).append(line)
    return report


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0][:200] if message.strip() else ""
