"""`jsonl:FILE` — recorded completions. Each line is `{"task_id": str, "completion": str}` (optionally
`completion_tokens` and `latency_s`); several lines for one task are several samples, in file order.
The tasks evaluated are exactly those in the file."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

from rlvr.bench.policies.base import Generation, Policy, PolicyError, Request, Settings
from rlvr.core.jsonl import json_lines


def _optional_number(record: dict[str, Any], name: str, where: str) -> float | None:
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise PolicyError(f"{where}: {name} must be a non-negative number, got {value!r}")
    return value


def read_recorded(path: Path) -> dict[str, list[Generation]]:
    """Samples per task id, in file order; any malformed line is a PolicyError naming file and line."""
    if not path.is_file():
        raise PolicyError(f"recorded completions file {str(path)!r} does not exist")
    samples: dict[str, list[Generation]] = {}
    for entry in json_lines(path):
        where = f"{path}:{entry.number}"
        if entry.problem:
            raise PolicyError(f"{where}: {entry.problem.message}")
        record = entry.value
        task_id, completion = record.get("task_id"), record.get("completion")
        if not isinstance(task_id, str) or not task_id:
            raise PolicyError(f"{where}: task_id must be a non-empty string")
        if not isinstance(completion, str):
            raise PolicyError(f"{where}: completion must be a string")
        tokens = _optional_number(record, "completion_tokens", where)
        samples.setdefault(task_id, []).append(
            Generation(
                text=completion,
                completion_tokens=None if tokens is None else int(tokens),
                latency_s=_optional_number(record, "latency_s", where),
            )
        )
    if not samples:
        raise PolicyError(f"recorded completions file {str(path)!r} holds no samples")
    return samples


class RecordedPolicy(Policy):
    recorded = True
    preferred_batch = 64

    def __init__(self, spec: str, path: str | Path, settings: Settings | None = None) -> None:
        super().__init__(spec, settings)
        self.path = Path(path)
        self.samples = read_recorded(self.path)

    def task_ids(self) -> list[str]:
        return list(self.samples)

    def sample_count(self, task_id: str, n: int | None) -> int:
        available = len(self.samples.get(task_id, []))
        return available if n is None else min(n, available)

    def generate(self, requests: list[Request]) -> list[Generation]:
        out: list[Generation] = []
        for request in requests:
            recorded = self.samples.get(request.task_id, [])
            if request.sample >= len(recorded):
                out.append(Generation.failed(f"no recorded sample #{request.sample} for {request.task_id}"))
            else:
                out.append(recorded[request.sample])
        return out

    def identity(self) -> dict[str, Any]:
        # Sampling settings do not apply to recorded text; the file itself is the identity.
        return {"policy": self.spec, "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest()}
