"""Hidden property-based tests for code tasks, generated on the trusted side.

For each code task we generate extra hidden inputs and let the reference solution be the oracle
(differential testing); an optional relation replaces equality where a task has several correct
answers. Everything here runs in the trusted process; only argument tuples reach the sandbox.

Where inputs come from, in order (the first `max_calls` valid, distinct ones are kept):
  1. the per-task counterexample database (inputs that caught a program before), replayed first;
  2. explicit inputs the task lists (`hidden["properties"]["inputs"]`);
  3. boundary inputs of each argument's domain (empty, smallest, largest, all-equal), then every
     small int (-3..10) in each int argument of the first seeds and every reordering of their
     same-typed arguments (`property_mutation.structured_inputs`);
  4. derandomized hypothesis examples of each argument's domain (biased to small values, ties
     and exact floats);
  5. EvalPlus-style type-aware mutations of the seeds, drawing replacement values from the seeds
     and from the reference's own literals (thresholds, month numbers...); mutants the reference
     accepts join the population, so edits compound (see `property_mutation`).
Seeds are the calls the task's original test makes (recorded against the reference), its
explicit `calls`, and the `>>> f(...)` examples of its docstring. Domains (`property_shapes`) are
inferred from the seeds (or from type hints where no seed shows an argument), and so are simple
relations between arguments that every seed obeys (equal lengths, an index bounded by a length).

An input is kept only if it meets the task's preconditions and the inferred relations, the
reference answers it with plain data within an operation budget (counted, not timed) without
raising, and the reference's answer satisfies the task's relation. So correct code never fails
on an input the task did not promise to handle. Generation is seeded per task (and cached), so
the hidden tests - and verdicts - repeat exactly.

Hidden spec keys read here (all optional; `Task.hidden`, never shown to the policy):
  "properties":    {"inputs": [[arg, ...], ...],  explicit extra inputs (judged like generated ones)
                    "relation": str,               a name in RELATIONS (default: equality; floats
                                                   to a relative 1e-9)
                    "amplify": bool,               generate from seeds (default true)
                    "max_calls": int}              cap on generated calls (default 200)
  "preconditions": Python source defining `precondition(*args) -> bool` (trusted task code)
  "perf":          {"sizes": [n, ...], "calls": [[arg, ...], ...]}  growth inputs, call i of size
                   sizes[i]; or {"sizes": [n, ...]} alone to scale list/str arguments of the
                   largest seed to each n. Without "perf", seeds are scaled to DEFAULT_GROWTH_SIZES
                   when the task has list or string arguments.
HumanEval tasks also get the preconditions and relations of `property_preconditions`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import threading
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from rlvr.core.codec import CodecError, dumps, loads
from rlvr.core.types import Task
from rlvr.graders.code.oracle import CodeOracle, Comparator, GeneratedTests
from rlvr.graders.code.properties.mutation import mutate_inputs, source_constants, structured_inputs
from rlvr.graders.code.properties.preconditions import HUMANEVAL_PRECONDITIONS, HUMANEVAL_RELATIONS, RELATIONS
from rlvr.graders.code.properties.runner import ReferenceRun, hypothesis_examples, run_reference
from rlvr.graders.code.properties.shapes import Shape, argument_shapes, inferred_relations

GENERATOR_VERSION = 10
DEFAULT_MAX_CALLS = 200
MUTANTS_PER_TASK = 160
HYPOTHESIS_EXAMPLES = 80
CALL_BUDGET = 20_000  # reference events per generated call
TASK_BUDGET = 400_000  # reference events over all generated calls of a task
PERF_CALL_BUDGET = 300_000  # also the budget of a task's hand-written hidden inputs
EXTRA_DRAW_ROUNDS = 3
DEFAULT_GROWTH_SIZES = (8, 16, 32, 64, 128)

Precondition = Callable[..., bool]


class PropertySpecError(ValueError):
    """A task's property spec is malformed (reported as a task that cannot be graded)."""


@dataclass(frozen=True)
class PropertyConfig:
    max_calls: int = DEFAULT_MAX_CALLS
    mutants: int = MUTANTS_PER_TASK
    hypothesis_examples: int = HYPOTHESIS_EXAMPLES
    counterexample_db: Path | None = None
    growth_sizes: tuple[int, ...] = DEFAULT_GROWTH_SIZES


# ------------------------------------------------------------------------------------ seeds
_DOCTEST = re.compile(r"^\s*>>>\s*(.+)$", re.MULTILINE)


