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
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from rlvr.graders.code.typecheck.bundle import PyrightBundle, node_command, node_env
from rlvr.graders.code.typecheck.lsp import LspConnection
from rlvr.graders.code.typecheck.run import RunFailure

# Starting the server and loading typeshed's builtins has its own budget, so a check's budget is
# spent on the check alone.
SERVER_START_SECONDS = 60.0
CONFIG_NAME = "pyrightconfig.json"
# LSP FileChangeType
CREATED, DELETED = 1, 3

# (path relative to the repository, 1-based line, message) of one error
RepoDiagnostic = tuple[str, int, str]


class RepoServerEngine:
    """Checks whole repository states on one warm pyright-langserver. Thread-safe (one check at a time);
    a server inherited through fork is left to its parent. Recycled every RECYCLE_CHECKS checks to bound
    its memory."""

    RECYCLE_CHECKS: int = 2_000

    def __init__(self, bundle: PyrightBundle, config: dict[str, Any], home: Path, timeout: float) -> None:
        self.bundle, self.timeout = bundle, timeout
        self._home = home
        self._config = config
        self._root = home / f"repo-workspace-{os.getpid()}"
        self._lock = threading.Lock()
        self._connection: LspConnection | None = None
        self._state: dict[str, str] = {}  # what is on disk and open, by relative path
        self._versions: dict[str, int] = {}
        self._checks = 0
        self.starts = 0  # servers started so far (for tests and benchmarks)

    def run(self, sources: dict[str, str]) -> list[RepoDiagnostic] | RunFailure:
        """Error diagnostics of the state `sources` ({relative .py path: text}), or why the check failed."""
        with self._lock:
            connection = self._connection
            if connection is not None and connection.owner_pid != os.getpid():
                self._connection, connection = None, None  # inherited through fork: the parent's to use
            if connection is None or not connection.alive:
                started = self._start(time.monotonic() + SERVER_START_SECONDS)
                if isinstance(started, RunFailure):
                    return started
                connection = started
            deadline = time.monotonic() + self.timeout
            try:
                self._sync(connection, sources)
            except OSError as exc:
                self._stop()
                return RunFailure(f"could not write the repository for pyright: {exc}")
            outcome = self._diagnose(connection, sorted(sources), deadline)
            self._checks += 1
            if isinstance(outcome, RunFailure) or self._checks >= self.RECYCLE_CHECKS:
                self._stop()
            return outcome

    def close(self) -> None:
        connection = self._connection
        if connection is not None and connection.owner_pid == os.getpid():
            connection.kill()  # without the lock: also interrupts a check in progress
        with self._lock:
            self._stop()

    # ------------------------------------------------------------------ the server
    def _start(self, deadline: float) -> LspConnection | RunFailure:
        self._stop()
        # One workspace directory per process: a forked child starting its own server must not clear
        # the directory its parent's server is reading.
        self._root = self._home / f"repo-workspace-{os.getpid()}"
        shutil.rmtree(self._root, ignore_errors=True)
        self._root.mkdir(parents=True)
        (self._root / CONFIG_NAME).write_text(json.dumps(self._config))
        command = node_command(self.bundle, self.bundle.langserver_script, "--stdio")
        try:
            process = subprocess.Popen(
                command,
                cwd=self._root,
                env=node_env(self._home, self.bundle),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            return RunFailure(f"could not start pyright-langserver: {exc}")
        self.starts += 1
        connection = LspConnection(process)
        self._connection, self._checks = connection, 0
        root_uri = self._root.as_uri()
        initialize = connection.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "repository"}],
                "capabilities": {
                    "textDocument": {"diagnostic": {"dynamicRegistration": True}, "publishDiagnostics": {}},
                    "workspace": {
                        "configuration": True,
                        "workspaceFolders": True,
                        # we announce file changes ourselves: pyright starts no watcher of its own
                        "didChangeWatchedFiles": {"dynamicRegistration": True},
                    },
                },
            },
        )
        if connection.wait(initialize, deadline) is None:
            self._stop()
            return RunFailure("pyright-langserver did not initialize in time")
        connection.notify("initialized", {})
        if not connection.wait_registered(deadline):
            self._stop()
            return RunFailure("pyright-langserver did not register pull diagnostics")
        # Load the builtins now, on the start-up budget, with a file that then stays out of every state.
        warm_up = self._diagnose(connection, [], deadline, warm_up=True)
        if isinstance(warm_up, RunFailure):
            self._stop()
            return RunFailure(f"pyright-langserver did not start: {warm_up.reason}")
        return connection

    def _stop(self) -> None:
        if self._connection is not None:
            self._connection.kill()
            self._connection = None
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
            document = {"uri": self._uri(path), "languageId": "python", "version": 1, "text": sources[path]}
            connection.notify("textDocument/didOpen", {"textDocument": document})
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

    def _diagnose(
        self, connection: LspConnection, paths: list[str], deadline: float, warm_up: bool = False
    ) -> list[RepoDiagnostic] | RunFailure:
        uris = [self._uri(p) for p in paths]
        if warm_up:
            uris = [(self._root.parent / "warm_up.py").as_uri()]
            document = {"uri": uris[0], "languageId": "python", "version": 1, "text": "x: int = 1\n"}
            connection.notify("textDocument/didOpen", {"textDocument": document})
        requests = [connection.request("textDocument/diagnostic", {"textDocument": {"uri": u}}) for u in uris]
        found: list[RepoDiagnostic] = []
        for path, request in zip(paths or [""], requests, strict=True):
            response = connection.wait(request, deadline)
            if response is None or "error" in response:
                timed_out = response is None and connection.alive
                if response is not None:
                    reason = f"pyright-langserver error: {response['error']}"
                elif timed_out:
                    reason = f"pyright timed out after {self.timeout:g}s"
                else:
                    reason = "pyright-langserver exited unexpectedly"
                return RunFailure(reason, timed_out=timed_out)
            found += _errors(path, response.get("result"))
        if warm_up:
            connection.notify("textDocument/didClose", {"textDocument": {"uri": uris[0]}})
        return found


def _errors(path: str, result: Any) -> list[RepoDiagnostic]:
    items = result.get("items", []) if isinstance(result, dict) else []
    found: list[RepoDiagnostic] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("severity") != 1:
            continue
        line = int(item.get("range", {}).get("start", {}).get("line", 0)) + 1
        found.append((path, line, str(item.get("message", ""))))
    return found
