"""The "server" engine: one long-lived `pyright-langserver --stdio` that checks each batch as
in-memory documents through LSP pull diagnostics, restarted after a failure and recycled by quota."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from rlvr.graders.code.typecheck.bundle import PyrightBundle, node_command, node_env
from rlvr.graders.code.typecheck.lsp import LspConnection
from rlvr.graders.code.typecheck.run import SECONDS_PER_CANDIDATE, Diagnostic, RunFailure

# Starting the server and loading typeshed's builtins has its own budget, so a batch's budget is
# spent on the batch alone.
SERVER_START_SECONDS = 60.0


class ServerEngine:
    """One long-lived `pyright-langserver --stdio`. Each batch is opened as in-memory documents
    (never written to disk), diagnosed with LSP pull requests (`textDocument/diagnostic`, answered
    once the document is fully checked) and closed. The server is restarted after a timeout or crash,
    and recycled every RECYCLE_DOCUMENTS documents to bound its memory."""

    RECYCLE_DOCUMENTS: int = 5_000  # its heap grows ~100 MB per 1312 documents; a restart costs ~1 s
    _SEVERITY: dict[object, str] = {1: "error", 2: "warning"}

    def __init__(self, bundle: PyrightBundle, config: dict[str, Any], home: Path, timeout: float) -> None:
        self.bundle, self.timeout = bundle, timeout
        self.seconds_per_candidate = SECONDS_PER_CANDIDATE
        self._root = home / "workspace"
        self._root.mkdir()
        (self._root / "pyrightconfig.json").write_text(json.dumps(config))
        self._lock = threading.Lock()  # one batch at a time
        self._connection: LspConnection | None = None
        self._documents = 0

    def run(self, texts: list[str]) -> list[list[Diagnostic]] | RunFailure:
        with self._lock:
            connection = self._connection
            if connection is not None and connection.owner_pid != os.getpid():
                connection = self._connection = None  # inherited through fork: the parent's to use
            if connection is None or not connection.alive:
                started = self._start(time.monotonic() + SERVER_START_SECONDS)
                if isinstance(started, RunFailure):
                    return started
                connection = started
            budget = self.timeout + self.seconds_per_candidate * len(texts)
            deadline = time.monotonic() + budget
            outcome = self._diagnose(connection, texts, deadline, budget)
            self._documents += len(texts)
            if isinstance(outcome, RunFailure) or self._documents >= self.RECYCLE_DOCUMENTS:
                self._stop()
            return outcome

    def close(self) -> None:
        connection = self._connection
        if connection is not None:
            connection.kill()  # without the lock: also interrupts a batch in progress
        with self._lock:
            self._stop()

    def _start(self, deadline: float) -> LspConnection | RunFailure:
        self._stop()
        command = node_command(self.bundle, self.bundle.langserver_script, "--stdio")
        try:
            process = subprocess.Popen(
                command,
                cwd=self._root,
                env=node_env(self._root.parent, self.bundle),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            return RunFailure(f"could not start pyright-langserver: {exc}")
        connection = LspConnection(process)
        self._connection, self._documents = connection, 0
        root_uri = self._root.as_uri()
        initialize = connection.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "candidates"}],
                "capabilities": {
                    "textDocument": {"diagnostic": {"dynamicRegistration": True}, "publishDiagnostics": {}},
                    "workspace": {"configuration": True, "workspaceFolders": True},
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
        warm_up = self._diagnose(connection, [""], deadline, SERVER_START_SECONDS)  # loads the builtins
        if isinstance(warm_up, RunFailure):
            self._stop()
            return RunFailure(f"pyright-langserver did not start: {warm_up.reason}")
        return connection

    def _diagnose(
        self, connection: LspConnection, texts: list[str], deadline: float, budget: float
    ) -> list[list[Diagnostic]] | RunFailure:
        # Unguessable names: a candidate cannot import a sibling candidate's document.
        token = secrets.token_hex(8)
        uris = [(self._root / f"m_{token}_{i}.py").as_uri() for i in range(len(texts))]
        for uri, text in zip(uris, texts, strict=True):
            document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
            connection.notify("textDocument/didOpen", {"textDocument": document})
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
                return RunFailure(reason, self._finished(connection, requests, found), timed_out)
            found.append(self._items(response.get("result")))
        for uri in uris:
            connection.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return found

    def _finished(
        self, connection: LspConnection, requests: list[int], found: list[list[Diagnostic]]
    ) -> dict[int, list[Diagnostic]]:
        """The documents answered before a failure: those waited for, and any answered out of turn."""
        finished = dict(enumerate(found))
        for index in range(len(found), len(requests)):
            response = connection.take(requests[index])
            if response is not None and "error" not in response:
                finished[index] = self._items(response.get("result"))
        return finished

    def _items(self, result: Any) -> list[Diagnostic]:
        items = result.get("items", []) if isinstance(result, dict) else []
        found: list[Diagnostic] = []
        for item in items if isinstance(items, list) else []:
            severity = self._SEVERITY.get(item.get("severity")) if isinstance(item, dict) else None
            if severity is None:
                continue  # information and hints (e.g. "unused variable" fades) cost nothing
            line = int(item.get("range", {}).get("start", {}).get("line", 0)) + 1
            found.append((line, severity, str(item.get("message", ""))))
        return found

    def _stop(self) -> None:
        if self._connection is not None:
            self._connection.kill()
            self._connection = None
