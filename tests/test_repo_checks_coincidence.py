"""Wrong fixes that only inputs the listed scenarios never coordinate can show (issue 31), on a small
repository of our own graded by the real repo grader.

Wrong fixes (each passed on the grader before these rules): a range test with `<=` where a stay that
starts on the last night's end does not overlap (no listed query ends where a stay starts: a
boundary coincidence); free rooms in the order added, not by name (every listed query leaves one
room free: a state with several results is never read); the chain through each job's first listed
dependency, not the one finishing last (every listed dependency list has its longest first); a
mean left unrounded where the docstring says rounded to 2 places, by a function and by an object's
method (the listed means have two decimals). Right fixes written otherwise still pass.
"""

from __future__ import annotations

import pytest

from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

FREE_BODY = """        taken = {room for room, s, e in self._stays if s < end and start < e}
        return sorted(room for room in self._rooms if room not in taken)
"""
CHAIN_BODY = """    jobs = {str(name): (int(duration), [str(d) for d in deps]) for name, duration, deps in spec}
    finish: dict[str, int] = {}

    def finished(name: str) -> int:
        if name not in finish:
            duration, deps = jobs[name]
            finish[name] = duration + max((finished(d) for d in deps), default=0)
        return finish[name]

    if not jobs:
        return []
    current = min(jobs, key=lambda name: (-finished(name), name))
    path = [current]
    while jobs[current][1]:
        current = min(jobs[current][1], key=lambda name: (-finished(name), name))
        path.append(current)
    return path[::-1]
"""
MEAN_BODY = """    if not values:
        raise ValueError("no values")
    return round(sum(values) / len(values), 2)
"""
AVERAGE_BODY = """        if not self._prices:
            return 0.0
        return round(sum(self._prices) / len(self._prices), 2)
"""
REFERENCE = f'''"""Rooms and their stays, jobs and their dependencies, and means."""


class Inn:
    def __init__(self) -> None:
        self._rooms: list[str] = []
        self._stays: list[tuple[str, int, int]] = []

    def add_room(self, name: str) -> None:
        """A new room; ValueError if the name is taken."""
        if name in self._rooms:
            raise ValueError(f"room {{name}} exists")
        self._rooms.append(name)

    def book(self, room: str, start: int, end: int) -> int:
        """A stay from night `start` up to `end` (checking out on `end`); returns how many stays there are."""
        if room not in self._rooms:
            raise KeyError(room)
        if end <= start:
            raise ValueError("a stay ends after it starts")
        self._stays.append((room, start, end))
        return len(self._stays)

    def free(self, start: int, end: int) -> list[str]:
        """Rooms with no stay on any night from `start` to `end`, by name (checking out on the day
        another checks in is not an overlap)."""
{FREE_BODY}

def run_script(commands: list[list[object]]) -> list[object]:
    """["room", name], ["book", room, start, end] and ["free", start, end] on a fresh inn, in order."""
    inn = Inn()
    results: list[object] = []
    for verb, *args in commands:
        if verb == "room":
            results.append(inn.add_room(str(args[0])))
        elif verb == "book":
            results.append(inn.book(str(args[0]), int(str(args[1])), int(str(args[2]))))
        elif verb == "free":
            results.append(inn.free(int(str(args[0])), int(str(args[1]))))
        else:
            raise ValueError(f"unknown command {{verb}}")
    return results


def critical_chain(spec: list[list[object]]) -> list[str]:
    """From (name, duration, dependencies): the chain ending at the last finisher that follows, at
    each job, the dependency finishing last (ties: alphabetically first), first job first."""
{CHAIN_BODY}

def clashes(stays: list[list[int]], start: int, end: int) -> list[int]:
    """Indexes of the stays [from, to) sharing a night with `start` to `end` (checking out on the day
    another checks in is no clash)."""
    return [i for i, (s, e) in enumerate(stays) if s < end and start < e]


class Tab:
    def __init__(self) -> None:
        self._prices: list[float] = []

    def add(self, price: float) -> int:
        """One more price; returns how many there are."""
        self._prices.append(price)
        return len(self._prices)

    def average(self) -> float:
        """Mean price rounded to 2 places (0.0 for none)."""
{AVERAGE_BODY}

def mean(values: list[float]) -> float:
    """Mean of the values rounded to 2 places; ValueError for no values."""
{MEAN_BODY}'''

