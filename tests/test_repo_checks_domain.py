"""Wrong fixes that break a rule only a docstring or an exception class states (issue 31), on a small
repository of our own graded by the real repo grader: each wrong candidate below passed before the
derived checks covered its class (numbers at their boundaries and past a limit constant, digit runs
signed or underscored, whitespace inside structured text, a reference to a missing entry, an
exception type named only in the plural), and a correct fix written otherwise still passes.
"""

from __future__ import annotations

import pytest

from rlvr.graders.repo.checks import derived_checks, visible_words
from rlvr.graders.repo.domain_variants import (
    UNKNOWN_ENTRY,
    limit_constants,
    number_like_variants,
    number_variants,
    structured_text_variants,
    unknown_reference_variants,
)
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

REFERENCE = '''"""Stays, a wallet, user paths, settings, a build order and converters."""

MAX_NIGHTS = 30
KINDS = {"int": int, "str": str}


class BookingError(Exception):
    """A stay or an amount out of range."""


def book(nights: int) -> int:
    """The price of `nights` nights at 100 each; from 1 to MAX_NIGHTS nights, else a BookingError."""
    if nights < 1 or nights > MAX_NIGHTS:
        raise BookingError("nights out of range")
    return nights * 100


class Wallet:
    """Cents held; every deposit and spend must be positive (a BookingError)."""

    def __init__(self) -> None:
        self.cents = 0

    def deposit(self, cents: int) -> int:
        if cents <= 0:
            raise BookingError("deposits must be positive")
        self.cents += cents
        return self.cents

    def spend(self, cents: int) -> int:
        if cents <= 0:
            raise BookingError("spends must be positive")
        self.cents -= cents
        return self.cents


def user_id(path: str) -> int | None:
    """The id of "/users/<digits>" (a digit run only), else None."""
    parts = [part for part in path.split("/") if part]
    if len(parts) == 2 and parts[0] == "users" and parts[1].isdigit():
        return int(parts[1])
    return None


def sections(text: str) -> dict[str, dict[str, str]]:
    """INI-like text: `[name]` headers (the name stripped) and `key = value` lines (both stripped)."""
    out: dict[str, dict[str, str]] = {"": {}}
    current = out[""]
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = out.setdefault(line[1:-1].strip(), {})
        elif "=" in line:
            key, _, value = line.partition("=")
            current[key.strip()] = value.strip()
    return out


def order(needs: dict[str, list[str]]) -> list[str]:
    """Names so that each follows what it needs, ties alphabetical; an unknown name needed is a KeyError."""
    waiting = {name: set(deps) for name, deps in needs.items()}
    for deps in waiting.values():
        for dep in deps:
            if dep not in waiting:
                raise KeyError(dep)
    out: list[str] = []
    while waiting:
        ready = sorted(name for name, deps in waiting.items() if not deps)
        if not ready:
            raise BookingError("cycle")
        out.append(ready[0])
        del waiting[ready[0]]
        for deps in waiting.values():
            deps.discard(ready[0])
    return out


def needs_from(rows: list[list[str]]) -> dict[str, list[str]]:
    """{a row's first name: the names after it} for each row."""
    return {row[0]: row[1:] for row in rows}


def ranks(needs: dict[str, list[str]]) -> dict[str, int]:
    """How many names each name needs; a needed name missing from `needs` is a KeyError."""
    for deps in needs.values():
        for dep in deps:
            if dep not in needs:
                raise KeyError(dep)
    return {name: len(deps) for name, deps in needs.items()}


def busiest(rows: list[list[str]]) -> str:
    """The name of `rows` that needs the most (ties: alphabetical), once they can be ordered."""
    needs = needs_from(rows)
    order(needs)
    counts = ranks(needs)
    return min(counts, key=lambda name: (-counts[name], name))


def convert(kind: str, text: str) -> int | str:
    """`text` converted by kind "int" or "str"; unknown kinds are ValueErrors."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    return KINDS[kind](text)
'''
CONVERT_BODY = """    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    return KINDS[kind](text)
"""
RANKS_BODY = """    for deps in needs.values():
        for dep in deps:
            if dep not in needs:
                raise KeyError(dep)
    return {name: len(deps) for name, deps in needs.items()}
"""
BASE = REFERENCE.replace(
    CONVERT_BODY, '    raise NotImplementedError("convert is not implemented yet")\n'
).replace(RANKS_BODY, '    raise NotImplementedError("ranks is not implemented yet")\n')
TESTS = """from shop.core import book, user_id


def test_book() -> None:
    assert book(2) == 200


def test_user_id() -> None:
    assert user_id("/users/7") == 7
"""
SCENARIOS = [
    {"kind": "call", "target": "shop.core:book", "args": [3]},
    {
        "kind": "object",
        "target": "shop.core:Wallet",
        "args": [],
        "steps": [["deposit", [50]], ["spend", [20]]],
    },
    {"kind": "call", "target": "shop.core:user_id", "args": ["/users/42"]},
    {"kind": "call", "target": "shop.core:user_id", "args": ["/users/abc"]},
    {"kind": "call", "target": "shop.core:sections", "args": ["[server]\nport = 1\n"]},
    {"kind": "call", "target": "shop.core:order", "args": [{"b": ["a"], "a": []}]},
    {"kind": "call", "target": "shop.core:needs_from", "args": [[["b", "a"], ["a"]]]},
    {"kind": "call", "target": "shop.core:busiest", "args": [[["b", "a"], ["a"]]]},
    {"kind": "call", "target": "shop.core:convert", "args": ["int", "7"]},
    {"kind": "call", "target": "shop.core:convert", "args": ["float", "1.5"]},
]


