"""Generated hidden property tests: domains, mutation, preconditions, determinism, the
counterexample database, and visible vs hidden feedback."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.graders.code.oracle import CodeOracle
from rlvr.graders.code.properties.mutation import mutate_inputs
from rlvr.graders.code.properties.preconditions import polynomial_root
from rlvr.graders.code.properties.runner import run_reference
from rlvr.graders.code.properties.shapes import (
    FloatShape,
    IntShape,
    ListShape,
    TextShape,
    argument_shapes,
    infer_shape,
    inferred_relations,
)
from rlvr.graders.code.properties.suite import (
    PropertyConfig,
    docstring_examples,
    generate_tests,
    load_counterexamples,
    record_counterexample,
)


def code_task(reference: str, entry: str, calls: list[tuple], prompt: str = "", **hidden: object) -> Task:
    return Task(
        id=f"t/{entry}",
        prompt=prompt or f"def {entry}(*args):\n    pass\n",
        hidden={"entry_point": entry, "reference": reference, "calls": calls, **hidden},
    )


# ------------------------------------------------------------------------------ domains
def test_integer_domain_stays_within_the_seeds() -> None:
    shape = infer_shape([3, 10, 7])
    assert shape == IntShape(3, 10)
    assert shape.accepts(3) and not shape.accepts(11) and not shape.accepts(True)


def test_text_alphabet_is_the_seed_alphabet_unless_the_seeds_are_rich() -> None:
    narrow = infer_shape(["0101", "1"])
    assert isinstance(narrow, TextShape) and set(narrow.alphabet) == {"0", "1"}
    rich = infer_shape(["hello world", "quick"])
    assert isinstance(rich, TextShape) and set("abcdefghijklmnopqrstuvwxyz ") <= set(rich.alphabet)


def test_list_domain_remembers_order_and_distinctness() -> None:
    shape = infer_shape([[1, 2, 3, 9], [0, 4, 5, 6]])
    assert isinstance(shape, ListShape) and shape.ordered and shape.distinct
    assert shape.accepts([1, 2]) and not shape.accepts([2, 1]) and not shape.accepts([1, 1])
    unordered = infer_shape([[3, 1, 2], [1, 1, 1, 1]])
    assert isinstance(unordered, ListShape) and not unordered.ordered and not unordered.distinct


def test_float_domain_generates_exact_quarters() -> None:
    shape = infer_shape([0.5, 2.25])
    assert isinstance(shape, FloatShape) and not shape.integral
    assert shape.accepts(1.75) and not shape.accepts(3.0)


def test_relations_between_arguments_are_inferred() -> None:
    seeds = [("abc", "xyz", 1), ("a", "b", 0), ("hello", "world", 5)]
    relations = inferred_relations(seeds)
    assert all(r(("ab", "cd", 2)) for r in relations)
    assert not all(r(("ab", "cde", 1)) for r in relations)  # lengths differ
    assert not all(r(("ab", "cd", 3)) for r in relations)  # index beyond the length


@settings(max_examples=40, deadline=None)
@given(
    seeds=st.lists(
        st.tuples(st.lists(st.integers(-5, 5), min_size=1, max_size=6), st.integers(0, 9)),
        min_size=1,
        max_size=4,
    )
)
def test_mutants_stay_inside_the_inferred_domains(seeds: list[tuple[list[int], int]]) -> None:
    shapes = argument_shapes(seeds)
    assert shapes is not None
    for args in mutate_inputs(seeds, shapes, random.Random(0), 30):
        assert all(shape.accepts(value) for shape, value in zip(shapes, args, strict=True))


def test_docstring_examples_are_seeds() -> None:
    prompt = 'def f(a, b):\n    """\n    >>> f([1, 2], "x")\n    3\n    >>> g(1)\n    >>> f(x)\n    """\n'
    assert docstring_examples(prompt, "f") == [([1, 2], "x")]


def test_reference_budget_is_counted_not_timed() -> None:
    def slow(n: int) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    assert run_reference(slow, (10,), 1000).ok
    over = run_reference(slow, (10**6,), 1000)
    assert not over.ok and over.why == "over budget"
    assert not run_reference(lambda: 1 / 0, (), 100).ok


# ------------------------------------------------------------------------------ generation
REFERENCE = """
def scaled_sum(values: list[int], factor: int) -> int:
    if factor < 0:
        raise ValueError("factor must be non-negative")
    return sum(v * factor for v in values)
