"""Wrong fixes that apply documented steps in another order, or filter and order data otherwise than
the reference (issue 31), on a small repository of our own graded by the real repo grader: each wrong
candidate below passed before the derived checks covered its class (crossed scenario values and the
smallest unit, names two arguments share, values that hit two normalising steps at once, what a call
prints, every status value the code names plus one it does not, rows in another insertion order).
"""

from __future__ import annotations

import pytest

from rlvr.graders.repo.checks import derived_checks
from rlvr.graders.repo.data_variants import record_variants, seed_variants, status_vocabulary
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

REFERENCE = '''"""A small shop: names, prices, settings, an audit trail and an order queue."""

import sqlite3

LONG_STAY = 7


def clean(name: str, default: str = "guest") -> str:
    """Strip the name, then lower-case it, then use `default` if nothing is left."""
    name = name.strip().lower()
    return name or default


def total(rate: int, nights: int, promo: str = "") -> int:
    """rate * nights, 10% off (rounded down) from LONG_STAY nights, then half off (rounded down) for HALF."""
    amount = rate * nights
    if nights >= LONG_STAY:
        amount = amount * 9 // 10
    if promo == "HALF":
        amount = amount // 2
    return amount


def settings(text: str, env: dict[str, str]) -> dict[str, str]:
    """`key = value` lines, then every APP_<KEY> of `env` on top (the environment wins)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    for name, value in env.items():
        if name.startswith("APP_"):
            out[name[4:].lower()] = value
    return out


def save(record: dict[str, int]) -> int:
    """Check the record (prints "checked"), then store it (prints "stored"); returns its id."""
    print("checked", record["id"])
    print("stored", record["id"])
    return record["id"]


def pending(records: list[dict[str, str]]) -> list[str]:
    """The names of the records whose status is 'open', in the order given."""
    return [r["name"] for r in records if r["status"] == "open"]


def queue(connection: sqlite3.Connection) -> list[list[object]]:
    """The open orders, earliest due first."""
    rows = connection.execute("SELECT name, due FROM orders WHERE status = 'open' ORDER BY due")
    return [list(row) for row in rows]
'''
BASE = REFERENCE.replace(
    "    name = name.strip().lower()\n    return name or default\n",
    "    name = name or default\n    return name.strip().lower()\n",
)
TESTS = """from shop.core import clean, pending


def test_clean() -> None:
    assert clean(" Ann ") == "ann"


def test_pending() -> None:
    assert pending([{"name": "a", "status": "open"}, {"name": "b", "status": "done"}]) == ["a"]
"""
SEED = [
    "CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, due INTEGER NOT NULL,"
    " status TEXT NOT NULL DEFAULT 'open')",
    "INSERT INTO orders (name, due, status) VALUES ('tea', 1, 'open')",
    "INSERT INTO orders (name, due, status) VALUES ('cake', 2, 'done')",
    "INSERT INTO orders (name, due, status) VALUES ('pie', 3, 'open')",
]
SCENARIOS = [
    {"kind": "call", "target": "shop.core:clean", "args": [" Ann "]},
    {"kind": "call", "target": "shop.core:clean", "args": ["Bob", "nobody"]},
    {"kind": "call", "target": "shop.core:total", "args": [100, 7]},
    {"kind": "call", "target": "shop.core:total", "args": [120, 2, "HALF"]},
    {"kind": "call", "target": "shop.core:settings", "args": ["port = 1\nhost = h", {"APP_USER": "me"}]},
    {"kind": "call", "target": "shop.core:save", "args": [{"id": 3}]},
    {
        "kind": "call",
        "target": "shop.core:pending",
        "args": [[{"name": "a", "status": "open"}, {"name": "b", "status": "open"}]],
    },
    {"kind": "sqlite", "target": "shop.core:queue", "seed_sql": SEED, "queries": []},
]


TASK = one_module_task(
    "shop-order",
    "Bug: `clean` applies the default before stripping, so a blank name stays blank. Fix it.",
    "shop/core.py",
    BASE,
    REFERENCE,
    SCENARIOS,
    tests=TESTS,
)


grader = module_grader(TASK, "shop")


def _with(old: str, new: str) -> dict[str, str]:
    return edited_reference(TASK, "shop/core.py", (old, new))


