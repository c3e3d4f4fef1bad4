"""`proof-identities`: prove algebraic identities and inequalities by a derivation, one step a line.

Each task keeps a reference derivation in its hidden spec (tests replay it to show every task is provable by
the checker, one small step at a time). Two kinds of tasks:
- the original hand-written templates (`proof/<template>/<index>`, 24 tasks; `HELD_OUT` ones are `test`);
- procedural tasks (`proof/<template>/d<difficulty>/<index>`, rlvr/task_packs/proof_templates.py):
  coefficients and variable drawn per seed, difficulty 1-4; held-out templates form the `test` split.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.task_packs import proof_templates

TASKS_PER_TEMPLATE = 3  # the original templates
PROCEDURAL_TRAIN_PER_TEMPLATE = 140  # 8 templates: about 1,100 distinct train tasks
PROCEDURAL_TEST_PER_TEMPLATE = 30  # 4 held-out templates: 120 test tasks
FORMAT = (
    "Write the derivation one step a line: the first line is the left-hand side, every later line starts with a "
    "relation (=, <=, <, >=, >) followed by the next expression, and the last expression is the right-hand side. "
    "Use plain math like (a+b)^2, 2ab, sqrt(x), x/(x+1); text after # is a comment. Every step is checked, and "
    "each must be one small rewrite of the previous line: expand or factor, collect like terms, put fractions "
    "over a common denominator, or drop a non-negative term. Restating the goal in one step does not count."
)
Spec = tuple[str, dict[str, str], str]  # goal, assumptions, reference derivation
Template = Callable[[random.Random], Spec]


def square_difference(rng: random.Random) -> Spec:
    k = rng.randint(1, 9)
    goal = f"(x+{k})^2 - (x-{k})^2 = {4 * k}x"
    reference = (
        f"(x+{k})^2 - (x-{k})^2\n= (x^2 + {2 * k}x + {k * k}) - (x^2 - {2 * k}x + {k * k})  # expand both squares\n"
        f"= {4 * k}x  # collect like terms"
    )
    return goal, {}, reference


def cube_expansion(rng: random.Random) -> Spec:
    k = rng.randint(1, 6)
    goal = f"(x+{k})^3 = x^3 + {3 * k}x^2 + {3 * k * k}x + {k**3}"
    reference = (
        f"(x+{k})^3\n= (x+{k})(x+{k})^2\n= (x+{k})(x^2 + {2 * k}x + {k * k})  # expand the square\n"
        f"= x^3 + {2 * k}x^2 + {k * k}x + {k}x^2 + {2 * k * k}x + {k**3}  # distribute\n"
        f"= x^3 + {3 * k}x^2 + {3 * k * k}x + {k**3}  # collect like terms"
    )
    return goal, {}, reference


def two_squares(rng: random.Random) -> Spec:
    p, q = rng.randint(1, 5), rng.randint(1, 5)
    goal = f"{p * p}a^2 + {q * q}b^2 >= {2 * p * q}ab"
    reference = (
        f"{p * p}a^2 + {q * q}b^2\n= {p * p}a^2 - {2 * p * q}ab + {q * q}b^2 + {2 * p * q}ab  # add and subtract\n"
        f"= ({p}a - {q}b)^2 + {2 * p * q}ab  # a square\n>= {2 * p * q}ab"
    )
    return goal, {}, reference


def shifted_square(rng: random.Random) -> Spec:
    k, m = rng.randint(1, 9), rng.randint(1, 20)
    goal = f"x^2 - {2 * k}x + {k * k + m} >= {m}"
    reference = f"x^2 - {2 * k}x + {k * k + m}\n= x^2 - {2 * k}x + {k * k} + {m}\n= (x - {k})^2 + {m}\n>= {m}"
    return goal, {}, reference


def partial_fractions(rng: random.Random) -> Spec:
    k = rng.randint(1, 9)
    goal = f"1/x - 1/(x+{k}) = {k}/(x(x+{k}))"
    reference = f"1/x - 1/(x+{k})\n= ((x+{k}) - x)/(x(x+{k}))\n= {k}/(x(x+{k}))"
    return goal, {"x": "positive"}, reference


# ---------------------------------------------------------------- held-out


def reciprocal_sum(rng: random.Random) -> Spec:
    k = rng.randint(1, 6)
    goal = f"x + {k * k}/x >= {2 * k}"
    reference = f"x + {k * k}/x\n= x - {2 * k} + {k * k}/x + {2 * k}\n= (sqrt(x) - {k}/sqrt(x))^2 + {2 * k}\n>= {2 * k}"
    return goal, {"x": "positive"}, reference


def difference_of_squares(rng: random.Random) -> Spec:
    k = rng.randint(2, 12)
    goal = f"x^2 - {k * k} = (x-{k})(x+{k})"
    reference = f"x^2 - {k * k}\n= x^2 + {k}x - {k}x - {k * k}\n= (x-{k})(x+{k})"
    return goal, {}, reference


def strictly_positive(rng: random.Random) -> Spec:
    k, m = rng.randint(1, 8), rng.randint(1, 10)
    goal = f"x^2 + {2 * k}x + {k * k + m} > 0"
    reference = (
        f"x^2 + {2 * k}x + {k * k + m}\n= x^2 + {2 * k}x + {k * k} + {m}\n= (x + {k})^2 + {m}\n>= {m}\n> 0"
    )
    return goal, {}, reference


TRAIN_TEMPLATES: dict[str, tuple[int, Template]] = {
    "square_difference": (1, square_difference),
    "cube_expansion": (2, cube_expansion),
    "two_squares": (3, two_squares),
    "shifted_square": (2, shifted_square),
    "partial_fractions": (3, partial_fractions),
}
HELD_OUT: dict[str, tuple[int, Template]] = {
    "difference_of_squares": (1, difference_of_squares),
    "strictly_positive": (3, strictly_positive),
    "reciprocal_sum": (4, reciprocal_sum),
}


def _task(task_id: str, spec: Spec, difficulty: int, split: str, meta: dict[str, object]) -> Task:
    goal, assumptions, reference = spec
    where = "".join(f" Assume {name} is {kind}." for name, kind in assumptions.items())
    where = where or " All variables are real."
    return Task(
        id=task_id,
        prompt=f"Prove: {goal}.{where}\n{FORMAT}",
        family="proof",
        difficulty=difficulty,
        split=split,
        hidden={"goal": goal, "assumptions": assumptions, "reference": reference},
        meta=meta,
    )


def generate(template: str, index: int) -> Task:
    """One of the original hand-written tasks."""
    difficulty, function = TRAIN_TEMPLATES.get(template) or HELD_OUT[template]
    spec = function(random.Random(f"proof/{template}/{index}"))
    split = "test" if template in HELD_OUT else "train"
    return _task(f"proof/{template}/{index}", spec, difficulty, split, {"template": template})


def procedural_tasks(template: str, count: int) -> Iterable[Task]:
    """Up to `count` tasks of one template with distinct goals (an index repeating a goal is skipped)."""
    split = "test" if template in proof_templates.HELD_OUT_TEMPLATES else "train"
    seen: set[str] = set()
    index = 0
    while len(seen) < count and index < 5 * count:
        difficulty, spec = proof_templates.draw_spec(template, index)
        if spec[0] not in seen:
            seen.add(spec[0])
            meta = {"template": template, "procedural": True}
            yield _task(f"proof/{template}/d{difficulty}/{index}", spec, difficulty, split, meta)
        index += 1


class ProofIdentitiesPack(TaskPack):
    name = "proof-identities"
    family = "proof"
    version = "2"
    description = (
        "Prove polynomial/rational identities and inequalities by sympy-checked derivations (one small step a "
        "line); 24 hand-written tasks plus procedural ones at difficulty 1-4 (over 1,000 train); test split = "
        "held-out templates."
    )

    def _load(self) -> Iterable[Task]:
        for template in [*TRAIN_TEMPLATES, *HELD_OUT]:
            for index in range(TASKS_PER_TEMPLATE):
                yield generate(template, index)
        for template in proof_templates.TRAIN_TEMPLATES:
            yield from procedural_tasks(template, PROCEDURAL_TRAIN_PER_TEMPLATE)
        for template in proof_templates.HELD_OUT_TEMPLATES:
            yield from procedural_tasks(template, PROCEDURAL_TEST_PER_TEMPLATE)
