"""Red team 7, Repo-v0's observed object state (`child_driver.observed_state`): after each step of an
object scenario the sandbox reads the object's public attributes and turns them into plain data.

Found: an object held in an observed attribute (a `stats` record) was read through its `__dict__`
only. A record that keeps its public fields in `__slots__`, or behind properties with a setter,
showed as its type name alone: a wrong fix that never updates such a record passed (the
reference's record showed nothing either), and an honest fix that writes the record that way
failed against a reference whose record is a dataclass.

Held (controls): an observed attribute that raises, never returns, is a wide self-referential list
or a 200 MB string, or exits the process, is a scored failure of the candidate (a timeout or crash
flag at most), never a grading error.
"""

from __future__ import annotations

import pytest

from rlvr.core.types import Task
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)


def _cache_module(stats: str) -> str:
    return (
        '"""A cache that counts its evictions in `stats`."""\n\n'
        "from collections import OrderedDict\n"
        "from dataclasses import dataclass\n\n\n"
        f"{stats}\n\n"
        "class Cache:\n"
        '    """At most `capacity` keys; a new key put into a full cache evicts the least recent one."""\n\n'
        "    def __init__(self, capacity: int) -> None:\n"
        "        self.capacity = capacity\n"
        "        self.stats = Stats()\n"
        "        self._data: OrderedDict[str, int] = OrderedDict()\n\n"
        "    def get(self, key: str) -> int | None:\n"
        "        if key in self._data:\n"
        "            self.stats.hits += 1\n"
        "            self._data.move_to_end(key)\n"
        "            return self._data[key]\n"
        "        return None\n\n"
        "    def put(self, key: str, value: int) -> str | None:\n"
        '        """Store a value; returns the evicted key, if any (counted in `stats.evictions`)."""\n'
        "        if key in self._data:\n"
        "            self._data[key] = value\n"
        "            self._data.move_to_end(key)\n"
        "            return None\n"
        "        self._data[key] = value\n"
        "        if len(self._data) > self.capacity:\n"
        "            evicted, _ = self._data.popitem(last=False)\n"
        "            self.stats.evictions += 1\n"
        "            return evicted\n"
        "        return None\n"
    )


DATACLASS = "@dataclass\nclass Stats:\n    hits: int = 0\n    evictions: int = 0\n"
SLOTS = (
    "class Stats:\n"
    "    __slots__ = ('hits', 'evictions')\n\n"
    "    def __init__(self) -> None:\n"
    "        self.hits = 0\n"
    "        self.evictions = 0\n"
)
PROPERTIES = (
    "class Stats:\n"
    "    def __init__(self) -> None:\n"
    "        self._counts = [0, 0]\n\n"
    "    @property\n"
    "    def hits(self) -> int:\n"
    "        return self._counts[0]\n\n"
    "    @hits.setter\n"
    "    def hits(self, value: int) -> None:\n"
    "        self._counts[0] = value\n\n"
    "    @property\n"
    "    def evictions(self) -> int:\n"
    "        return self._counts[1]\n\n"
    "    @evictions.setter\n"
    "    def evictions(self, value: int) -> None:\n"
    "        self._counts[1] = value\n"
)
PUT_BODY = (
    "        if key in self._data:\n"
    "            self._data[key] = value\n"
    "            self._data.move_to_end(key)\n"
    "            return None\n"
    "        self._data[key] = value\n"
    "        if len(self._data) > self.capacity:\n"
    "            evicted, _ = self._data.popitem(last=False)\n"
    "            self.stats.evictions += 1\n"
    "            return evicted\n"
    "        return None\n"
)
STUB = '        raise NotImplementedError("not implemented yet")\n'
SCENARIOS = [
    {
        "kind": "object",
        "target": "kv.cache:Cache",
        "args": [2],
        "steps": [["put", ["a", 1]], ["put", ["b", 2]], ["get", ["a"]], ["put", ["c", 3]], ["get", ["b"]]],
    }
]
PROMPT = (
    "Feature request: `kv.cache.Cache.put` raises NotImplementedError. Implement it as its docstring says."
)