def docstring_examples(prompt: str, entry_point: str) -> list[tuple[Any, ...]]:
    """Argument tuples of `>>> entry_point(literal, ...)` lines in the prompt."""
    found: list[tuple[Any, ...]] = []
    for line in _DOCTEST.findall(prompt):
        try:
            node = ast.parse(line.strip(), mode="eval").body
        except SyntaxError:
            continue
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry_point
        ):
            continue
        if node.keywords:
            continue
        try:
            found.append(tuple(ast.literal_eval(arg) for arg in node.args))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return found


def _type_hints(function: Callable[..., Any]) -> list[Any] | None:
    try:
        hints = typing.get_type_hints(function)
    except Exception:
        return None
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    names = code.co_varnames[: code.co_argcount]
    return [hints.get(name) for name in names]


# ------------------------------------------------------------------------------------ task spec
def _spec(task: Task) -> dict[str, Any]:
    spec = task.hidden.get("properties") or {}
    if not isinstance(spec, dict):
        raise PropertySpecError(f"{task.id}: hidden 'properties' must be a mapping")
    return spec


def task_precondition(task: Task) -> Precondition | None:
    source = task.hidden.get("preconditions")
    if source is None:
        return HUMANEVAL_PRECONDITIONS.get(task.id)
    if not isinstance(source, str):
        raise PropertySpecError(f"{task.id}: hidden 'preconditions' must be Python source")
    namespace: dict[str, Any] = {"__name__": f"rlvr_precondition_{task.id}"}
    exec(compile(source, f"<preconditions:{task.id}>", "exec"), namespace)  # trusted task data
    function = namespace.get("precondition")
    if not callable(function):
        raise PropertySpecError(f"{task.id}: 'preconditions' must define precondition(*args)")
    return lambda *args: bool(function(*args))


def task_relation(task: Task) -> Comparator | None:
    name = _spec(task).get("relation")
    if name is None:
        return HUMANEVAL_RELATIONS.get(task.id)
    if name not in RELATIONS:
        raise PropertySpecError(
            f"{task.id}: unknown relation {name!r}; known: {', '.join(sorted(RELATIONS))}"
        )
    return RELATIONS[name]


