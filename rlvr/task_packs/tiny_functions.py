"""`tiny-functions`: one-line Python functions described by a docstring, small enough for a tiny
model trained on a CPU in minutes, and a noisy teacher that writes warm-start examples for them.

Each task is a typed function header plus docstring; the answer is its one-line body (the
completion continues the prompt). Families combine a *shape* (compare a number, count matching
list items, ...) with a *relation word* ("at least" -> `>=`) and a constant.

Held-out split ("test") = templates never trained on: one shape/word combination per shape
(e.g. "count the numbers that are at least k"), whose parts appear in training only in other
combinations ("at least" in compare/filter/any/all; count_if with the other words). No train task
shares a template with a test task.

The teacher (`sft_examples`) writes bodies for *training* templates only. It has a systematic
misconception (inclusive bounds written as strict ones: "at least k" -> `> k`, more often than
not) and, at `bug_rate`, makes one of four ordinary mistakes (forgotten `return`, off-by-one
constant or sibling operator, wrong variable name, unclosed bracket). A model imitating it is
often wrong, greedy decoding included; only the grader's reward tells the mistakes apart.
`sft_examples` can also vary the surface of its examples (off by default; the pack's teacher turns it
on, `TEACHER_SURFACE`): a comprehension's loop variable drawn from `LOOP_VARIABLES` (`v` or a scalar
argument's name), a scalar body parenthesised at `bracket_rate`, and the instruction phrased another
way (`PHRASINGS`) at `phrasing_rate`. Then an operator follows the same tokens in every shape
(`(n == 0)`, `any(n == 0 ...)`, `[n - 1 ...]`), so a relation word learnt in one shape is more often
written as the same operator in another, and where the relation word stands in the instruction
does not tell the body's shape; only the shape's own words do (measured in benchmarks/RESULTS.md,
issue 36, h36 and h36s). Held-out tasks keep their template's phrasing.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, replace

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task

RELATIONS = {"greater than": ">", "less than": "<", "at least": ">=", "at most": "<=", "equal to": "=="}
ARITHMETIC = {"plus": "+", "minus": "-", "times": "*"}
REDUCTIONS = {"sum": "sum", "largest number": "max", "smallest number": "min", "length": "len"}
STRING_METHODS = {
    "in upper case": "{a}.upper()",
    "in lower case": "{a}.lower()",
    "reversed": "{a}[::-1]",
    "with surrounding spaces removed": "{a}.strip()",
}
FUNCTION_NAMES = ("solve", "compute", "answer", "calc", "func", "helper")
ARGUMENT_NAMES = {
    "int": ("x", "n", "value", "num"),
    "list": ("xs", "nums", "values", "items"),
    "str": ("s", "text", "word"),
}
SIBLINGS = {
    ">": ">=",
    ">=": ">",
    "<": "<=",
    "<=": "<",
    "==": ">=",
    "+": "-",
    "-": "+",
    "*": "+",
    "sum": "len",
    "len": "sum",
    "max": "min",
    "min": "max",
}


@dataclass(frozen=True)
class Template:
    """One function shape. `header`/`doc`/`body` are format strings over a (argument), w (word),
    op (operator or function), k (constant) and v (a comprehension's loop variable)."""

    family: str
    difficulty: int
    kind: str  # argument type: int, list or str
    returns: str
    doc: str
    body: str
    words: dict[str, str]
    train_words: tuple[str, ...]
    constants: tuple[int, ...] = ()


TEMPLATES = (
    Template(
        "arith",
        1,
        "int",
        "int",
        "Return {a} {w} {k}.",
        "{a} {op} {k}",
        ARITHMETIC,
        tuple(ARITHMETIC),
        tuple(range(1, 10)),
    ),
    Template(
        "compare",
        1,
        "int",
        "bool",
        "Return True if {a} is {w} {k}.",
        "{a} {op} {k}",
        RELATIONS,
        ("greater than", "less than", "at least", "at most"),
        tuple(range(10)),
    ),
    Template(
        "reduce", 2, "list", "int", "Return the {w} of {a}.", "{op}({a})", REDUCTIONS, tuple(REDUCTIONS)
    ),
    Template("string", 2, "str", "str", "Return {a} {w}.", "", STRING_METHODS, tuple(STRING_METHODS)),
    Template(
        "repeat",
        2,
        "str",
        "str",
        "Return {a} repeated {k} times.",
        "{a} * {k}",
        {"": ""},
        ("",),
        tuple(range(2, 6)),
    ),
    Template(
        "count_if",
        3,
        "list",
        "int",
        "Return how many numbers in {a} are {w} {k}.",
        "sum(1 for {v} in {a} if {v} {op} {k})",
        RELATIONS,
        ("greater than", "less than", "at most", "equal to"),
        tuple(range(10)),
    ),
    Template(
        "filter",
        3,
        "list",
        "list[int]",
        "Return the numbers in {a} that are {w} {k}.",
        "[{v} for {v} in {a} if {v} {op} {k}]",
        RELATIONS,
        ("greater than", "less than", "at least", "equal to"),
        tuple(range(10)),
    ),
    Template(
        "any",
        3,
        "list",
        "bool",
        "Return True if any number in {a} is {w} {k}.",
        "any({v} {op} {k} for {v} in {a})",
        RELATIONS,
        ("less than", "at least", "at most", "equal to"),
        tuple(range(10)),
    ),
    Template(
        "all",
        3,
        "list",
        "bool",
        "Return True if every number in {a} is {w} {k}.",
        "all({v} {op} {k} for {v} in {a})",
        RELATIONS,
        ("greater than", "at least", "at most", "equal to"),
        tuple(range(10)),
    ),
    Template(
        "map",
        3,
        "list",
        "list[int]",
        "Return each number in {a} {w} {k}.",
        "[{v} {op} {k} for {v} in {a}]",
        ARITHMETIC,
        ("plus", "times"),
        tuple(range(1, 10)),
    ),
)

# The teacher's systematic misconception: inclusive bounds written as strict ones.
MISCONCEPTIONS = {">=": ">", "<=": "<"}


@dataclass(frozen=True)
class Instance:
    template: Template
    word: str
    k: int | None
    argument: str
    function: str
    variable: str = "v"  # a comprehension's loop variable (the reference's is always `v`)
    bracketed: bool = False  # a scalar body written in parentheses: `(x - 3)`
    doc: str = ""  # the docstring's phrasing (a format string like `Template.doc`); "" = the template's

    @property
    def operator(self) -> str:
        return self.template.words[self.word]

    def prompt(self) -> str:
        kind = {"int": "int", "list": "list[int]", "str": "str"}[self.template.kind]
        doc = (self.doc or self.template.doc).format(a=self.argument, w=self.word, k=self.k, v=self.variable)
        return f'def {self.function}({self.argument}: {kind}) -> {self.template.returns}:\n    """{doc}"""\n'

    def expression(
        self, operator: str | None = None, k: int | None = None, argument: str | None = None
    ) -> str:
        op = operator or self.operator
        a = argument or self.argument
        k = self.k if k is None else k
        if self.template.family == "string":
            return op.format(a=a)
        expression = self.template.body.format(a=a, op=op, k=k, v=self.variable)
        return f"({expression})" if self.bracketed else expression

    def answer(self) -> str:
        return f"    return {self.expression()}\n"

    def calls(self) -> list[tuple[object, ...]]:
        k = self.k if self.k is not None else 3
        if self.template.kind == "int":
            values = sorted({-3, 0, 1, k - 1, k, k + 1, 12})
            return [(v,) for v in values]
        if self.template.kind == "str":
            return [("abc",), ("  Mixed Case  ",), ("",), ("Zz 9 ",)]
        lists = [[k], [k - 1, k, k + 1], [0, 5, 9, 2, k], [-4, 7, k, k, 3, 11]]
        if self.template.family != "reduce":
            lists.insert(0, [])
        return [(values,) for values in lists]


def _stable_choice(options: tuple[str, ...], *key: object) -> str:
    return options[zlib.crc32(repr(key).encode()) % len(options)]


def instances(split: str) -> list[Instance]:
    """Every task of a split: one instance per (template, word, constant)."""
    out: list[Instance] = []
    for template in TEMPLATES:
        words = [w for w in template.words if (w in template.train_words) == (split == "train")]
        for word in words:
            for k in template.constants or (None,):
                key = (template.family, word, k)
                argument = _stable_choice(ARGUMENT_NAMES[template.kind], *key)
                out.append(Instance(template, word, k, argument, _stable_choice(FUNCTION_NAMES, "f", *key)))
    return out


def to_task(instance: Instance, split: str) -> Task:
    slug = instance.word.replace(" ", "_") or "times"
    suffix = "" if instance.k is None else f"/{instance.k}"
    return Task(
        id=f"tiny/{instance.template.family}/{slug}{suffix}",
        prompt=instance.prompt(),
        family="code",
        difficulty=instance.template.difficulty,
        split=split,
        hidden={
            "entry_point": instance.function,
            "reference": instance.prompt() + instance.answer(),
            "check": None,
            "calls": instance.calls(),
            "mode": "hidden",
        },
        meta={"template": instance.template.family, "word": instance.word},
    )


BUGS = ("no_return", "off_by_one", "wrong_name", "unclosed")


def buggy_answer(instance: Instance, bug: str) -> str:
    """The teacher's version of the body with one ordinary mistake."""
    if bug == "no_return":
        return f"    {instance.expression()}\n"
    if bug == "off_by_one":
        if instance.k is not None:
            return f"    return {instance.expression(k=instance.k + 1)}\n"
        sibling = SIBLINGS.get(instance.operator)
        if sibling is None:  # string methods: the neighbouring method
            methods = list(STRING_METHODS.values())
            sibling = methods[(methods.index(instance.operator) + 1) % len(methods)]
        return f"    return {instance.expression(operator=sibling)}\n"
    if bug == "wrong_name":
        other = "x" if instance.argument != "x" else "n"
        return f"    return {instance.expression(argument=other)}\n"
    if bug == "unclosed":
        expression = instance.expression()
        for closer in (")", "]"):
            if expression.endswith(closer):
                return f"    return {expression[:-1]}\n"
        return f"    return ({expression}\n"
    raise ValueError(f"unknown bug {bug!r}; choose from {BUGS}")


def _misconceived(template: Template) -> Template:
    """The same template with the teacher's wrong idea of inclusive bounds."""
    words = {w: MISCONCEPTIONS.get(op, op) for w, op in template.words.items()}
    return Template(**{**template.__dict__, "words": words})


# Other phrasings of each template's instruction, for the teacher's training examples only (every task,
# held-out or not, keeps its template's `doc`). They move the relation word before or after the
# collection and the clause order around ("Given {a}, ..." opens scalar and list shapes alike), so
# that where a relation word stands, and what precedes it, does not tell the body's shape: only the
# shape's own words ("how many", "any", "every", "each", "the numbers") do. The last phrasing of each
# list shape names the comprehension's variable and reads like the scalar instruction around it
# ("Return True if n is equal to 3 for any n in xs." beside "Return True if n is greater than 3."), so
# a relation word is met in the same words in both shapes.
PHRASINGS: dict[str, tuple[str, ...]] = {
    "arith": ("Given {a}, return {a} {w} {k}.", "Return the value of {a} {w} {k}."),
    "compare": ("Given {a}, return whether it is {w} {k}.", "Return whether {a} is {w} {k}."),
    "reduce": ("Given {a}, return its {w}.", "Return the {w} of the numbers in {a}."),
    "string": ("Given {a}, return it {w}.",),
    "repeat": ("Given {a}, return it repeated {k} times.",),
    "count_if": (
        "Given {a}, return how many of its numbers are {w} {k}.",
        "Return how many numbers are {w} {k} in {a}.",
        "Return how many {v} in {a} satisfy: {v} is {w} {k}.",
    ),
    "filter": (
        "Given {a}, return the numbers that are {w} {k}.",
        "Return the numbers that are {w} {k} in {a}.",
        "Return the numbers {v} in {a} for which {v} is {w} {k}.",
    ),
    "any": (
        "Given {a}, return whether any of its numbers is {w} {k}.",
        "Return True if any number is {w} {k} in {a}.",
        "Return True if {v} is {w} {k} for any {v} in {a}.",
    ),
    "all": (
        "Given {a}, return whether every one of its numbers is {w} {k}.",
        "Return True if every number is {w} {k} in {a}.",
        "Return True if {v} is {w} {k} for every {v} in {a}.",
    ),
    "map": (
        "Given {a}, return each of its numbers {w} {k}.",
        "Return {a} with each number {w} {k}.",
        "Return {v} {w} {k} for each {v} in {a}.",
    ),
}

# The teacher's comprehension variables: `v`, or a name a scalar template's argument has, so that
# the operator follows the same variable tokens in a comprehension as in a scalar expression.
LOOP_VARIABLES = ("v", *ARGUMENT_NAMES["int"])


def sft_examples(
    count: int,
    seed: int = 0,
    bug_rate: float = 0.3,
    misconception_rate: float = 0.6,
    loop_variables: tuple[str, ...] = ("v",),
    bracket_rate: float = 0.0,
    phrasing_rate: float = 0.0,
) -> list[tuple[str, str]]:
    """(prompt, body) pairs from the noisy teacher, on training templates only, with argument and
    function names drawn at random (so the model learns to copy them), and a comprehension's loop
    variable drawn from `loop_variables`; at `phrasing_rate` the instruction is one of the template's
    other `PHRASINGS`. The teacher writes an inclusive bound ("at least"/"at
    most") as a strict one at `misconception_rate` and, on top of that, makes one of the ordinary
    mistakes at `bug_rate`."""
    rng = random.Random(seed)
    train = instances("train")
    out = []
    for _ in range(count):
        base = rng.choice(train)
        instance = Instance(
            base.template,
            base.word,
            base.k,
            rng.choice(ARGUMENT_NAMES[base.template.kind]),
            rng.choice(FUNCTION_NAMES),
        )
        if len(loop_variables) > 1 and "{v}" in base.template.body:
            instance = replace(instance, variable=rng.choice(loop_variables))
        if bracket_rate and base.template.kind == "int" and rng.random() < bracket_rate:
            instance = replace(instance, bracketed=True)
        if phrasing_rate and rng.random() < phrasing_rate:
            instance = replace(instance, doc=rng.choice(PHRASINGS[base.template.family]))
        if instance.operator in MISCONCEPTIONS and rng.random() < misconception_rate:
            instance = replace(instance, template=_misconceived(instance.template))
        body = buggy_answer(instance, rng.choice(BUGS)) if rng.random() < bug_rate else instance.answer()
        out.append((instance.prompt(), body))
    return out


@dataclass(frozen=True)
class Surface:
    """How the teacher varies the surface of its examples (the arguments of `sft_examples`)."""

    loop_variables: tuple[str, ...] = ("v",)
    bracket_rate: float = 0.0
    phrasing_rate: float = 0.0


# The pack's teacher: every surface variation on (three seeds of `rlvr train` measured in
# benchmarks/RESULTS.md, issue 36, h36s).
TEACHER_SURFACE = Surface(loop_variables=LOOP_VARIABLES, bracket_rate=0.5, phrasing_rate=0.5)


class TinyFunctionsPack(TaskPack):
    name = "tiny-functions"
    family = "code"
    version = "1"
    description = (
        "One-line typed Python functions from a docstring (8 templates); the test split holds "
        "template/word combinations never trained on. Ships a noisy teacher for warm starts."
    )

    def _load(self) -> Iterable[Task]:
        for split in ("train", "test"):
            for instance in instances(split):
                yield to_task(instance, split)

    def sft_examples(self, count: int, seed: int = 0, bug_rate: float = 0.3) -> list[tuple[str, str]]:
        surface = TEACHER_SURFACE
        return sft_examples(
            count,
            seed,
            bug_rate,
            loop_variables=surface.loop_variables,
            bracket_rate=surface.bracket_rate,
            phrasing_rate=surface.phrasing_rate,
        )
