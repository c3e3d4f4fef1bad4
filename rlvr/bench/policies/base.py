"""What a policy is to the benchmark: something that turns task prompts into completions."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

PromptFormat = Literal["auto", "raw", "chat"]


class PolicyError(ValueError):
    """A policy that cannot be built or used; the message says what to fix."""


@dataclass(frozen=True)
class Request:
    """One sample to generate: sample number `sample` (0-based) of task `task_id`."""

    task_id: str
    prompt: str
    sample: int
    seed: int


@dataclass
class Generation:
    """The policy's answer to one request. `text` is None exactly when `error` says why."""

    text: str | None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    finish_reason: str | None = None

    @classmethod
    def failed(cls, error: str, latency_s: float | None = None) -> Generation:
        return cls(text=None, error=error, latency_s=latency_s)


@dataclass(frozen=True)
class Settings:
    """Sampling settings shared by every request of a run."""

    temperature: float = 0.8
    top_p: float = 1.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    prompt_format: PromptFormat = "auto"
    system: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.temperature <= 5.0:
            raise PolicyError(f"temperature must be in [0, 5], got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise PolicyError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise PolicyError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.prompt_format not in ("auto", "raw", "chat"):
            raise PolicyError(f"prompt format must be auto, raw or chat, got {self.prompt_format!r}")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "stop": list(self.stop)}


def truncate_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """`text` cut before the earliest stop string, and whether one was found."""
    cuts = [position for s in stop if s and (position := text.find(s)) >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)


def chat_messages(prompt: str, system: str | None) -> list[dict[str, str]]:
    return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]


class Policy:
    """Base class. Generating policies implement `generate`; a recorded policy (jsonl) also decides
    which tasks are evaluated and how many samples each has."""

    #: True when the tasks and samples come from the policy itself (recorded completions).
    recorded = False
    #: How many requests `generate` should get at once for the best throughput.
    preferred_batch = 8

    def __init__(self, spec: str, settings: Settings | None = None) -> None:
        self.spec = spec
        self.settings = settings or Settings()

    def task_ids(self) -> list[str] | None:
        """The task ids this policy has samples for, or None for "whatever the pack offers"."""
        return None

    def sample_count(self, task_id: str, n: int | None) -> int:
        """How many samples task `task_id` gets; generating policies use `n`."""
        if n is None:
            raise PolicyError(f"{self.spec}: the number of samples per task (n) is required")
        return n

    def generate(self, requests: list[Request]) -> list[Generation]:
        """One Generation per request, same order; a failed request gets `Generation.failed`,
        never an exception."""
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        """What must stay the same for stored samples to be reused by a resumed run."""
        return {"policy": self.spec, **self.settings.to_json()}

    def close(self) -> None:
        pass
