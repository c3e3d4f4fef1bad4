"""The tiny-functions pack: every reference passes its own grader, held-out templates never occur
in training, and the warm-start teacher only writes training templates."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.graders.base import make_grader
from rlvr.task_packs.registry import load_pack
from rlvr.task_packs.tiny_functions import BUGS, TinyFunctionsPack, buggy_answer, instances, sft_examples


def test_splits_share_no_template() -> None:
    pack = load_pack("tiny-functions")
    assert isinstance(pack, TinyFunctionsPack)
    train = {(t.meta["template"], t.meta["word"]) for t in pack.tasks("train")}
    test = {(t.meta["template"], t.meta["word"]) for t in pack.tasks("test")}
    assert train and test and not train & test
    train_words = {word for _, word in train}
    assert {word for _, word in test} <= train_words  # held-out = new combinations of known parts
    assert all(t.id == pack.get(t.id).id for t in pack.tasks())


def test_teacher_writes_training_templates_only() -> None:
    test_prompts = {i.prompt() for i in instances("test")}
    docstrings = {p.split('"""')[1] for p in test_prompts}
    for prompt, _ in sft_examples(400, seed=3):
        assert prompt.split('"""')[1] not in docstrings


def test_teacher_is_noisy_with_a_misconception() -> None:
    pairs = sft_examples(2000, seed=1, bug_rate=0.3)
    inclusive = [body for prompt, body in pairs if "at least" in prompt]
    strict = sum(" > " in body for body in inclusive)
    # the misconception: "at least" written as ">", more often than not
    assert 0.5 < strict / len(inclusive) < 0.7
    assert 0 < sum("return" not in body for _, body in pairs) < len(pairs) * 0.2


@pytest.fixture(scope="module")
def grader():  # type: ignore[no-untyped-def]
    pack = load_pack("tiny-functions")
    with make_grader(pack, types=False) as g:
        yield g


@pytest.mark.slow  # grades every trainer-pack reference and bug
def test_references_pass_and_bugs_fail(grader) -> None:  # type: ignore[no-untyped-def]
    pack = grader.pack
    tasks = pack.tasks()
    verdicts = grader.grade_many(
        [t.id for t in tasks], [t.hidden["reference"][len(t.prompt) :] for t in tasks]
    )
    assert all(v.passed and v.error is None for v in verdicts), [
        v.to_json() for v in verdicts if not v.passed
    ][:3]
    sample = instances("train")[::40]
    ids, bodies = [], []
    for instance in sample:
        task = next(t for t in tasks if t.prompt == instance.prompt())
        for bug in BUGS:
            ids.append(task.id)
            bodies.append(buggy_answer(instance, bug))
    assert not any(v.passed for v in grader.grade_many(ids, bodies))


def test_teacher_can_vary_the_surface_and_keeps_the_meaning() -> None:
    """Asked to, the teacher writes a comprehension's loop variable as `v` or as a scalar argument's
    name, and a scalar body bare or in parentheses (so an operator follows the same tokens in a
    comprehension as in a scalar body: `any(n == 0 ...` and `(n == 0)`); every such body computes what
    the reference computes, and by default the surface is the reference's (the pack's teacher varies it)."""
    from dataclasses import replace

    from rlvr.task_packs.tiny_functions import LOOP_VARIABLES

    varied = sft_examples(600, seed=2, bug_rate=0.0, loop_variables=LOOP_VARIABLES, bracket_rate=0.5)
    bodies = [body for _, body in varied]
    for variable in LOOP_VARIABLES:
        assert any(f" for {variable} in " in body for body in bodies), variable
    assert any(body.startswith("    return (") and "for" not in body for body in bodies)
    plain = [body for _, body in sft_examples(300, seed=2) if " for " in body]
    assert plain and all(" for v in " in body for body in plain)  # the function's default: always `v`
    assert not any(body.startswith("    return (") for _, body in sft_examples(300, seed=2, bug_rate=0.0))
    assert TinyFunctionsPack().sft_examples(300, seed=2) != sft_examples(300, seed=2)  # the pack's varies
    variants = [{"variable": variable} for variable in LOOP_VARIABLES] + [{"bracketed": True}]
    for base in (instances("train") + instances("test"))[::5]:
        for variant in variants:
            instance = replace(base, **variant)
            results = []
            for body in (base.answer(), instance.answer()):
                scope: dict[str, Any] = {}
                exec(base.prompt() + body, scope)  # the teacher's own (trusted) code
                results.append([scope[base.function](*args) for args in base.calls()])
            assert results[0] == results[1], (base.answer(), instance.answer())


