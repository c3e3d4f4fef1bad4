"""Proof family: step checks (equalities, inequalities under assumptions), chain composition, the gated
outcome with its process component, the proof-identities pack, directory proof packs, rlvr/Proof-v0."""

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
from rlvr.graders.proof.check import check_proof, compose, implies
from rlvr.graders.proof.grader import ProofGrader
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack

EXAMPLE = Path(__file__).parents[1] / "examples" / "packs" / "proof-basics"


def test_equality_chain() -> None:
    report = check_proof(
        "(a+b)^2 - (a-b)^2 = 4ab", "(a+b)^2 - (a-b)^2\n= a^2 + 2ab + b^2 - (a^2 - 2ab + b^2)\n= 4ab"
    )
    assert report["proved"] and all(step["valid"] for step in report["steps"])


def test_inequality_needs_the_assumption() -> None:
    derivation = "x + 1/x\n= (x - 1)^2/x + 2\n>= 2"
    assert check_proof("x + 1/x >= 2", derivation, {"x": "positive"})["proved"]
    assert not check_proof("x + 1/x >= 2", derivation)["proved"]  # false for negative x


def test_a_false_step_breaks_the_proof_and_is_located() -> None:
    report = check_proof("a^2 + b^2 >= 2ab", "a^2 + b^2\n= (a+b)^2\n>= 2ab")
    assert not report["proved"]
    assert [step["valid"] for step in report["steps"]] == [True, False, True]  # (a+b)^2 >= 2ab does hold


@pytest.mark.parametrize(
    ("goal", "derivation", "problem"),
    [
        ("x^2 + 1 > 0", "x^2 + 1\n>= 1", "the chain does not end"),
        ("x^2 + 2x + 2 > 0", "x^2 + 2x + 2\n= x^2 + 2x + 1 + 1\n= (x+1)^2 + 1\n>= 1\n> 0", ""),
        ("x^2 + 1 > 0", "x^2 + 1\n>= 0", "the goal needs >"),
        ("x = x", "y\n= x", "some steps"),
        (
            "x^2 >= 0",
            "x^2\n<= x^2 + 1\n>= 0",
            "mixed directions",
        ),  # each step holds, the chain proves nothing
    ],
)
def test_endpoints_and_relations(goal: str, derivation: str, problem: str) -> None:
    report = check_proof(goal, derivation)
    assert report["proved"] is (problem == "")
    assert problem in report["problem"]


def test_composition_rules() -> None:
    assert compose(["=", "="]) == "=" and compose(["=", "<="]) == "<=" and compose(["<=", "<"]) == "<"
    assert compose(["<=", ">="]) is None
    assert implies("<", "<=") and implies("=", ">=") and not implies("<=", "<") and not implies(">=", "=")


@pytest.fixture(scope="module")
def grader() -> Iterator[ProofGrader]:
    tasks = [Task("sq", "p", "proof", hidden={"goal": "a^2 + b^2 >= 2ab"})]
    pack = StaticPack("t", tasks, family="proof", weights={"outcome": 0.8, "process": 0.2})
    with ProofGrader(pack, timeout=10) as proof_grader:
        yield proof_grader


def test_gated_outcome_with_process_beside_it(grader: ProofGrader) -> None:
    proved = grader.grade(
        "sq", "```\na^2 + b^2\n= a^2 - 2ab + b^2 + 2ab\n= (a-b)^2 + 2ab  # square\n>= 2ab\n```"
    )
    half = grader.grade("sq", "a^2 + b^2\n= (a+b)^2\n>= 2ab")
    assert proved.passed and proved.reward == pytest.approx(1.0) and proved.components["process"].score == 1.0
    assert (
        not half.passed
        and half.gates == ["outcome"]
        and half.components["process"].score == pytest.approx(1 / 3)
    )
    assert half.reward == pytest.approx(0.2 * 1 / 3) and "line: 2" in half.feedback  # line 3 holds, not small


def test_garbage_and_odd_characters_get_verdicts(grader: ProofGrader) -> None:
    for text in ["", "\x00\ud800", "🦜 = 🦜", "a^2+b^2\n= 9^(9^(9^9))", "((((" * 200]:
        verdict = grader.grade("sq", text)
        assert not verdict.passed and 0.0 <= verdict.reward < 1.0


def test_outcome_weight_must_be_positive() -> None:
    pack = StaticPack("t", [], family="proof", weights={"outcome": 0.0, "process": 1.0})
    with pytest.raises(ValueError):
        ProofGrader(pack)


