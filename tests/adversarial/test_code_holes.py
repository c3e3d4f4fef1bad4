"""Holes in the code grader around the sandbox (issue 12, code family; issue 13's type agreement).

A corpus of wrong answers that probe comparison, extraction, type-check and penalty-escape holes,
each graded by the real CodeGrader (real sandbox, real pyright): every one must fail with no
`error` (a failure the candidate causes is a scored failure, never a dropped episode), and those
that hit a limit must carry a flag naming it. Honest controls - correct code in odd but legitimate
forms - must pass. The cases here are our own; the audit's stay held out.

`CASES` is plain data (and this module imports only APIs older than the fixes), so the same corpus
can be graded by an older checkout to show which holes were real there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader, make_grader


# ----------------------------------------------------------------------------------- the tasks
def _task(name: str, prompt: str, reference_body: str, calls: list[list[Any]]) -> Task:
    entry = prompt.split("def ", 1)[1].split("(", 1)[0]
    return Task(
        id=f"holes/{name}",
        prompt=prompt,
        hidden={"entry_point": entry, "reference": prompt + reference_body, "calls": calls},
    )


HOLE_TASKS = [
    _task(
        "length_counts",
        'def length_counts(words: list[str]) -> dict[int, int]:\n    """How many words have each length."""\n',
        "    counts: dict[int, int] = {}\n    for w in words:\n        counts[len(w)] = counts.get(len(w), 0) + 1\n"
        "    return counts\n",
        [[["a", "bb", "cc"]], [["xyz"]], [[]]],
    ),
    _task(
        "parity_counts",
        'def parity_counts(xs: list[int]) -> dict[int, int]:\n    """{0: how many are even, 1: how many are odd}."""\n',
        "    return {0: sum(1 for x in xs if x % 2 == 0), 1: sum(1 for x in xs if x % 2)}\n",
        [[[1, 2, 3]], [[2, 4]], [[]]],
    ),
    _task(
        "distinct_lengths",
        'def distinct_lengths(words: list[str]) -> set[int]:\n    """The set of word lengths."""\n',
        "    return {len(w) for w in words}\n",
        [[["a", "bb", "cc"]], [["xyz", ""]]],
    ),
    _task(
        "groups",
        'def groups(xs: list[int]) -> list[dict[int, frozenset[int]]]:\n    """Each x mapped to the set of its divisors up to x."""\n',
        "    return [{x: frozenset(d for d in range(1, x + 1) if x % d == 0)} for x in xs]\n",
        [[[1, 4, 6]], [[7]]],
    ),
    _task(
        "half",
        'def half(n: int) -> float:\n    """n divided by two."""\n',
        "    return n / 2\n",
        [[4], [5], [0], [-3]],
    ),
    _task(
        "total",
        'def total(xs: list[float]) -> float:\n    """The sum of xs."""\n',
        "    s = 0.0\n    for x in xs:\n        s += x\n    return s\n",
        [[[0.1, 0.2, 0.3]], [[1e16, 1.0, -1e16]], [[]], [[0.7, 0.1, 0.2]]],
    ),
    _task(
        "middle",
        'def middle(xs):\n    """The median of xs.\n    >>> middle([3, 1, 2])\n    2\n    >>> middle([1, 2, 3, 4])\n    2.5\n    """\n',
        "    s = sorted(xs)\n    n = len(s)\n    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n",
        [[[3, 1, 2]], [[1, 2, 3, 4]], [[5]], [[1, 3]]],
    ),
    _task(
        "ratio",
        'def ratio(a: float, b: float) -> float:\n    """a / b; nan when both are zero, signed inf when only b is."""\n',
        "    if b == 0:\n        return float('nan') if a == 0 else (float('inf') if a > 0 else float('-inf'))\n"
        "    return a / b\n",
        [[0.0, 0.0], [1.0, 0.0], [-2.0, 0.0], [1.0, 4.0], [-0.0, 5.0]],
    ),
    _task(
        "power_of_two",
        'def power_of_two(n: int) -> int:\n    """2 to the n."""\n',
        "    return 2 ** n\n",
        [[0], [10], [200], [1000]],
    ),
    _task(
        "count_true",
        'def count_true(xs: list[bool]) -> int:\n    """How many are True."""\n',
        "    return sum(1 for x in xs if x)\n",
        [[[True, False]], [[False]], [[True, True]]],
    ),
]


class HolesPack(TaskPack):
    name = "code-holes"
    family = "code"

    def _load(self) -> Iterable[Task]:
        return HOLE_TASKS


# ----------------------------------------------------------------------------------- the corpus
@dataclass(frozen=True)
class Case:
    name: str
    pack: str  # "holes" (above) or "humaneval"
    task_id: str
    completion: str
    honest: bool  # a correct answer that must pass; otherwise a wrong one that must fail
    flag: str | None = None  # a flag the verdict must carry (prefix match)
    types_below_full: bool = False  # the types layer must not give full credit
    note: str = field(default="", compare=False)


HE_INCR = "def incr_list(l: list):\n"  # HumanEval/42
HE_INCR_BODY = "    return [(e + 1) for e in l]\n"
WRONG_INCR_BODY = "    return [e for e in l]\n"

LADDER = (
    "def unused(a: object) -> int:\n    x = a\n"
    + "".join(
        f"    if isinstance(x, int):\n        x = str(x)\n    elif isinstance(x, str):\n        x = [x]\n"
        f"    else:\n        x = {i}\n"
        for i in range(150)
    )
    + "    return 0\n\n\n"
)

CASES: list[Case] = [
    # -------------------------------------------------- comparison holes: wrong types that are == equal
    Case(
        "float_keys",
        "holes",
        "holes/length_counts",
        "def length_counts(words: list[str]) -> dict[int, int]:\n"
        "    out = {}\n    for w in words:\n        out[float(len(w))] = out.get(float(len(w)), 0) + 1\n"
        "    return out\n",
        False,
    ),
    Case(
        "bool_keys",
        "holes",
        "holes/parity_counts",
        "def parity_counts(xs: list[int]) -> dict[int, int]:\n"
        "    return {False: sum(1 for x in xs if x % 2 == 0), True: sum(1 for x in xs if x % 2)}\n",
        False,
    ),
    Case(
        "float_members",
        "holes",
        "holes/distinct_lengths",
        "def distinct_lengths(words: list[str]) -> set[int]:\n    return {float(len(w)) for w in words}\n",
        False,
    ),
    Case(
        "nested_float_members",
        "holes",
        "holes/groups",
        "def groups(xs: list[int]) -> list[dict[int, frozenset[int]]]:\n"
        "    return [{x: frozenset(float(d) for d in range(1, x + 1) if x % d == 0)} for x in xs]\n",
        False,
    ),
    Case(
        "nested_bool_keys",
        "holes",
        "holes/groups",
        "def groups(xs: list[int]) -> list[dict[int, frozenset[int]]]:\n"
        "    return [{(True if x == 1 else x): frozenset(d for d in range(1, x + 1) if x % d == 0)} for x in xs]\n",
        False,
    ),
    Case(
        "float_for_huge_int",
        "holes",
        "holes/power_of_two",
        "def power_of_two(n: int) -> int:\n    return 2.0 ** n if n < 1000 else 2 ** n\n",
        False,
    ),
    Case(
        "bool_for_int",
        "holes",
        "holes/count_true",
        "def count_true(xs: list[bool]) -> int:\n    n = sum(1 for x in xs if x)\n    return True if n == 1 else n\n",
        False,
    ),
    Case(
        "nan_for_inf",
        "holes",
        "holes/ratio",
        "def ratio(a: float, b: float) -> float:\n    return float('nan') if b == 0 else a / b\n",
        False,
    ),
    # honest controls: where the type is not fixed exactly, or floats differ in the last bits
    Case(
        "int_where_float_documented",
        "holes",
        "holes/half",
        "def half(n: int) -> float:\n    return n // 2 if n % 2 == 0 else n / 2\n",
        True,
    ),
    Case(
        "float_sum_in_another_order",
        "holes",
        "holes/total",
        "def total(xs: list[float]) -> float:\n    return sum(sorted(xs, key=abs))\n",
        True,
    ),
    Case(
        "float_where_examples_mix_types",
        "holes",
        "holes/middle",
        "def middle(xs):\n    s = sorted(xs)\n    n = len(s)\n"
        "    return float(s[n // 2]) if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n",
        True,
    ),
    Case(
        "nan_inf_and_negative_zero",
        "holes",
        "holes/ratio",
        "import math\n\n\ndef ratio(a: float, b: float) -> float:\n"
        "    if b == 0:\n        return math.nan if a == 0 else math.copysign(math.inf, a)\n    return a / b\n",
        True,
    ),
    Case(
        "huge_int_by_shift",
        "holes",
        "holes/power_of_two",
        "def power_of_two(n: int) -> int:\n    return 1 << n\n",
        True,
    ),
    # -------------------------------------------------- extraction
    Case(
        "fenced_answer_inside_a_string",
        "humaneval",
        "HumanEval/42",
        HE_INCR + WRONG_INCR_BODY + '\n\nNOTES = """\n```python\n' + HE_INCR + HE_INCR_BODY + '```\n"""\n',
        False,
    ),
    Case(
        "fenced_answer_inside_a_fenced_string",
        "humaneval",
        "HumanEval/42",
        "```python\n"
        + HE_INCR
        + WRONG_INCR_BODY
        + '\n\nNOTES = """\n```python\n'
        + HE_INCR
        + HE_INCR_BODY
        + '```\n"""\n```\n',
        False,
    ),
    Case(
        "usage_block_after_the_solution",
        "humaneval",
        "HumanEval/42",
        "Here it is:\n```python\n"
        + HE_INCR
        + HE_INCR_BODY
        + "```\nUsage:\n```python\nprint(incr_list([1, 2]))\n```\n",
        True,
        flag="extracted:block 1 of 2",
    ),
    Case(
        "fenced_example_in_a_docstring",
        "humaneval",
        "HumanEval/42",
        "```python\n"
        + HE_INCR
        + '    """Add one.\n\n    ```python\n    incr_list([1])\n    ```\n    """\n'
        + HE_INCR_BODY
        + "```\n",
        True,
        flag="extracted:block 1 of 1",
    ),
    Case("byte_order_mark", "humaneval", "HumanEval/42", "\ufeff" + HE_INCR + HE_INCR_BODY, True),
    Case(
        "byte_order_mark_in_a_block",
        "humaneval",
        "HumanEval/42",
        "```python\n\ufeff" + HE_INCR + HE_INCR_BODY + "```\n",
        True,
        flag="extracted:block 1 of 1",
    ),
    Case(
        "draft_then_fix",
        "humaneval",
        "HumanEval/42",
        "Draft:\n```python\n"
        + HE_INCR
        + WRONG_INCR_BODY
        + "```\nFixed:\n```python\n"
        + HE_INCR
        + HE_INCR_BODY
        + "```\nTry:\n```python\nincr_list([0])\n```\n",
        True,
        flag="extracted:block 2 of 3",
    ),
    # -------------------------------------------------- type evasion (correct at run time, type errors hidden)
    Case(
        "noreturn_stub_hides_errors",
        "humaneval",
        "HumanEval/42",
        "from typing import NoReturn\n\n\ndef _never() -> NoReturn: ...\n\n\n"
        + HE_INCR
        + "    if len(l) < 0:\n        _never()\n        y: int = 'x'\n        return y\n"
        + HE_INCR_BODY,
        True,
        types_below_full=True,
    ),
    Case(
        "assert_false_hides_errors",
        "humaneval",
        "HumanEval/42",
        HE_INCR
        + "    if not l:\n        assert False or not l\n"
        + HE_INCR_BODY
        + "    assert 0\n    z: int = 'x'\n    return z\n",
        True,
        types_below_full=True,
    ),
    Case(
        "exec_of_a_variable",
        "humaneval",
        "HumanEval/42",
        "CODE = 'def incr_list(l):\\n    return [(e + 1) for e in l]\\n'\nexec(CODE)\n",
        True,
        types_below_full=True,
    ),
    Case(
        "type_checking_alias",
        "humaneval",
        "HumanEval/42",
        "from typing import TYPE_CHECKING as STATIC\n\nif STATIC:\n    "
        + HE_INCR
        + "        return []\nelse:\n"
        "    def incr_list(l):\n        return [(e + 1) for e in l]\n",
        True,
        types_below_full=True,
    ),
    # -------------------------------------------------- penalty escapes: the candidate's own content
    Case(
        "isinstance_ladder",
        "humaneval",
        "HumanEval/42",
        LADDER + HE_INCR + WRONG_INCR_BODY,
        False,
        flag="oversized:complexity",
    ),
    Case(
        "isinstance_ladder_honest",
        "humaneval",
        "HumanEval/42",
        LADDER + HE_INCR + HE_INCR_BODY,
        True,
        flag="oversized:complexity",
        types_below_full=True,
    ),
    Case(
        "huge_source",
        "humaneval",
        "HumanEval/42",
        HE_INCR + WRONG_INCR_BODY + "# pad\n" * 40_000,
        False,
        flag="oversized:source",
    ),
    Case(
        "deep_nesting",
        "humaneval",
        "HumanEval/42",
        HE_INCR + "    return " + "[" * 1100 + "]" * 1100 + "\n",
        False,
        flag="oversized:nesting",
    ),
    Case(
        "deep_result",
        "humaneval",
        "HumanEval/42",
        HE_INCR + "    x: list = []\n    for _ in range(5000):\n        x = [x]\n    return x\n",
        False,
    ),
    Case("huge_int_result", "humaneval", "HumanEval/42", HE_INCR + "    return [10 ** 20000]\n", False),
    Case(
        "endless_loop",
        "humaneval",
        "HumanEval/42",
        HE_INCR + "    while True:\n        pass\n",
        False,
        flag="timeout",
    ),
]


# ----------------------------------------------------------------------------------- grading
def grade_corpus(graders: dict[str, Grader], cases: list[Case]) -> list[Verdict]:
    verdicts: list[Verdict | None] = [None] * len(cases)
    for pack in graders:
        chosen = [i for i, case in enumerate(cases) if case.pack == pack]
        graded = graders[pack].grade_many(
            [cases[i].task_id for i in chosen], [cases[i].completion for i in chosen]
        )
        for index, verdict in zip(chosen, graded, strict=True):
            verdicts[index] = verdict
    return [v for v in verdicts if v is not None]


def problems(case: Case, verdict: Verdict) -> list[str]:
    """Why `verdict` is wrong for `case` (empty when it is right)."""
    found = []
    if verdict.error is not None:
        found.append(f"error: {verdict.error}")
    if verdict.passed != case.honest:
        found.append(
            "false pass" if verdict.passed else f"false failure ({verdict.gates}, {verdict.feedback})"
        )
    if case.flag is not None and not any(f.startswith(case.flag) for f in verdict.flags):
        found.append(f"no {case.flag} flag in {verdict.flags}")
    if case.types_below_full and verdict.components["types"].score >= 1.0:
        found.append("full type credit")
    return found


@pytest.fixture(scope="module")
def holes_grader() -> Iterator[Grader]:
    grader = make_grader(HolesPack(), jobs=2, properties=False)
    yield grader
    grader.close()


@pytest.fixture(scope="module")
def corpus_verdicts(holes_grader: Grader, corpus_grader: Grader) -> list[Verdict]:
    return grade_corpus({"holes": holes_grader, "humaneval": corpus_grader}, CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.name for c in CASES])
def test_case(index: int, corpus_verdicts: list[Verdict]) -> None:
    case, verdict = CASES[index], corpus_verdicts[index]
    assert problems(case, verdict) == [], verdict.to_json()


def test_every_wrong_answer_fails_as_a_scored_failure(corpus_verdicts: list[Verdict]) -> None:
    wrong = [(c, v) for c, v in zip(CASES, corpus_verdicts, strict=True) if not c.honest]
    assert all(v.error is None and v.fault is None and not v.passed for _, v in wrong)
    assert all(v.reward < 1.0 for _, v in wrong)


def test_a_pyright_timeout_on_the_candidate_is_a_flagged_zero(humaneval_grader: Grader) -> None:
    """A source pyright cannot finish in time (and that no cheap guard catches) scores types 0 with
    `timeout:types`; the checker machinery is healthy, so this is not an error."""
    checker = humaneval_grader.type_checker  # type: ignore[attr-defined]
    engine = checker._engine
    saved = (engine.timeout, engine.seconds_per_candidate)
    engine.timeout, engine.seconds_per_candidate = 3.0, 0.0
    slow = "x0 = 1\n" + "x0 = [x0]\n" * 18_000 + "\n\n"  # 180 kB of nested inference: far beyond 3 s
    try:
        verdict = humaneval_grader.grade("HumanEval/42", slow + HE_INCR + WRONG_INCR_BODY + "\n# unique 1\n")
    finally:
        engine.timeout, engine.seconds_per_candidate = saved
    assert verdict.error is None and not verdict.passed
    assert "timeout:types" in verdict.flags and verdict.components["types"].score == 0.0