TASK = one_module_task(
    "shop-domain",
    "Feature request: `shop.core.convert` and `shop.core.ranks` raise NotImplementedError. Implement them as"
    " their docstrings say.",
    "shop/core.py",
    BASE,
    REFERENCE,
    SCENARIOS,
    tests=TESTS,
)


grader = module_grader(TASK, "shop")


def _with(*pairs: tuple[str, str]) -> dict[str, str]:
    return edited_reference(TASK, "shop/core.py", *pairs)


WRONG = {
    # 1. the documented upper bound dropped: only a stay past MAX_NIGHTS shows it
    "limit constant ignored": _with(("if nights < 1 or nights > MAX_NIGHTS:", "if nights < 1:")),
    # 1. a negative spend accepted (the scenario spends a positive amount)
    "negative amount accepted": _with(
        ('        if cents <= 0:\n            raise BookingError("spends must be positive")\n', "")
    ),
    # 2. int() instead of a digit run: "-42" and "4_2" become ids
    "int() accepts signs": _with(
        (
            '    if len(parts) == 2 and parts[0] == "users" and parts[1].isdigit():\n        return int(parts[1])\n',
            '    if len(parts) == 2 and parts[0] == "users":\n        try:\n            return int(parts[1])\n'
            "        except ValueError:\n            return None\n",
        )
    ),
    # 3. a padded section header no longer stripped
    "section name not stripped": _with(
        ("out.setdefault(line[1:-1].strip(), {})", "out.setdefault(line[1:-1], {})")
    ),
    # 4. an unknown name needed is ignored instead of a KeyError
    "unknown reference ignored": _with(
        (
            "    waiting = {name: set(deps) for name, deps in needs.items()}\n",
            "    waiting = {name: {d for d in deps if d in needs} for name, deps in needs.items()}\n",
        )
    ),
    # 5. an unknown name needed is not checked: every caller fails on it earlier, only a direct
    # call on what `needs_from` builds shows it
    "error hidden by the callers": _with(
        (RANKS_BODY, "    return {name: len(deps) for name, deps in needs.items()}\n")
    ),
    # 5. an unknown kind is a KeyError of the table lookup, not the documented ValueError
    "wrong exception type": _with((CONVERT_BODY, "    return KINDS[kind](text)\n")),
}

