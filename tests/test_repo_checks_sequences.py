"""Wrong fixes that are right on the listed method sequence and wrong on another, or wrong only in the
object's observable state (issue 31), on a small repository of our own graded by the real repo grader.

Wrong fixes (each passed before sequences and observed state were derived): an eviction counter
never incremented (state a caller reads, not a return value); the history of a key dropped once it
is deleted (a method the scenario reads, after a step it never makes first), both on an object and
through a command script; a running balance over every account (the listed command line never
posts to another account first); amounts formatted without the thousands separator the named
formatter shows (no listed amount reaches 1,000); jobs in the order pushed where the docstring
says by priority (the listed pushes are already in that order). Right fixes written otherwise still pass: a history kept in another
structure; a counter bumped in another place.
"""

from __future__ import annotations

import pytest

from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.sequences import (
    MAX_SEQUENCES,
    MAX_STEPS,
    observed_attributes,
    reversed_amounts,
    scaled_amount,
    sequence_checks,
    sequence_kept,
)
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

REFERENCE = '''"""A cache that counts its evictions, and a store that keeps the history of every key."""

from collections import OrderedDict
from dataclasses import dataclass


@dataclass
class Stats:
    hits: int = 0
    evictions: int = 0


class Cache:
    """At most `capacity` keys; putting a new key into a full cache evicts the least recent one."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.stats = Stats()
        self._data: OrderedDict[str, int] = OrderedDict()

    def get(self, key: str) -> int | None:
        if key in self._data:
            self.stats.hits += 1
            self._data.move_to_end(key)
            return self._data[key]
        return None

    def put(self, key: str, value: int) -> str | None:
        """Store a value; returns the evicted key, if any (counted in `stats.evictions`)."""
        if key in self._data:
            self._data[key] = value
            self._data.move_to_end(key)
            return None
        self._data[key] = value
        if len(self._data) > self.capacity:
            evicted, _ = self._data.popitem(last=False)
            self.stats.evictions += 1
            return evicted
        return None


class Store:
    """Keys and values; every value ever written is kept in the history."""

    def __init__(self) -> None:
        self._live: dict[str, str] = {}
        self._written: list[tuple[str, str]] = []

    def put(self, key: str, value: str) -> None:
        self._live[key] = value
        self._written.append((key, value))

    def get(self, key: str) -> str | None:
        return self._live.get(key)

    def delete(self, key: str) -> bool:
        """Remove a key; True if it existed."""
        return self._live.pop(key, None) is not None

    def history(self, key: str) -> list[str]:
        """Every value written for `key`, oldest first."""
        return [value for written, value in self._written if written == key]


def run_script(commands: list[list[str]]) -> list[object]:
    """Apply ["put", k, v], ["get", k], ["delete", k], ["history", k] to a fresh store."""
    store = Store()
    results: list[object] = []
    for verb, *args in commands:
        if verb == "put":
            results.append(store.put(args[0], args[1]))
        elif verb == "get":
            results.append(store.get(args[0]))
        elif verb == "delete":
            results.append(store.delete(args[0]))
        elif verb == "history":
            results.append(store.history(args[0]))
        else:
            raise ValueError(f"unknown command {verb}")
    return results


class Queue:
    def __init__(self) -> None:
        self._jobs: list[tuple[str, int]] = []

    def push(self, name: str, priority: int) -> None:
        """Add a job; ValueError unless its priority is positive."""
        if priority < 1:
            raise ValueError("priority must be positive")
        self._jobs.append((name, priority))

    def order(self) -> list[str]:
        """Job names by priority, lowest first (ties in the order pushed)."""
        return [name for name, _ in sorted(self._jobs, key=lambda job: job[1])]


def money(cents: int) -> str:
    """Cents as "1,234.05"."""
    return f"{cents / 100:,.2f}"


class Book:
    def __init__(self) -> None:
        self.postings: list[tuple[str, int]] = []


def statement(book: Book, name: str) -> list[str]:
    """One line per posting of `name`: "amount -> running balance of `name`", as `money` shows them."""
    running = 0
    lines: list[str] = []
    for account, cents in book.postings:
        if account != name:
            continue
        running += cents
        lines.append(f"{money(cents)} -> {money(running)}")
    return lines


def main(argv: list[str]) -> int:
    """Commands `add:NAME:CENTS` and `statement:NAME` (prints the statement's lines)."""
    book = Book()
    for word in argv:
        verb, *args = word.split(":")
        if verb == "add":
            book.postings.append((args[0], int(args[1])))
        elif verb == "statement":
            print("\\n".join(statement(book, args[0])))
        else:
            print(f"unknown command {verb}")
            return 2
    return 0
'''

