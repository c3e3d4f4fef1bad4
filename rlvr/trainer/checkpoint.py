"""Checkpoints that survive SIGKILL: written to a temporary directory, then swapped in by rename.

A checkpoint holds the policy (save_pretrained, so it is also a usable model directory), the
optimiser, every RNG state, the trainer state and the number of metrics.jsonl lines it accounts
for; resuming truncates metrics.jsonl to that count so no step is lost or logged twice.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

STATE_FILE = "trainer_state.pt"


@dataclass(frozen=True)
class RunPaths:
    """The files of a run directory."""

    root: Path

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def grading_errors(self) -> Path:
        return self.root / "grading_errors.jsonl"

    @property
    def flagged_samples(self) -> Path:
        return self.root / "flagged_samples.jsonl"

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def plots(self) -> Path:
        return self.root / "plots"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"

    @property
    def warm_start(self) -> Path:
        return self.root / "warm_start"

    @property
    def config(self) -> Path:
        return self.root / "config.json"


def save_checkpoint(
    directory: Path, model: Any, tokenizer: Any, optimizer: Any, state: dict[str, Any]
) -> None:
    temporary = directory.with_name(directory.name + ".tmp")
    previous = directory.with_name(directory.name + ".old")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    model.save_pretrained(temporary / "model")
    tokenizer.save_pretrained(temporary / "model")
    torch.save(
        {
            "optimizer": optimizer.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "python_rng": random.getstate(),
            "state": state,
        },
        temporary / STATE_FILE,
    )
    shutil.rmtree(previous, ignore_errors=True)
    if directory.exists():
        directory.rename(previous)
    temporary.rename(directory)
    shutil.rmtree(previous, ignore_errors=True)


def find_checkpoint(directory: Path) -> Path | None:
    """The newest complete checkpoint (a kill between the two renames leaves it at `.old`)."""
    for candidate in (directory, directory.with_name(directory.name + ".old")):
        if (candidate / STATE_FILE).is_file():
            return candidate
    return None


def load_checkpoint_state(directory: Path) -> dict[str, Any]:
    payload = torch.load(directory / STATE_FILE, weights_only=False)
    torch.set_rng_state(payload["torch_rng"])
    random.setstate(payload["python_rng"])
    return payload
