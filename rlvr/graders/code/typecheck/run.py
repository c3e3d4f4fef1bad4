"""What a pyright engine (`cli.CliEngine`, `server.ServerEngine`, the repo family's
`types_server.RepoServerEngine`) hands back for a batch: per-candidate diagnostics, or a `RunFailure`
that keeps whatever the run did finish."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

# A run may take `timeout` seconds plus this much per candidate in its batch: a big healthy batch on a
# loaded machine must not time out (and be split) just for being big.
SECONDS_PER_CANDIDATE = 0.05

# (1-based line, "error" | "warning", message) for one candidate
Diagnostic = tuple[int, str, str]


@dataclass
class RunFailure:
    reason: str
    # candidates the run did finish before failing (batch index -> diagnostics); a server answers
    # document by document, a CLI run all at once or not at all
    finished: dict[int, list[Diagnostic]] = field(default_factory=dict)
    timed_out: bool = False  # the run exceeded its budget (rather than crashing or refusing)


class PyrightEngine(Protocol):
    def run(self, texts: list[str]) -> list[list[Diagnostic]] | RunFailure:
        """Diagnostics for each text, in order, or why the run failed."""
        ...

    def close(self) -> None:
        """Kill any pyright still running; safe to call more than once."""
        ...