"""


def scaled_sum_task(**hidden: object) -> Task:
    return code_task(REFERENCE, "scaled_sum", [([1, 2, 3], 2), ([], 0), ([-4, 5], -1), ([7], 9)], **hidden)


def test_generated_inputs_skip_where_the_reference_raises_and_respect_preconditions() -> None:
    precondition = "def precondition(values, factor):\n    return len(values) <= 3\n"
    task = scaled_sum_task(preconditions=precondition)
    oracle = CodeOracle(task)
    generated = generate_tests(task, oracle)
    assert generated is not None and len(generated.calls) >= 20
    for values, factor in generated.calls:
        assert factor >= 0 and len(values) <= 3


def test_generation_is_deterministic() -> None:
    task = scaled_sum_task()
    first = generate_tests(task, CodeOracle(task))
    second = generate_tests(task, CodeOracle(task))
    assert first is not None and second is not None
    assert first.calls == second.calls and first.perf_calls == second.perf_calls


def test_counterexamples_are_replayed_first(tmp_path: Path) -> None:
    task = scaled_sum_task()
    assert record_counterexample(tmp_path, task.id, ([9, 9, 9, 9], 3))
    assert not record_counterexample(tmp_path, task.id, ([9, 9, 9, 9], 3))  # stored once
    assert load_counterexamples(tmp_path, task.id) == [([9, 9, 9, 9], 3)]
    generated = generate_tests(task, CodeOracle(task), PropertyConfig(counterexample_db=tmp_path))
    assert generated is not None and generated.calls[0] == ([9, 9, 9, 9], 3)


def test_polynomial_root_relation() -> None:
    assert polynomial_root(([-6, 11, -6, 1],), 1.0, 2.0)
    assert not polynomial_root(([-6, 11, -6, 1],), 1.0, 2.5)
    assert not polynomial_root(([1, 2],), -0.5, "x")


# ------------------------------------------------------------------------------ through the grader
BUGGY_ONLY_ON_LONG_LISTS = """
def scaled_sum(values, factor):
    if factor < 0:
        raise ValueError("negative")
    return sum(v * factor for v in values[:3])
"""


@pytest.mark.parametrize("mode", ["hidden", "visible"])
def test_generated_tests_catch_what_the_listed_calls_miss(mode: str) -> None:
    # a train-split task: the first failing input is never shown for a held-out (test) split
    task = dataclasses.replace(scaled_sum_task(), split="train")
    pack = StaticPack("props", [task], options={"feedback": mode})
    with make_grader(pack, types=False, jobs=1) as grader:
        verdict = grader.grade(task.id, BUGGY_ONLY_ON_LONG_LISTS)
        correct = grader.grade(task.id, REFERENCE)
    assert correct.passed
    assert not verdict.passed and "tests" in verdict.gates
    if mode == "visible":
        assert "counterexample" in verdict.feedback
        assert "'input'" in verdict.feedback and "'expected'" in verdict.feedback
    else:
        assert "counterexample" not in verdict.feedback and "[" not in verdict.feedback


def test_properties_can_be_disabled() -> None:
    task = scaled_sum_task()
    pack = StaticPack("props", [task])
    with make_grader(pack, types=False, jobs=1, properties=False) as grader:
        assert grader.grade(task.id, BUGGY_ONLY_ON_LONG_LISTS).passed


def test_grader_records_counterexamples_for_later_graders(tmp_path: Path) -> None:
    task = scaled_sum_task()
    pack = StaticPack("props-db", [task])
    with make_grader(pack, types=False, jobs=1, counterexample_db=str(tmp_path)) as grader:
        assert not grader.grade(task.id, BUGGY_ONLY_ON_LONG_LISTS).passed
    recorded = load_counterexamples(tmp_path, task.id)
    assert len(recorded) == 1 and len(recorded[0][0]) > 3  # the simplest input the bug shows on
    generated = generate_tests(task, CodeOracle(task), PropertyConfig(counterexample_db=tmp_path))
    assert generated is not None and generated.calls[0] == recorded[0]
