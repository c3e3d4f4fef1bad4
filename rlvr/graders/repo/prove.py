"""`rlvr packs validate` for repository packs: prove each task by running it, not by reading it.

For every task, in the sandbox and through the repo grader itself:

- the reference state imports (every module of the package), passes its own visible tests, has no
  type error (whole-repository pyright) and passes every hidden check with reward 1.0; a task mined
  by `rlvr packs mine` is held to the baseline the miner recorded of its (upstream) reference instead:
  no module that imported in the sandbox then fails to, no visible test the sandbox passed then fails,
  no type error beyond the project's own (`notes.baseline`);
- every scenario, domain and perf target resolves on the reference (a scenario that names a missing
  function or module is an error: both states would "agree" on the same AttributeError);
- the base state fails at least one hidden check, and a no-op (the base state submitted as is) scores
  below `TRIVIAL_REWARD_LIMIT` (its reward is reported per task);
- where a check the base state fails pins down text (a message, an output line) whose words the agent
  cannot read anywhere (issue text, base repository), a warning says so: the agent cannot know it;
  so does a listed call check that expects an exception the reference adds to a function and that
  neither the function's docstring nor the issue text names (`stated_raises`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from tqdm import tqdm

from rlvr.core.pack import Problem, TaskPack
from rlvr.core.types import Task
from rlvr.core.validation import TaskProof, ValidationReport
from rlvr.graders.repo.grader import ReferenceFault, RepoGrader
from rlvr.graders.repo.runner import ops_job
from rlvr.graders.repo.stated_raises import unstated_raise_warnings

NOOP = "no-op"
TEXT_WORD = re.compile(r"[A-Za-z]{4,}")
MAX_WARNINGS_PER_TASK = 3
OUTCOME_WORDS = frozenset({"raises", "value", "exit", "stdout"})  # the outcome format's own words
# per grader: reference state digest -> (the imports outcome, the visible tests outcome)
_REFERENCE_RUNS: weakref.WeakKeyDictionary[RepoGrader, dict[str, tuple[Any, Any]]] = (
    weakref.WeakKeyDictionary()
)


class _Tasks(TaskPack):
    """The tasks being proved, as the pack a grader is built on."""

    family = "repo"

    def __init__(self, tasks: list[Task], name: str) -> None:
        self.name = name
        self._tasks = tasks
        super().__init__()

    def _load(self) -> Iterable[Task]:
        return self._tasks


def _targets(task: Task) -> list[tuple[str, str]]:
    """(where in the task, target) of every declared scenario, domain and perf scenario."""
    out: list[tuple[str, str]] = []
    for field in ("scenarios", "domains", "perf"):
        for index, item in enumerate(task.hidden.get(field) or []):
            if isinstance(item, dict) and isinstance(item.get("target"), str):
                out.append((f"{field}[{index}]", item["target"]))
    return out


def _strings(value: Any, depth: int = 0) -> list[str]:
    if depth > 12:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def _invisible_text(grader: RepoGrader, task: Task) -> list[str]:
    """Warnings: checks the base state fails whose expected text has words the agent cannot read."""
    checks = grader.checks(task)
    lowered = {part.lower() for word in checks.visible for part in (word, *word.split("_"))}
    lowered |= OUTCOME_WORDS
    found: list[str] = []
    for index in sorted(checks.discriminating):
        scenario = checks.scenarios[index]
        given = {word.lower() for word in TEXT_WORD.findall(json.dumps(scenario))}  # the check's own input
        words = {
            word
            for text in _strings(checks.expected[index])
            for word in TEXT_WORD.findall(text)
            if word.lower() not in lowered and word.lower() not in given
        }
        if words:
            found.append(
                f"hidden check {index + 1} ({scenario.get('kind')} {scenario.get('target')}) expects text the "
                f"agent cannot read anywhere: {', '.join(sorted(words)[:5])}"
            )
    found += unstated_raise_warnings(
        task.prompt,
        task.hidden["base"],
        task.hidden["reference"],
        [(i + 1, scenario, checks.expected[i]) for i, scenario in enumerate(checks.scenarios)],
    )
    return found[: MAX_WARNINGS_PER_TASK * 2]


def _state_digest(files: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()


def _run_reference(grader: RepoGrader, task: Task) -> list[str]:
    """Problems of the reference state found by running it: modules that do not import, targets that
    do not resolve, visible tests it fails. Which modules import and which visible tests pass depend
    on the state alone: tasks that share a reference (every task mined from one project) run them
    once per grader; the targets are resolved for each task."""
    targets = _targets(task)
    resolve: tuple[str, Any] = ("resolve", [target for _, target in targets])
    reference = task.hidden["reference"]
    runs = _REFERENCE_RUNS.setdefault(grader, {})
    digest = _state_digest(reference)
    known_run = runs.get(digest)
    ops: list[tuple[str, Any]]
    if known_run is None:
        ops = [("imports", None), resolve, ("tests", {"paths": None})]
    else:
        ops = [resolve]
    result = grader.sandbox.run(ops_job(reference, ops, grader.timeout))
    if result.sandbox_error or len(result.outcomes) < len(ops) + 1:
        return [f"the reference state could not be run: {result.status} {result.detail}"]
    values = [o.value if o is not None and o.ok else None for o in result.outcomes[1 : len(ops) + 1]]
    if known_run is None:
        imports, resolved, tests = values
        if isinstance(imports, list) and isinstance(tests, dict):
            runs[digest] = (imports, tests)
    else:
        (imports, tests), (resolved,) = known_run, values
    found: list[str] = []
    unimportable = _baseline(task).get("unimportable")  # a mined task: as the miner recorded them
    known = set(unimportable) if isinstance(unimportable, list) else set()
    for module, error in imports if isinstance(imports, list) else []:
        if module not in known:
            found.append(f"module {module} of the reference does not import: {error}")
    if isinstance(resolved, list):
        for (where, target), reason in zip(targets, resolved, strict=False):
            if reason is not None:
                found.append(f"{where} names {target}, which does not resolve on the reference: {reason}")
    if isinstance(tests, dict):
        failing = [line for line in tests.get("lines", []) if " PASSED" not in line]
        known = _baseline(task).get("visible_failing")
        if isinstance(known, list):  # a mined task: hold it to what the miner recorded
            failing = [line for line in failing if line.split(" ", 1)[0] not in set(known)]
        if failing:
            found.append(f"the reference fails its own visible tests: {'; '.join(failing[:3])}")
    else:
        found.append("the visible tests could not be run on the reference")
    return found


def _baseline(task: Task) -> dict[str, Any]:
    """What `rlvr packs mine` proved of a mined task's reference (its notes' `baseline`), or {}."""
    notes = task.hidden.get("notes")
    baseline = notes.get("baseline") if isinstance(notes, dict) else None
    return baseline if isinstance(baseline, dict) else {}


def _type_errors(grader: RepoGrader, task: Task) -> str | None:
    """The reference's type errors; for a mined task, only those beyond the project's own recorded ones
    (an upstream project is rarely pyright-clean, and the grader's types gate compares with it anyway)."""
    report = grader.type_checker.check(task.hidden["reference"])
    if report.failure is not None:
        return f"pyright could not check the reference: {report.failure}"
    allowed: dict[tuple[str, str], int] = {}
    for entry in _baseline(task).get("type_errors") or []:
        if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], int):
            allowed[(str(entry[0]), str(entry[1]))] = entry[2]
    errors = [
        f"{path}:{report.lines.get((path, message), 0)}: {message}"
        for (path, message), count in sorted(report.errors.items())
        if count > allowed.get((path, message), 0)
    ]
    return f"the reference has type errors: {'; '.join(errors[:3])}" if errors else None


