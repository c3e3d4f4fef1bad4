"""JSON-RPC over a language server's stdio (LSP base-protocol framing: `Content-Length` headers)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from typing import Any

from rlvr.graders.code.typecheck.bundle import kill_group


class LspConnection:
    """JSON-RPC over a language server's stdio: requests/notifications out, responses in; the
    server's own requests (configuration, capability registration, progress) are answered inline."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.owner_pid = os.getpid()
        self._responses: dict[int, dict[str, Any]] = {}
        self._registered = False
        self._closed = False
        self._next_id = 0
        self._changed = threading.Condition()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, name="rlvr-pyright-lsp", daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return not self._closed and self.process.poll() is None

    def request(self, method: str, params: dict[str, Any]) -> int:
        with self._changed:
            self._next_id += 1
            request_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, request_id: int, deadline: float) -> dict[str, Any] | None:
        """The response, or None on timeout or when the server is gone."""
        with self._changed:
            self._changed.wait_for(
                lambda: request_id in self._responses or self._closed,
                timeout=max(0.0, deadline - time.monotonic()),
            )
            return self._responses.pop(request_id, None)

    def take(self, request_id: int) -> dict[str, Any] | None:
        """The response if it has arrived, without waiting."""
        with self._changed:
            return self._responses.pop(request_id, None)

    def wait_registered(self, deadline: float) -> bool:
        with self._changed:
            self._changed.wait_for(
                lambda: self._registered or self._closed, timeout=max(0.0, deadline - time.monotonic())
            )
            return self._registered

    def kill(self) -> None:
        kill_group(self.process)
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self.process.wait()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        stdin = self.process.stdin
        with self._write_lock:
            try:
                assert stdin is not None
                stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
                stdin.flush()
            except (OSError, ValueError):  # broken pipe, or closed by kill()
                self._mark_closed()

    def _read_loop(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                length = None
                while True:
                    header = stdout.readline()
                    if not header:
                        return
                    if header in (b"\r\n", b"\n"):
                        break
                    name, _, value = header.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    return
                message = json.loads(stdout.read(length))
                if isinstance(message, dict):
                    self._dispatch(message)
        except (OSError, ValueError):
            return
        finally:
            self._mark_closed()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method, message_id = message.get("method"), message.get("id")
        if method is not None and message_id is not None:  # a request from the server
            result: Any = None
            if method == "workspace/configuration":
                result = [None for _ in message.get("params", {}).get("items", [])]
            self._send({"jsonrpc": "2.0", "id": message_id, "result": result})
            if method == "client/registerCapability":
                registrations = message.get("params", {}).get("registrations", [])
                if any(r.get("method") == "textDocument/diagnostic" for r in registrations):
                    with self._changed:
                        self._registered = True
                        self._changed.notify_all()
        elif method is None and isinstance(message_id, int):
            with self._changed:
                self._responses[message_id] = message
                self._changed.notify_all()

    def _mark_closed(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
