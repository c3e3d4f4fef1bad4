"""The one pyright language server: a long-lived `pyright-langserver --stdio`, started, initialized,
warmed up (typeshed's builtins loaded on the start-up budget) and stopped here, and asked for LSP pull
diagnostics (`textDocument/diagnostic`, answered once a document is fully checked).

What the documents are is a strategy of the subclass: in-memory batches of single files
(`server.ServerEngine`, the code family) or a repository state kept in sync on disk
(`rlvr/graders/repo/types_server.RepoServerEngine`). A server inherited through fork is left to its
parent; a dead one is restarted at the next run.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from rlvr.graders.code.typecheck.bundle import PyrightBundle, node_command, node_env
from rlvr.graders.code.typecheck.diagnostics import pulled
from rlvr.graders.code.typecheck.lsp import LspConnection
from rlvr.graders.code.typecheck.run import Diagnostic, RunFailure

# Starting the server and loading typeshed's builtins has its own budget, so a run's budget is spent
# on the run alone.
SERVER_START_SECONDS = 60.0


class LanguageServer:
    """Process and protocol of one pyright-langserver; subclasses choose the documents.

    `_root` is the workspace folder, `_home` the checker's home (pyright's HOME and temp dir),
    `watches_files`: the client announces file changes itself (`workspace/didChangeWatchedFiles`)."""

    workspace_name = "candidates"
    watches_files = False

    def __init__(self, bundle: PyrightBundle, home: Path, root: Path) -> None:
        self.bundle = bundle
        self._home = home
        self._root = root
        self._connection: LspConnection | None = None
        self.starts = 0  # servers started so far (for tests and benchmarks)

    # ------------------------------------------------------------------ lifecycle
    def _live_connection(self) -> LspConnection | RunFailure:
        """The running server, started (again) if there is none or it died."""
        connection = self._connection
        if connection is not None and connection.owner_pid != os.getpid():
            self._connection = connection = None  # inherited through fork: the parent's to use
        if connection is None or not connection.alive:
            return self._start(time.monotonic() + SERVER_START_SECONDS)
        return connection

    def _prepare_root(self) -> None:
        """Called before each start: make the workspace folder ready."""

    def _started(self) -> None:
        """Called after each start, before the warm-up."""

    def _start(self, deadline: float) -> LspConnection | RunFailure:
        self._stop()
        self._prepare_root()
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
        self._connection = connection
        self._started()
        workspace: dict[str, Any] = {"configuration": True, "workspaceFolders": True}
        if self.watches_files:  # we announce file changes ourselves: pyright starts no watcher of its own
            workspace["didChangeWatchedFiles"] = {"dynamicRegistration": True}
        root_uri = self._root.as_uri()
        initialize = connection.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": self.workspace_name}],
                "capabilities": {
                    "textDocument": {"diagnostic": {"dynamicRegistration": True}, "publishDiagnostics": {}},
                    "workspace": workspace,
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
        warm_up = self._warm_up(connection, deadline)  # loads the builtins
        if isinstance(warm_up, RunFailure):
            self._stop()
            return RunFailure(f"pyright-langserver did not start: {warm_up.reason}")
        return connection

    def _warm_up(self, connection: LspConnection, deadline: float) -> list[list[Diagnostic]] | RunFailure:
        """Check one trivial document outside every later run, on the start-up budget."""
        uri = (self._home / "warm_up.py").as_uri()
        self.open(connection, uri, "x: int = 1\n")
        outcome = self.pull(connection, [uri], deadline, SERVER_START_SECONDS)
        connection.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return outcome

    def _stop(self) -> None:
        if self._connection is not None:
            self._connection.kill()
            self._connection = None

    def _kill(self) -> None:
        """Kill the server from any thread (interrupts a run in progress); its owner process only."""
        connection = self._connection
        if connection is not None and connection.owner_pid == os.getpid():
            connection.kill()

    # ------------------------------------------------------------------ documents
    @staticmethod
    def open(connection: LspConnection, uri: str, text: str, version: int = 1) -> None:
        document = {"uri": uri, "languageId": "python", "version": version, "text": text}
        connection.notify("textDocument/didOpen", {"textDocument": document})

    @staticmethod
    def pull(
        connection: LspConnection, uris: list[str], deadline: float, budget: float
    ) -> list[list[Diagnostic]] | RunFailure:
        """Each document's diagnostics, in order; on a failure, those answered before it."""
        requests = [connection.request("textDocument/diagnostic", {"textDocument": {"uri": u}}) for u in uris]
        found: list[list[Diagnostic]] = []
        for request in requests:
            response = connection.wait(request, deadline)
            if response is None or "error" in response:
                timed_out = response is None and connection.alive
                if response is not None:
                    reason = f"pyright-langserver error: {response['error']}"
                elif timed_out:
                    reason = f"pyright timed out after {budget:g}s"
                else:
                    reason = "pyright-langserver exited unexpectedly"
                finished = dict(enumerate(found))
                for index in range(len(found), len(requests)):  # any answered out of turn
                    late = connection.take(requests[index])
                    if late is not None and "error" not in late:
                        finished[index] = pulled(late.get("result"))
                return RunFailure(reason, finished, timed_out)
            found.append(pulled(response.get("result")))
        return found
