"""The run directory's durable state: `run.json` (what was run) and `samples.jsonl` (one line per
finished sample, appended and flushed as samples complete, so an interrupted run resumes)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rlvr.bench.records import sample_key
from rlvr.core.jsonl import json_lines

SAMPLES_FILE = "samples.jsonl"
RUN_FILE = "run.json"


class BenchError(ValueError):
    """A benchmark that cannot run as asked; the message says what to change."""


def check_run_identity(out: Path, identity: dict[str, Any]) -> None:
    """Refuse to mix samples from different policies or sampling settings in one directory."""
    path = out / RUN_FILE
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise BenchError(f"{path} is unreadable ({exc}); use a fresh --out directory") from exc
        if stored != identity:
            changed = sorted(k for k in set(stored) | set(identity) if stored.get(k) != identity.get(k))
            raise BenchError(
                f"{out} holds samples from a different run (changed: {', '.join(changed)}); "
                "use a fresh --out directory to compare settings, or a sweep"
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(identity, indent=2, sort_keys=True) + "\n", encoding="utf-8")


class SampleStore:
    """Samples keyed by (pack, task id, sample number); a later line for a key replaces an earlier one."""

    def __init__(self, out: Path) -> None:
        self.path = out / SAMPLES_FILE
        self.records: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.unreadable_lines = 0
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        for entry in json_lines(self.path):
            record = entry.value
            try:
                if entry.problem:
                    raise ValueError(entry.problem.message)
                key = sample_key(record["pack"], record["task_id"], int(record["sample"]))
            except (KeyError, TypeError, ValueError, OverflowError):
                self.unreadable_lines += 1  # e.g. a line cut short when a run was killed
                continue
            self.records[key] = record

    def is_done(self, key: tuple[str, str, int]) -> bool:
        """Finished samples are skipped on resume; those whose generation failed are tried again."""
        record = self.records.get(key)
        return record is not None and record.get("generation_error") is None

    def append(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        with self.path.open("a", encoding="utf-8", errors="backslashreplace") as handle:
            if handle.tell() > 0 and not self._ends_with_newline():
                handle.write("\n")  # after a torn line, start a fresh one
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                self.records[sample_key(record["pack"], record["task_id"], record["sample"])] = record
            handle.flush()
            os.fsync(handle.fileno())

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"
