"""Stored candidates: every completion a bench or training run graded, with its verdict and receipt,
and `grading.json`, how each pack was graded - what `rlvr regrade` reads.

A bench run keeps its candidates in `samples.jsonl` (its resumable sample store). A training run writes
one gzip-compressed JSONL file per step, `candidates/step_000012.jsonl.gz`, so a resumed run simply
rewrites the steps it repeats and nothing is appended twice. `load_candidates` reads either.
`grading.json` maps each pack name to its grader's `ReceiptBook.entry` (the pack reference, the
grader's options as plain data, versions and digests). Plain data and the standard library only.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.stored_text import read_text, store_text
from rlvr.core.types import Verdict

CANDIDATES_DIR = "candidates"
GRADING_FILE = "grading.json"
BENCH_SAMPLES = "samples.jsonl"
_STEP_FILE = re.compile(r"step_(\d+)\.jsonl\.gz$")


class CandidateStoreError(ValueError):
    """A directory that holds no stored candidates, or holds them unreadably; the message says why."""


@dataclass
class StoredCandidate:
    """One graded completion as a run stored it."""

    pack: str
    task_id: str
    completion: str
    reward: float
    passed: bool
    flags: list[str] = field(default_factory=list)
    components: dict[str, float] = field(default_factory=dict)
    gates: list[str] | None = None  # None: not stored (then `passed` stands for acceptance)
    error: str | None = None
    receipt: dict[str, str] | None = None
    step: int | None = None  # training runs
    sample: int | None = None  # bench runs
    canary: bool = False

    @property
    def accepted(self) -> bool:
        """The reward's own verdict: graded without error and every hard gate held."""
        if self.gates is None:
            return self.passed
        return self.error is None and not self.gates

    @property
    def where(self) -> str:
        if self.step is not None:
            return f"step {self.step}"
        return f"sample {self.sample}" if self.sample is not None else ""


def step_file(run_dir: Path, step: int) -> Path:
    return run_dir / CANDIDATES_DIR / f"step_{step:06d}.jsonl.gz"


def write_step_candidates(
    run_dir: Path,
    step: int,
    pack: str,
    task_ids: Sequence[str],
    completions: Sequence[str],
    verdicts: Sequence[Verdict],
    canary: Sequence[bool] | None = None,
) -> Path:
    """Write one training step's candidates (replacing that step's file if a resumed run repeats it)."""
    path = step_file(run_dir, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    marks = list(canary) if canary is not None else [False] * len(verdicts)
    temporary = path.with_suffix(".tmp")
    with gzip.open(temporary, "wt", encoding="utf-8", errors="backslashreplace", compresslevel=6) as handle:
        for task_id, text, verdict, is_canary in zip(task_ids, completions, verdicts, marks, strict=True):
            line = {
                "step": step,
                "pack": pack,
                "task_id": task_id,
                "reward": round(verdict.reward, 6),
                "passed": verdict.passed,
                "flags": list(verdict.flags),
                "components": {n: round(c.score, 6) for n, c in verdict.components.items()},
                "gates": list(verdict.gates),
                "error": verdict.error,
                "receipt": verdict.receipt,
                "canary": bool(is_canary),
            }
            store_text(line, "completion", text)
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    temporary.replace(path)
    return path


def _from_line(data: dict[str, Any]) -> StoredCandidate | None:
    completion = read_text(data, "completion")
    if not isinstance(completion, str) or data.get("generation_error"):
        return None  # nothing was graded for it (the generation failed)
    return StoredCandidate(
        pack=str(data.get("pack") or ""),
        task_id=str(data["task_id"]),
        completion=completion,
        reward=float(data.get("reward") or 0.0),
        passed=bool(data.get("passed")),
        flags=[str(f) for f in data.get("flags") or []],
        components={str(k): float(v) for k, v in (data.get("components") or {}).items()},
        gates=[str(g) for g in data["gates"]] if isinstance(data.get("gates"), list) else None,
        error=data.get("error"),
        receipt=data.get("receipt"),
        step=data.get("step"),
        sample=data.get("sample"),
        canary=bool(data.get("canary")),
    )


def load_candidates(run_dir: Path) -> tuple[list[StoredCandidate], str]:
    """The run's stored candidates in order, and the run's kind ("bench" or "train")."""
    if not run_dir.is_dir():
        raise CandidateStoreError(f"{run_dir} is not a directory")
    step_files = sorted(
        (int(m.group(1)), p)
        for p in (run_dir / CANDIDATES_DIR).glob("step_*.jsonl.gz")
        if (m := _STEP_FILE.search(p.name))
    )
    if step_files:
        out: list[StoredCandidate] = []
        for _, path in step_files:
            try:
                with gzip.open(path, "rt", encoding="utf-8") as handle:
                    out += [c for line in handle if line.strip() and (c := _from_line(json.loads(line)))]
            except (OSError, EOFError, json.JSONDecodeError, KeyError) as exc:
                raise CandidateStoreError(f"{path} is unreadable ({exc})") from exc
        return out, "train"
    samples = run_dir / BENCH_SAMPLES
    if samples.is_file():
        found: dict[tuple[str, str, int], StoredCandidate] = {}
        with samples.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    data = json.loads(line)
                    candidate = _from_line(data)
                except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                    continue  # a torn line of an interrupted run, as the bench store itself skips it
                if candidate is not None:  # a later line for the same sample replaces an earlier one
                    found[(candidate.pack, candidate.task_id, int(candidate.sample or 0))] = candidate
        return list(found.values()), "bench"
    raise CandidateStoreError(
        f"{run_dir} holds no stored candidates: expected a `rlvr bench --out` directory (samples.jsonl) "
        f"or a `rlvr train` run directory ({CANDIDATES_DIR}/step_*.jsonl.gz)"
    )


def store_rollout_candidates(
    run_dir: Path, step: int, pack: str, verdicts: Sequence[Verdict], completions: Sequence[str]
) -> None:
    """The trainer's hook: one step's single-turn candidates (graded texts in verdict order)."""
    write_step_candidates(run_dir, step, pack, [v.task_id for v in verdicts], completions, verdicts)


def write_grading_record(run_dir: Path, entries: dict[str, dict[str, Any]]) -> None:
    """Merge `entries` (pack name -> `ReceiptBook.entry`) into RUN_DIR/grading.json."""
    current = read_grading_record(run_dir)
    current.update(entries)
    run_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(current, indent=2, sort_keys=True) + "\n"
    (run_dir / GRADING_FILE).write_text(text, encoding="utf-8")


def read_grading_record(run_dir: Path) -> dict[str, dict[str, Any]]:
    path = run_dir / GRADING_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def record_grading(run_dir: Path, pack_name: str, pack_ref: str | None, grader: Any) -> None:
    """The trainer's hook: how its pack is graded, from the grader's receipt book (a grader without
    one - a stand-in - records only the pack reference)."""
    entry: dict[str, Any] = {"pack": pack_ref}
    if hasattr(grader, "receipt_book"):
        entry = grader.receipt_book().entry(pack_ref)
    write_grading_record(run_dir, {pack_name: entry})
