"""Reward composition with hard gates.

Gating invariant: every candidate that fails a hard gate scores strictly below every candidate
that passes all of them. A passing candidate scores at least the weight share of the gated layers
(`floor`); a failing one is scaled into [0, floor / 2), keeping its soft signal for learning.
"""

from __future__ import annotations

from collections.abc import Mapping

CODE_WEIGHTS: dict[str, float] = {"syntax": 0.2, "types": 0.2, "tests": 0.4, "perf": 0.2}
CODE_GATES: tuple[str, ...] = ("syntax", "tests")


class WeightsError(ValueError):
    pass


def normalized_weights(
    weights: Mapping[str, float] | None, defaults: Mapping[str, float], gates: tuple[str, ...]
) -> dict[str, float]:
    merged = dict(defaults)
    for name, value in (weights or {}).items():
        if name not in defaults:
            raise WeightsError(f"unknown reward component {name!r}; expected one of {', '.join(defaults)}")
        if not isinstance(value, int | float) or value < 0 or value != value:
            raise WeightsError(f"weight for {name!r} must be a non-negative number, got {value!r}")
        merged[name] = float(value)
    total = sum(merged.values())
    if total <= 0:
        raise WeightsError("reward weights sum to zero")
    if sum(merged[g] for g in gates) <= 0:
        raise WeightsError(f"at least one gated layer ({', '.join(gates)}) needs a positive weight")
    return {name: value / total for name, value in merged.items()}


def gated_reward(
    scores: Mapping[str, float], weights: Mapping[str, float], gates: tuple[str, ...]
) -> tuple[float, list[str]]:
    """(reward, failed gates). `scores` are fractions in [0, 1]; a gate passes when its score is 1."""
    clipped = {name: min(1.0, max(0.0, float(scores.get(name, 0.0)))) for name in weights}
    raw = sum(weights[name] * clipped[name] for name in weights)
    failed = [gate for gate in gates if clipped.get(gate, 0.0) < 1.0]
    if not failed:
        return raw, []
    floor = sum(weights[g] for g in gates)
    return 0.5 * floor * raw, failed
