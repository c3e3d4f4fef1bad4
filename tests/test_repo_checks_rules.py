"""Wrong fixes that break a rule a docstring states and the listed scenarios never reach, and correct
fixes written otherwise that differ from the reference only outside the domain the task shows (issue
31), on a small repository of our own graded by the real repo grader.

Wrong fixes (each passed before its class was derived): ties broken by insertion where the docstring
says by name; an error's line number counting only significant lines; a handler's exception turned
into a status; a 405 decided before later routes are tried; an overdraft limit ignored on the side the
scenario never transfers from. Right fixes (each failed before): a loop keeping "at most max_words
words" that differs from slicing only for a negative count; an overlap test that differs from the
reference only for an empty or reversed range.
"""

from __future__ import annotations

import pytest

from rlvr.graders.repo.callable_variants import registrations
from rlvr.graders.repo.checks import kept_by_reference, outside_shown_domain, parameter_names, shown_domains
from rlvr.graders.repo.data_variants import mapping_order_variants, states_ties
from rlvr.graders.repo.domain_variants import comment_lines, line_shift_variants, swapped_arguments
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

REFERENCE = '''"""Rankings, settings, routes, accounts, slugs and stays."""

from collections.abc import Callable

Handler = Callable[[str], str]


def top(totals: dict[str, int], count: int) -> list[str]:
    """The `count` names with the largest totals, ties broken by name."""
    return [name for name, _ in sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:count]]


class SettingsError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def settings(text: str) -> dict[str, str]:
    """`key = value` lines; blank lines and `#` comments skipped; a SettingsError names the line."""
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise SettingsError(number, "expected key = value")
        out[key.strip()] = value.strip()
    return out


class Table:
    def __init__(self) -> None:
        self.routes: list[tuple[str, str, Handler]] = []

    def add(self, method: str, path: str, handler: Handler) -> None:
        self.routes.append((method, path, handler))

    def call(self, method: str, path: str) -> tuple[int, str]:
        """(200, the handler's body) for the first route of the method and path; 405 if the path
        only has routes of other methods; else 404."""
        other_method = False
        for route_method, route_path, handler in self.routes:
            if route_path != path:
                continue
            if route_method != method:
                other_method = True
                continue
            return 200, handler(path)
        return (405, "method not allowed") if other_method else (404, "not found")


def demo_table() -> Table:
    table = Table()
    table.add("GET", "/users", lambda path: "users")
    table.add("POST", "/users", lambda path: "created")
    table.add("GET", "/health", lambda path: "ok")
    return table


class Bank:
    """Accounts in cents; an account may go below zero down to its overdraft limit."""

    def __init__(self) -> None:
        self.balances: dict[str, int] = {}
        self.limits: dict[str, int] = {}

    def open(self, name: str, limit: int) -> None:
        self.balances[name] = 0
        self.limits[name] = limit

    def deposit(self, name: str, cents: int) -> int:
        self.balances[name] += cents
        return self.balances[name]

    def transfer(self, source: str, target: str, cents: int) -> tuple[int, int]:
        """Move cents; ValueError if the source would go past its balance and overdraft limit."""
        if self.balances[source] + self.limits[source] < cents:
            raise ValueError("insufficient funds")
        self.balances[source] -= cents
        self.balances[target] += cents
        return self.balances[source], self.balances[target]


def slug(text: str, max_words: int) -> str:
    """At most `max_words` words of `text`, lower-cased, joined by '-'."""
    return "-".join(text.lower().split()[:max_words])


def overlap(start: int, end: int, other_start: int, other_end: int) -> bool:
    """Whether the stays [start, end) and [other_start, other_end) share a night."""
    return start < other_end and other_start < end
'''

