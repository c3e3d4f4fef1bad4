"""Re-grade a run's stored candidates with today's grader, another configuration, or two of them.

`regrade_run(RUN_DIR)` re-scores every stored completion of a bench or training run and compares the
new verdicts with the stored ones (or, with `before`/`after`, two grader configurations with each
other): the flips (fail -> pass, pass -> fail) by task and by exploit flag, with the candidates; how
many rewards changed; how the run's curves (pass rate and mean reward, per step for a training run,
per pack for a bench run) would move; and what the receipts say changed (task content, pack version,
grader source, options). A verdict whose receipt is unchanged must come out the same: such a change
is counted as `nondeterministic`, never explained away.
"""

from __future__ import annotations

import json
import sys
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rlvr.core.flags import exploit_flags, flag_name
from rlvr.core.pack import TaskPack
from rlvr.core.types import Verdict
from rlvr.graders.base import Grader, grade_or_fault, make_grader
from rlvr.graders.receipts import EXECUTION_OPTIONS, RECEIPT_KEYS
from rlvr.task_packs.registry import load_pack
from rlvr.trainer.candidates import StoredCandidate, load_candidates, read_grading_record

RECORDED = "recorded"  # the verdicts the run stored, not re-graded
CURRENT = "current"  # today's grader with the run's recorded options
REWARD_TOLERANCE = 1e-6  # stored rewards are rounded to 6 places
BATCH = 64
PREVIEW_CHARS = 2000


class RegradeError(ValueError):
    """A regrade that cannot run as asked; the message says what to change."""


@dataclass(frozen=True)
class Configuration:
    """One way of grading: the stored verdicts (`recorded`), or a grader built from the run's
    recorded options with `overrides` on top (with `--pack`, from that pack's own options)."""

    label: str
    recorded: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)


def parse_value(text: str) -> Any:
    """`--set key=VALUE`: JSON where it parses (numbers, true/false, null, lists, quoted strings),
    otherwise the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_settings(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RegradeError(f"--set takes option=value (e.g. verifier=visible), got {item!r}")
        out[key.strip()] = parse_value(value.strip())
    return out


def parse_configuration(text: str) -> Configuration:
    """`recorded` (the stored verdicts), `current` (today's grader, the run's options), a comma list
    `option=value,...` over the run's options, or a .json / .toml file of options."""
    text = text.strip()
    if text in (RECORDED, CURRENT):
        return Configuration(text, recorded=text == RECORDED)
    path = Path(text)
    if path.suffix in (".json", ".toml") and path.is_file():
        try:
            raw = path.read_text(encoding="utf-8")
            options = tomllib.loads(raw) if path.suffix == ".toml" else json.loads(raw)
        except (OSError, ValueError) as exc:
            raise RegradeError(f"{path}: unreadable grader options ({exc})") from exc
        if not isinstance(options, dict):
            raise RegradeError(f"{path}: grader options must be a table / object of option = value")
        return Configuration(str(path), overrides=options)
    if "=" in text:
        return Configuration(text, overrides=parse_settings([p for p in text.split(",") if p.strip()]))
    raise RegradeError(
        f"unknown grader configuration {text!r}: use 'recorded', 'current', option=value[,option=value] "
        "or a .json/.toml file of options"
    )


@dataclass
class Outcome:
    """What a flip is judged on. `accepted`: graded without error and every hard gate held - the
    reward's own pass, which is `passed` everywhere except under a deliberately weak verifier (there
    `passed` keeps the hidden tests' result beside a reward they did not decide)."""

    reward: float
    accepted: bool
    flags: list[str]
    error: str | None
    receipt: dict[str, str] | None = None


def _stored(candidate: StoredCandidate) -> Outcome:
    return Outcome(candidate.reward, candidate.accepted, candidate.flags, candidate.error, candidate.receipt)


def outcome_of(verdict: Verdict) -> Outcome:
    accepted = verdict.error is None and not verdict.gates
    return Outcome(verdict.reward, accepted, list(verdict.flags), verdict.error, verdict.receipt)


def _reconstructible(options: dict[str, Any]) -> dict[str, Any]:
    """The recorded options a grader can be rebuilt from: plain values only (an object recorded by
    its name - a built sandbox, a callable - cannot be, and its default stands in), no worker count."""

    def plain(value: Any) -> bool:
        if isinstance(value, dict):
            return not any(str(k).startswith("$") for k in value) and all(plain(v) for v in value.values())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return True

    return {
        k: v
        for k, v in options.items()
        if v is not None
        and plain(v)
        and (k not in EXECUTION_OPTIONS or k == "sandbox" and v in ("local", "docker"))
    }


