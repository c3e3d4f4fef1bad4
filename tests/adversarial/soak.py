"""The soak: many episodes (honest controls interleaved with every hostile case that does not need a
timeout) through a 2-worker local pool, then an account of what leaked."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from adversarial.corpus import (
    TASKS,
    HostProbe,
    credited,
    descendants,
    job_for,
    load_cases,
    process_table,
    stray_processes,
)

from rlvr.sandbox import LocalSandbox
from rlvr.sandbox.pool import ProcessWorker

SANDBOX_HOST_UID = 65534  # what a namespaced sandbox run by root is on the host
SLOW_CASES = {"sleep_forever", "segfault", "memory_bomb", "infinite_loop", "swallowed_timeout"}


@dataclass
class SoakReport:
    episodes: int
    seconds: float = 0.0
    false_passes: int = 0
    honest_failures: int = 0
    sandbox_errors: int = 0
    stray_processes: int = 0
    leaked_processes: int = 0
    leaked_fds: int = 0
    leaked_temp_entries: list[str] = field(default_factory=list)
    files_written: list[str] = field(default_factory=list)
    connections: int = 0
    rss_growth: float = 0.0
    zygote_rss_growth: float = 0.0

    @property
    def clean(self) -> bool:
        return (
            self.false_passes == 0
            and self.honest_failures == 0
            and self.sandbox_errors == 0
            and self.stray_processes == 0
            and self.leaked_processes == 0
            and self.leaked_fds <= 0
            and not self.leaked_temp_entries
            and not self.files_written
            and self.connections == 0
            and self.rss_growth < 0.10
            and self.zygote_rss_growth < 0.10
        )


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def zygote_rss_kb(pool: LocalSandbox) -> int:
    """Total RSS of the pool's zygotes (each worker's namespace init)."""
    table = process_table()
    total = 0
    for worker in pool.workers:
        if isinstance(worker, ProcessWorker) and worker.pid:
            total += sum(rss_kb(pid) for pid, parent in table.items() if parent == worker.pid)
    return total


def temp_entries() -> dict[str, int]:
    root = tempfile.gettempdir()
    owners = {}
    for name in os.listdir(root):
        try:
            owners[name] = os.lstat(os.path.join(root, name)).st_uid
        except OSError:
            pass
    return owners


def soak(episodes: int, batch: int = 100) -> SoakReport:
    cases = [case for case in load_cases() if case.name not in SLOW_CASES]
    workdir = Path(tempfile.mkdtemp(prefix="rlvr-soak-"))
    probe = HostProbe(workdir)
    report = SoakReport(episodes)
    temp_before = temp_entries()
    fds_before = len(os.listdir("/proc/self/fd"))
    procs_before = descendants(os.getpid())
    pool = LocalSandbox(2, isolation="namespaces")
    rss_start = zygote_start = 0
    started = time.monotonic()
    done = 0
    while done < episodes:
        jobs, expectations = [], []
        for k in range(done, min(done + batch, episodes)):
            if k % 2:
                case = cases[(k // 2) % len(cases)]
                task = TASKS[case.task]
                jobs.append(job_for(task, probe.render(case.template), timeout=2.0))
            else:
                task = TASKS[sorted(TASKS)[(k // 2) % len(TASKS)]]
                jobs.append(job_for(task, task.honest, timeout=2.0))
            expectations.append((task, k % 2 == 0))
        for result, (task, honest) in zip(pool.run_many(jobs), expectations, strict=True):
            earned = credited(result, task)
            report.false_passes += earned and not honest
            report.honest_failures += honest and not earned
            report.sandbox_errors += result.sandbox_error
        done += len(jobs)
        if rss_start == 0 and done >= min(500, episodes // 2):  # after warm-up
            gc.collect()
            rss_start = rss_kb(os.getpid())
            zygote_start = zygote_rss_kb(pool)
        report.stray_processes += len(
            stray_processes([w.pid for w in pool.workers if isinstance(w, ProcessWorker) and w.pid])
        )
    gc.collect()
    rss_end = rss_kb(os.getpid())
    zygote_end = zygote_rss_kb(pool)
    pool.close()
    report.seconds = round(time.monotonic() - started, 1)
    report.files_written = probe.written_files()
    report.connections = probe.accepted_connections()
    probe.close()
    shutil.rmtree(workdir)
    report.leaked_processes = len(descendants(os.getpid()) - procs_before)
    report.leaked_fds = len(os.listdir("/proc/self/fd")) - fds_before
    report.leaked_temp_entries = sorted(
        name
        for name, owner in temp_entries().items()
        if name not in temp_before and (owner == SANDBOX_HOST_UID or probe.token in name)
    )
    report.rss_growth = round((rss_end - rss_start) / max(rss_start, 1), 4)
    report.zygote_rss_growth = round((zygote_end - zygote_start) / max(zygote_start, 1), 4)
    return report
