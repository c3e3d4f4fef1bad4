"""An ASGI app served by uvicorn on a free loopback port, in a thread, for the length of a `with`
block: what the integration tests run rlvr's env servers and scripted endpoints on. Imported by the
tests that need it (not at collection), so uvicorn is loaded only where one of them runs."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn


class Server:
    def __init__(self, app) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.app = app
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