def prove_task(grader: RepoGrader, task: Task, where: str) -> tuple[TaskProof, list[Problem], list[str]]:
    """(proof, problems, warnings) of one task."""
    started = time.perf_counter()
    label = f"{where}:{task.id}"
    problems = [Problem(label, None, "reference", message) for message in _run_reference(grader, task)]
    try:
        checks = grader.checks(task)
    except ReferenceFault as exc:
        problems.append(Problem(label, None, "scenarios", str(exc)))
        return TaskProof(task.id, None, {}, time.perf_counter() - started), problems, []
    if grader.options.types:
        typed = _type_errors(grader, task)
        if typed:
            problems.append(Problem(label, None, "reference", typed))
    if not checks.discriminating:
        problems.append(
            Problem(label, None, "scenarios", "the base state passes every hidden check: nothing is tested")
        )
    reference = grader.grade_state(task, task.hidden["reference"])
    if reference.error:
        problems.append(Problem(label, None, "reference", f"grading the reference failed: {reference.error}"))
    elif reference.reward < 1.0:
        problems.append(Problem(label, None, "reference", f"the reference fails: {reference.feedback[:300]}"))
    noop = grader.grade_state(task, task.hidden["base"])
    trivial = {NOOP: noop.reward} if not noop.error else {}
    if noop.error:
        problems.append(Problem(label, None, NOOP, f"grading the base state failed: {noop.error}"))
    proof = TaskProof(
        task.id, None if reference.error else reference.reward, trivial, time.perf_counter() - started
    )
    # the reference's shortfall is reported above with the grader's feedback; keep the no-op limit
    problems += [p for p in proof.problems(where) if p.field != "reference"]
    return proof, problems, _invisible_text(grader, task)


def prove_repo_tasks(
    where: str,
    tasks: Iterable[Task],
    *,
    warn: Callable[[str], None] | None = None,
    progress: bool = True,
    **options: Any,
) -> ValidationReport:
    """Prove every task (see the module docstring). `options` are the repo grader's (`RepoOptions`:
    sandbox, jobs, types, timeout, ...); `warn` receives each visibility warning (default: stderr)."""
    chosen = list(tasks)
    say = warn or (lambda text: print(f"warning: {text}", file=sys.stderr))
    grader = RepoGrader(_Tasks(chosen, where), **options)
    report = ValidationReport()
    try:
        for task in tqdm(chosen, desc=f"proving {where}", disable=not progress, file=sys.stderr):
            proof, problems, warnings = prove_task(grader, task, where)
            report.proofs.append(proof)
            report.problems += problems
            for text in warnings:
                say(f"{where}:{task.id}: {text}")
    finally:
        grader.close()
    return report
