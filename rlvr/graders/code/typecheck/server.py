"""The "server" engine: the language server (`langserver.LanguageServer`) with in-memory batches —
each batch opened as documents (never written to disk), diagnosed, closed; restarted after a failure
and recycled by quota."""

from __future__ import annotations

import json
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from rlvr.graders.code.typecheck.bundle import PyrightBundle
from rlvr.graders.code.typecheck.langserver import LanguageServer
from rlvr.graders.code.typecheck.lsp import LspConnection
from rlvr.graders.code.typecheck.run import SECONDS_PER_CANDIDATE, Diagnostic, RunFailure


class ServerEngine(LanguageServer):
    """One long-lived `pyright-langserver --stdio`. Each batch is opened as in-memory documents,
    diagnosed with LSP pull requests and closed. The server is restarted after a timeout or crash,
    and recycled every RECYCLE_DOCUMENTS documents to bound its memory."""

    RECYCLE_DOCUMENTS: int = 5_000  # its heap grows ~100 MB per 1312 documents; a restart costs ~1 s

    def __init__(self, bundle: PyrightBundle, config: dict[str, Any], home: Path, timeout: float) -> None:
        super().__init__(bundle, home, home / "workspace")
        self.timeout = timeout
        self.seconds_per_candidate = SECONDS_PER_CANDIDATE
        self._root.mkdir()
        (self._root / "pyrightconfig.json").write_text(json.dumps(config))
        self._lock = threading.Lock()  # one batch at a time
        self._documents = 0

    def run(self, texts: list[str]) -> list[list[Diagnostic]] | RunFailure:
        with self._lock:
            connection = self._live_connection()
            if isinstance(connection, RunFailure):
                return connection
            budget = self.timeout + self.seconds_per_candidate * len(texts)
            outcome = self._diagnose(connection, texts, time.monotonic() + budget, budget)
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

    def _started(self) -> None:
        self._documents = 0

    def _diagnose(
        self, connection: LspConnection, texts: list[str], deadline: float, budget: float
    ) -> list[list[Diagnostic]] | RunFailure:
        # Unguessable names: a candidate cannot import a sibling candidate's document.
        token = secrets.token_hex(8)
        uris = [(self._root / f"m_{token}_{i}.py").as_uri() for i in range(len(texts))]
        for uri, text in zip(uris, texts, strict=True):
            self.open(connection, uri, text)
        outcome = self.pull(connection, uris, deadline, budget)
        if not isinstance(outcome, RunFailure):
            for uri in uris:
                connection.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return outcome