def _task(task_id: str, stats: str) -> Task:
    reference = _cache_module(stats)
    return one_module_task(
        task_id, PROMPT, "kv/cache.py", reference.replace(PUT_BODY, STUB), reference, SCENARIOS
    )


TASKS = {
    "dataclass": _task("kv-dataclass", DATACLASS),
    "slots": _task("kv-slots", SLOTS),
    "properties": _task("kv-properties", PROPERTIES),
}
STATS_OF = {"dataclass": DATACLASS, "slots": SLOTS, "properties": PROPERTIES}
grader_dataclass = module_grader(TASKS["dataclass"], "kv")
grader_slots = module_grader(TASKS["slots"], "kv")
grader_properties = module_grader(TASKS["properties"], "kv")


def _grader(request: pytest.FixtureRequest, kind: str) -> RepoGrader:
    return request.getfixturevalue(f"grader_{kind}")


def _edited(kind: str, *edits: tuple[str, str]) -> dict[str, str]:
    return edited_reference(TASKS[kind], "kv/cache.py", *edits)


NEVER_COUNTED = ("            self.stats.evictions += 1\n", "")


@pytest.mark.parametrize("kind", ["slots", "properties"])
def test_a_record_in_slots_or_properties_that_is_never_updated_fails(
    request: pytest.FixtureRequest, kind: str
) -> None:
    # evicts and returns the evicted key, but the record a caller reads never counts it
    assert_fails(_grader(request, kind), TASKS[kind], _edited(kind, NEVER_COUNTED), kind)


@pytest.mark.parametrize("kind", ["slots", "properties"])
def test_an_honest_record_written_with_slots_or_properties_passes(
    request: pytest.FixtureRequest, kind: str
) -> None:  # against a reference whose record is a dataclass
    state = _edited("dataclass", (DATACLASS, STATS_OF[kind]))
    assert_full_reward(_grader(request, "dataclass"), TASKS["dataclass"], state)


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_the_reference_passes_and_its_record_kept_another_way_passes(
    request: pytest.FixtureRequest, kind: str
) -> None:  # the controls: each reference, and each record written another way against it
    grader = _grader(request, kind)
    assert_full_reward(grader, TASKS[kind], TASKS[kind].hidden["reference"])
    for other in sorted(STATS_OF):
        assert_full_reward(grader, TASKS[kind], _edited(kind, (STATS_OF[kind], STATS_OF[other])))


