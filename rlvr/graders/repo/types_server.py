"""Warm, incremental whole-repository pyright: one long-lived `pyright-langserver --stdio` per checker.

The server's workspace directory always holds exactly one repository state — the last one checked —
as files on disk (pyright resolves imports from the disk) that are also open as LSP documents (pyright
checks what it is sent). Checking a new state sends only the difference: files removed are closed and
deleted, files added are written and opened, files changed are rewritten and sent as a full-text
`didChange`; created/deleted files are also announced with `workspace/didChangeWatchedFiles` (the
client owns file watching), so pyright drops its import-resolution cache. Then every Python file of the
state is diagnosed with an LSP pull request (`textDocument/diagnostic`, answered once the file is
checked). pyright keeps typeshed's builtins loaded and re-checks only the changed files and their
dependents: submits of the same task (a GRPO group, the base then its candidates) cost tens of
milliseconds instead of a cold start of seconds.

Candidate files are plain text to pyright (it never executes code). A check that times out, or a server
that dies mid-check, is reported as a `RunFailure`; the server is then killed and a fresh one started
for the next check, which begins from an empty workspace.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from rlvr.graders.code.typecheck.bundle import PyrightBundle
from rlvr.graders.code.typecheck.langserver import LanguageServer
from rlvr.graders.code.typecheck.lsp import LspConnection
from rlvr.graders.code.typecheck.run import RunFailure

CONFIG_NAME = "pyrightconfig.json"
# LSP FileChangeType
CREATED, DELETED = 1, 3

# (path relative to the repository, 1-based line, message) of one error
RepoDiagnostic = tuple[str, int, str]


class RepoServerEngine(LanguageServer):
    """Checks whole repository states on one warm pyright-langserver (the language server with a synced
    workspace). Thread-safe (one check at a time); a server inherited through fork is left to its parent.
    Recycled every RECYCLE_CHECKS checks to bound its memory."""

    RECYCLE_CHECKS: int = 2_000
    workspace_name = "repository"
    watches_files = True

    def __init__(self, bundle: PyrightBundle, config: dict[str, Any], home: Path, timeout: float) -> None:
        super().__init__(bundle, home, home / f"repo-workspace-{os.getpid()}")
        self.timeout = timeout
        self._config = config
        self._lock = threading.Lock()
        self._state: dict[str, str] = {}  # what is on disk and open, by relative path
        self._versions: dict[str, int] = {}
        self._checks = 0

    def run(self, sources: dict[str, str]) -> list[RepoDiagnostic] | RunFailure:
        """Error diagnostics of the state `sources` ({relative .py path: text}), or why the check failed."""
        with self._lock:
            connection = self._live_connection()
            if isinstance(connection, RunFailure):
                return connection
            deadline = time.monotonic() + self.timeout
            try:
                self._sync(connection, sources)
            except OSError as exc:
                self._stop()
                return RunFailure(f"could not write the repository for pyright: {exc}")
            paths = sorted(sources)
            outcome = self.pull(connection, [self._uri(p) for p in paths], deadline, self.timeout)
            self._checks += 1
            if isinstance(outcome, RunFailure) or self._checks >= self.RECYCLE_CHECKS:
                self._stop()
            if isinstance(outcome, RunFailure):
                return RunFailure(outcome.reason, timed_out=outcome.timed_out)
            return [
                (path, line, message)
                for path, found in zip(paths, outcome, strict=True)
                for line, severity, message in found
                if severity == "error"
            ]

    def close(self) -> None:
        self._kill()  # without the lock: also interrupts a check in progress
        with self._lock:
            self._stop()

    # ------------------------------------------------------------------ the server
    def _prepare_root(self) -> None:
        # One workspace directory per process: a forked child starting its own server must not clear
        # the directory its parent's server is reading.
        self._root = self._home / f"repo-workspace-{os.getpid()}"
        shutil.rmtree(self._root, ignore_errors=True)
        self._root.mkdir(parents=True)
        (self._root / CONFIG_NAME).write_text(json.dumps(self._config))

    def _started(self) -> None:
        self._checks = 0

    def _stop(self) -> None:
        super()._stop()
        self._state.clear()
        self._versions.clear()

    # ------------------------------------------------------------------ one check
    def _uri(self, path: str) -> str:
        return (self._root / path).as_uri()

    def _target(self, path: str) -> Path:
        target = (self._root / path).resolve()
        if not target.is_relative_to(self._root.resolve()) or path == CONFIG_NAME:
            raise OSError(f"path escapes the repository: {path}")
        return target

    def _sync(self, connection: LspConnection, sources: dict[str, str]) -> None:
        """Make the disk and the open documents hold `sources`, telling pyright what changed."""
        removed = [p for p in self._state if p not in sources]
        added = [p for p in sources if p not in self._state]
        changed = [p for p in sources if p in self._state and self._state[p] != sources[p]]
        events: list[dict[str, Any]] = []
        for path in removed:  # first, so a file may become a directory of the same name
            connection.notify("textDocument/didClose", {"textDocument": {"uri": self._uri(path)}})
            target = self._target(path)
            target.unlink(missing_ok=True)
            self._prune(target.parent)
            del self._state[path]
            self._versions.pop(path, None)
            events.append({"uri": self._uri(path), "type": DELETED})
        for path in added + changed:
            target = self._target(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(sources[path], encoding="utf-8", errors="replace")
            if path in added:  # a changed file is open: its didChange below is all pyright needs
                events.append({"uri": self._uri(path), "type": CREATED})
        if events:
            connection.notify("workspace/didChangeWatchedFiles", {"changes": events})
        for path in changed:
            self._versions[path] += 1
            connection.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": self._uri(path), "version": self._versions[path]},
                    "contentChanges": [{"text": sources[path]}],
                },
            )
            self._state[path] = sources[path]
        for path in added:
            self._versions[path] = 1
            self.open(connection, self._uri(path), sources[path])
            self._state[path] = sources[path]

    def _prune(self, directory: Path) -> None:
        """Remove directories the removal left empty: an empty directory is a namespace package to pyright."""
        root = self._root.resolve()
        while directory != root and directory.is_relative_to(root):
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent
