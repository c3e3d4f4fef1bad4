"""Aggregate sample records into the numbers a benchmark reports, per pack."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from rlvr.bench.inspect import flag_rates
from rlvr.bench.passk import mean_pass_at_k, pass_at_k


def _rate(flags: Iterable[bool]) -> float | None:
    values = list(flags)
    return round(sum(values) / len(values), 6) if values else None


def _summary(values: Iterable[float | int | None]) -> dict[str, float | None]:
    present = np.array([v for v in values if v is not None], dtype=float)
    if present.size == 0:
        return {"mean": None, "p50": None, "p95": None, "total": None}
    return {
        "mean": round(float(present.mean()), 6),
        "p50": round(float(np.percentile(present, 50)), 6),
        "p95": round(float(np.percentile(present, 95)), 6),
        "total": round(float(present.sum()), 6),
    }


def by_task(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r["task_id"], r["sample"])):
        grouped[record["task_id"]].append(record)
    return dict(grouped)


def pass_at_ks(
    groups: dict[str, list[dict[str, Any]]], ks: list[int]
) -> tuple[dict[str, float | None], list[str]]:
    """Mean pass@k over the tasks, with notes for every k that is undefined for some task."""
    ids = list(groups)
    counts = [(len(groups[t]), sum(1 for r in groups[t] if r["passed"])) for t in ids]
    values: dict[str, float | None] = {}
    notes: list[str] = []
    for k in ks:
        value, short = mean_pass_at_k(counts, k)
        values[f"pass@{k}"] = value  # unrounded: the estimator is exact, keep it so
        if short:
            listed = ", ".join(f"{ids[i]} (n={counts[i][0]})" for i in short[:5])
            more = f" and {len(short) - 5} more" if len(short) > 5 else ""
            notes.append(
                f"pass@{k} is null: {len(short)} task(s) have fewer than {k} samples: {listed}{more}"
            )
        elif not counts:
            notes.append(f"pass@{k} is null: no tasks were evaluated")
    return values, notes


def hacking_gap(records: list[dict[str, Any]]) -> float | None:
    """Pass rate on the prompt's visible examples minus pass rate on the hidden tests, over the
    samples whose task shows examples. It rises when a policy special-cases what it can see."""
    shown = [r for r in records if r.get("visible_passed") is not None]
    if not shown:
        return None
    visible = sum(bool(r["visible_passed"]) for r in shown) / len(shown)
    hidden = sum(bool(r.get("passed")) for r in shown) / len(shown)
    return round(visible - hidden, 6)


def component_means(records: list[dict[str, Any]]) -> dict[str, float]:
    """Mean score fraction (score / max) per verifier component over the samples graded on it."""
    fractions: dict[str, list[float]] = defaultdict(list)
    for record in records:
        maxima = record.get("components_max") or {}
        for name, score in (record.get("components") or {}).items():
            top = maxima.get(name, 1.0)
            if top and top > 0:
                fractions[name].append(score / top)
    return {name: round(float(np.mean(values)), 6) for name, values in fractions.items()}


def task_rows(groups: dict[str, list[dict[str, Any]]], ks: list[int]) -> list[dict[str, Any]]:
    rows = []
    for task_id, samples in groups.items():
        n, c = len(samples), sum(1 for r in samples if r["passed"])
        row: dict[str, Any] = {
            "task_id": task_id,
            "difficulty": samples[0].get("difficulty"),
            "n": n,
            "correct": c,
            "mean_reward": round(float(np.mean([r["reward"] for r in samples])), 6),
            "errors": sum(1 for r in samples if r.get("error") or r.get("generation_error")),
        }
        for k in ks:
            row[f"pass@{k}"] = pass_at_k(n, c, k)
        rows.append(row)
    return rows


def difficulty_breakdown(groups: dict[str, list[dict[str, Any]]], ks: list[int]) -> dict[str, dict[str, Any]]:
    by_level: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for task_id, samples in groups.items():
        by_level[str(samples[0].get("difficulty"))][task_id] = samples
    out: dict[str, dict[str, Any]] = {}
    for level in sorted(by_level, key=lambda d: (d == "None", d)):
        level_groups = by_level[level]
        samples = [r for group in level_groups.values() for r in group]
        values, _ = pass_at_ks(level_groups, ks)
        out[level] = {
            "tasks": len(level_groups),
            "samples": len(samples),
            "pass_rate": _rate(r["passed"] for r in samples),
            "mean_reward": round(float(np.mean([r["reward"] for r in samples])), 6),
            **values,
        }
    return out


def pack_metrics(records: list[dict[str, Any]], ks: list[int]) -> dict[str, Any]:
    """Everything `results.json` reports for one pack."""
    groups = by_task(records)
    values, notes = pass_at_ks(groups, ks)
    generated = [r for r in records if r.get("generation_error") is None]
    return {
        **values,
        "notes": notes,
        "tasks": len(groups),
        "samples": len(records),
        "mean_reward": round(float(np.mean([r["reward"] for r in records])), 6) if records else None,
        "pass_rate": _rate(r["passed"] for r in records),
        "components": component_means(records),
        "syntax_error_rate": _rate(r["syntax_error"] for r in generated if r.get("syntax_error") is not None),
        "hallucinated_import_rate": _rate(
            bool(r["hallucinated_imports"]) for r in generated if r.get("hallucinated_imports") is not None
        ),
        "timeout_rate": _rate(bool(r.get("timeout")) for r in records),
        "exploit_flag_rates": flag_rates(records),
        "hacking_gap": hacking_gap(records),
        "timeouts": sum(1 for r in records if r.get("timeout")),
        "generation_errors": len(records) - len(generated),
        "grading_errors": sum(1 for r in generated if r.get("error")),
        "completion_tokens": _summary(r.get("completion_tokens") for r in records),
        "prompt_tokens": _summary(r.get("prompt_tokens") for r in records),
        "latency_s": _summary(r.get("latency_s") for r in records),
        "grade_s": _summary(r.get("grade_s") for r in records),
        "by_difficulty": difficulty_breakdown(groups, ks),
    }