HOSTILE_CAPACITY = {
    "raises": "        raise ValueError('no capacity')\n",
    "never returns": "        while True:\n            pass\n",
    "wide self-referential list": "        loop: list = []\n        loop.extend([loop] * 8)\n        return loop\n",
    "200 MB string": "        return 'x' * 200_000_000\n",
    "exits the process": "        import os\n        os._exit(0)\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_CAPACITY))
def test_a_hostile_observed_attribute_is_a_scored_failure(request: pytest.FixtureRequest, name: str) -> None:
    accessor = (
        "    @property\n    def capacity(self):\n"
        + HOSTILE_CAPACITY[name]
        + "\n    @capacity.setter\n    def capacity(self, value):\n        self._capacity = value\n\n"
        "    def get(self, key: str) -> int | None:\n"
    )
    state = _edited("dataclass", ("    def get(self, key: str) -> int | None:\n", accessor))
    state["kv/cache.py"] = state["kv/cache.py"].replace(
        "len(self._data) > self.capacity", "len(self._data) > self._capacity"
    )
    verdict = _grader(request, "dataclass").grade_state(TASKS["dataclass"], state)
    assert not verdict.passed and verdict.reward < 1.0, verdict.feedback
    assert verdict.error is None and verdict.fault is None, (verdict.error, verdict.fault)


# ---------------------------------------------------------------- values the driver could not convert
GRID = '''"""Points on a grid."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    x: int
    y: int


def tally(pairs: list[list[int]]) -> dict[Point, int]:
    """How many times each point occurs in `pairs` ([x, y] each)."""
    counts: dict[Point, int] = {}
    for x, y in pairs:
        point = Point(x, y)
        counts[point] = counts.get(point, 0) + 1
    return counts


def by_row(pairs: list[list[int]]) -> dict[tuple[int, Point], str]:
    """Each point keyed by (its row, itself), valued by its label "x,y"."""
    return {(y, Point(x, y)): f"{x},{y}" for x, y in pairs}
'''
TALLY_BODY = """    counts: dict[Point, int] = {}
    for x, y in pairs:
        point = Point(x, y)
        counts[point] = counts.get(point, 0) + 1
    return counts
"""
ROW_BODY = '    return {(y, Point(x, y)): f"{x},{y}" for x, y in pairs}\n'
GRID_TASK = one_module_task(
    "grid-tally",
    "Feature request: `grid.points.tally` and `grid.points.by_row` raise NotImplementedError. Implement them.",
    "grid/points.py",
    GRID.replace(TALLY_BODY, STUB).replace(ROW_BODY, STUB),
    GRID,
    [
        {"kind": "call", "target": "grid.points:tally", "args": [[[1, 2], [1, 2], [3, 4]]]},
        {"kind": "call", "target": "grid.points:by_row", "args": [[[1, 2], [3, 4]]]},
    ],
)
grader_grid = module_grader(GRID_TASK, "grid")
GRID_WRONG = {
    # every count 7: the reference's value (keyed by a dataclass) failed to convert, so did this one
    "wrong counts": [("counts.get(point, 0) + 1", "7")],
    # raising: "the value did not convert" read as "the call raised TypeError", and TypeError is
    # named nowhere the agent reads, so any exception matched it
    "raises instead": [(TALLY_BODY, "    raise KeyError('no tally')\n")],
    "wrong labels under a tuple key": [('f"{x},{y}"', 'f"{y},{x}"')],
}


@pytest.mark.parametrize("name", sorted(GRID_WRONG))
def test_a_wrong_value_keyed_by_a_dataclass_fails(grader_grid: RepoGrader, name: str) -> None:
    assert_fails(
        grader_grid, GRID_TASK, edited_reference(GRID_TASK, "grid/points.py", *GRID_WRONG[name]), name
    )


def test_the_reference_keyed_by_a_dataclass_passes(grader_grid: RepoGrader) -> None:  # the control
    assert_full_reward(grader_grid, GRID_TASK, GRID_TASK.hidden["reference"])
    # and the same counts built another way
    other = edited_reference(
        GRID_TASK,
        "grid/points.py",
        (
            TALLY_BODY,
            "    from collections import Counter\n\n    return dict(Counter(Point(x, y) for x, y in pairs))\n",
        ),
    )
    assert_full_reward(grader_grid, GRID_TASK, other)


# ---------------------------------------------------------------- standard-library values
MONEY = '''"""Amounts, dates and queues of a small ledger."""

import datetime
from collections import deque
from decimal import Decimal
from fractions import Fraction


def total(amounts: list[str]) -> Decimal:
    """The sum of `amounts` ("10.50", ...) as a Decimal."""
    return sum((Decimal(a) for a in amounts), Decimal("0"))


def due(day: str, days: int) -> datetime.date:
    """The date `days` days after `day` (ISO format)."""
    return datetime.date.fromisoformat(day) + datetime.timedelta(days=days)


def stamp(day: str, hour: int) -> datetime.datetime:
    """`day` (ISO) at `hour` o'clock."""
    return datetime.datetime.fromisoformat(day).replace(hour=hour)


def gap(first: str, second: str) -> datetime.timedelta:
    """The time from `first` to `second` (ISO dates)."""
    return datetime.date.fromisoformat(second) - datetime.date.fromisoformat(first)


def share(part: int, whole: int) -> Fraction:
    """`part` of `whole`, exactly."""
    return Fraction(part, whole)


def recent(items: list[str], keep: int) -> deque:
    """The last `keep` items."""
    return deque(items, maxlen=keep)


def raw(text: str) -> bytearray:
    """The text's UTF-8 bytes, mutable."""
    return bytearray(text.encode())


def rotate(x: float, y: float) -> complex:
    """The point (x, y) turned a quarter turn counter-clockwise, as a complex number."""
    return complex(x, y) * 1j
'''
MONEY_CALLS = {
    "total": [["10.50", "0.25"]],
    "due": ["2024-01-30", 3],
    "stamp": ["2024-01-30", 9],
    "gap": ["2024-01-01", "2024-03-01"],
    "share": [2, 6],
    "recent": [["a", "b", "c"], 2],
    "raw": ["hé"],
    "rotate": [1.0, 2.0],
}
MONEY_TASK = one_module_task(
    "ledger-values",
    "Bug report: check `ledger.values`; its functions should do what their docstrings say.",
    "ledger/values.py",
    MONEY,
    MONEY,
    [{"kind": "call", "target": f"ledger.values:{name}", "args": args} for name, args in MONEY_CALLS.items()],
)
grader_money = module_grader(MONEY_TASK, "ledger")
MONEY_WRONG = {
    "total": ('Decimal("0"))', 'Decimal("1"))'),
    "due": ("timedelta(days=days)", "timedelta(days=days + 1)"),
    "stamp": ("replace(hour=hour)", "replace(hour=hour, minute=1)"),
    "gap": (
        "fromisoformat(second) - datetime.date.fromisoformat(first)",
        "fromisoformat(second) - datetime.date.fromisoformat(second)",
    ),
    "share": ("Fraction(part, whole)", "Fraction(part + 1, whole)"),
    "recent": ("deque(items, maxlen=keep)", "deque(items[:keep], maxlen=keep)"),
    "raw": ("text.encode()", 'text.encode("latin-1")'),
    "rotate": ("complex(x, y) * 1j", "complex(x, y) * -1j"),
}


@pytest.mark.parametrize("name", sorted(MONEY_WRONG))
def test_a_wrong_standard_library_value_fails(grader_money: RepoGrader, name: str) -> None:
    # before: every value of these types showed as its type name alone, so any such value passed
    assert_fails(
        grader_money, MONEY_TASK, edited_reference(MONEY_TASK, "ledger/values.py", MONEY_WRONG[name]), name
    )


def test_standard_library_values_equal_as_their_types_compare_pass(grader_money: RepoGrader) -> None:
    assert_full_reward(grader_money, MONEY_TASK, MONEY_TASK.hidden["reference"])  # the control
    other = edited_reference(
        MONEY_TASK,
        "ledger/values.py",
        # equal by `==`, written otherwise: a Decimal with more places, a deque filled after
        (
            'return sum((Decimal(a) for a in amounts), Decimal("0"))',
            'return sum((Decimal(a) for a in amounts), Decimal("0.000"))',
        ),
        (
            "return deque(items, maxlen=keep)",
            "kept: deque = deque(maxlen=keep)\n    kept.extend(items)\n    return kept",
        ),
    )
    assert_full_reward(grader_money, MONEY_TASK, other)


# ---------------------------------------------------------------- records a function returns
LOGS = '''"""Log lines."""


class Entry:
    def __init__(self, level: str, text: str) -> None:
        self.level = level
        self.text = text
        self.tags: list[str] = []


class Node:
    def __init__(self, name: str, parent: "Node | None" = None) -> None:
        self.name = name
        self.parent = parent
        self.children: list[Node] = []
        if parent is not None:
            parent.children.append(self)


def parse(line: str) -> Entry:
    """`LEVEL: text #tag ...` as an Entry (level upper-cased, text stripped, tags without `#`)."""
    level, _, rest = line.partition(":")
    words = rest.split()
    entry = Entry(level.strip().upper(), " ".join(w for w in words if not w.startswith("#")))
    entry.tags = [w[1:] for w in words if w.startswith("#")]
    return entry


def tree(paths: list[str]) -> Node:
    """The tree of `a/b/c` paths under a root named "/" (children in first-seen order)."""
    root = Node("/")
    for path in paths:
        at = root
        for part in path.split("/"):
            found = next((c for c in at.children if c.name == part), None)
            at = found if found is not None else Node(part, at)
    return root


def kind_of(name: str) -> type:
    """The class a record kind names: "entry" -> Entry, "node" -> Node."""
    return {"entry": Entry, "node": Node}[name]
'''
LOGS_TASK = one_module_task(
    "logs-records",
    "Bug report: check `logs.records`; its functions should do what their docstrings say.",
    "logs/records.py",
    LOGS,
    LOGS,
    [
        {"kind": "call", "target": "logs.records:parse", "args": ["warn: disk low #disk #ops"]},
        {"kind": "call", "target": "logs.records:tree", "args": [["a/b", "a/c", "d"]]},
        {"kind": "call", "target": "logs.records:kind_of", "args": ["node"]},
    ],
)
grader_logs = module_grader(LOGS_TASK, "logs")
LOGS_WRONG = {
    "text dropped": ('" ".join(w for w in words if not w.startswith("#"))', '""'),
    "tags kept with #": (
        '[w[1:] for w in words if w.startswith("#")]',
        '[w for w in words if w.startswith("#")]',
    ),
    "duplicate children": ("found if found is not None else Node(part, at)", "Node(part, at)"),
    "the wrong class": ('{"entry": Entry, "node": Node}', '{"entry": Entry, "node": Entry}'),
}


@pytest.mark.parametrize("name", sorted(LOGS_WRONG))
def test_a_returned_record_with_a_wrong_field_fails(grader_logs: RepoGrader, name: str) -> None:
    # before: an ordinary object showed as its type name alone, so any Entry equalled any other
    assert_fails(
        grader_logs, LOGS_TASK, edited_reference(LOGS_TASK, "logs/records.py", LOGS_WRONG[name]), name
    )


def test_a_returned_record_built_another_way_passes(grader_logs: RepoGrader) -> None:  # the control
    assert_full_reward(grader_logs, LOGS_TASK, LOGS_TASK.hidden["reference"])  # a tree with parent links
    other = edited_reference(
        LOGS_TASK,
        "logs/records.py",
        (
            "            found = next((c for c in at.children if c.name == part), None)\n"
            "            at = found if found is not None else Node(part, at)\n",
            "            names = [c.name for c in at.children]\n"
            "            at = at.children[names.index(part)] if part in names else Node(part, at)\n",
        ),
    )
    assert_full_reward(grader_logs, LOGS_TASK, other)


# ---------------------------------------------------------------- a class spoofing the declared type's name
GEO = '''"""Points."""

from typing import NamedTuple


class Point(NamedTuple):
    x: int
    y: int


def origin() -> Point:
    """The origin, as a Point."""
    return Point(0, 0)
'''
GEO_TASK = one_module_task(
    "geo-origin",
    "Feature request: `geo.points.origin` raises NotImplementedError; it returns the origin as a `Point`.",
    "geo/points.py",
    GEO.replace("    return Point(0, 0)\n", STUB),
    GEO,
    [{"kind": "call", "target": "geo.points:origin", "args": []}],
)
grader_geo = module_grader(GEO_TASK, "geo")
GEO_WRONG = {
    "a tuple": "    return (0, 0)\n",
    # a tuple class of the same name made on the spot: `origin().x` raises AttributeError
    "a class named Point": '    return type("Point", (tuple,), {})((0, 0))\n',
    "a local class named Point": "    class Point(tuple):\n        pass\n\n    return Point((0, 0))\n",
}


@pytest.mark.parametrize("name", sorted(GEO_WRONG))
def test_a_value_of_another_class_under_the_declared_name_fails(grader_geo: RepoGrader, name: str) -> None:
    state = edited_reference(GEO_TASK, "geo/points.py", ("    return Point(0, 0)\n", GEO_WRONG[name]))
    assert_fails(grader_geo, GEO_TASK, state, name)


def test_the_declared_class_passes_however_it_is_built(grader_geo: RepoGrader) -> None:  # the control
    assert_full_reward(grader_geo, GEO_TASK, GEO_TASK.hidden["reference"])
    state = edited_reference(
        GEO_TASK, "geo/points.py", ("    return Point(0, 0)\n", "    return Point._make([0, 0])\n")
    )
    assert_full_reward(grader_geo, GEO_TASK, state)
