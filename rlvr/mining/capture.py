"""Hidden scenarios captured from a project's own tests.

The suite runs once with the tracer (`plugin/rlvr_mining_plugin.py`); the recordings worth keeping are
sampled from it, and only the tests that made them run again, traced, with their files in reverse order
and the rest of the suite absent (a traced run of a large suite costs minutes; the sample's tests are a
fraction of it). A recorded call becomes a scenario only if both runs saw it and every time it
had the same outcome (flaky or order-dependent recordings are dropped), and if replaying it in the
grading sandbox on the reference repository gives that outcome again (so it needs nothing the sandbox
lacks: files, the network, a dependency it cannot import).
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.codec import from_wire
from rlvr.graders.repo.runner import ops_job, same_value
from rlvr.mining.environment import SuiteRun, run_suite
from rlvr.mining.replay import ADAPTER_TARGET
from rlvr.sandbox import WorkerPool

REPLAY_CHUNK = 40
REPLAY_TIMEOUT = 20.0
MIN_PER_TARGET = 6
MAX_PER_TARGET = 120
SCENARIO_SHARE = 600
# every scenario is replayed in the sandbox on the reference (and each variant twice): a package with
# hundreds of public functions (more-itertools) would spend the mining budget here
MAX_SCENARIOS = 800
MAX_VARIANTS = 300


@dataclass
class Captured:
    """A hidden scenario with its reference outcome, the module it targets and the tests that made it."""

    scenario: dict[str, Any]
    outcome: Any
    module: str
    tests: set[str] = field(default_factory=set)
    lines: frozenset[tuple[str, int]] = frozenset()  # the package's (path, line)s its recorded call ran


@dataclass
class CaptureReport:
    scenarios: list[Captured]
    dropped: Counter[str]
    runs: list[SuiteRun]
    variants: list[Captured] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Calls like the captured ones with one argument nudged, answered by the reference: hidden
    checks no visible test shows, so a candidate that special-cases the tests' inputs fails them."""
    import_lines: set[tuple[str, int]] = field(default_factory=set)  # run as the package was imported


def _nudged(value: Any) -> list[Any]:
    """Plain-data neighbours of one argument (same type)."""
    if type(value) is bool or value is None:
        return []
    if type(value) is int:
        return [value + 1, value - 1]
    if type(value) is float:
        return [value * 2 + 0.5]
    if type(value) is str:
        return [value + "x", value[:-1]] if value else ["a"]
    if type(value) is list:
        return [value[:-1], value + value[:1]] if value else []
    return []


def variants(scenario: dict[str, Any], rng: random.Random, limit: int = 2) -> list[dict[str, Any]]:
    """Up to `limit` call scenarios that differ from `scenario` in one positional argument."""
    if scenario.get("kind") != "call" or not scenario.get("args"):
        return []
    options = []
    for index, value in enumerate(scenario["args"]):
        for nudged in _nudged(value):
            args = list(scenario["args"])
            args[index] = nudged
            options.append({**scenario, "args": args})
    rng.shuffle(options)
    return options[:limit]


def _key(scenario: dict[str, Any]) -> str:
    return json.dumps(scenario, sort_keys=True)


@dataclass
class Recorded:
    """One scenario as a traced run saw it: its outcomes (canonical JSON), the tests that made the
    call, and the package lines the recorded calls ran (when the run measured them)."""

    scenario: dict[str, Any]
    outcomes: set[str] = field(default_factory=set)
    tests: set[str] = field(default_factory=set)
    lines: set[tuple[str, int]] = field(default_factory=set)


def read_trace(path: Path) -> dict[str, Recorded]:
    """{scenario key: what one traced run recorded of it}."""
    seen: dict[str, Recorded] = {}
    if not path.is_file():
        return seen
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "scenario" not in entry:
            continue
        key = _key(entry["scenario"])
        recorded = seen.setdefault(key, Recorded(entry["scenario"]))
        recorded.outcomes.add(json.dumps(entry["outcome"], sort_keys=True))
        if entry.get("test"):
            recorded.tests.add(entry["test"])
        for file, numbers in (entry.get("lines") or {}).items():
            recorded.lines.update((str(file), int(number)) for number in numbers)
    return seen