STUB = '        raise NotImplementedError("not implemented yet")\n'
BASE = (
    REFERENCE.replace(FREE_BODY, STUB)
    .replace(CHAIN_BODY, '    raise NotImplementedError("not implemented yet")\n')
    .replace(
        "    return [i for i, (s, e) in enumerate(stays) if s < end and start < e]\n",
        '    raise NotImplementedError("not implemented yet")\n',
    )
    .replace(AVERAGE_BODY, STUB)
    .replace(MEAN_BODY, '    raise NotImplementedError("not implemented yet")\n')
)
SCENARIOS = [
    # every query overlaps the one stay: one room free each time; no query ends where a stay starts
    {
        "kind": "call",
        "target": "inn.core:run_script",
        "args": [[["room", "a"], ["room", "b"], ["book", "a", 1, 4], ["free", 2, 3], ["free", 3, 4]]],
    },
    {
        "kind": "call",
        "target": "inn.core:run_script",
        "args": [[["room", "a"], ["book", "a", 2, 6], ["free", 3, 5]]],
    },
    # every dependency list has its latest finisher (or a tie) first
    {
        "kind": "call",
        "target": "inn.core:critical_chain",
        "args": [[["a", 2, []], ["b", 1, []], ["c", 1, ["a", "b"]]]],
    },
    {
        "kind": "call",
        "target": "inn.core:critical_chain",
        "args": [[["x", 1, []], ["y", 1, []], ["z", 1, ["x", "y"]]]],
    },
    {"kind": "call", "target": "inn.core:critical_chain", "args": [[]]},
    # a plain call: no listed range ends where a stay starts
    {"kind": "call", "target": "inn.core:clashes", "args": [[[1, 4], [10, 14]], 2, 3]},
    {"kind": "call", "target": "inn.core:clashes", "args": [[[1, 4], [10, 14]], 3, 8]},
    # means that have two decimals already
    {"kind": "call", "target": "inn.core:mean", "args": [[1.0, 2.5]]},
    {
        "kind": "object",
        "target": "inn.core:Tab",
        "args": [],
        "steps": [["add", [1.0]], ["add", [2.5]], ["average", []]],
    },
    {"kind": "call", "target": "inn.core:mean", "args": [[]]},
]
TASK = one_module_task(
    "inn-coincidence",
    "Feature request: `inn.core.Inn.free`, `inn.core.critical_chain`, `inn.core.clashes`, `inn.core.Tab.average` and `inn.core.mean` raise"
    " NotImplementedError. Implement them as their docstrings say.",
    "inn/core.py",
    BASE,
    REFERENCE,
    SCENARIOS,
)

grader = module_grader(TASK, "inn")


def _with(*pairs: tuple[str, str]) -> dict[str, str]:
    return edited_reference(TASK, "inn/core.py", *pairs)


WRONG = {
    # a stay that starts on `end` counted as taking the room (`<=`: the checkout-day rule inverted)
    "boundary coincidence": _with(("if s < end and start < e}", "if s <= end and start < e}")),
    # the free rooms in the order they were added, not by name
    "order added": _with(
        (
            "        return sorted(room for room in self._rooms",
            "        return list(room for room in self._rooms",
        )
    ),
    # each job's first listed dependency, not the one finishing last
    "first dependency": _with(
        (
            "        current = min(jobs[current][1], key=lambda name: (-finished(name), name))\n",
            "        current = jobs[current][1][0]\n",
        )
    ),
    # the same boundary inverted in a plain call's range test
    "boundary coincidence in a call": _with(("if s < end and start < e]", "if s <= end and start < e]")),
    # an object's mean left unrounded
    "no rounding on an object": _with(
        (
            "        return round(sum(self._prices) / len(self._prices), 2)\n",
            "        return sum(self._prices) / len(self._prices)\n",
        )
    ),
    # the mean left unrounded
    "no rounding": _with(
        ("    return round(sum(values) / len(values), 2)\n", "    return sum(values) / len(values)\n")
    ),
}

