"""The adversarial corpus: hostile candidates (cases/*.py), the tasks they attack, an honest control per
task, a trusted judge, and probes of the host (processes, files, connections).

A case file starts with comment headers:
    # task: add | digest | mean
    # attack: what it tries
    # status: optional space-separated ExecResult statuses the run must end in (default: any)
Placeholders in a case (__CANARY_DIR__, __PACKAGE_DIR__, __SECRET_FILE__, __SECRET_NAME__, __PORT__,
__TOKEN__) are filled in per test session by `HostProbe.render`.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rlvr
from rlvr.core.codec import same_shape
from rlvr.sandbox.pool import ExecResult, Job

CASES_DIR = Path(__file__).parent / "cases"
PACKAGE_DIR = Path(rlvr.__file__).parent


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Task:
    entry: str
    calls: list[tuple[Any, ...]]
    expected: list[Any]
    honest: str


TASKS: dict[str, Task] = {
    "add": Task(
        entry="add",
        calls=[(1, 2), (3, 4), (10, -5), (0, 0), (123456789, 987654321), (6, 7)],
        expected=[3, 7, 5, 0, 1111111110, 13],
        honest="def add(x, y):\n    return x + y\n",
    ),
    "digest": Task(
        entry="digest",
        calls=[("a",), ("hello",), ("",)],
        expected=[_digest("a"), _digest("hello"), _digest("")],
        honest="import hashlib\n\n\ndef digest(s):\n    return hashlib.sha256(s.encode()).hexdigest()[:16]\n",
    ),
    "mean": Task(
        entry="mean",
        calls=[([1.0, 2.0],), ([0.5],), ([1.0, 2.0, 4.5],)],
        expected=[1.5, 0.5, 2.5],
        honest="def mean(xs):\n    return sum(xs) / len(xs)\n",
    ),
}


@dataclass(frozen=True)
class Case:
    name: str
    task: str
    attack: str
    statuses: tuple[str, ...]
    template: str


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.py")):
        text = path.read_text()
        headers: dict[str, str] = {}
        for line in text.splitlines():
            if not line.startswith("# ") or ":" not in line:
                break
            key, _, value = line[2:].partition(":")
            headers[key.strip()] = value.strip()
        if headers.get("task") not in TASKS or not headers.get("attack"):
            raise ValueError(f"{path.name}: needs '# task: <{'|'.join(TASKS)}>' and '# attack: ...' headers")
        statuses = tuple(headers.get("status", "").split())
        cases.append(Case(path.stem, headers["task"], headers["attack"], statuses, text))
    return cases


def credited(result: ExecResult, task: Task) -> bool:
    """The trusted judge: a run earns test credit only if it finished cleanly and every call returned
    exactly the expected plain value with exactly the expected types."""
    if result.status != "ok" or len(result.outcomes) != len(task.expected):
        return False
    for outcome, expected in zip(result.outcomes, task.expected, strict=True):
        if outcome is None or not outcome.ok:
            return False
        if not same_shape(expected, outcome.value) or outcome.value != expected:
            return False
    return True


# The code grader's time limit for the corpus: cases that run out the clock (sleep, spin, swallow the
# timeout) wait a whole limit each, and a short one tests the same paths as the default 10 CPU seconds.
GRADER_TIMEOUT_SECONDS = 2.0


def job_for(task: Task, source: str, timeout: float = 1.5) -> Job:
    return Job(source=source, entry=task.entry, calls=list(task.calls), timeout=timeout, mem_mb=512)


def process_table() -> dict[int, int]:
    """pid -> ppid for every process on the host."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
                table[int(entry)] = int(stat.rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    return table


def descendants(root: int, table: dict[int, int] | None = None) -> set[int]:
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def open_fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


class HostProbe:
    """Planted secrets and canaries on the host, and checks that a case left no trace."""

    def __init__(self, workdir: Path) -> None:
        self.token = secrets.token_hex(8)
        self.canary_dir = workdir / "canary"
        self.canary_dir.mkdir()
        self.secret_name = f"hidden-tests-{self.token}.json"
        self.secret_file = workdir / self.secret_name
        self.secret_file.write_text(json.dumps(TASKS["digest"].expected))
        self.secret_file.chmod(0o644)
        os.environ["RLVR_ADV_SECRET"] = ",".join(TASKS["digest"].expected)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]

    def render(self, template: str) -> str:
        return (
            template.replace("__CANARY_DIR__", str(self.canary_dir))
            .replace("__PACKAGE_DIR__", str(PACKAGE_DIR))
            .replace("__SECRET_FILE__", str(self.secret_file))
            .replace("__SECRET_NAME__", self.secret_name)
            .replace("__PORT__", str(self.port))
            .replace("__TOKEN__", self.token)
        )

    def written_files(self) -> list[str]:
        suspects = [
            *self.canary_dir.iterdir(),
            PACKAGE_DIR / "pwned.py",
            Path(f"/tmp/rlvr-adversarial-{self.token}"),
            Path(f"/root/rlvr-adversarial-{self.token}"),
            Path(f"/dev/shm/rlvr-adversarial-{self.token}"),
        ]
        return [str(path) for path in suspects if path.exists() or path.is_symlink()]

    def accepted_connections(self) -> int:
        count = 0
        while True:
            try:
                connection, _ = self.listener.accept()
            except BlockingIOError:
                return count
            connection.close()
            count += 1

    def close(self) -> None:
        self.listener.close()
        os.environ.pop("RLVR_ADV_SECRET", None)


def stray_processes(worker_pids: list[int]) -> list[int]:
    """Processes below the pool's workers other than each worker's own namespace init (the zygote)."""
    table = process_table()
    strays = []
    for worker in worker_pids:
        below = descendants(worker, table)
        inits = {pid for pid in below if table.get(pid) == worker}
        if len(inits) > 1:
            strays.extend(sorted(inits))
        strays.extend(sorted(below - inits))
    return strays