PUT_BODY = """        if key in self._data:
            self._data[key] = value
            self._data.move_to_end(key)
            return None
        self._data[key] = value
        if len(self._data) > self.capacity:
            evicted, _ = self._data.popitem(last=False)
            self.stats.evictions += 1
            return evicted
        return None
"""
HISTORY_BODY = "        return [value for written, value in self._written if written == key]\n"
STUB = '        raise NotImplementedError("not implemented yet")\n'
STATEMENT_BODY = """    running = 0
    lines: list[str] = []
    for account, cents in book.postings:
        if account != name:
            continue
        running += cents
        lines.append(f"{money(cents)} -> {money(running)}")
    return lines
"""
ORDER_BODY = "        return [name for name, _ in sorted(self._jobs, key=lambda job: job[1])]\n"
BASE = (
    REFERENCE.replace(PUT_BODY, STUB)
    .replace(ORDER_BODY, STUB)
    .replace(HISTORY_BODY, STUB)
    .replace(STATEMENT_BODY, '    raise NotImplementedError("not implemented yet")\n')
)
SCENARIOS = [
    {
        "kind": "object",
        "target": "shop.core:Cache",
        "args": [2],
        "steps": [["put", ["a", 1]], ["put", ["b", 2]], ["get", ["a"]], ["put", ["c", 3]], ["get", ["b"]]],
    },
    {
        "kind": "object",
        "target": "shop.core:Store",
        "args": [],
        "steps": [["put", ["a", "1"]], ["put", ["b", "2"]], ["put", ["a", "3"]], ["history", ["a"]]],
    },
    {
        "kind": "object",
        "target": "shop.core:Store",
        "args": [],
        "steps": [["put", ["k", "v"]], ["delete", ["k"]]],
    },
    {
        "kind": "call",
        "target": "shop.core:run_script",
        "args": [[["put", "x", "1"], ["put", "y", "2"], ["history", "x"], ["delete", "y"], ["get", "y"]]],
    },
    {"kind": "cli", "target": "shop.core:main", "argv": ["add:a:1050", "add:b:225", "statement:a"]},
    # pushed in priority order already
    {
        "kind": "object",
        "target": "shop.core:Queue",
        "args": [],
        "steps": [["push", ["build", 1]], ["push", ["test", 2]], ["push", ["ship", 3]], ["order", []]],
    },
    {"kind": "cli", "target": "shop.core:main", "argv": ["statement:a", "frob"]},
]
TASK = one_module_task(
    "shop-sequences",
    "Feature request: `shop.core.Cache.put` and `shop.core.Store.history` raise NotImplementedError."
    " `shop.core.statement` too. Implement them as their docstrings say.",
    "shop/core.py",
    BASE,
    REFERENCE,
    SCENARIOS,
)

grader = module_grader(TASK, "shop")


def _with(*pairs: tuple[str, str]) -> dict[str, str]:
    return edited_reference(TASK, "shop/core.py", *pairs)


WRONG = {
    # evicts and returns the evicted key, but `stats.evictions` is never incremented
    "eviction never counted": _with(("            self.stats.evictions += 1\n", "")),
    # the history of a deleted key is gone (a join with the live keys)
    "history of a deleted key dropped": _with(
        (HISTORY_BODY, "        return [v for k, v in self._written if k == key and key in self._live]\n")
    ),
    # the running balance adds every account's postings (the listed line has only `a`'s before it)
    "running balance of every account": _with(
        (
            "        if account != name:\n            continue\n        running += cents\n",
            "        running += cents\n        if account != name:\n            continue\n",
        )
    ),
    # amounts formatted without the thousands separator `money` shows (no listed amount reaches 1,000)
    "amounts without the formatter": _with(
        (
            '        lines.append(f"{money(cents)} -> {money(running)}")\n',
            '        lines.append(f"{cents / 100:.2f} -> {running / 100:.2f}")\n',
        )
    ),
    # the jobs in the order pushed: the listed pushes are already by priority
    "order as pushed": _with((ORDER_BODY, "        return [name for name, _ in self._jobs]\n")),
}