RIGHT = _with(
    ("if nights < 1 or nights > MAX_NIGHTS:", "if not 1 <= nights <= MAX_NIGHTS:"),
    (
        '        if cents <= 0:\n            raise BookingError("spends must be positive")\n',
        '        if cents < 1:\n            raise BookingError("spend a positive amount")\n',
    ),
    ("parts[1].isdigit():", 're.fullmatch(r"\\d+", parts[1]) is not None:'),
    (
        '"""Stays, a wallet, user paths, settings, a build order and converters."""\n',
        '"""Stays, a wallet, user paths, settings, a build order and converters."""\n\nimport re\n',
    ),
    (
        "out.setdefault(line[1:-1].strip(), {})",
        'out.setdefault(line.removeprefix("[").removesuffix("]").strip(), {})',
    ),
    (
        "    for deps in waiting.values():\n        for dep in deps:\n            if dep not in waiting:\n"
        "                raise KeyError(dep)\n",
        "    missing = set().union(*waiting.values()) - set(waiting)\n    if missing:\n"
        "        raise KeyError(min(missing))\n",
    ),
    (
        RANKS_BODY,
        "    known = set(needs)\n    for name, deps in needs.items():\n        unknown = [d for d in deps if d not in known]\n"
        "        if unknown:\n            raise KeyError(unknown[0])\n    return {name: len(needs[name])"
        " for name in needs}\n",
    ),
    (
        CONVERT_BODY,
        "    try:\n        converter = KINDS[kind]\n    except KeyError:\n"
        '        raise ValueError("no such kind: " + kind) from None\n    return converter(text)\n',
    ),
)


def test_limit_constants_and_number_variants() -> None:
    assert limit_constants(TASK.hidden["base"]) == [30]
    assert number_variants(3, [30]) == [0, -3, 2, 4, -1, 31]
    assert number_variants(1.5, []) == [0, -1.5, 0.5, 2.5, -1]


def test_number_like_strings_are_signed_underscored_and_padded() -> None:
    assert number_like_variants("/users/42") == [
        "/users/-42",
        "/users/+42",
        "/users/4_2",
        "/users/ 42 ",
    ]
    assert number_like_variants("v1.2") == [] and number_like_variants("abc") == []


def test_structured_text_is_padded_inside_brackets_and_around_separators() -> None:
    variants = structured_text_variants("[server]\nport = 1\nhosts = a, b\n")
    assert "[  server  ]\nport = 1\nhosts = a, b\n" in variants
    assert "[server]\nport  =  1\nhosts  =  a, b\n" in variants
    assert "[server]\nport = 1\nhosts = a ,  b\n" in variants
    assert structured_text_variants("one line") == []


def test_unknown_references_name_a_missing_entry() -> None:
    assert unknown_reference_variants({"b": ["a"], "a": []}) == [{"b": [UNKNOWN_ENTRY], "a": []}]
    rows = [["build", 3, ["fetch"]], ["fetch", 1, []]]
    assert unknown_reference_variants(rows) == [[["build", 3, [UNKNOWN_ENTRY]], ["fetch", 1, []]]]
    assert unknown_reference_variants([["a", 1, ["x"]]]) == []  # one entry: nothing to refer to


def test_a_plural_exception_name_is_visible() -> None:
    assert "ValueError" in visible_words("", TASK.hidden["base"])


def test_derived_checks_reach_each_rule() -> None:
    derived = derived_checks(SCENARIOS, TASK.hidden["base"], TASK.hidden["reference"])
    calls = [(c["target"].rsplit(":", 1)[1], c["args"]) for c in derived if c["kind"] == "call"]
    assert ("book", [31]) in calls and ("user_id", ["/users/-42"]) in calls
    assert ("sections", ["[  server  ]\nport = 1\n"]) in calls
    assert ("order", [{"b": [UNKNOWN_ENTRY], "a": []}]) in calls
    steps = [c["steps"] for c in derived if c["kind"] == "object"]
    assert [["deposit", [50]], ["spend", [-20]]] in steps
    fed = [c["feed"] for c in derived if c.get("derived") == "call-fed"]
    assert {"target": "shop.core:needs_from", "args": [[["b", UNKNOWN_ENTRY], ["a"]]]} in fed
    assert all(c["target"] == "shop.core:ranks" for c in derived if c.get("derived") == "call-fed")


def test_reference_passes_and_noop_scores_zero(grader: RepoGrader) -> None:
    assert grader.grade_state(TASK, TASK.hidden["reference"]).reward == 1.0
    assert grader.grade_state(TASK, TASK.hidden["base"]).reward == 0.0


def test_correct_fixes_in_other_words_pass(grader: RepoGrader) -> None:
    assert_full_reward(grader, TASK, RIGHT)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_rules_only_a_docstring_states_fail(grader: RepoGrader, name: str) -> None:
    assert_fails(grader, TASK, WRONG[name], name)
