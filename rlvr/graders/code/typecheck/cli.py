"""The one pyright command-line runner (`CliRunner`: `pyright --outputjson` over a directory, killed as
a process group on timeout or close), and the "cli" engine of the code family built on it: one run
per batch, over files in a fresh temp dir."""

from __future__ import annotations

import json
import secrets
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from rlvr.graders.code.typecheck.bundle import PyrightBundle, kill_group, node_command, node_env
from rlvr.graders.code.typecheck.diagnostics import cli_items
from rlvr.graders.code.typecheck.run import SECONDS_PER_CANDIDATE, Diagnostic, RunFailure

CliItems = list[tuple[Path, Diagnostic]]


class CliRunner:
    """`pyright --outputjson --project ROOT/pyrightconfig.json`, isolated (`bundle.node_env` of `home`).
    Thread-safe; `close()` kills every run in progress."""

    def __init__(self, bundle: PyrightBundle) -> None:
        self.bundle = bundle
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()

    def check(self, root: Path, home: Path, budget: float) -> CliItems | RunFailure:
        """Every diagnostic of the project at `root` (which holds pyrightconfig.json), or why none."""
        completed = self._spawn(root, home, budget)
        if isinstance(completed, RunFailure):
            return completed
        returncode, stdout, stderr = completed
        try:
            payload = json.loads(stdout)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return RunFailure(f"pyright exited {returncode} without JSON output: {_tail(stderr or stdout)}")
        if returncode not in (0, 1):
            return RunFailure(f"pyright exited {returncode}: {_tail(stderr or stdout)}")
        items = cli_items(payload)
        return RunFailure("pyright JSON has no diagnostics list") if items is None else items

    def close(self) -> None:
        with self._lock:
            running = list(self._running)
        for process in running:
            kill_group(process)

    def _spawn(self, root: Path, home: Path, budget: float) -> tuple[int, bytes, bytes] | RunFailure:
        command = node_command(
            self.bundle, self.bundle.script, "--outputjson", "--project", str(root / "pyrightconfig.json")
        )
        try:
            process = subprocess.Popen(
                command,
                cwd=root,
                env=node_env(home, self.bundle),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as exc:
            return RunFailure(f"could not start pyright: {exc}")
        with self._lock:
            self._running.add(process)
        try:
            stdout, stderr = process.communicate(timeout=budget)
        except subprocess.TimeoutExpired:
            kill_group(process)
            process.communicate()
            return RunFailure(f"pyright timed out after {budget:g}s", timed_out=True)
        finally:
            with self._lock:
                self._running.discard(process)
        if process.returncode < 0:
            return RunFailure(f"pyright was killed by signal {-process.returncode}")
        return process.returncode, stdout, stderr


class CliEngine(CliRunner):
    """One `pyright --outputjson` process per batch, over files in a fresh temp dir."""

    def __init__(self, bundle: PyrightBundle, config: dict[str, Any], timeout: float) -> None:
        super().__init__(bundle)
        self.config, self.timeout = config, timeout
        self.seconds_per_candidate = SECONDS_PER_CANDIDATE

    def run(self, texts: list[str]) -> list[list[Diagnostic]] | RunFailure:
        with tempfile.TemporaryDirectory(prefix="rlvr-types-") as workdir:
            root = Path(workdir)
            # Unguessable names: a candidate cannot import a sibling candidate's file.
            token = secrets.token_hex(8)
            names = [f"m_{token}_{i}.py" for i in range(len(texts))]
            for name, text in zip(names, texts, strict=True):
                (root / name).write_text(text, encoding="utf-8")
            (root / "pyrightconfig.json").write_text(json.dumps(self.config))
            items = self.check(root, root, self.timeout + self.seconds_per_candidate * len(texts))
        if isinstance(items, RunFailure):
            return items
        position = {name: i for i, name in enumerate(names)}
        found: list[list[Diagnostic]] = [[] for _ in names]
        for path, item in items:
            index = position.get(path.name)
            if index is not None:
                found[index].append(item)
        return found


def _tail(raw: bytes, limit: int = 300) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text[-limit:] if text else "(no output)"