RIGHT = {
    # the history kept per key in a dict, the eviction counted before the pop
    "history per key, counter bumped first": _with(
        (
            "            evicted, _ = self._data.popitem(last=False)\n            self.stats.evictions += 1\n",
            "            self.stats.evictions += 1\n            evicted, _ = self._data.popitem(last=False)\n",
        ),
        (
            HISTORY_BODY,
            "        by_key: dict[str, list[str]] = {}\n"
            "        for written, value in self._written:\n"
            "            by_key.setdefault(written, []).append(value)\n"
            "        return by_key.get(key, [])\n",
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_fix_fails(grader: RepoGrader, name: str) -> None:
    assert_fails(grader, TASK, WRONG[name], name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_right_fix_passes(grader: RepoGrader, name: str) -> None:
    assert_full_reward(grader, TASK, RIGHT[name])


def test_reference_passes(grader: RepoGrader) -> None:
    assert_full_reward(grader, TASK, TASK.hidden["reference"])


def test_sequences_are_deterministic_and_bounded() -> None:
    base, reference = TASK.hidden["base"], TASK.hidden["reference"]
    first = sequence_checks(SCENARIOS, base, reference)
    assert first == sequence_checks(SCENARIOS, base, reference)
    assert 0 < len(first) <= MAX_SEQUENCES
    for check in first:
        steps = check.get("steps") or check.get("argv") or check["args"][0]
        assert len(steps) <= MAX_STEPS
    # a key written, then deleted, then its history read: on the object and through the script
    objects = [[m for m, _ in c["steps"]] for c in first if c["kind"] == "object"]
    scripts = [[command[0] for command in c["args"][0]] for c in first if c["kind"] == "call"]
    assert any(names[-2:] == ["delete", "history"] for names in objects), objects
    assert any(names[-2:] == ["delete", "history"] for names in scripts), scripts


def test_observed_attributes_are_the_public_ones_the_base_sets() -> None:
    base, reference = TASK.hidden["base"], TASK.hidden["reference"]
    assert observed_attributes(base, reference, "shop.core:Cache") == ["capacity", "stats"]
    assert observed_attributes(base, reference, "shop.core:Store") == []


def test_a_sequence_is_compared_only_where_the_reference_finishes_it() -> None:
    check = {"kind": "object", "derived": "object-sequence"}
    assert sequence_kept(check, {"steps": [{"value": 1}, {"value": None}]})
    assert not sequence_kept(check, {"steps": [{"value": 1}, {"raises": "KeyError"}]})
    assert not sequence_kept(check, {"init": {"raises": "ValueError"}})
    assert not sequence_kept({"kind": "call", "derived": "script-sequence"}, {"raises": "ValueError"})
    assert sequence_kept({"kind": "call", "derived": "call-domain"}, {"raises": "ValueError"})
    assert not sequence_kept({"kind": "cli", "derived": "script-sequence"}, {"stdout": "", "exit": 2})


def test_amounts_reversed_and_scaled_keep_signs_and_shapes() -> None:
    steps = [("put", ["a", 1, "0.50"]), ("get", ["a"]), ("put", ["b", 3, "2.25"]), ("put", ["a", 0, "-1"])]
    assert reversed_amounts(steps) == [
        ("put", ["a", 0, "-1"]),
        ("get", ["a"]),
        ("put", ["b", 3, "2.25"]),
        ("put", ["a", 1, "0.50"]),
    ]
    assert [scaled_amount(v) for v in (0, -2, 7, "10.50", "3", "a1", True)] == [
        0,
        -2002,
        7007,
        "10510.50",
        "3003",
        "a1",
        True,
    ]