TOP_BODY = (
    "    return [name for name, _ in sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:count]]\n"
)
SLUG_BODY = """    return "-".join(text.lower().split()[:max_words])\n"""
OVERLAP_BODY = "    return start < other_end and other_start < end\n"
STUB = '    raise NotImplementedError("not implemented yet")\n'
BASE = REFERENCE.replace(TOP_BODY, STUB).replace(SLUG_BODY, STUB).replace(OVERLAP_BODY, STUB)
SCENARIOS = [
    # the visible tie (b, c) is already in name order
    {"kind": "call", "target": "shop.core:top", "args": [{"a": 1, "b": 3, "c": 3, "d": 2}, 3]},
    {"kind": "call", "target": "shop.core:settings", "args": ["# app\nname = shop\n"]},
    {"kind": "call", "target": "shop.core:settings", "args": ["oops\n"]},
    {
        "kind": "object",
        "target": "shop.core:demo_table",
        "args": [],
        "steps": [["call", ["GET", "/users"]], ["call", ["PUT", "/health"]], ["call", ["GET", "/nope"]]],
    },
    {
        "kind": "object",
        "target": "shop.core:Bank",
        "args": [],
        "steps": [
            ["open", ["x", 0]],
            ["open", ["y", 300]],
            ["deposit", ["x", 700]],
            ["transfer", ["x", "y", 650]],
        ],
    },
    {"kind": "call", "target": "shop.core:slug", "args": ["Top Ten Tips", 2]},
    {"kind": "call", "target": "shop.core:overlap", "args": [0, 3, 2, 4]},
    {"kind": "call", "target": "shop.core:overlap", "args": [0, 2, 2, 4]},
    {"kind": "call", "target": "shop.core:overlap", "args": [1, 9, 3, 4]},
]
TASK = one_module_task(
    "shop-rules",
    "Feature request: `shop.core.top`, `shop.core.slug` and `shop.core.overlap` raise NotImplementedError."
    " Implement them as their docstrings say.",
    "shop/core.py",
    BASE,
    REFERENCE,
    SCENARIOS,
)

grader = module_grader(TASK, "shop")


def _with(*pairs: tuple[str, str]) -> dict[str, str]:
    return edited_reference(TASK, "shop/core.py", *pairs)


WRONG = {
    # 1. ties by insertion order: the listed tie is already in name order
    "ties by insertion": _with(
        (TOP_BODY, "    return sorted(totals, key=lambda name: totals[name], reverse=True)[:count]\n")
    ),
    # 2. the line number counts only significant lines
    "line number skips blank and comment lines": _with(
        (
            "    for number, raw in enumerate(text.splitlines(), start=1):\n        line = raw.strip()\n"
            '        if not line or line.startswith("#"):\n            continue\n',
            '    lines = [raw.strip() for raw in text.splitlines() if raw.strip() and not raw.strip().startswith("#")]\n'
            "    for number, line in enumerate(lines, start=1):\n",
        )
    ),
    # 3. a handler's exception turned into a status the docstring does not name
    "handler exception swallowed": _with(
        (
            "            return 200, handler(path)\n",
            "            try:\n                return 200, handler(path)\n            except Exception:\n"
            '                return 500, "internal error"\n',
        )
    ),
    # 4. 405 as soon as a route of the path has another method, before later routes are tried
    "405 before later routes": _with(
        (
            "                other_method = True\n                continue\n",
            '                return 405, "method not allowed"\n',
        )
    ),
    # 5. the overdraft limit ignored: the scenario only transfers from the account without one
    "overdraft ignored": _with(
        ("if self.balances[source] + self.limits[source] < cents:", "if self.balances[source] < cents:")
    ),
}

RIGHT = {
    "ranking by two stable sorts": _with(
        (
            TOP_BODY,
            "    by_name = sorted(totals)\n    return sorted(by_name, key=lambda n: -totals[n])[:count]\n",
        )
    ),
    # differs from slicing only for a negative count, which "at most max_words words" does not cover
    "slug by a loop": _with(
        (
            SLUG_BODY,
            "    kept: list[str] = []\n    for word in text.lower().split():\n"
            "        if len(kept) == max_words:\n            break\n        kept.append(word)\n"
            '    return "-".join(kept)\n',
        )
    ),
    # differs from the reference only when a stay is empty or reversed (end <= start)
    "overlap by max and min": _with(
        (OVERLAP_BODY, "    return max(start, other_start) < min(end, other_end)\n")
    ),
}