WRONG = {
    # a blank name: stripping before the default gives the default, after it gives ""
    "default before strip": _with(
        "    name = name.strip().lower()\n    return name or default\n",
        "    name = name.lower()\n    if not name:\n        return default\n    return name.strip()\n",
    ),
    # the promo halves before the long-stay discount: rounding differs at total(1, 7, "HALF")
    "promo before discount": _with(
        "    if nights >= LONG_STAY:\n        amount = amount * 9 // 10\n"
        '    if promo == "HALF":\n        amount = amount // 2\n',
        '    if promo == "HALF":\n        amount = amount // 2\n'
        "    if nights >= LONG_STAY:\n        amount = amount * 9 // 10\n",
    ),
    # the file's lines win over the environment when both name a key
    "environment under the file": _with(
        "    out: dict[str, str] = {}\n    for line in text.splitlines():\n"
        '        key, _, value = line.partition("=")\n        out[key.strip()] = value.strip()\n'
        '    for name, value in env.items():\n        if name.startswith("APP_"):\n'
        "            out[name[4:].lower()] = value\n",
        "    out: dict[str, str] = {}\n    for name, value in env.items():\n"
        '        if name.startswith("APP_"):\n            out[name[4:].lower()] = value\n'
        '    for line in text.splitlines():\n        key, _, value = line.partition("=")\n'
        "        out[key.strip()] = value.strip()\n",
    ),
    # stores before checking: the same id comes back, the printed trail is in another order
    "store before check": _with(
        '    print("checked", record["id"])\n    print("stored", record["id"])\n',
        '    print("stored", record["id"])\n    print("checked", record["id"])\n',
    ),
    # every record counts, whatever its status (the scenario's records are all open)
    "record status ignored": _with('if r["status"] == "open"]', "]"),
    # the given order dropped for the name's (the scenario's records are already sorted)
    "records sorted": _with(
        'return [r["name"] for r in records if r["status"] == "open"]',
        'return sorted(r["name"] for r in records if r["status"] == "open")',
    ),
    # anything not 'done' counts as open: an order with a status the code never names is listed
    "every other status open": _with("WHERE status = 'open'", "WHERE status != 'done'"),
    # rows in insertion order instead of by due date (the seed inserts them by due date)
    "query ordered by id": _with("ORDER BY due", "ORDER BY id"),
}


def test_status_vocabulary_names_every_compared_or_defaulted_value() -> None:
    vocabulary = status_vocabulary(TASK.hidden["base"], SEED)
    assert vocabulary["status"] == ["done", "open", "rlvr-unseen"]


def test_seed_and_record_variants_cover_each_status_and_the_reverse_order() -> None:
    vocabulary = status_vocabulary(TASK.hidden["base"], SEED)
    seeds = [v["seed_sql"] for v in seed_variants(SCENARIOS[-1], vocabulary)]
    assert [*SEED[:2], SEED[2].replace("'done'", "'open'"), SEED[3]] in seeds
    assert [*SEED[:3], SEED[3].replace("'open'", "'rlvr-unseen'")] in seeds
    assert [SEED[0], SEED[3], SEED[2], SEED[1]] in seeds
    records = [{"name": "a", "status": "open"}, {"name": "b", "status": "open"}]
    variants = record_variants(records, vocabulary)
    assert [{"name": "a", "status": "done"}, records[1]] in variants and records[::-1] in variants


def test_derived_checks_cross_scenario_values_and_shared_names() -> None:
    derived = derived_checks(SCENARIOS, TASK.hidden["base"], TASK.hidden["reference"])
    calls = [(c["target"].rsplit(":", 1)[1], c["args"]) for c in derived if c["kind"] == "call"]
    assert ("total", [100, 7, "HALF"]) in calls and ("total", [1, 7, "HALF"]) in calls
    assert ("clean", ["   "]) in calls
    assert ("settings", ["port = 1\nhost = h", {"APP_PORT": "me"}]) in calls


def test_reference_passes_and_noop_scores_zero(grader: RepoGrader) -> None:
    assert grader.grade_state(TASK, TASK.hidden["reference"]).reward == 1.0
    assert grader.grade_state(TASK, TASK.hidden["base"]).reward == 0.0


def test_a_correct_fix_in_other_words_passes(grader: RepoGrader) -> None:
    state = _with(
        "    name = name.strip().lower()\n    return name or default\n",
        "    stripped = name.strip()\n    return stripped.lower() if stripped else default\n",
    )
    assert_full_reward(grader, TASK, state)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_steps_in_another_order_and_other_filters_fail(grader: RepoGrader, name: str) -> None:
    assert_fails(grader, TASK, WRONG[name], name)
