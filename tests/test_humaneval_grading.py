"""Issue 2's done-when, on the real pack, the real sandbox and the real type checker."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def canonical_and_broken(humaneval_grader, humaneval_problems):
    ids = list(humaneval_problems)
    from rlvr.task_packs.humaneval import FIXED_REFERENCES

    canonical = [
        humaneval_problems[t]["prompt"] + FIXED_REFERENCES.get(t, humaneval_problems[t]["canonical_solution"])
        for t in ids
    ]
    broken = [humaneval_problems[t]["prompt"] + "    return None\n" for t in ids]
    verdicts = humaneval_grader.grade_many(ids + ids, canonical + broken)
    return verdicts[: len(ids)], verdicts[len(ids) :]


def test_all_164_canonical_solutions_pass_without_error(canonical_and_broken):
    good, _ = canonical_and_broken
    assert len(good) == 164
    failures = [(v.task_id, v.gates, v.feedback, v.error) for v in good if not v.passed or v.error]
    assert failures == []
    assert all(v.components["tests"].score == 1.0 and v.components["syntax"].score == 1.0 for v in good)


def test_all_164_broken_solutions_fail(canonical_and_broken):
    _, bad = canonical_and_broken
    assert [v.task_id for v in bad if v.passed] == []
    assert all("tests" in v.gates for v in bad)


def test_every_passing_reward_is_above_every_failing_reward(canonical_and_broken):
    good, bad = canonical_and_broken
    assert min(v.reward for v in good) > max(v.reward for v in bad)


def test_canonical_perf_is_full_marks_against_itself(
    canonical_and_broken, humaneval_pack, humaneval_problems
):
    """The graded programs are the pack's own references (HumanEval's canonical solutions, fixed where
    they contradict their docstring), and they earn full perf credit against themselves."""
    from rlvr.task_packs.humaneval import FIXED_REFERENCES

    for task_id, problem in humaneval_problems.items():
        fixed = FIXED_REFERENCES.get(task_id, problem["canonical_solution"])
        assert humaneval_pack.get(task_id).hidden["reference"] == problem["prompt"] + fixed
    good, _ = canonical_and_broken
    assert all(v.components["perf"].score == pytest.approx(1.0) for v in good)


def test_grading_is_deterministic(humaneval_grader, humaneval_problems):
    ids = ["HumanEval/0", "HumanEval/12", "HumanEval/53"]
    slow = humaneval_problems["HumanEval/0"]["prompt"] + (
        "    for i in range(len(numbers)):\n"
        "        for j in range(len(numbers)):\n"
        "            if i != j and abs(numbers[i] - numbers[j]) < threshold:\n"
        "                return True\n"
        "    return False\n"
    )
    completions = [slow] + [
        humaneval_problems[t]["prompt"] + humaneval_problems[t]["canonical_solution"] for t in ids[1:]
    ]
    first = [v.to_json() for v in humaneval_grader.grade_many(ids, completions)]
    second = [v.to_json() for v in humaneval_grader.grade_many(ids, completions)]
    strip = lambda rows: [{k: v for k, v in r.items() if k != "timings"} for r in rows]  # noqa: E731
    assert strip(first) == strip(second)
    assert first[0]["passed"]


def test_slower_correct_solution_gets_less_perf_credit(humaneval_grader, humaneval_problems):
    prompt = humaneval_problems["HumanEval/0"]["prompt"]
    quadratic = prompt + (
        "    for i in range(len(numbers)):\n"
        "        for j in range(len(numbers)):\n"
        "            for _ in range(20):\n"
        "                pass\n"
        "            if i != j and abs(numbers[i] - numbers[j]) < threshold:\n"
        "                return True\n"
        "    return False\n"
    )
    canonical = prompt + humaneval_problems["HumanEval/0"]["canonical_solution"]
    slow, fast = humaneval_grader.grade_many(["HumanEval/0"] * 2, [quadratic, canonical])
    assert slow.passed and fast.passed
    assert slow.components["perf"].score < fast.components["perf"].score
    assert slow.reward < fast.reward


@pytest.mark.parametrize(
    "completion, gate",
    [
        ("def has_close_elements(:\n", "syntax"),
        ("    return True\n", "tests"),
        ("    import os\n    os._exit(0)\n", "tests"),
        ("    raise SystemExit(0)\n", "tests"),
        (
            "    class Yes(int):\n        def __eq__(self, o):\n            return True\n    return Yes(1)\n",
            "tests",
        ),
    ],
)
def test_hostile_or_wrong_candidates_fail_their_gate(humaneval_grader, humaneval_problems, completion, gate):
    prompt = humaneval_problems["HumanEval/0"]["prompt"]
    verdict = humaneval_grader.grade("HumanEval/0", completion if gate == "syntax" else prompt + completion)
    assert not verdict.passed and gate in verdict.gates and verdict.error is None


def test_type_errors_cost_type_credit_but_not_tests(humaneval_grader, humaneval_problems):
    prompt = humaneval_problems["HumanEval/53"]["prompt"]
    typed_badly = prompt + "    z: str = x + y  # type: ignore\n    return z  # pyright: ignore\n"
    clean = prompt + "    return x + y\n"
    bad, good = humaneval_grader.grade_many(["HumanEval/53"] * 2, [typed_badly, clean])
    assert bad.passed and good.passed
    assert bad.components["types"].score < good.components["types"].score == 1.0
    assert bad.reward < good.reward


def test_bad_input_gets_flagged_verdicts_in_order(humaneval_grader):
    verdicts = humaneval_grader.grade_many(["HumanEval/0", "NoSuch/1", "HumanEval/1"], ["", "x", "   "])
    assert [v.task_id for v in verdicts] == ["HumanEval/0", "NoSuch/1", "HumanEval/1"]
    assert all(v.error and not v.passed and v.reward == 0.0 for v in verdicts)
    assert "unknown task" in verdicts[1].error


@pytest.mark.slow
def test_independent_correct_solutions_never_fail_the_tests_gate(humaneval_problems):
    """benchmarks/independent_solutions: two solutions per task written from the docstring only,
    each passing HumanEval's own check; none may fail rlvr's hidden tests (issue 13's false
    failures), and at least 90 % keep perf >= 0.9."""
    import re
    from pathlib import Path

    from rlvr.graders.base import make_grader
    from rlvr.task_packs.registry import load_pack

    data = Path(__file__).parent.parent / "benchmarks" / "independent_solutions"
    marker = re.compile(r"^# ==== (\S+) :: (\S+)\s*$", re.MULTILINE)
    ids, sources = [], []
    for path in sorted(data.glob("humaneval_*.py.txt")):
        text = path.read_text(encoding="utf-8")
        marks = list(marker.finditer(text))
        for index, mark in enumerate(marks):
            end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
            ids.append(mark.group(1))
            sources.append(text[mark.end() : end].strip() + "\n")
    assert len(set(ids)) == 164 and len(ids) >= 328
    with make_grader(load_pack("humaneval"), types=False, jobs=2) as grader:
        verdicts = grader.grade_many(ids, sources)
    failures = [(v.task_id, v.feedback) for v in verdicts if v.components["tests"].fraction < 1.0]
    assert failures == []
    full = sum(v.components["perf"].fraction >= 0.9 for v in verdicts)
    assert full >= 0.9 * len(verdicts)
