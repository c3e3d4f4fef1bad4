"""Per-verdict numbers for trainers' logs: the same keys for every item of a pack.

Trainers stack these per-sample values into arrays (verl's `reward_extra_info`, OpenRLHF's
`extra_logs`), so every verdict must yield the same keys, numeric only — including verdicts of
items that could not be graded, which get 0.0 for each layer and `grading_error = 1.0`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlvr.core.types import Verdict
from rlvr.graders.base import Grader

RESERVED_KEYS = ("score", "passed", "grading_error")


def layer_names(grader: Grader, verdicts: Iterable[Verdict] = ()) -> list[str]:
    """The grader's reward layers (from its weights), then any other component names seen."""
    names: list[str] = list(getattr(grader, "weights", None) or {})
    for verdict in verdicts:
        names.extend(name for name in verdict.components if name not in names)
    return [name for name in names if name not in RESERVED_KEYS]


def verdict_scalars(verdict: Verdict, layers: Iterable[str]) -> dict[str, float]:
    """`score`, `passed`, `grading_error` and one score per layer, all floats."""
    out = {
        "score": float(verdict.reward),
        "passed": 1.0 if verdict.passed else 0.0,
        "grading_error": 0.0 if verdict.error is None else 1.0,
    }
    for name in layers:
        component = verdict.components.get(name)
        out[name] = float(component.score) if component is not None else 0.0
    return out