RIGHT = {
    # overlap as "not before and not after", names sorted first; the chain by recursion over
    # (length, path) pairs; the mean by statistics.fmean
    "written otherwise": _with(
        (
            FREE_BODY,
            "        out = []\n"
            "        for room in sorted(self._rooms):\n"
            "            if all(e <= start or end <= s for r, s, e in self._stays if r == room):\n"
            "                out.append(room)\n"
            "        return out\n",
        ),
        (
            CHAIN_BODY,
            "    jobs = {str(n): (int(d), [str(x) for x in deps]) for n, d, deps in spec}\n"
            "    memo: dict[str, tuple[int, list[str]]] = {}\n"
            "\n"
            "    def best(name: str) -> tuple[int, list[str]]:\n"
            "        if name not in memo:\n"
            "            duration, deps = jobs[name]\n"
            "            if not deps:\n"
            "                memo[name] = (duration, [name])\n"
            "            else:\n"
            "                last = sorted(deps, key=lambda d: (-best(d)[0], d))[0]\n"
            "                length, chain = best(last)\n"
            "                memo[name] = (length + duration, [*chain, name])\n"
            "        return memo[name]\n"
            "\n"
            "    ends = sorted(jobs, key=lambda n: (-best(n)[0], n))\n"
            "    return best(ends[0])[1] if ends else []\n",
        ),
        (
            AVERAGE_BODY,
            "        total = 0.0\n"
            "        for price in self._prices:\n"
            "            total += price\n"
            "        return round(total / len(self._prices), 2) if self._prices else 0.0\n",
        ),
        (
            MEAN_BODY,
            "    import statistics\n\n"
            "    if len(values) == 0:\n"
            '        raise ValueError("mean of nothing")\n'
            "    return round(statistics.fmean(values), 2)\n",
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


def test_coincident_ranges_end_where_a_stored_one_starts_or_start_where_it_ends() -> None:
    from rlvr.graders.repo.sequences import MAX_COINCIDENCES, coincidences, script_pool

    script = SCENARIOS[0]["args"][0]
    pool = script_pool([script], {"free"})
    origin = [(c[0], list(c[1:])) for c in script]
    found = coincidences(pool, [origin])
    assert [steps[-1] for _, steps in found] == [("free", [0, 1]), ("free", [4, 5])]
    assert all(steps[:-1] == origin[:3] for _, steps in found)
    assert len(found) <= MAX_COINCIDENCES
    assert coincidences(script_pool([script], set()), [origin]) == []  # no touched step: nothing


def test_a_call_range_coincides_with_the_ranges_it_holds() -> None:
    from rlvr.graders.repo.domain_variants import MAX_COINCIDENT, coincident_ranges

    stays = [[1, 4], [10, 14]]
    assert coincident_ranges([stays, 2, 3]) == [[stays, 0, 1], [stays, 4, 5], [stays, 9, 10], [stays, 14, 15]]
    assert coincident_ranges([0, 3, 5, 9]) == [[2, 5, 5, 9], [9, 12, 5, 9]]  # touching the other pair
    assert coincident_ranges([stays, 3, 2]) == []  # no range in increasing order
    assert len(coincident_ranges([[[i, i + 1] for i in range(0, 20, 3)], 1, 2])) == MAX_COINCIDENT


def test_inner_order_reverses_lists_of_scalars_inside_entries_only() -> None:
    from rlvr.graders.repo.data_variants import inner_order_variants

    spec = [["c", 1, ["a", "b"]], ["a", 2, []], ["d", 1, ["c"]]]
    assert inner_order_variants(spec) == [[["c", 1, ["b", "a"]], ["a", 2, []], ["d", 1, ["c"]]]]
    assert inner_order_variants({"c": ["a", "b"], "a": []}) == [{"c": ["b", "a"], "a": []}]
    assert inner_order_variants([["put", "k", "v"]]) == []  # commands: nothing inside to reverse
    assert inner_order_variants([1, 2, 3]) == []  # the list itself is reversed elsewhere


def test_stated_places_and_a_digit_past_them() -> None:
    from rlvr.graders.repo.rounding_variants import more_digits, stated_places

    assert stated_places("Mean of a numeric column rounded to 2 places; ValueError for no rows.") == 2
    assert stated_places("The total, rounded to two decimal places.") == 2
    assert stated_places("Rounded down to whole cents.") is None
    assert stated_places("Keep 3 places of history.") is None  # no rounding stated
    assert more_digits([{"amount": 1.0, "n": 2}, 2.5, "1.5", True], 2) == [
        {"amount": 1.001, "n": 2},
        2.501,
        "1.5",
        True,
    ]


def test_validate_warns_of_an_exception_the_reference_adds_and_nothing_names() -> None:
    from rlvr.graders.repo.stated_raises import unstated_raise_warnings, unstated_raises

    base = {
        "p/__init__.py": "",
        "p/m.py": 'def price(rate: int) -> int:\n    """Twice the rate."""\n    raise NotImplementedError\n',
    }
    reference = {
        **base,
        "p/m.py": base["p/m.py"].replace(
            "    raise NotImplementedError\n",
            '    if rate < 0:\n        raise ValueError("negative")\n    return 2 * rate\n',
        ),
    }
    assert unstated_raises(base, reference, "Implement price.") == {"p.m:price": ["ValueError"]}
    listed = {"kind": "call", "target": "p.m:price", "args": [-1]}
    warnings = unstated_raise_warnings(
        "Implement price.", base, reference, [(3, listed, {"raises": "ValueError"})]
    )
    assert len(warnings) == 1 and "hidden check 3" in warnings[0] and "ValueError" in warnings[0]
    # stated in the issue text, or a derived check, or a value: no warning
    assert (
        unstated_raise_warnings(
            "A negative rate is a ValueError.", base, reference, [(3, listed, {"raises": "ValueError"})]
        )
        == []
    )
    assert (
        unstated_raise_warnings(
            "Implement price.",
            base,
            reference,
            [(3, {**listed, "derived": "call-domain"}, {"raises": "ValueError"})],
        )
        == []
    )
    assert unstated_raise_warnings("Implement price.", base, reference, [(3, listed, {"value": 2})]) == []
    # stated in the docstring the agent reads
    stated = {
        k: v.replace("Twice the rate.", "Twice the rate; ValueError if negative.") for k, v in base.items()
    }
    stated_ref = {
        k: v.replace("Twice the rate.", "Twice the rate; ValueError if negative.")
        for k, v in reference.items()
    }
    assert unstated_raises(stated, stated_ref, "Implement price.") == {}


def test_validate_prints_the_unstated_exception_warning() -> None:
    from rlvr.graders.repo.prove import _invisible_text
    from tests.repo_fixtures import one_task_grader

    reference = '"""Prices."""\n\n\ndef price(rate: int) -> int:\n    """Twice the rate."""\n    if rate < 0:\n        raise ValueError("negative")\n    return 2 * rate\n'
    base = reference.replace(
        '    if rate < 0:\n        raise ValueError("negative")\n    return 2 * rate\n',
        "    raise NotImplementedError\n",
    )
    scenarios = [
        {"kind": "call", "target": "shop.prices:price", "args": [2]},
        {"kind": "call", "target": "shop.prices:price", "args": [-1]},
    ]
    task = one_module_task(
        "shop-unstated", "Implement `shop.prices.price`.", "shop/prices.py", base, reference, scenarios
    )
    with one_task_grader(task, "shop") as built:
        warnings = _invisible_text(built, task)

    assert any("expects ValueError" in w and "shop.prices:price" in w for w in warnings), warnings