class _Graders:
    """Builds (and closes) the graders a regrade needs, one per (pack, configuration)."""

    def __init__(self, run_dir: Path, pack_override: str | None) -> None:
        self.record = read_grading_record(run_dir)
        self.pack_override = pack_override
        self._packs: dict[str, TaskPack] = {}
        self._graders: list[Grader] = []

    def pack(self, name: str) -> TaskPack:
        if name not in self._packs:
            ref = self.pack_override or (self.record.get(name) or {}).get("pack") or name
            try:
                self._packs[name] = load_pack(ref)
            except Exception as exc:
                raise RegradeError(
                    f"cannot load pack {ref!r} for the stored candidates of {name!r} ({exc}); pass --pack"
                ) from exc
        return self._packs[name]

    def grader(self, name: str, config: Configuration) -> Grader:
        recorded = (self.record.get(name) or {}).get("options") or {}
        base = {} if self.pack_override else _reconstructible(recorded)
        try:
            grader = make_grader(self.pack(name), **{**base, **config.overrides})
        except (TypeError, ValueError) as exc:
            raise RegradeError(f"grader configuration {config.label!r} for pack {name!r}: {exc}") from exc
        self._graders.append(grader)
        return grader

    def close(self) -> None:
        for grader in self._graders:
            grader.close()


def _grade_all(
    grader: Grader, items: list[StoredCandidate], bar: Any, clock: dict[str, float]
) -> list[Outcome]:
    out: list[Outcome] = []
    for start in range(0, len(items), BATCH):
        chunk = items[start : start + BATCH]
        began = time.perf_counter()
        verdicts = grade_or_fault(grader, [c.task_id for c in chunk], [c.completion for c in chunk])
        clock["grading_seconds"] += time.perf_counter() - began
        out += [outcome_of(v) for v in verdicts]
        bar.update(len(chunk))
    return out


def _flip(candidate: StoredCandidate, before: Outcome, after: Outcome) -> dict[str, Any]:
    return {
        "pack": candidate.pack,
        "task_id": candidate.task_id,
        "where": candidate.where,
        "step": candidate.step,
        "sample": candidate.sample,
        "canary": candidate.canary,
        "direction": "fail_to_pass" if after.accepted else "pass_to_fail",
        "reward_before": round(before.reward, 6),
        "reward_after": round(after.reward, 6),
        "flags_before": before.flags,
        "flags_after": after.flags,
        "error_after": after.error,
        "completion": candidate.completion[:PREVIEW_CHARS],
    }


def _curves(kind: str, items: list[StoredCandidate], before: list[Outcome], after: list[Outcome]) -> Any:
    """Pass rate and mean reward before/after: per step (training runs, canaries left out) or per pack."""
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, c in enumerate(items):
        if c.canary:
            continue
        groups[c.step if kind == "train" else c.pack].append(i)

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 6) if values else 0.0

    rows = []
    for key in sorted(groups, key=lambda k: (k is None, k)):
        idx = groups[key]
        rows.append(
            {
                ("step" if kind == "train" else "pack"): key,
                "n": len(idx),
                "pass_rate_before": mean([float(before[i].accepted) for i in idx]),
                "pass_rate_after": mean([float(after[i].accepted) for i in idx]),
                "reward_mean_before": mean([before[i].reward for i in idx]),
                "reward_mean_after": mean([after[i].reward for i in idx]),
            }
        )
    return rows