def _seed_for(task: Task) -> int:
    digest = hashlib.sha256(f"{GENERATOR_VERSION}:{task.id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# ------------------------------------------------------------------------------------ counterexamples
def _db_file(directory: Path, task_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)
    return directory / f"{safe}.jsonl"


def load_counterexamples(directory: Path | None, task_id: str) -> list[tuple[Any, ...]]:
    if directory is None:
        return []
    path = _db_file(directory, task_id)
    if not path.is_file():
        return []
    out: list[tuple[Any, ...]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            args = loads(line)
        except CodecError:
            continue
        if isinstance(args, list):
            out.append(tuple(args))
    return out


_DB_LOCK = threading.Lock()


def record_counterexample(directory: Path, task_id: str, args: Sequence[Any]) -> bool:
    """Remember an input that caught a program; replayed first the next time the task's tests are
    generated (it takes effect for new graders, so one grader's verdicts stay repeatable)."""
    try:
        line = dumps(list(args))
    except CodecError:
        return False
    with _DB_LOCK:
        directory.mkdir(parents=True, exist_ok=True)
        path = _db_file(directory, task_id)
        existing = set(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else set()
        if line in existing:
            return False
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    return True


# ------------------------------------------------------------------------------------ generation
def _boundary_inputs(shapes: Sequence[Shape], seeds: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Each argument at each of its boundary values, the others taken from the first seeds."""
    out: list[tuple[Any, ...]] = []
    bases = list(seeds[:3])
    for base in bases:
        for position, shape in enumerate(shapes):
            for value in shape.boundary():
                args = list(base)
                args[position] = value
                out.append(tuple(args))
    return out


def _key(args: tuple[Any, ...]) -> str | None:
    try:
        return dumps(list(args))
    except (CodecError, RecursionError):
        return None


class _Collector:
    """Keeps valid, distinct inputs within the budgets."""

    def __init__(
        self,
        reference: Callable[..., Any],
        precondition: Precondition | None,
        relation: Comparator | None,
        seen: set[str],
        limit: int,
    ) -> None:
        self.reference, self.precondition, self.relation = reference, precondition, relation
        self.seen, self.limit = seen, limit
        self.calls: list[tuple[Any, ...]] = []
        self.spent = 0
        self.relations: list[Callable[[tuple[Any, ...]], bool]] = []  # inferred from the seeds

    @property
    def full(self) -> bool:
        return len(self.calls) >= self.limit or self.spent >= TASK_BUDGET

    def offer(self, args: tuple[Any, ...], budget: int = CALL_BUDGET) -> bool:
        if self.full:
            return False
        key = _key(args)
        if key is None or key in self.seen:
            return False
        self.seen.add(key)
        if not self.admissible(args):
            return False
        run = run_reference(self.reference, args, budget)
        self.spent += run.ops
        if not run.ok or not self._self_consistent(args, run):
            return False
        self.calls.append(args)
        return True

    def admissible(self, args: tuple[Any, ...]) -> bool:
        try:
            if not all(relation(args) for relation in self.relations):
                return False
            return self.precondition is None or bool(self.precondition(*args))
        except Exception:  # a precondition that cannot read the input rules it out
            return False

    def _self_consistent(self, args: tuple[Any, ...], run: ReferenceRun) -> bool:
        if self.relation is None:
            return True
        try:
            return bool(self.relation(args, run.value, run.value))
        except Exception:
            return False


def _answer(reference: Callable[..., Any], args: tuple[Any, ...]) -> str | None:
    """The reference's output on `args` as exact text (None if it raises or is not plain data)."""
    run = run_reference(reference, args, CALL_BUDGET)
    return _key((run.value,)) if run.ok else None


def generate_tests(
    task: Task, oracle: CodeOracle, config: PropertyConfig | None = None
) -> GeneratedTests | None:
    """The generated hidden tests of one code task (deterministic for a given task and config)."""
    config = config or PropertyConfig()
    spec = _spec(task)
    precondition = task_precondition(task)
    relation = task_relation(task)
    limit = int(spec.get("max_calls", config.max_calls))
    seeds = list(oracle.calls) + docstring_examples(task.prompt, oracle.entry_point)
    seen = {k for k in (_key(a) for a in oracle.calls) if k is not None}
    collector = _Collector(oracle.reference, precondition, relation, seen, limit)

    for args in load_counterexamples(config.counterexample_db, task.id):
        collector.offer(args)
    for raw in spec.get("inputs") or []:
        if not isinstance(raw, list | tuple):
            raise PropertySpecError(f"{task.id}: properties.inputs must be a list of argument lists")
        collector.offer(tuple(raw), PERF_CALL_BUDGET)  # hand-written: the task vouches for its cost
    collector.spent = 0  # ... and they do not eat into the generated inputs' budget

    shapes: list[Shape] | None = None
    valid_seeds = [s for s in seeds if collector.admissible(s)]
    if spec.get("amplify", True) and valid_seeds:
        shapes = argument_shapes(valid_seeds, _type_hints(oracle.reference))
    if shapes:
        collector.relations = inferred_relations(valid_seeds, lambda args: _answer(oracle.reference, args))
        valid_seeds = [s for s in valid_seeds if collector.admissible(s)]
        rng = random.Random(_seed_for(task))
        for args in _boundary_inputs(shapes, valid_seeds):
            collector.offer(args)
        for args in structured_inputs(shapes, valid_seeds):
            collector.offer(args)
        strategy = st.tuples(*(s.strategy() for s in shapes))
        for args in hypothesis_examples(strategy, config.hypothesis_examples, _seed_for(task)):
            collector.offer(tuple(args))
        # a narrow domain (a precondition rejects most draws) gets more draws, within the task budget
        for round_ in range(1, EXTRA_DRAW_ROUNDS + 1):
            if precondition is None or collector.full or len(collector.calls) >= limit // 2:
                break
            for args in hypothesis_examples(strategy, config.hypothesis_examples, _seed_for(task) + round_):
                collector.offer(tuple(args))
        # mutants that the reference accepts join the population, so edits compound on valid inputs
        budget = min(config.mutants, limit - len(collector.calls))
        constants = source_constants(task.hidden["reference"])
        mutate_inputs(valid_seeds, shapes, rng, budget, collector.offer, constants)

    perf_calls, perf_sizes = growth_inputs(
        task, oracle.reference, valid_seeds, shapes, collector.admissible, config
    )
    if not collector.calls and not perf_calls:
        return None
    return GeneratedTests(tuple(collector.calls), relation, tuple(perf_calls), tuple(perf_sizes))


# ------------------------------------------------------------------------------------ perf growth
def growth_inputs(
    task: Task,
    reference: Callable[..., Any],
    seeds: Sequence[tuple[Any, ...]],
    shapes: Sequence[Shape] | None,
    admissible: Callable[[tuple[Any, ...]], bool],
    config: PropertyConfig,
) -> tuple[list[tuple[Any, ...]], list[int]]:
    """Inputs of growing size for the perf layer: explicit (`hidden["perf"]`) or seeds scaled up.
    Empty when the task has no scalable argument or the reference cannot run them in budget."""
    perf = task.hidden.get("perf")
    if perf is not None and not isinstance(perf, dict):
        raise PropertySpecError(f"{task.id}: hidden 'perf' must be a mapping")
    sizes = [int(n) for n in (perf or {}).get("sizes", config.growth_sizes)]
    if perf and perf.get("calls") is not None:
        calls = [tuple(c) for c in perf["calls"]]
        if len(calls) != len(sizes):
            raise PropertySpecError(f"{task.id}: perf.calls and perf.sizes must have the same length")
    else:
        calls = _scaled_seed_inputs(seeds, shapes, sizes, _seed_for(task))
        if not calls:
            return [], []
    for args in calls:
        if perf is None and not admissible(args):
            return [], []
        if not run_reference(reference, args, PERF_CALL_BUDGET).ok:
            return [], []
    return calls, sizes


def _scaled_seed_inputs(
    seeds: Sequence[tuple[Any, ...]], shapes: Sequence[Shape] | None, sizes: Sequence[int], seed: int
) -> list[tuple[Any, ...]]:
    """The largest seed with each list/str argument replaced by a random valid value of size n."""
    from rlvr.graders.code.properties.shapes import ListShape, TextShape

    if not seeds or not shapes or len(set(sizes)) < 2:
        return []
    scalable = [i for i, s in enumerate(shapes) if isinstance(s, ListShape | TextShape)]
    if not scalable:
        return []
    base = max(seeds, key=lambda args: sum(len(args[i]) for i in scalable))
    rng = random.Random(seed)
    out: list[tuple[Any, ...]] = []
    for n in sizes:
        args = list(base)
        for i in scalable:
            value = shapes[i].sample(rng, n)
            if len(value) != n or not shapes[i].accepts(value):
                return []
            args[i] = value
        out.append(tuple(args))
    return out


# ------------------------------------------------------------------------------------ entry point
class PropertyTests:
    """The default generator wired into CodeGrader (`OracleCache(generate=...)`).

    Generated tests are cached by task content and config: in memory (every grader in the process
    reuses them) and in shipped cache files (`cache_<pack>.jsonl`, written by
    `scripts/write_property_cache.py <pack>`), so HumanEval's 164 tasks need no
    generation at grading time. Generation is deterministic, so a cache entry is exactly what
    generation would produce (tests/test_properties_humaneval.py checks a sample).
    """

    _cache: dict[str, GeneratedTests | None] = {}
    _lock = threading.Lock()
    _shipped: dict[str, dict[str, Any]] | None = None

    def __init__(self, config: PropertyConfig | None = None) -> None:
        self.config = config or PropertyConfig()

    def cache_key(self, task: Task) -> str:
        hidden = {
            k: task.hidden.get(k)
            for k in ("reference", "check", "calls", "properties", "preconditions", "perf")
        }
        config = repr(replace(self.config, counterexample_db=None))
        database = ""
        if self.config.counterexample_db is not None:
            path = _db_file(self.config.counterexample_db, task.id)
            database = path.read_text(encoding="utf-8") if path.is_file() else ""
        blob = json.dumps(
            [GENERATOR_VERSION, task.id, task.prompt, repr(hidden), config, database], default=repr
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    @classmethod
    def shipped(cls) -> dict[str, dict[str, Any]]:
        with cls._lock:
            if cls._shipped is None:
                entries: dict[str, dict[str, Any]] = {}
                for path in sorted(CACHE_DIR.glob("cache_*.jsonl")):
                    for line in path.read_text(encoding="utf-8").splitlines():
                        record = json.loads(line)
                        entries[record["key"]] = record
                cls._shipped = entries
            return cls._shipped

    def __call__(self, task: Task, oracle: CodeOracle) -> GeneratedTests | None:
        key = self.cache_key(task)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        record = self.shipped().get(key)
        if record is not None:
            generated = _from_record(record, task_relation(task))
        else:
            generated = generate_tests(task, oracle, self.config)
        with self._lock:
            self._cache[key] = generated
        return generated


CACHE_DIR = Path(__file__).parent  # cache_<pack>.jsonl files ship as package data


def cache_record(key: str, task_id: str, generated: GeneratedTests | None) -> dict[str, Any]:
    if generated is None:
        return {"key": key, "task_id": task_id, "none": True}
    return {
        "key": key,
        "task_id": task_id,
        "calls": dumps([list(c) for c in generated.calls]),
        "perf_calls": dumps([list(c) for c in generated.perf_calls]),
        "perf_sizes": list(generated.perf_sizes),
    }


def _from_record(record: dict[str, Any], relation: Comparator | None) -> GeneratedTests | None:
    if record.get("none"):
        return None
    return GeneratedTests(
        tuple(tuple(c) for c in loads(record["calls"])),
        relation,
        tuple(tuple(c) for c in loads(record["perf_calls"])),
        tuple(int(n) for n in record["perf_sizes"]),
    )
