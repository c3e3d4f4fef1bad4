"""Each mined task proved as it is found, by `rlvr packs validate`'s own prover.

A task line is read back through the repo pack loader (a scratch pack directory whose `repos/` is the
pack's), then proved by `rlvr/graders/repo/prove.py:prove_task` with the grader's default options, as
`rlvr packs validate` does: the reference imports, passes its visible tests and adds no type error
(held to the baseline the miner recorded of the upstream project), scores 1.0 on every hidden check;
the base state fails at least one; a no-op (the base submitted as is) scores low. The miner keeps a
task only if the proof finds no problem and the no-op scores at most its own, lower, limit; so every
kept task is one validate accepts, and none waits for a checking phase at the end of the budget.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.core.types import Task
from rlvr.graders.repo.grader import ReferenceFault, RepoGrader
from rlvr.graders.repo.prove import NOOP, _Tasks, prove_task
from rlvr.sandbox import WorkerPool
from rlvr.task_packs.repo_tasks.format import read_repo_tasks

PROOF_THREADS = 2  # proofs at once: each waits on the sandbox and on pyright, two other processes


@dataclass
class Proved:
    """One task's proof: kept (no problem) or the first problem's reason, and what it measured."""

    line: dict[str, Any]
    reason: str | None
    reference: float | None
    noop: float | None
    seconds: float


class TaskProver:
    """Proves task lines one at a time against the pack directory `out` (whose `repos/` is written)."""

    def __init__(self, out: Path, sandbox: WorkerPool, noop_limit: float | None) -> None:
        self.out = out
        self.noop_limit = noop_limit
        self._scratch = Path(tempfile.mkdtemp(prefix="rlvr-mine-check-"))
        (self._scratch / "repos").symlink_to((out / "repos").resolve(), target_is_directory=True)
        self._grader = RepoGrader(_Tasks([], out.name), sandbox=sandbox)
        self.seconds: list[float] = []
        self._types = ThreadPoolExecutor(max_workers=PROOF_THREADS, thread_name_prefix="rlvr-mine-types")
        self._reading = threading.Lock()

    def estimate(self) -> float:
        """Seconds the next proof will likely take: the median of the last few, the first left out once
        there are others (it also starts pyright and checks the project's own reference); 0 before any."""
        recent = (self.seconds[1:] or self.seconds)[-7:]
        return statistics.median(recent) if recent else 0.0

    def task(self, line: dict[str, Any]) -> tuple[Task | None, str | None]:
        """The line as the pack loader reads it, or the format problem that stops it."""
        with self._reading:  # one scratch file: proofs may run in several threads
            (self._scratch / "tasks.jsonl").write_text(json.dumps(line, sort_keys=True) + "\n")
            tasks, problems = read_repo_tasks(self._scratch)
        if problems or len(tasks) != 1:
            return None, f"format: {problems[0].message if problems else 'no task read'}"[:80]
        return tasks[0], None

    def prove(self, line: dict[str, Any]) -> Proved:
        started = time.monotonic()
        task, problem = self.task(line)
        reference = noop = None
        if task is not None:
            self._warm(task)
            proof, problems, _ = prove_task(self._grader, task, self.out.name)
            reference, noop = proof.reference_reward, proof.trivial_rewards.get(NOOP)
            if problems:
                first = problems[0]
                problem = f"{first.field or 'task'}: {_short(first.message)}"
            elif noop is None:
                problem = "no-op: not graded"
            elif self.noop_limit is not None and noop > self.noop_limit:
                problem = f"no-op: the unchanged base scores above {self.noop_limit}"
        seconds = time.monotonic() - started
        self.seconds.append(seconds)
        if problem is None:
            line.setdefault("notes", {})["checked"] = {"reference": reference, "noop": noop}
        return Proved(line, problem, reference, noop, seconds)

    def _warm(self, task: Task) -> None:
        """The base state's whole-repository pyright check (the one new state a mined task brings: the
        reference is the project's own, checked once) runs at the same time as the hidden checks'
        sandbox runs on the reference and the base; both land in the grader's caches, so the proof
        that follows reuses them instead of running them one after the other."""
        typing = self._types.submit(self._grader.type_checker.check, task.hidden["base"])
        try:
            self._grader.checks(task)
        except ReferenceFault:
            pass  # the proof reports it
        finally:
            typing.result()

    def close(self) -> None:
        self._types.shutdown(wait=True)
        self._grader.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


def _short(message: str) -> str:
    """A problem's message as a drop reason: its kind, without the task's particulars."""
    return message.split(":", 1)[0][:70]