def regrade_run(
    run_dir: Path,
    *,
    pack: str | None = None,
    before: Configuration | None = None,
    after: Configuration | None = None,
    progress: bool | None = None,
) -> dict[str, Any]:
    """The regrade report (see the module docstring). `before` defaults to the stored verdicts,
    `after` to today's grader with the run's recorded options."""
    before = before or Configuration(RECORDED, recorded=True)
    after = after or Configuration(CURRENT)
    started = time.perf_counter()
    candidates, kind = load_candidates(run_dir)
    names = sorted({c.pack for c in candidates})
    if pack is not None and len(names) > 1:
        raise RegradeError(f"--pack replaces the run's one pack, but this run graded {len(names)}: {names}")
    graders = _Graders(run_dir, pack)
    clock = {"grading_seconds": 0.0}
    outcomes: dict[str, tuple[list[Outcome], list[Outcome]]] = {}
    by_pack = {name: [c for c in candidates if c.pack == name] for name in names}
    show = sys.stderr.isatty() if progress is None else progress
    to_grade = sum(len(v) for v in by_pack.values()) * (int(not before.recorded) + int(not after.recorded))
    try:
        with tqdm(total=to_grade, desc="regrade", unit="candidate", disable=not show, file=sys.stderr) as bar:
            for name, items in by_pack.items():
                sides = []
                for config in (before, after):
                    if config.recorded:
                        sides.append([_stored(c) for c in items])
                    else:
                        sides.append(_grade_all(graders.grader(name, config), items, bar, clock))
                outcomes[name] = (sides[0], sides[1])
    finally:
        graders.close()

    flips: list[dict[str, Any]] = []
    by_task: dict[str, Counter[str]] = defaultdict(Counter)
    by_flag: dict[str, Counter[str]] = defaultdict(Counter)
    receipt_changes: Counter[str] = Counter()
    counts = Counter[str]()
    items_all: list[StoredCandidate] = []
    before_all: list[Outcome] = []
    after_all: list[Outcome] = []
    nondeterministic: list[dict[str, Any]] = []
    for name, items in by_pack.items():
        b_side, a_side = outcomes[name]
        items_all += items
        before_all += b_side
        after_all += a_side
        for candidate, b, a in zip(items, b_side, a_side, strict=True):
            reward_changed = abs(a.reward - b.reward) > REWARD_TOLERANCE
            counts["reward_changed"] += reward_changed
            counts["flags_changed"] += sorted(a.flags) != sorted(b.flags)
            changed = sorted(k for k in RECEIPT_KEYS if (b.receipt or {}).get(k) != (a.receipt or {}).get(k))
            if b.receipt is None or a.receipt is None:
                counts["receipt_missing"] += 1
            elif not changed:
                counts["receipt_same"] += 1
                if reward_changed or a.accepted != b.accepted:
                    nondeterministic.append(_flip(candidate, b, a))
            receipt_changes.update(k for k in changed if b.receipt and a.receipt)
            if a.accepted == b.accepted:
                continue
            flip = _flip(candidate, b, a)
            flips.append(flip)
            counts[flip["direction"]] += 1
            by_task[f"{candidate.pack}:{candidate.task_id}"][flip["direction"]] += 1
            names_seen = {flag_name(f) for f in exploit_flags([*b.flags, *a.flags])} or {"(no exploit flag)"}
            for flag in names_seen:
                by_flag[flag][flip["direction"]] += 1
    return {
        "run": str(run_dir),
        "kind": kind,
        "before": before.label,
        "after": after.label,
        "pack": pack,
        "candidates": len(candidates),
        "graded": to_grade,
        "flips": flips,
        "flip_count": len(flips),
        "fail_to_pass": counts["fail_to_pass"],
        "pass_to_fail": counts["pass_to_fail"],
        "reward_changed": counts["reward_changed"],
        "flags_changed": counts["flags_changed"],
        "by_task": {k: dict(v) for k, v in sorted(by_task.items())},
        "by_flag": {k: dict(v) for k, v in sorted(by_flag.items())},
        "receipts": {
            "same": counts["receipt_same"],
            "missing": counts["receipt_missing"],
            "changed": dict(sorted(receipt_changes.items())),
        },
        "nondeterministic": nondeterministic,
        "curves": _curves(kind, items_all, before_all, after_all),
        "seconds": round(time.perf_counter() - started, 3),
        "grading_seconds": round(clock["grading_seconds"], 3),
    }


def format_report(report: dict[str, Any], top: int = 10, echo: Callable[[str], None] = print) -> None:
    """The human-readable regrade report."""
    echo(
        f"regrade {report['run']} ({report['kind']} run): {report['candidates']} candidates, "
        f"{report['before']} -> {report['after']}, {report['seconds']:.1f} s"
    )
    echo(
        f"flips: {report['flip_count']} (fail->pass {report['fail_to_pass']}, pass->fail "
        f"{report['pass_to_fail']}); rewards changed: {report['reward_changed']}; flags changed: "
        f"{report['flags_changed']}"
    )
    receipts = report["receipts"]
    changed = ", ".join(f"{k} {v}" for k, v in receipts["changed"].items()) or "none"
    echo(f"receipts: {receipts['same']} unchanged, {receipts['missing']} missing; changed fields: {changed}")
    if report["nondeterministic"]:
        echo(
            f"NONDETERMINISTIC: {len(report['nondeterministic'])} verdicts changed under an unchanged receipt"
        )
    if report["by_flag"]:
        echo("flips by exploit flag:")
        for flag, c in report["by_flag"].items():
            echo(f"  {flag}: fail->pass {c.get('fail_to_pass', 0)}, pass->fail {c.get('pass_to_fail', 0)}")
    if report["by_task"]:
        echo("flips by task (most first):")
        ranked = sorted(report["by_task"].items(), key=lambda kv: -sum(kv[1].values()))
        for task, c in ranked[:top]:
            echo(f"  {task}: fail->pass {c.get('fail_to_pass', 0)}, pass->fail {c.get('pass_to_fail', 0)}")
    moved = [r for r in report["curves"] if r["pass_rate_before"] != r["pass_rate_after"]]
    key = "step" if report["kind"] == "train" else "pack"
    echo(f"curves: pass rate moves at {len(moved)} of {len(report['curves'])} {key}s")
    for row in report["curves"][:: max(1, len(report["curves"]) // 10)]:
        echo(
            f"  {key} {row[key]}: pass rate {row['pass_rate_before']:.3f} -> {row['pass_rate_after']:.3f}, "
            f"reward {row['reward_mean_before']:.3f} -> {row['reward_mean_after']:.3f}"
        )
    for flip in report["flips"][:top]:
        echo(
            f"- {flip['direction']} {flip['pack']}:{flip['task_id']} {flip['where']} "
            f"reward {flip['reward_before']:.3f} -> {flip['reward_after']:.3f} flags {','.join(flip['flags_after'])}"
        )
        for line in flip["completion"].strip().splitlines()[:4]:
            echo(f"    | {line[:110]}")