def test_pack_references_are_proved() -> None:
    pack = load_pack("proof-identities")
    tasks = [t for t in pack.tasks() if not t.meta.get("procedural")]  # the original 24; procedural: below
    assert len(tasks) == 24 and {t.split for t in tasks} == {"train", "test"}
    with ProofGrader(pack) as proof_grader:
        verdicts = proof_grader.grade_many([t.id for t in tasks], [t.hidden["reference"] for t in tasks])
    assert all(v.passed for v in verdicts), [v.feedback for v in verdicts if not v.passed]


def test_directory_pack_validates_and_errors_are_explained(tmp_path: Path) -> None:
    assert validate_directory(EXAMPLE) == []
    (tmp_path / "pack.toml").write_text('name = "bad"\nfamily = "proof"\n')
    lines = [
        {"id": "1", "prompt": "p", "goal": "x + 1"},
        {"id": "2", "prompt": "p", "goal": "x = x", "assumptions": {"x": "odd"}},
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    problems = [str(p) for p in validate_directory(tmp_path)]
    assert any(":1: goal: must be" in p for p in problems) and any(":2: assumptions:" in p for p in problems)


def test_proof_env_step() -> None:
    env = gym.make("rlvr/Proof-v0")
    observation, _ = env.reset(options={"task_id": "proof/two_squares/0"})
    assert observation.startswith("Prove:")
    _, reward, terminated, _, info = env.step(env.unwrapped.task.hidden["reference"])
    assert terminated and reward == 1.0 and info["verdict"]["components"]["process"] == 1.0
    env.close()


@settings(max_examples=50, deadline=None)
@given(
    outcome=st.floats(0.01, 5.0),
    process=st.floats(0.0, 5.0),
    valid=st.integers(0, 5),
    total=st.integers(1, 5),
)
def test_gating_invariant_over_weights(outcome: float, process: float, valid: int, total: int) -> None:
    pack = StaticPack("w", [], family="proof", weights={"outcome": outcome, "process": process})
    weighted = ProofGrader(pack)
    steps = [{"line": i + 1, "valid": i < min(valid, total), "why": ""} for i in range(total)]
    failing = weighted._verdict("t", {"steps": steps, "proved": False}, "not proved", 0.0)
    passing = weighted._verdict("t", {"steps": [dict(s, valid=True) for s in steps], "proved": True}, "", 0.0)
    assert passing.passed and not failing.passed and passing.reward > failing.reward


# ---------------------------------------------------------------- step size: restating the goal is not a proof


def restatements(goal: str) -> list[str]:
    """Ways to 'prove' a goal without a derivation: the goal as one step (with or without a justification),
    after a padding step, or starting from the right-hand side."""
    import re

    left, relation, right = (part.strip() for part in re.split(r"(<=|>=|=|<|>)", goal, maxsplit=1))
    return [
        f"{left}\n{relation} {right}",
        f"{left}\n{relation} {right}  # by the goal",
        f"{left}\n= {left} + 0\n{relation} {right}",
        f"{left}\n= 1*({left})\n{relation} {right}",
        f"{left}\n= {left} + x - x\n{relation} {right}",
        f"{right}\n{relation} {right}",
    ]


def test_restating_the_goal_fails_on_every_built_in_task_and_references_pass() -> None:
    pack = load_pack("proof-identities")
    tasks = [t for t in pack.tasks() if t.id.endswith("/0")]
    with ProofGrader(pack) as proof_grader:
        for t in tasks:
            assert proof_grader.grade(t.id, t.hidden["reference"]).passed, t.id
            for attempt in restatements(t.hidden["goal"]):
                verdict = proof_grader.grade(t.id, attempt)
                assert not verdict.passed and verdict.reward == 0.0 and verdict.error is None, (t.id, attempt)


def test_step_rules() -> None:
    from rlvr.graders.proof.check import check_proof

    def rules(goal: str, text: str, assumptions: dict[str, str] | None = None) -> list[object]:
        return [step.get("rule") for step in check_proof(goal, text, assumptions)["steps"][1:]]

    assert rules("(x+1)(x-1) = x^2 - 1", "(x+1)(x-1)\n= x^2 - x + x - 1\n= x^2 - 1") == [
        "expand",
        "arithmetic",
    ]
    assert rules("x^2 - 1 = (x+1)(x-1)", "x^2 - 1\n= x^2 - x + x - 1\n= (x+1)(x-1)") == [
        "arithmetic",
        "factor",
    ]
    assert rules("1/x - 1/(x+1) = 1/(x(x+1))", "1/x - 1/(x+1)\n= ((x+1) - x)/(x(x+1))\n= 1/(x(x+1))") == [
        "fractions",
        "arithmetic",
    ]
    big = check_proof("(x+1)^2 - (x-1)^2 = 4x", "(x+1)^2 - (x-1)^2\n= 2x + 2x\n= 4x")
    assert big["proved"] and not big["small_steps"] and big["steps"][1]["small"] is False
    tasks = [Task("big", "p", "proof", hidden={"goal": "(x+1)^2 - (x-1)^2 = 4x"})]
    with ProofGrader(StaticPack("b", tasks, family="proof")) as proof_grader:
        verdict = proof_grader.grade("big", "(x+1)^2 - (x-1)^2\n= 2x + 2x\n= 4x")
    assert not verdict.passed and verdict.gates == ["process"] and verdict.error is None
    assert "answer_without_derivation:step_too_large" in verdict.flags
    bound = check_proof("a^2 + b^2 >= 2ab", "a^2 + b^2\n= a^2 - 2ab + b^2 + 2ab\n>= 2ab")
    assert bound["proved"] and not bound["steps"][2]["small"]  # a^2 - 2ab + b^2 >= 0 is not evident


def test_a_step_that_runs_the_checker_past_its_timeout_is_a_scored_failure() -> None:
    tasks = [Task("sq", "p", "proof", hidden={"goal": "a^2 + b^2 >= 2ab"})]
    heavy = "a^2 + b^2\n= (a^9+b^9+1)^12/(a^3+b^3+7)^11\n>= 2ab"
    with ProofGrader(StaticPack("t", tasks, family="proof")) as proof_grader:
        proof_grader.grade("sq", "a^2 + b^2\n>= 2ab")  # start the worker with the default time limit
        proof_grader.timeout = 2.0
        verdict = proof_grader.grade("sq", heavy)
    assert verdict.error is None and not verdict.passed and verdict.reward == 0.0
    assert "timeout:proof" in verdict.flags


# ---------------------------------------------------------------- the procedural generator


def test_procedural_proof_pack_has_enough_distinct_tasks_and_held_out_templates() -> None:
    from rlvr.task_packs import proof_templates

    tasks = [t for t in load_pack("proof-identities").tasks() if t.meta.get("procedural")]
    train = [t for t in tasks if t.split == "train"]
    test = [t for t in tasks if t.split == "test"]
    assert len({t.hidden["goal"] for t in train}) >= 1000
    assert {t.meta["template"] for t in test} == set(proof_templates.HELD_OUT_TEMPLATES)
    assert not {t.meta["template"] for t in train} & set(proof_templates.HELD_OUT_TEMPLATES)
    assert {t.difficulty for t in tasks} == {1, 2, 3, 4}
    assert all(t.hidden["reference"] not in t.prompt for t in tasks)


def test_procedural_references_pass_and_goals_need_real_steps() -> None:
    """One task per template: the reference passes with small steps, the goal is not provable by arithmetic
    alone (so padding a restatement with arithmetic steps cannot work), and a restatement fails."""
    from rlvr.graders.proof.check import Line

    pack = load_pack("proof-identities")
    first: dict[str, Task] = {}
    for t in pack.tasks():
        if t.meta.get("procedural"):
            first.setdefault(t.meta["template"], t)
    with ProofGrader(pack) as proof_grader:
        for t in first.values():
            assert proof_grader.grade(t.id, t.hidden["reference"]).passed, t.id
            left, right = t.hidden["goal"].replace(">=", "=").replace(">", "=").split("=")
            assert Line(left, {}).value != Line(right, {}).value, t.id
            assert not proof_grader.grade(t.id, restatements(t.hidden["goal"])[2]).passed, t.id


@pytest.mark.slow
def test_procedural_references_pass_on_a_wide_sample() -> None:
    pack = load_pack("proof-identities")
    tasks = [t for t in pack.tasks() if t.meta.get("procedural")][::10]
    with ProofGrader(pack) as proof_grader:
        verdicts = proof_grader.grade_many([t.id for t in tasks], [t.hidden["reference"] for t in tasks])
    assert [t.id for t, v in zip(tasks, verdicts, strict=True) if not v.passed] == []
