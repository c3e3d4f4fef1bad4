"""MathGrader (format and answer gates, hostile input, caching), the math-procedural pack, directory math
packs, and rlvr/Math-v0."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rlvr  # noqa: F401
from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.graders.math.grader import MathGrader
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack

EXAMPLE = Path(__file__).parents[1] / "examples" / "packs" / "math-basics"


@pytest.fixture(scope="module")
def grader() -> Iterator[MathGrader]:
    pack = StaticPack(
        "t",
        [
            Task("half", "p", "math", hidden={"answer": "\\frac{1}{2}"}),
            Task("three", "p", "math", hidden={"answer": "3"}),
            Task("approx", "p", "math", hidden={"answer": "1.414", "tolerance": {"abs": 0.001}}),
        ],
        family="math",
    )
    math_grader = MathGrader(pack, timeout=3)
    yield math_grader
    math_grader.close()


def test_correct_wrong_and_missing_answers(grader: MathGrader) -> None:
    right, wrong, missing = grader.grade_many(
        ["half"] * 3, ["so \\boxed{0.5}", "\\boxed{0.25}", "I am not sure."]
    )
    assert right.passed and right.reward == pytest.approx(1.0) and not right.gates
    assert not wrong.passed and wrong.gates == ["answer"] and wrong.reward == pytest.approx(0.1)
    assert not missing.passed and missing.gates == ["format"] and missing.reward == 0.0
    assert missing.error is None and "boxed" in missing.feedback
    assert "1/2" not in wrong.feedback and "frac" not in wrong.feedback  # never leak the answer


def test_tolerance_only_where_the_task_says(grader: MathGrader) -> None:
    assert grader.grade("approx", "\\boxed{\\sqrt{2}}").passed
    assert not grader.grade("approx", "\\boxed{1.5}").passed
    assert not grader.grade("half", "\\boxed{0.5001}").passed


def test_hostile_answers_get_verdicts_not_hangs(grader: MathGrader) -> None:
    for completion in [
        "\\boxed{9^{9^{9^{9}}}}",
        "\\boxed{" + "(" * 3000 + "}",
        "Answer: \x00\ud800",
        "\\boxed{100000!}",
    ]:
        verdict = grader.grade("three", completion)
        assert not verdict.passed and 0.0 <= verdict.reward < 1.0
    assert grader.grade("three", "\\boxed{3}").passed  # the worker still answers afterwards


def test_worker_timeout_is_a_scored_failure_not_an_error() -> None:
    """A timeout is the answer's doing: passed False, the format credit, a flag naming the limit, and no
    `error` (an error would let the trainer drop the episode, escaping the penalty)."""
    pack = StaticPack("t", [Task("t", "p", "math", hidden={"answer": "x"})], family="math")
    with MathGrader(pack, timeout=0.001) as impatient:
        verdict = impatient.grade("t", "\\boxed{\\sin^2 x + \\cos^2 x}")
    assert not verdict.passed and verdict.error is None and verdict.fault is None
    assert verdict.flags == ["timeout:answer"] and verdict.reward == pytest.approx(0.1)
    assert verdict.gates == ["answer"] and "timed out" in verdict.feedback


def test_unknown_task_and_non_text_completion(grader: MathGrader) -> None:
    unknown, odd = grader.grade_many(["nope", "half"], ["\\boxed{1}", 12])  # type: ignore[list-item]
    assert unknown.error and "unknown task" in unknown.error
    assert odd.error and "string" in odd.error


def test_repeated_completions_get_identical_verdicts(grader: MathGrader) -> None:
    first, second = grader.grade_many(["three", "three"], ["Answer: 3.0", "Answer: 3.0"])
    assert first.to_json() == second.to_json()


def test_procedural_pack_shape_and_references() -> None:
    pack = load_pack("math-procedural")
    tasks = pack.tasks()
    assert len(tasks) == 240 and {t.difficulty for t in tasks} == {1, 2, 3, 4, 5}
    train_templates = {t.meta["template"] for t in pack.tasks("train")}
    test_templates = {t.meta["template"] for t in pack.tasks("test")}
    assert train_templates and test_templates and not train_templates & test_templates  # held-out templates
    assert all(
        "answer" in t.hidden and t.hidden["answer"] not in t.prompt
        for t in tasks
        if len(t.hidden["answer"]) > 3
    )
    with make_grader(pack) as math_grader:
        verdicts = math_grader.grade_many(
            [t.id for t in tasks], [f"\\boxed{{{t.hidden['answer']}}}" for t in tasks]
        )
    assert all(v.passed for v in verdicts)
    assert load_pack("math-procedural").tasks()[7].prompt == tasks[7].prompt  # deterministic


def test_directory_pack_validates_and_grades() -> None:
    assert validate_directory(EXAMPLE) == []
    pack = load_pack(str(EXAMPLE))
    with make_grader(pack) as math_grader:
        verdicts = math_grader.grade_many(
            [t.id for t in pack.tasks()], [f"Answer: {t.hidden['answer']}" for t in pack.tasks()]
        )
    assert all(v.passed for v in verdicts)


def test_directory_pack_errors_are_explained(tmp_path: Path) -> None:
    (tmp_path / "pack.toml").write_text('name = "bad"\nfamily = "math"\n')
    lines = [{"id": "a", "prompt": "p"}, {"id": "b", "prompt": "p", "answer": [1]}, "not json"]
    (tmp_path / "tasks.jsonl").write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines)
    )
    problems = [str(p) for p in validate_directory(tmp_path)]
    assert any(":1: answer: missing" in p for p in problems)
    assert any(":2: answer: must be a string or a number" in p for p in problems)
    assert any(":3:" in p and "not valid JSON" in p for p in problems)


def test_math_env_single_and_multi_turn() -> None:
    env = gym.make("rlvr/Math-v0", max_turns=2)
    observation, info = env.reset(options={"task_id": "math/arithmetic/d1/0"})
    assert "boxed" in observation and "hidden" not in info["task"]
    observation, reward, terminated, truncated, info = env.step("\\boxed{-1}")
    assert not terminated and reward == pytest.approx(0.1) and "did not pass" in observation
    answer = env.unwrapped.task.hidden["answer"]  # pyright: ignore[reportAttributeAccessIssue]
    _, reward, terminated, _, info = env.step(f"\\boxed{{{answer}}}")
    assert terminated and reward == pytest.approx(1.0) and info["verdict"]["passed"]
    env.close()


def test_reasoning_gym_pack_uses_the_generators_own_scorer() -> None:
    pytest.importorskip("reasoning_gym")
    pack = load_pack("reasoning-gym")
    tasks = [t for t in pack.tasks() if t.id.endswith("/0")]
    assert {t.split for t in tasks} == {"train", "test"}
    with make_grader(pack) as math_grader:
        right = math_grader.grade_many(
            [t.id for t in tasks], [f"\\boxed{{{t.hidden['answer']}}}" for t in tasks]
        )
        wrong = math_grader.grade(tasks[0].id, "\\boxed{123456789}")
    assert all(v.passed and "reasoning-gym" in v.components["answer"].detail for v in right)
    assert not wrong.passed and wrong.gates == ["answer"]


@settings(max_examples=25, deadline=None)
@given(format_weight=st.floats(0.0, 5.0), answer_weight=st.floats(0.01, 5.0))
def test_gating_invariant_over_weights(
    grader: MathGrader, format_weight: float, answer_weight: float
) -> None:
    pack = StaticPack(
        "w", grader.pack.tasks(), family="math", weights={"format": format_weight, "answer": answer_weight}
    )
    weighted = MathGrader(pack)
    weighted._worker = grader._worker  # share the warm worker; closing stays with the fixture
    right, wrong, missing = weighted.grade_many(["three"] * 3, ["\\boxed{3}", "\\boxed{4}", "no idea"])
    assert right.passed and not wrong.passed and not missing.passed
    assert right.reward > wrong.reward >= missing.reward


def test_zero_answer_weight_is_rejected() -> None:
    pack = StaticPack("w", [], family="math", weights={"format": 1.0, "answer": 0.0})
    with pytest.raises(ValueError):
        MathGrader(pack)


def test_directory_tolerance_is_validated(tmp_path: Path) -> None:
    (tmp_path / "pack.toml").write_text('name = "tol"\nfamily = "math"\n')
    lines = [
        {"id": "ok", "prompt": "p", "answer": "1.41", "tolerance": {"abs": 0.01}},
        {"id": "bad", "prompt": "p", "answer": "1.41", "tolerance": "loose"},
        {"id": "neg", "prompt": "p", "answer": "1.41", "tolerance": -1},
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    problems = [str(p) for p in validate_directory(tmp_path)]
    assert len(problems) == 2 and all("tolerance: must be" in p for p in problems)
    assert ":2:" in problems[0] and ":3:" in problems[1]