def _docstring(prompt: str) -> str:
    return prompt.split('"""')[1]


def test_teacher_can_vary_the_phrasing_and_every_example_computes_the_reference() -> None:
    """Asked to, the teacher phrases a training instruction another way (the relation word before or
    after the collection, "Given {a}, ..." for scalar and list shapes alike). Every docstring it writes
    names exactly one training task (template, word, constant) with the prompt's argument, none is a
    held-out prompt, and the body written for it computes what that task's reference computes."""
    from dataclasses import replace

    from rlvr.task_packs.tiny_functions import (
        ARGUMENT_NAMES,
        LOOP_VARIABLES,
        PHRASINGS,
        TEACHER_SURFACE,
        Instance,
        Surface,
    )

    canonical: dict[str, list[Instance]] = {}  # each docstring the teacher may write -> what it names
    phrased: dict[str, list[Instance]] = {}
    for base in instances("train"):
        for argument in ARGUMENT_NAMES[base.template.kind]:
            instance = replace(base, argument=argument)
            canonical.setdefault(_docstring(instance.prompt()), []).append(instance)
            for doc in PHRASINGS[base.template.family]:
                variables = LOOP_VARIABLES if "{v}" in doc else ("v",)
                for text in {_docstring(replace(instance, doc=doc, variable=v).prompt()) for v in variables}:
                    phrased.setdefault(text, []).append(instance)
    meaning = canonical | phrased
    assert not canonical.keys() & phrased.keys()
    assert all(len(named) == 1 for named in meaning.values())  # no docstring is ambiguous
    assert not {_docstring(i.prompt()) for i in instances("test")} & meaning.keys()  # none held out

    pairs = sft_examples(
        1500,
        seed=4,
        bug_rate=0.0,
        misconception_rate=0.0,
        loop_variables=LOOP_VARIABLES,
        bracket_rate=0.5,
        phrasing_rate=0.5,
    )
    written = [_docstring(prompt) for prompt, _ in pairs]
    assert 0.4 < sum(doc in phrased for doc in written) / len(pairs) < 0.6
    for family, docs in PHRASINGS.items():  # every phrasing of every template is written
        for doc in docs:
            texts = {
                _docstring(replace(i, doc=doc, argument=argument, variable=variable).prompt())
                for i in instances("train")
                if i.template.family == family
                for argument in ARGUMENT_NAMES[i.template.kind]
                for variable in LOOP_VARIABLES
            }
            assert texts & set(written), doc
    for prompt, body in pairs:
        (task,) = meaning[_docstring(prompt)]
        assert prompt.startswith("def ") and f"({task.argument}: " in prompt
        function = prompt.removeprefix("def ").split("(")[0]
        results = []
        for source, name in ((task.prompt() + task.answer(), task.function), (prompt + body, function)):
            scope: dict[str, Any] = {}
            exec(source, scope)  # the teacher's own (trusted) code
            results.append([scope[name](*args) for args in task.calls()])
        assert results[0] == results[1], (prompt, body)
    assert not any(_docstring(p) in phrased for p, _ in sft_examples(300, seed=4))  # off by default
    surface = TEACHER_SURFACE  # the pack's teacher: the same examples as the measured variation
    assert TinyFunctionsPack().sft_examples(300, seed=4) == sft_examples(
        300,
        seed=4,
        loop_variables=surface.loop_variables,
        bracket_rate=surface.bracket_rate,
        phrasing_rate=surface.phrasing_rate,
    )
    assert surface == Surface(LOOP_VARIABLES, bracket_rate=0.5, phrasing_rate=0.5)