def agrees(recorded: Any, replayed: Any) -> bool:
    """Does a sandbox replay give the recorded outcome? Compared on what the recording holds (value,
    raised exception, each step), so extra keys a newer sandbox adds do not matter."""
    if not isinstance(recorded, dict) or not isinstance(replayed, dict):
        return False
    for key in ("value", "raises", "init"):
        if key in recorded and (key not in replayed or not same_value(recorded[key], replayed[key])):
            return False
    if "steps" in recorded:
        mine, theirs = recorded["steps"], replayed.get("steps")
        if not isinstance(theirs, list) or len(mine) != len(theirs):
            return False
        return all(agrees(a, b) for a, b in zip(mine, theirs, strict=True))
    return True


def target_of(scenario: dict[str, Any]) -> str:
    """The package function or class a scenario exercises (through the replay adapter or directly)."""
    if scenario.get("target") == ADAPTER_TARGET and scenario.get("args"):
        spec = scenario["args"][0]
        if isinstance(spec, dict) and isinstance(spec.get("target"), str):
            return spec["target"]
    return str(scenario.get("target"))


def module_of(target: str) -> str:
    return target.partition(":")[0]


def replay(
    sandbox: WorkerPool,
    files: dict[str, str],
    scenarios: list[dict[str, Any]],
    timeout: float = REPLAY_TIMEOUT,
) -> list[Any]:
    """Each scenario's outcome on the repository `files` in the sandbox (None where it did not finish);
    chunks of REPLAY_CHUNK scenarios, one sandbox job each, run on the pool's workers at once."""
    chunks = [scenarios[start : start + REPLAY_CHUNK] for start in range(0, len(scenarios), REPLAY_CHUNK)]
    results = sandbox.run_many(
        [ops_job(files, [("scenario", s) for s in chunk], timeout) for chunk in chunks]
    )
    outcomes: list[Any] = []
    for chunk, result in zip(chunks, results, strict=True):
        got = [o.value if o is not None and o.ok else None for o in result.outcomes[1:]]
        outcomes += got + [None] * (len(chunk) - len(got))
    return outcomes


def read_import_lines(path: Path) -> set[tuple[str, int]]:
    """The package lines a traced run saw executed while the package was imported."""
    lines: set[tuple[str, int]] = set()
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            for file, numbers in (entry.get("import_lines") or {}).items():
                lines.update((str(file), int(number)) for number in numbers)
    return lines


