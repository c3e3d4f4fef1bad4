"""`rlvr packs mine`: a real Python project in, a validated Repo-v0 pack out.

Phases: read the project (directory or sdist) -> install its declared dependencies into the pack's
`deps/` prefix -> run its pytest suite on the reference (a clear error listing failing tests, unless
`allow_failing` mines from the passing subset) -> capture hidden scenarios from the tests' calls
(`capture.py`) -> candidates of each kind (`kinds.py`), each kept only when a captured scenario
differs in the sandbox *and* at least one of the repo's (reference-passing) tests fails on it ->
each task proved as soon as it is found by `rlvr packs validate`'s prover (`check.py`): the reference
scores 1.0, the base state fails the hidden checks and a no-op scores low; others are dropped. Finding
and proving share the one time budget: the run stops when the next proof would not fit in it.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rlvr.graders.repo.runner import run_ops, same_value
from rlvr.graders.repo.whole_repo_types import RepoTypeChecker, RepoTypeReport
from rlvr.mining.capture import Captured, capture, replay, target_of
from rlvr.mining.check import PROOF_THREADS, Proved, TaskProver
from rlvr.mining.environment import ProjectEnvironmentError, install_requirements, run_suite
from rlvr.mining.kinds import (
    KINDS,
    Candidate,
    bug_candidates,
    bug_issue,
    combine,
    describe_difference,
    feature_candidates,
    feature_issue,
    module_name,
)
from rlvr.mining.replay import ADAPTER_PATH
from rlvr.mining.source import CONFIG_FILES, Project, SourceError, read_project
from rlvr.sandbox import WorkerPool, make_sandbox

MAX_TASK_SCENARIOS = 30
MAX_CAPTURED_IN_TASK = 20  # the rest of a task's hidden checks are nudged variants of captured calls
MAX_DIFFERING_IN_TASK = 15
SUITE_TIMEOUT = 900.0
MAX_TRIED_SCENARIOS = 40  # replayed per candidate
MAX_MUTATIONS_PER_FUNCTION = 12
BUG_POOL_FACTOR = 4  # bug candidates wanted per task asked for (most are invisible to every scenario)
MAX_TRIED_TESTS = 40  # the repo's tests (node ids) run per candidate: those that made a differing call
MULTI_PARTS = 2  # bugs kept as parts of multi-location tasks (beyond the single bugs' quota), per multi task
ADAPTER_SOURCE = (Path(__file__).parent / "replay.py").read_text(encoding="utf-8")


class MiningError(RuntimeError):
    """The project cannot be mined as asked; the message says why and what to do."""


@dataclass(frozen=True)
class MineOptions:
    kinds: tuple[str, ...] = KINDS
    max_tasks: int = 60
    seed: int = 0
    test_fraction: float = 0.2  # share of modules held out as the test split
    test_modules: tuple[str, ...] = ()  # explicit held-out modules (dotted), instead of the fraction
    time_budget: float = 900.0  # seconds for the whole mining run
    allow_failing: bool = False
    install_deps: bool = True
    package: str | None = None
    name: str | None = None
    verify: bool = True
    noop_limit: float | None = 0.05  # also drop tasks whose unchanged base scores above this (None: no limit)
    progress: bool = True

    def __post_init__(self) -> None:
        unknown = sorted(set(self.kinds) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown task kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")
        if self.max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        if not 0.0 <= self.test_fraction < 1.0:
            raise ValueError("test_fraction must be in [0, 1)")


@dataclass
class MineSummary:
    project: str
    package: str
    source: str
    modules: int
    tests_passed: int
    tests_failing: list[str]
    requirements: list[str]
    installed: list[str]
    scenarios: int
    variants: int = 0
    kept: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    scenario_drops: dict[str, int] = field(default_factory=dict)
    verified: int = 0
    noop_mean: float | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        total = sum(self.kept.values())
        out = [
            f"{self.project} ({self.package}, {self.modules} modules): {total} task(s) kept "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.kept.items())) or "none"),
            f"  reference suite: {self.tests_passed} passed, {len(self.tests_failing)} failing (excluded)",
            f"  hidden scenarios captured from the tests: {self.scenarios} (+ {self.variants} nudged variants)",
        ]
        if self.installed:
            out.append(f"  dependencies installed into deps/: {', '.join(self.installed)}")
        out += [f"  note: {note}" for note in self.notes]
        for title, counts in (
            ("scenarios dropped", self.scenario_drops),
            ("candidates dropped", self.dropped),
        ):
            for reason, count in sorted(counts.items(), key=lambda item: -item[1]):
                if count:
                    out.append(f"  {title}: {count} {reason}")
        if self.noop_mean is not None:
            out.append(
                f"  checked with the repo grader: {self.verified} task(s), reference 1.0 each, "
                f"no-op (unchanged base) mean reward {self.noop_mean:.3f}"
            )
        out.append(
            "  time: "
            + ", ".join(
                f"{k} {v:.0f}" + ("" if k.endswith("(count)") else "s") for k, v in self.seconds.items()
            )
        )
        return out


@dataclass
class Kept:
    candidate: Candidate
    differing: list[tuple[int, Any, Any]]  # (index into the module's scenarios, got, want)
    scenarios: list[Captured]


class Miner:
    def __init__(self, options: MineOptions, sandbox: WorkerPool | None = None) -> None:
        self.options = options
        self._sandbox = sandbox
        self._owns_sandbox = sandbox is None
        self._types: RepoTypeChecker | None = None
        self._types_report: RepoTypeReport | None = None
        self._baseline_cache: dict[str, Any] | None = None
        self.rng = random.Random(f"mine:{options.seed}")
        self.spent: defaultdict[str, float] = defaultdict(
            float
        )  # seconds (and counts) inside the phases, for the summary
        self.started = time.monotonic()
        self.notes: list[str] = []  # what the summary should tell the user beyond the counts

    @property
    def sandbox(self) -> WorkerPool:
        if self._sandbox is None:
            self._sandbox = make_sandbox("local")
        return self._sandbox

    @property
    def type_checker(self) -> RepoTypeChecker:
        if self._types is None:
            self._types = RepoTypeChecker()
        return self._types

    def close(self) -> None:
        """Close the sandbox this miner started (one passed in belongs to the caller)."""
        if self._types is not None:
            self._types.close()
            self._types = None
        if self._sandbox is not None and self._owns_sandbox:
            self._sandbox.close()
            self._sandbox = None

    def time_left(self) -> float:
        return self.options.time_budget - (time.monotonic() - self.started)

    # ------------------------------------------------------------------ the whole run
    def mine(self, source: Path, out: Path) -> MineSummary:
        timings: dict[str, float] = {}
        phase = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="rlvr-mine-src-") as scratch:
            try:
                project = read_project(source, Path(scratch), self.options.package)
            except SourceError as exc:
                raise MiningError(str(exc)) from exc
            if ADAPTER_PATH in project.files:
                raise MiningError(f"the project has its own {ADAPTER_PATH}, the name of the replay adapter")
            # hidden scenarios whose arguments are not plain data are replayed through it
            project.files[ADAPTER_PATH] = ADAPTER_SOURCE
            out.mkdir(parents=True, exist_ok=True)
            deps = out / "deps"
            installed: list[str] = []
            if project.requirements and self.options.install_deps:
                installed = install_requirements(project.requirements, deps)
            prefixes = [deps] if installed else []
            if project.test_requirements and self.options.install_deps:
                # what only the tests need: installed for the mine-time suite runs, not into the pack
                test_deps = Path(scratch) / "test-deps"
                try:
                    install_requirements(project.test_requirements, test_deps, pure_only=False)
                    prefixes.append(test_deps)
                    self.notes.append(
                        "test requirements installed for mining only: " + ", ".join(project.test_requirements)
                    )
                except ProjectEnvironmentError as exc:
                    self.notes.append(f"the test requirements were not installed: {exc}")
            timings["setup"] = time.monotonic() - phase
            summary = self._mine_project(project, source, out, prefixes, installed, timings)
        return summary

    def _mine_project(
        self,
        project: Project,
        source: Path,
        out: Path,
        deps: list[Path],
        installed: list[str],
        timings: dict[str, float],
    ) -> MineSummary:
        phase = time.monotonic()
        mining_files = project.files | project.test_data
        test_targets = [t for t in project.tests if not t.endswith("conftest.py")] + project.large_tests
        problem = import_problem(self.sandbox, project.files, project.package)
        if problem:
            raise MiningError(
                f"the package {project.package} does not import in the grading sandbox ({problem}); "
                "its hidden checks could not run there. Packages that need files, the network, frame or "
                "code introspection (inspect.signature) or compiled dependencies at import are not minable."
            )
        reference = run_suite(mining_files, test_targets, deps, SUITE_TIMEOUT)
        if not reference.outcomes:
            raise MiningError(
                f"the project's test suite did not run on the reference:\n{reference.output[-2500:]}"
            )
        failing = reference.failing
        if failing and not self.options.allow_failing:
            listed = "\n".join(f"  {n}" for n in failing[:40])
            more = f"\n  ... and {len(failing) - 40} more" if len(failing) > 40 else ""
            raise MiningError(
                f"{len(failing)} of the project's tests fail on the reference (before any change):\n{listed}{more}\n"
                "Fix the environment or the tests, or pass --allow-failing to mine from the passing tests only."
            )
        timings["suite"] = time.monotonic() - phase
        phase = time.monotonic()
        captured = capture(
            self.sandbox,
            project.files,
            mining_files,
            project.package,
            test_targets,
            deps,
            SUITE_TIMEOUT,
            deselect=failing,
            seed=self.options.seed,
        )
        timings["capture"] = time.monotonic() - phase
        summary = MineSummary(
            project=self.options.name or project.name,
            package=project.package,
            source=str(source),
            modules=len(project.modules()),
            tests_passed=len(reference.passing),
            tests_failing=failing,
            requirements=project.requirements,
            installed=installed,
            scenarios=len(captured.scenarios),
            variants=len(captured.variants),
            scenario_drops=dict(captured.dropped),
            notes=self.notes,
        )
        if not captured.scenarios:
            raise MiningError(
                "no hidden scenario could be captured: the tests call nothing in the package's public API "
                "with plain-data arguments that also runs in the sandbox "
                f"(dropped: {dict(captured.dropped)})"
            )
        phase = time.monotonic()
        by_module: dict[str, list[Captured]] = {}
        for item in captured.scenarios:
            by_module.setdefault(item.module, []).append(item)
        variants_by_module: dict[str, list[Captured]] = {}
        for variant in captured.variants:
            variants_by_module.setdefault(variant.module, []).append(variant)
        write_pack(out, summary.project, project, [], summary, source)
        prover = TaskProver(out, self.sandbox, self.options.noop_limit) if self.options.verify else None
        try:
            lines, dropped = self._candidates(
                project,
                by_module,
                variants_by_module,
                deps,
                failing,
                summary.project,
                prover,
                captured.import_lines,
            )
        finally:
            if prover is not None:
                timings["proofs (thread-seconds)"] = sum(prover.seconds)
                prover.close()
        write_tasks(out, lines)
        timings["candidates and proofs"] = time.monotonic() - phase  # proofs overlap the candidates
        summary.dropped = dict(dropped)
        summary.kept = dict(Counter(line["meta"]["kind"] for line in lines))
        summary.verified = len(lines) if self.options.verify else 0
        noops = [line["notes"]["checked"]["noop"] for line in lines if "checked" in line.get("notes", {})]
        summary.noop_mean = sum(noops) / len(noops) if noops else None
        summary.seconds = timings | dict(self.spent) | captured.seconds
        (out / "mining.json").write_text(json.dumps(asdict(summary), indent=2, sort_keys=True) + "\n")
        return summary

    # ------------------------------------------------------------------ candidates
    def _candidates(
        self,
        project: Project,
        by_module: dict[str, list[Captured]],
        variants: dict[str, list[Captured]],
        deps: list[Path],
        failing: list[str],
        name: str,
        prover: TaskProver | None,
        import_lines: set[tuple[str, int]] | None = None,
    ) -> tuple[list[dict[str, Any]], Counter[str]]:
        """Task lines, each found (`_try`) then proved (`prover`, when verifying) before the next is
        tried; the kind furthest behind its quota goes next, and a kind with no candidate left hands
        its share to the others. Stops at `max_tasks` or when the next proof would not fit in the
        time budget."""
        files = project.files
        flagged = {(path, line) for (path, _), line in self._reference_types(files).lines.items()}
        targets = {target_of(c.scenario) for scenarios in by_module.values() for c in scenarios}
        pools: dict[str, list[Candidate]] = {"bug": [], "feature": []}
        dropped: Counter[str] = Counter()
        # the package lines the captured scenarios run (measured while they were recorded): a bug
        # elsewhere no hidden check could see, and a helper module no scenario targets is reached
        # through the functions that call it
        covered = {line for scenarios in by_module.values() for c in scenarios for line in c.lines}
        if covered:  # code run at import (rule tables built by the package's own functions) too
            covered |= import_lines or set()
        covered_paths = {path for path, _ in covered}
        exercised = [
            path for path in project.modules() if module_name(path) in by_module or path in covered_paths
        ]
        for path in exercised:
            if "bug" in self.options.kinds or "multi" in self.options.kinds:
                # the cap per function applies to the mutations on lines a scenario runs
                reached = {line for file, line in covered if file == path} if covered else None
                pools["bug"] += bug_candidates(
                    path, files[path], self.rng, MAX_MUTATIONS_PER_FUNCTION, lines=reached
                )
            if "feature" in self.options.kinds and module_name(path) in by_module:
                pools["feature"] += [
                    c for c in feature_candidates(path, files[path], self.rng) if _exercised(c, by_module)
                ]
        pools["bug"] = _few_per_function(pools["bug"], BUG_POOL_FACTOR * self.options.max_tasks)
        for kind, pool in pools.items():
            # the types gate compares pyright's messages, which quote inferred types: a change on a line
            # pyright already reports would make the reference look like it introduces an error
            clean = [c for c in pool if not any(line in flagged for line in c.lines)]
            dropped[f"{kind}: touches a line with a pyright error"] += len(pool) - len(clean)
            pool[:] = clean
            self.rng.shuffle(pool)
            # a change inside a function the captured scenarios call is the likeliest to be seen:
            # those are tried first (the budget runs out before every candidate is tried)
            pool.sort(key=lambda c: 0 if _own_target(c) in targets else 1)
        quota = _quotas(self.options.kinds, self.options.max_tasks)
        queues = {kind: list(reversed(pools[kind])) for kind in ("feature", "bug")}
        found: Counter[str] = Counter()
        exhausted: set[str] = {kind for kind in KINDS if kind not in quota}
        parts: list[Kept] = []  # bugs found, the halves of multi-location tasks
        pairs_tried: set[tuple[int, int]] = set()
        used_in_multi: set[int] = set()
        lines: list[dict[str, Any]] = []
        counters: Counter[str] = Counter()
        # a task's proof (seconds of grading) runs in one background thread while the next candidates
        # are tried (seconds of replay and pytest): `found` counts tasks proved or being proved
        proving: list[tuple[str, Future[Proved]]] = []
        bar = tqdm(
            total=self.options.max_tasks,
            desc=f"mining {project.name}",
            disable=not self.options.progress,
            unit="task",
        )

        def harvest(wait: bool) -> None:
            for entry in list(proving):
                kind, future = entry
                if not wait and not future.done():
                    continue
                proving.remove(entry)
                proved = future.result()
                if proved.reason is not None:
                    found[kind] -= 1
                    dropped[f"{kind}: proof: {proved.reason}"] += 1
                else:
                    lines.append(proved.line)
                    bar.update(1)

        with ThreadPoolExecutor(max_workers=PROOF_THREADS, thread_name_prefix="rlvr-mine-prove") as proofs:
            while True:
                harvest(wait=False)
                if len(lines) + len(proving) >= self.options.max_tasks:
                    harvest(wait=True)  # a proof may still fail: then look further
                    if len(lines) >= self.options.max_tasks:
                        break
                    continue
                # the queued proofs, PROOF_THREADS at a time, and this candidate's own
                queued = (len(proving) + 1) / PROOF_THREADS
                reserve = prover.estimate() * max(1.0, queued) if prover is not None else 0.0
                if self.time_left() < reserve:
                    break
                kind = _next_kind(quota, found, exhausted)
                if kind is None:
                    if proving:
                        harvest(wait=True)  # a failed proof reopens its kind's quota
                        continue
                    break
                if kind == "multi":
                    pair = self._next_pair(parts, pairs_tried, used_in_multi)
                    if pair is None:
                        if (
                            "bug" in exhausted
                            or len(parts) > len(pairs_tried) + 2 * MULTI_PARTS * quota["multi"]
                        ):
                            exhausted.add("multi")
                        else:  # more bugs make more pairs
                            self._try_next(
                                queues, "bug", by_module, files, deps, failing, dropped, exhausted, parts
                            )
                        continue
                    item = self._multi(pair[0], pair[1], files, dropped)
                    if item is None:
                        continue
                    used_in_multi.update(id(part) for part in pair)
                else:
                    item = self._try_next(
                        queues, kind, by_module, files, deps, failing, dropped, exhausted, parts
                    )
                    if item is None:
                        continue
                    if kind == "bug" and not self._single(quota, found, exhausted, parts):
                        continue  # kept as a multi part only
                line = self._task_line(project, item, name, variants, by_module, counters)
                found[kind] += 1
                if prover is None:
                    lines.append(line)
                    bar.update(1)
                else:
                    proving.append((kind, proofs.submit(prover.prove, line)))
            harvest(wait=True)
        bar.close()
        left = sum(len(queue) for queue in queues.values())
        if left and len(lines) < self.options.max_tasks:
            dropped["time budget spent before it was tried"] += left
        return lines, dropped

    def _try_next(
        self,
        queues: dict[str, list[Candidate]],
        kind: str,
        by_module: dict[str, list[Captured]],
        files: dict[str, str],
        deps: list[Path],
        failing: list[str],
        dropped: Counter[str],
        exhausted: set[str],
        parts: list[Kept],
    ) -> Kept | None:
        queue = queues[kind]
        if not queue:
            exhausted.add(kind)
            return None
        item = self._try(queue.pop(), by_module, files, deps, failing, dropped)
        if item is not None and kind == "bug":
            parts.append(item)
        return item

    def _single(
        self, quota: dict[str, int], found: Counter[str], exhausted: set[str], parts: list[Kept]
    ) -> bool:
        """Is a bug just found a task of its own (else only a part of a multi-location one)?"""
        if "bug" not in quota:
            return False
        if "multi" in exhausted or found["bug"] < quota["bug"]:
            return True
        return len(parts) > MULTI_PARTS * quota["multi"] + found["bug"]

    def _next_pair(
        self, parts: list[Kept], tried: set[tuple[int, int]], used: set[int]
    ) -> tuple[Kept, Kept] | None:
        """Two bugs in different functions not yet combined, neither already half of a kept multi task."""
        free = [p for p in parts if id(p) not in used]
        options = [
            (a, b)
            for i, a in enumerate(free)
            for b in free[i + 1 :]
            if (id(a), id(b)) not in tried and a.candidate.function != b.candidate.function
        ]
        if not options:
            return None
        first, second = self.rng.choice(options)
        tried.add((id(first), id(second)))
        return first, second

    def _scenarios_for(self, candidate: Candidate, by_module: dict[str, list[Captured]]) -> list[Captured]:
        """The scenarios of the candidate's modules, then those of other modules that run a line it
        changes (a helper module's code is reached through the functions that call it)."""
        out: list[Captured] = []
        for path in candidate.paths:
            out += by_module.get(module_name(path), [])
        own = {module_name(path) for path in candidate.paths}
        changed = set(candidate.lines)
        for module, scenarios in by_module.items():
            if module not in own:
                out += [c for c in scenarios if c.lines & changed]
        return out

    def _try(
        self,
        candidate: Candidate,
        by_module: dict[str, list[Captured]],
        files: dict[str, str],
        deps: list[Path],
        failing: list[str],
        dropped: Counter[str],
    ) -> Kept | None:
        scenarios = self._scenarios_for(candidate, by_module)
        own_target = _own_target(candidate)
        changed = set(candidate.lines)
        # a change is seen by the scenarios whose recorded calls ran a line it changes (measured at
        # capture), the calls to its own function first; without that measure, by the calls to the
        # function, else a sample of its module's (replaying a whole large module per candidate
        # would spend the budget)
        running = [s for s in scenarios if s.lines & changed]
        own = [s for s in scenarios if target_of(s.scenario) == own_target]
        if running:
            running.sort(key=lambda s: 0 if target_of(s.scenario) == own_target else 1)
            scenarios = running[:MAX_TRIED_SCENARIOS]
        elif own:
            scenarios = own[:MAX_TRIED_SCENARIOS]
        else:
            scenarios = self.rng.sample(scenarios, min(len(scenarios), MAX_TRIED_SCENARIOS))
        state = {**files, **candidate.edits}
        began = time.monotonic()
        got = replay(self.sandbox, state, [s.scenario for s in scenarios])
        self.spent["try: replay"] += time.monotonic() - began
        self.spent["try: candidates (count)"] += 1
        differing = [
            (i, g, s.outcome)
            for i, (g, s) in enumerate(zip(got, scenarios, strict=True))
            if g is None or not same_value(s.outcome, g)
        ]
        if not differing:
            dropped[f"{candidate.kind}: no captured scenario sees it"] += 1
            return None
        if candidate.kind == "feature" and not any(
            target_of(scenarios[i].scenario) == own_target for i, _, _ in differing
        ):
            dropped[f"{candidate.kind}: no scenario of the function itself sees it"] += 1
            return None
        tests = sorted({t for i, _, _ in differing for t in scenarios[i].tests})[:MAX_TRIED_TESTS]
        if not tests:
            dropped[f"{candidate.kind}: no repo test reaches it"] += 1
            return None
        began = time.monotonic()
        run = run_suite(state, tests, deps, 300.0, stop_at_first_failure=True, deselect=failing)
        self.spent["try: repo tests"] += time.monotonic() - began
        self.spent["try: suites run (count)"] += 1
        if not run.failing:
            dropped[f"{candidate.kind}: the repo's tests all pass on it"] += 1
            return None
        if not self.options.verify and self.type_checker.check(files).count_introduced_over(
            self.type_checker.check(state)
        ):
            # the types gate counts pyright's messages; a change can remove one (code it makes
            # unreachable or reachable, a literal type quoted in a message) so that the untouched
            # reference would look like it introduces an error. With `verify`, the grader's own types
            # gate decides this when the task is checked (a whole-repository pyright run per candidate
            # here would cost as much as finding it)
            dropped[f"{candidate.kind}: the reference would fail the types gate over it"] += 1
            return None
        return Kept(candidate, differing, scenarios)

    def _multi(self, first: Kept, second: Kept, files: dict[str, str], dropped: Counter[str]) -> Kept | None:
        """The two bugs together, kept if each is still seen on its own (one does not mask the other)."""
        combined = combine(first.candidate, second.candidate, files)
        if combined is None:
            return None
        scenarios = first.scenarios + [s for s in second.scenarios if s not in first.scenarios]
        keys = [json.dumps(s.scenario, sort_keys=True) for s in scenarios]
        seen_first = {json.dumps(first.scenarios[i].scenario, sort_keys=True) for i, _, _ in first.differing}
        seen_second = {
            json.dumps(second.scenarios[i].scenario, sort_keys=True) for i, _, _ in second.differing
        }
        if not (seen_first - seen_second) or not (seen_second - seen_first):
            dropped["multi: the two bugs are not each observable on their own"] += 1
            return None
        got = replay(self.sandbox, {**files, **combined.edits}, [s.scenario for s in scenarios])
        differing = [
            (i, g, s.outcome)
            for i, (g, s) in enumerate(zip(got, scenarios, strict=True))
            if g is None or not same_value(s.outcome, g)
        ]
        one = [d for d in differing if keys[d[0]] in seen_first - seen_second]
        two = [d for d in differing if keys[d[0]] in seen_second - seen_first]
        if not one or not two:
            dropped["multi: one bug masks the other"] += 1
            return None
        combined.parts = [first.candidate, second.candidate]
        shown = one[:1] + two[:1]
        return Kept(combined, shown + [d for d in differing if d not in shown], scenarios)

    # ------------------------------------------------------------------ task lines
    def _task_line(
        self,
        project: Project,
        item: Kept,
        name: str,
        variants: dict[str, list[Captured]],
        by_module: dict[str, list[Captured]],
        counters: Counter[str],
    ) -> dict[str, Any]:
        held_out = self._held_out(project)
        # the tests are the spec; the configuration files could turn the type checker or pytest off
        protected = sorted(
            set(project.tests) | {p for p in project.files if p in CONFIG_FILES} | {ADAPTER_PATH}
        )
        candidate = item.candidate
        counters[candidate.kind] += 1
        differing_idx = [i for i, _, _ in item.differing][:MAX_DIFFERING_IN_TASK]
        hidden = [item.scenarios[i].scenario for i in differing_idx]
        taken = {json.dumps(h, sort_keys=True) for h in hidden}
        rest = [
            c.scenario
            for c in self._scenarios_for(candidate, by_module)
            if json.dumps(c.scenario, sort_keys=True) not in taken
        ]
        self.rng.shuffle(rest)
        hidden += rest[: max(0, MAX_CAPTURED_IN_TASK - len(hidden))]
        nearby = [v.scenario for p in candidate.paths for v in variants.get(module_name(p), [])]
        self.rng.shuffle(nearby)
        if candidate.kind == "feature":
            prompt = feature_issue(candidate.function, candidate.docstring)
            difficulty = 3
        else:
            shown = item.differing[:2] if candidate.kind == "multi" else item.differing[:1]
            prompt = bug_issue([describe_difference(item.scenarios[i].scenario, g, w) for i, g, w in shown])
            difficulty = 4 if candidate.kind == "multi" else 2
        modules = {module_name(p) for p in candidate.paths}
        return {
            "id": f"{name}-{candidate.kind}-{counters[candidate.kind]:03d}",
            "prompt": prompt,
            "repo": name,
            "base_edits": dict(candidate.edits),
            "reference_edits": {},
            "scenarios": hidden + nearby[: MAX_TASK_SCENARIOS - len(hidden)],
            "protected": protected,
            "difficulty": difficulty,
            "split": "test" if modules & held_out else "train",
            "meta": {"kind": candidate.kind, "mined_from": project.name},
            "notes": {
                "where": candidate.where,
                "observable_by": len(item.differing),
                "baseline": self._baseline(project.files),
            },
        }

    def _reference_types(self, files: dict[str, str]) -> RepoTypeReport:
        if self._types_report is None:
            self._types_report = reference_types(files)
        return self._types_report

    def _baseline(self, files: dict[str, str]) -> dict[str, Any]:
        """What the miner proved of the reference, for `rlvr packs validate` to hold the task to: the
        type errors pyright reports on it (the project's own, untouched) and the visible tests the
        sandbox's runner fails on it (pytest-only suites, tests that need files or sockets), and the
        modules that do not import there (no task's hidden check calls into them)."""
        if self._baseline_cache is None:
            report = self._reference_types(files)
            failing, unimportable = sandbox_failures(self.sandbox, files)
            self._baseline_cache = {
                "type_errors": [
                    [path, message, count] for (path, message), count in sorted(report.errors.items())
                ],
                "visible_failing": failing,
                "unimportable": unimportable,
            }
        return self._baseline_cache

    def _held_out(self, project: Project) -> set[str]:
        modules = sorted(module_name(p) for p in project.modules())
        if self.options.test_modules:
            unknown = sorted(set(self.options.test_modules) - set(modules))
            if unknown:
                raise MiningError(f"--test-modules names no module of the package: {', '.join(unknown)}")
            return set(self.options.test_modules)
        count = round(len(modules) * self.options.test_fraction)
        rng = random.Random(f"split:{self.options.seed}")
        return set(rng.sample(modules, count)) if count else set()


def reference_types(files: dict[str, str]) -> RepoTypeReport:
    """pyright's report on the reference (one CLI run)."""
    checker = RepoTypeChecker(engine="cli")
    try:
        return checker.check(files)
    finally:
        checker.close()


def type_error_lines(files: dict[str, str]) -> set[tuple[str, int]]:
    """(path, line) of each pyright error on the reference, one line per distinct message."""
    return {(path, line) for (path, _), line in reference_types(files).lines.items()}


def sandbox_failures(sandbox: WorkerPool, files: dict[str, str]) -> tuple[list[str] | None, list[str] | None]:
    """(the visible tests, by id, the reference fails when the grading sandbox runs them: `run_tests`, no
    pytest, files or network there; the package's modules that do not import there: frames, sockets,
    compiled helpers), each None if that run failed."""
    result = run_ops(sandbox, files, [("tests", {"paths": None}), ("imports", None)], SUITE_TIMEOUT)
    tests, imports = (result.outcomes[index] if len(result.outcomes) > index else None for index in (1, 2))
    failing = None
    if tests is not None and tests.ok and isinstance(tests.value, dict):
        failing = sorted(
            {line.split(" ", 1)[0] for line in tests.value.get("lines", []) if " PASSED" not in line}
        )
    unimportable = None
    if imports is not None and imports.ok and isinstance(imports.value, list):
        unimportable = sorted(str(entry[0]) for entry in imports.value)
    return failing, unimportable


def import_problem(sandbox: WorkerPool, files: dict[str, str], package: str) -> str | None:
    """Why `package` does not import in the grading sandbox, or None."""
    result = run_ops(sandbox, files, [("python", {"code": f"import {package}"})], 30.0)
    outcome = result.outcomes[1] if len(result.outcomes) > 1 else None
    if outcome is None or not outcome.ok:
        return f"the sandbox run failed: {result.status} {result.detail}".strip()
    return outcome.value.get("error")


def _next_kind(quota: dict[str, int], found: Counter[str], exhausted: set[str]) -> str | None:
    """The kind with candidates left that is furthest behind its quota (None: every kind is out)."""
    open_kinds = [k for k in ("feature", "bug", "multi") if k in quota and k not in exhausted]
    if not open_kinds:
        return None
    return min(open_kinds, key=lambda k: found[k] / quota[k])


def _few_per_function(pool: list[Candidate], wanted: int) -> list[Candidate]:
    """At most 3 mutations of each function, more (up to all of them) where the package is too small
    for that to give `wanted` candidates."""
    per_function = 3
    while True:
        seen: Counter[str] = Counter()
        chosen = []
        for candidate in pool:
            seen[candidate.function] += 1
            if seen[candidate.function] <= per_function:
                chosen.append(candidate)
        if len(chosen) >= wanted or per_function >= MAX_MUTATIONS_PER_FUNCTION:
            return chosen
        per_function *= 2


def _own_target(candidate: Candidate) -> str:
    """The scenario target that calls the candidate's function: itself, or its class."""
    module, _, qualified = candidate.function.partition(":")
    return f"{module}:{qualified.split('.')[0]}"


def _exercised(candidate: Candidate, by_module: dict[str, list[Captured]]) -> bool:
    module, _, qualified = candidate.function.partition(":")
    owner = qualified.split(".")[0]
    return any(
        target_of(c.scenario) in (f"{module}:{owner}", f"{module}:{qualified}")
        for c in by_module.get(module, [])
    )


def _quotas(kinds: tuple[str, ...], total: int) -> dict[str, int]:
    shares = {"bug": 0.6, "feature": 0.3, "multi": 0.1}
    chosen = {k: shares[k] for k in kinds}
    scale = sum(chosen.values())
    quota = {k: max(1, round(total * v / scale)) for k, v in chosen.items()}
    while sum(quota.values()) > total and max(quota.values()) > 1:
        largest = max(quota, key=lambda k: quota[k])
        quota[largest] -= 1
    return quota


# ---------------------------------------------------------------------------------- the pack
def write_tasks(out: Path, lines: list[dict[str, Any]]) -> None:
    (out / "tasks.jsonl").write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))


def write_pack(
    out: Path, name: str, project: Project, lines: list[dict[str, Any]], summary: MineSummary, source: Path
) -> None:
    repo = out / "repos" / name
    if repo.exists():
        shutil.rmtree(repo)
    for path, text in project.files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else ""
    requires = ", ".join(json.dumps(r) for r in summary.installed)
    (out / "pack.toml").write_text(
        f'name = "{name}"\nfamily = "repo"\nversion = "1"\n'
        f"description = {json.dumps(f'Tasks mined by rlvr packs mine from {project.name} ({source.name}): injected bugs, removed features, multi-location bugs; hidden checks captured from its tests.')}\n\n"
        f"[mined]\nsource = {json.dumps(source.name)}\nsha256 = {json.dumps(digest)}\n"
        f"package = {json.dumps(project.package)}\nrequires = [{requires}]\n"
        f"deps = {json.dumps('deps' if summary.installed else '')}\n"
    )
    write_tasks(out, lines)