def test_reference_passes_and_no_op_scores_nothing(grader: RepoGrader) -> None:
    assert_full_reward(grader, TASK, TASK.hidden["reference"])
    verdict = grader.grade_state(TASK, TASK.hidden["base"])
    assert not verdict.passed and verdict.reward <= 0.05, verdict.feedback


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_fix_fails(grader: RepoGrader, name: str) -> None:
    assert_fails(grader, TASK, WRONG[name], name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_right_fix_written_otherwise_passes(grader: RepoGrader, name: str) -> None:
    assert_full_reward(grader, TASK, RIGHT[name])


def test_mapping_order_variants_reverse_and_tie() -> None:
    variants = mapping_order_variants({"a": 1, "b": 3}, ties=True)
    assert [list(v.items()) for v in variants] == [[("b", 3), ("a", 1)], [("b", 3), ("a", 3)]]
    assert mapping_order_variants({"a": 1, "b": 3}, ties=False) == [{"b": 3, "a": 1}]  # no tie rule stated
    assert mapping_order_variants({"a": 1}, ties=True) == []
    assert states_ties(TASK.hidden["base"]) and not states_ties({"m.py": "def f(): pass"})


def test_line_shift_and_comment_lines() -> None:
    assert comment_lines(["# app\nname = shop\n", "; top\nx", "# again"]) == ["# app", "; top"]
    assert line_shift_variants("oops\n", ["# app"]) == ["\noops\n", "# app\noops\n"]
    assert line_shift_variants("one line", ["# app"]) == []


def test_swapped_arguments() -> None:
    assert swapped_arguments(["x", "y", 650]) == [["y", "x", 650], ["y", "x", 1]]
    assert swapped_arguments(["x", "x", 1]) == []


def test_registrations_found_in_the_code() -> None:
    found = registrations(TASK.hidden["base"])
    assert found["shop.core:Table"] == (
        "add",
        "Table",
        [
            ("add", ["GET", "/users", None]),
            ("add", ["POST", "/users", None]),
            ("add", ["GET", "/health", None]),
        ],
    )


def test_calls_outside_the_shown_domain_are_compared_only_where_the_reference_rejects_them() -> None:
    domains = shown_domains(SCENARIOS, parameter_names(TASK.hidden["reference"]))
    assert domains["shop.core:slug"].non_negative == {1}
    assert domains["shop.core:top"].non_negative == {1}  # `count`; `totals` is no number
    overlap_domain = domains["shop.core:overlap"]
    assert overlap_domain.ordered == {0: True, 2: True} and 1 not in overlap_domain.ordered
    reversed_stay = {
        "kind": "call",
        "target": "shop.core:overlap",
        "args": [3, 0, 2, 4],
        "derived": "call-domain",
    }
    assert outside_shown_domain(reversed_stay, overlap_domain)
    assert not kept_by_reference(reversed_stay, {"value": False}, [], domains)
    assert kept_by_reference(reversed_stay, {"raises": "ValueError"}, [], domains)
    negative = {"kind": "call", "target": "shop.core:slug", "args": ["a b", -1], "derived": "call-domain"}
    assert not kept_by_reference(negative, {"value": "a"}, [], domains)
    inside = {"kind": "call", "target": "shop.core:slug", "args": ["a b", 0], "derived": "call-domain"}
    assert kept_by_reference(inside, {"value": ""}, [], domains)
    listed = SCENARIOS[-1]
    assert kept_by_reference({**listed, "args": [3, 0, 2, 4]}, {"value": False}, [], domains)  # listed: kept


def test_registrations_with_a_named_function() -> None:
    bus = (
        "class Bus:\n    def on(self, event: str, handler: object) -> None:\n        pass\n\n\n"
        "def saved(event: str) -> str:\n    return event\n\n\n"
        "def make() -> Bus:\n    bus = Bus()\n    bus.on('saved', saved)\n    bus.on('other', len)\n    return bus\n"
    )
    found = registrations({"m/__init__.py": "", "m/bus.py": bus})
    assert found == {
        "m.bus:Bus": ("on", "Bus", [("on", ["saved", None])])
    }  # `len` is no function of the repository


def test_a_shifted_text_is_compared_only_on_the_same_error() -> None:
    check = {
        "kind": "call",
        "target": "shop.core:settings",
        "args": ["\noops\n"],
        "when": "origin-raises",
        "variant_of": 0,
    }
    error = {"raises": "SettingsError", "detail": {"line": 2}}
    assert kept_by_reference(check, error, [{"raises": "SettingsError"}], {})
    assert not kept_by_reference(check, error, [{"raises": "KeyError"}], {})  # another error path
    assert not kept_by_reference(check, error, [{"value": {}}], {})  # the listed call does not fail
    assert not kept_by_reference(check, {"value": {}}, [{"raises": "SettingsError"}], {})