def _sample(
    first: dict[str, Recorded],
    dropped: Counter[str],
    rng: random.Random,
) -> list[tuple[str, dict[str, Any], set[str]]]:
    """(key, scenario, tests) of the recordings worth re-recording: one outcome in the first run, at
    most a fair share per target (a package with few public functions gets more for each), shortest
    first, at most MAX_SCENARIOS."""
    stable = []
    for key, recorded in first.items():
        if len(recorded.outcomes) != 1:
            dropped["different outcomes between recordings"] += 1
            continue
        stable.append((key, recorded.scenario, recorded.tests))
    rng.shuffle(stable)
    targets = {target_of(scenario) for _, scenario, _ in stable}
    cap = max(MIN_PER_TARGET, min(MAX_PER_TARGET, SCENARIO_SHARE // max(1, len(targets))))
    per_target: Counter[str] = Counter()
    chosen = []
    for key, scenario, tests in sorted(stable, key=lambda entry: len(entry[0])):
        target = target_of(scenario)
        if per_target[target] >= cap or len(chosen) >= MAX_SCENARIOS:
            dropped["more than enough scenarios for the same target"] += 1
            continue
        per_target[target] += 1
        chosen.append((key, scenario, tests))
    return chosen


def capture(
    sandbox: WorkerPool,
    files: dict[str, str],
    mining_files: dict[str, str],
    package: str,
    test_targets: list[str],
    deps: Path | list[Path] | None,
    timeout: float,
    deselect: list[str],
    seed: int = 0,
) -> CaptureReport:
    """Record the tests' calls over the whole suite, sample the scenarios to keep, then record again
    with only the tests that made the sampled calls (test files in reverse order, the rest of the
    suite absent): a sampled call kept must have been seen in both runs with one outcome (flaky or
    order-dependent recordings are dropped). The kept ones are replayed in the sandbox on the
    reference (`files`, the pack's repository) and kept where they agree."""
    dropped: Counter[str] = Counter()
    rng = random.Random(f"capture:{seed}")
    with tempfile.TemporaryDirectory(prefix="rlvr-trace-") as scratch:
        began = time.monotonic()
        outs = [Path(scratch) / f"trace-{index}.jsonl" for index in range(2)]
        runs = [
            run_suite(
                mining_files,
                test_targets,
                deps,
                timeout,
                trace={"package": package, "out": str(outs[0])},
                deselect=deselect,
            )
        ]
        first = read_trace(outs[0])
        seconds = {"capture: traced run": time.monotonic() - began}
        sampled = _sample(first, dropped, rng)
        tests = sorted(set().union(*(tests for _, _, tests in sampled)))
        began = time.monotonic()
        selection = Path(scratch) / "selection.json"
        selection.write_text(json.dumps(tests), encoding="utf-8")
        runs.append(
            run_suite(
                mining_files,
                list(reversed(test_targets)),
                deps,
                timeout,
                # the re-run also measures the lines each recorded call runs (the sampled calls
                # are all made again here: a call missing from this run is dropped anyway)
                trace={"package": package, "out": str(outs[1]), "cover": "1"},
                deselect=deselect,
                select=selection,
            )
        )
        second = read_trace(outs[1])
        import_lines = read_import_lines(outs[1])
        seconds["capture: re-run of the sampled calls' tests"] = time.monotonic() - began
        seconds["capture: tests re-run (count)"] = len(tests)
    chosen: list[Captured] = []
    for key, scenario, tests_of in sampled:
        other = second.get(key)
        if other is None:
            dropped["recorded in one run only (order-dependent or flaky)"] += 1
            continue
        both = first[key].outcomes | other.outcomes
        if len(both) != 1:
            dropped["different outcomes between recordings"] += 1
            continue
        outcome = from_wire(json.loads(next(iter(both))))
        module = module_of(target_of(scenario))
        chosen.append(Captured(scenario, outcome, module, tests_of | other.tests, frozenset(other.lines)))
    began = time.monotonic()
    replayed = replay(sandbox, files, [c.scenario for c in chosen])
    seconds["capture: replay"] = time.monotonic() - began
    kept: list[Captured] = []
    for item, got in zip(chosen, replayed, strict=True):
        if got is None:
            dropped["does not run in the sandbox on the reference"] += 1
        elif not agrees(item.outcome, got):
            dropped["the sandbox replay differs from the recording"] += 1
        else:
            item.outcome = got
            kept.append(item)
    seen = {_key(c.scenario) for c in kept}
    proposed = []
    for item in kept:
        for variant in variants(item.scenario, rng):
            if _key(variant) not in seen:
                seen.add(_key(variant))
                proposed.append(Captured(variant, None, item.module, set(item.tests)))
    rng.shuffle(proposed)
    proposed = proposed[:MAX_VARIANTS]
    began = time.monotonic()
    answers = replay(sandbox, files, [c.scenario for c in proposed])
    again = replay(sandbox, files, [c.scenario for c in proposed])
    extra: list[Captured] = []
    for item, first_answer, second_answer in zip(proposed, answers, again, strict=True):
        if first_answer is None or not agrees(first_answer, second_answer) or _refused(first_answer):
            continue
        if "raises" in first_answer:
            # which exception an input outside the tested domain raises is often incidental: an
            # independent correct fix may raise another, so such variants would be false failures
            continue
        item.outcome = first_answer
        extra.append(item)
    seconds["capture: variants"] = time.monotonic() - began
    return CaptureReport(kept, dropped, runs, extra, seconds, import_lines)


def _refused(outcome: Any) -> bool:
    return "Refused" in json.dumps(outcome, default=str)
