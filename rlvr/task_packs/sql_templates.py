"""Procedural templates of `sql-shop`: a schema (one of three domains with the same people / things / links
shape), its rows, a question with its constants and comparison, and the reference SQL, all drawn per seed.

Templates that compare an aggregate with a threshold (which the grader's generic boundary datasets cannot
reach) add `boundary_rows`: hidden datasets where a group sits exactly on the threshold.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Rows = dict[str, list[list[Any]]]
Spec = dict[str, Any]  # question, reference, optional kind / ordered / boundary_rows


@dataclass(frozen=True)
class Domain:
    key: str
    people: str  # table
    person: str  # noun, singular
    group: str  # column of people (a city, a branch, a house)
    group_values: tuple[str, ...]
    names: tuple[str, ...]
    things: str
    thing: str
    title: str  # name column of things
    category: str
    categories: dict[str, tuple[str, ...]]
    number: str  # REAL column of things
    links: str
    link: str
    person_key: str
    thing_key: str
    amount: str  # INTEGER column of links

    def schema(self) -> str:
        return (
            f"CREATE TABLE {self.people} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, {self.group} TEXT NOT NULL);\n"
            f"CREATE TABLE {self.things} (id INTEGER PRIMARY KEY, {self.title} TEXT NOT NULL, "
            f"{self.category} TEXT NOT NULL, {self.number} REAL NOT NULL);\n"
            f"CREATE TABLE {self.links} (id INTEGER PRIMARY KEY, "
            f"{self.person_key} INTEGER NOT NULL REFERENCES {self.people}(id), "
            f"{self.thing_key} INTEGER NOT NULL REFERENCES {self.things}(id), {self.amount} INTEGER NOT NULL);"
        )


DOMAINS = (
    Domain(
        "shop",
        "customers",
        "customer",
        "city",
        ("Lisbon", "Oslo", "Lima", "Pune", "Accra"),
        ("Ada", "Ben", "Chloe", "Dev", "Elif", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lena"),
        "products",
        "product",
        "name",
        "category",
        {
            "books": ("atlas", "novel", "diary"),
            "garden": ("hose", "rake", "pot"),
            "kitchen": ("kettle", "pan", "mug"),
        },
        "price",
        "orders",
        "order",
        "customer_id",
        "product_id",
        "quantity",
    ),
    Domain(
        "library",
        "members",
        "member",
        "branch",
        ("North", "South", "Harbor", "Old Town"),
        ("Mara", "Nico", "Omar", "Pia", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Vik", "Wen", "Yara"),
        "books",
        "book",
        "title",
        "genre",
        {
            "mystery": ("Fog", "Alibi", "Clue"),
            "poetry": ("Odes", "Haiku", "Sonnets"),
            "science": ("Cells", "Stars", "Atoms"),
        },
        "weight",
        "loans",
        "loan",
        "member_id",
        "book_id",
        "days",
    ),
    Domain(
        "school",
        "students",
        "student",
        "house",
        ("Ash", "Birch", "Cedar", "Elm"),
        ("Aiko", "Bruno", "Cleo", "Dara", "Emil", "Fern", "Gus", "Hugo", "Ines", "Joss", "Kai", "Lior"),
        "courses",
        "course",
        "name",
        "subject",
        {
            "arts": ("drawing", "music", "drama"),
            "math": ("algebra", "geometry", "logic"),
            "lang": ("latin", "greek", "welsh"),
        },
        "fee",
        "enrollments",
        "enrollment",
        "student_id",
        "course_id",
        "credits",
    ),
)
WORDS = {"<": "less than", "<=": "at most", ">": "more than", ">=": "at least"}


def draw_rows(rng: random.Random, d: Domain) -> Rows:
    names = rng.sample(d.names, rng.randint(6, 10))
    people = [[i + 1, name, rng.choice(d.group_values)] for i, name in enumerate(names)]
    items = [(category, item) for category, values in d.categories.items() for item in values]
    chosen = rng.sample(items, rng.randint(6, len(items)))
    things = [
        [i + 1, item, category, round(rng.uniform(2, 60), 2)] for i, (category, item) in enumerate(chosen)
    ]
    links = [
        [i + 1, rng.randint(1, len(people) - 2), rng.randint(1, len(things)), rng.randint(1, 9)]
        for i in range(rng.randint(10, 20))
    ]
    return {d.people: people, d.things: things, d.links: links}


def _threshold(rng: random.Random, values: list[Any], low: int, high: int) -> Any:
    """A constant to compare with: half the time one of the data's own values (a boundary in the visible rows)."""
    return rng.choice(values) if rng.random() < 0.5 else rng.randint(low, high)


# ---------------------------------------------------------------- train templates


def count_in_group(rng: random.Random, d: Domain, data: Rows) -> Spec:
    groups = [row[2] for row in data[d.people]]
    value = rng.choice(groups)
    if groups.count(value) == 1:  # a count of 1 is what `SELECT 1` returns: ask about a larger group
        value = rng.choice([group for group in groups if groups.count(group) > 1])
    return {
        "question": f"How many {d.people} have {d.group} '{value}'? Return a single number.",
        "reference": f"SELECT COUNT(*) FROM {d.people} WHERE {d.group} = '{value}'",
        "boundary_rows": [without_group(data, d, value)],
    }


def without_group(data: Rows, d: Domain, value: str) -> Rows:
    """The rows with nobody left in group `value` (they move to another group): the count is 0, which a query
    that groups first and filters the groups returns as no row at all."""
    rows = copy.deepcopy(data)
    other = next(group for group in d.group_values if group != value)
    for row in rows[d.people]:
        if row[2] == value:
            row[2] = other
    return rows


def filter_number(rng: random.Random, d: Domain, data: Rows) -> Spec:
    op = rng.choice(list(WORDS))
    limit = _threshold(rng, [row[3] for row in data[d.things]], 5, 50)
    return {
        "question": f"List the {d.title} of every {d.thing} whose {d.number} is {WORDS[op]} {limit}.",
        "reference": f"SELECT {d.title} FROM {d.things} WHERE {d.number} {op} {limit}",
    }


def links_by_amount(rng: random.Random, d: Domain, data: Rows) -> Spec:
    op = rng.choice(list(WORDS))
    limit = rng.randint(2, 8)
    return {
        "question": f"Return the id of every {d.link} whose {d.amount} is {WORDS[op]} {limit}.",
        "reference": f"SELECT id FROM {d.links} WHERE {d.amount} {op} {limit}",
    }


def count_per_person(rng: random.Random, d: Domain, data: Rows) -> Spec:
    return {
        "question": f"For every {d.person} with at least one {d.link}, return the {d.person}'s name and their "
        f"number of {d.links}.",
        "reference": f"SELECT p.name, COUNT(*) FROM {d.people} p JOIN {d.links} l ON l.{d.person_key} = p.id "
        "GROUP BY p.id",
    }


def amount_per_thing(rng: random.Random, d: Domain, data: Rows) -> Spec:
    return {
        "question": f"For every {d.thing} that appears in some {d.link}, return its {d.title} and the total "
        f"{d.amount} over its {d.links}.",
        "reference": f"SELECT t.{d.title}, SUM(l.{d.amount}) FROM {d.things} t JOIN {d.links} l "
        f"ON l.{d.thing_key} = t.id GROUP BY t.id",
    }


def category_extremes(rng: random.Random, d: Domain, data: Rows) -> Spec:
    which = rng.choice(["MIN", "MAX"])
    word = "lowest" if which == "MIN" else "highest"
    return {
        "question": f"For each {d.category}, return the {d.category} and the {word} {d.number} among its "
        f"{d.things}.",
        "reference": f"SELECT {d.category}, {which}({d.number}) FROM {d.things} GROUP BY {d.category}",
    }


def top_by_number(rng: random.Random, d: Domain, data: Rows) -> Spec:
    count = rng.randint(2, 4)
    return {
        "question": f"Return the {d.title} and {d.number} of the {count} {d.things} with the highest {d.number}, "
        f"highest first (ties by {d.title}).",
        "reference": f"SELECT {d.title}, {d.number} FROM {d.things} ORDER BY {d.number} DESC, {d.title} LIMIT {count}",
        "ordered": True,
    }


def never_linked(rng: random.Random, d: Domain, data: Rows) -> Spec:
    return {
        "question": f"Return the name of every {d.person} who has no {d.link} at all.",
        "reference": f"SELECT name FROM {d.people} WHERE id NOT IN (SELECT {d.person_key} FROM {d.links})",
    }


def total_by_category(rng: random.Random, d: Domain, data: Rows) -> Spec:
    return {
        "question": f"For each {d.category} with {d.links}, return the {d.category} and the sum of {d.number} "
        f"times {d.amount} over its {d.links}, largest first (ties by {d.category}).",
        "reference": f"SELECT t.{d.category}, SUM(t.{d.number} * l.{d.amount}) AS total FROM {d.links} l "
        f"JOIN {d.things} t ON t.id = l.{d.thing_key} GROUP BY t.{d.category} ORDER BY total DESC, t.{d.category}",
        "ordered": True,
    }


def scale_category(rng: random.Random, d: Domain, data: Rows) -> Spec:
    category = rng.choice(data[d.things])[2]
    percent = rng.choice([5, 10, 20, 25, 50])
    verb, factor = ("Raise", 1 + percent / 100) if rng.random() < 0.6 else ("Lower", 1 - percent / 100)
    return {
        "question": f"{verb} the {d.number} of every {d.thing} in the '{category}' {d.category} by {percent} "
        "percent. Change nothing else.",
        "reference": f"UPDATE {d.things} SET {d.number} = {d.number} * {factor} WHERE {d.category} = '{category}'",
        "kind": "dml",
    }


def delete_links_above(rng: random.Random, d: Domain, data: Rows) -> Spec:
    op = rng.choice([">", ">="])
    limit = rng.randint(3, 8)
    return {
        "question": f"Delete every {d.link} whose {d.amount} is {WORDS[op]} {limit}. Change nothing else.",
        "reference": f"DELETE FROM {d.links} WHERE {d.amount} {op} {limit}",
        "kind": "dml",
    }


def insert_thing(rng: random.Random, d: Domain, data: Rows) -> Spec:
    category = rng.choice(sorted(d.categories))
    value = round(rng.uniform(2, 60), 2)
    title = rng.choice(["gift", "spare", "extra", "bonus", "sample"]) + str(rng.randint(1, 99))
    return {
        "question": f"Add a {d.thing} with {d.title} '{title}', {d.category} '{category}' and {d.number} {value}; "
        "let SQLite assign its id. Change nothing else.",
        "reference": f"INSERT INTO {d.things} ({d.title}, {d.category}, {d.number}) "
        f"VALUES ('{title}', '{category}', {value})",
        "kind": "dml",
    }


# ---------------------------------------------------------------- held-out templates


def amount_by_group(rng: random.Random, d: Domain, data: Rows) -> Spec:
    return {
        "question": f"For each {d.group} whose {d.people} have {d.links}, return the {d.group} and the total "
        f"{d.amount} of those {d.links}.",
        "reference": f"SELECT p.{d.group}, SUM(l.{d.amount}) FROM {d.links} l JOIN {d.people} p "
        f"ON p.id = l.{d.person_key} GROUP BY p.{d.group}",
    }


def filter_between(rng: random.Random, d: Domain, data: Rows) -> Spec:
    low = _threshold(rng, [row[3] for row in data[d.things]], 5, 30)
    high = round(low + rng.randint(5, 25), 2)
    return {
        "question": f"List the {d.title} of every {d.thing} whose {d.number} is between {low} and {high} "
        "(both included).",
        "reference": f"SELECT {d.title} FROM {d.things} WHERE {d.number} BETWEEN {low} AND {high}",
    }


def delete_links_below(rng: random.Random, d: Domain, data: Rows) -> Spec:
    op = rng.choice(["<", "<="])
    limit = rng.randint(2, 5)
    return {
        "question": f"Delete every {d.link} whose {d.amount} is {WORDS[op]} {limit}. Change nothing else.",
        "reference": f"DELETE FROM {d.links} WHERE {d.amount} {op} {limit}",
        "kind": "dml",
    }


def exactly_on(data: Rows, d: Domain, total: float) -> Rows:
    """The rows plus a new person whose single link (amount 1) is to a new thing worth exactly `total`."""
    rows = copy.deepcopy(data)
    person, thing, link = (len(rows[t]) + 1 for t in (d.people, d.things, d.links))
    category = rows[d.things][0][2]
    rows[d.people].append([person, "Edge", rows[d.people][0][2]])
    rows[d.things].append([thing, "edge", category, float(total)])
    rows[d.links].append([link, person, thing, 1])
    return rows


def spending_over(rng: random.Random, d: Domain, data: Rows) -> Spec:
    op = rng.choice([">", ">="])
    threshold = rng.choice([50, 80, 100, 150])
    return {
        "question": f"Return the name of every {d.person} whose total (sum of {d.number} times {d.amount} over "
        f"their {d.links}) is {WORDS[op]} {threshold}, sorted by name.",
        "reference": f"SELECT p.name FROM {d.people} p JOIN {d.links} l ON l.{d.person_key} = p.id "
        f"JOIN {d.things} t ON t.id = l.{d.thing_key} GROUP BY p.id "
        f"HAVING SUM(t.{d.number} * l.{d.amount}) {op} {threshold} ORDER BY p.name, p.id",
        "ordered": True,
        "boundary_rows": [exactly_on(data, d, threshold)],
    }


def flat_category(data: Rows, d: Domain) -> Rows:
    """The rows with every thing of one category at the same value (an integer, so the average is exact): none is
    above its category's average, every one is on it."""
    rows = copy.deepcopy(data)
    category = rows[d.things][0][2]
    for row in rows[d.things]:
        if row[2] == category:
            row[3] = 20.0
    return rows


def above_category_average(rng: random.Random, d: Domain, data: Rows) -> Spec:
    return {
        "question": f"Return the {d.title} and {d.number} of every {d.thing} whose {d.number} is more than the "
        f"average {d.number} of the {d.things} in its own {d.category}.",
        "reference": f"SELECT t.{d.title}, t.{d.number} FROM {d.things} t WHERE t.{d.number} > "
        f"(SELECT AVG(u.{d.number}) FROM {d.things} u WHERE u.{d.category} = t.{d.category})",
        "boundary_rows": [flat_category(data, d)],
    }


Template = Callable[[random.Random, Domain, Rows], Spec]

TRAIN_TEMPLATES: dict[str, tuple[int, Template]] = {
    "count_in_group": (1, count_in_group),
    "filter_number": (1, filter_number),
    "links_by_amount": (1, links_by_amount),
    "insert_thing": (1, insert_thing),
    "count_per_person": (2, count_per_person),
    "amount_per_thing": (2, amount_per_thing),
    "category_extremes": (2, category_extremes),
    "scale_category": (2, scale_category),
    "delete_links_above": (2, delete_links_above),
    "top_by_number": (3, top_by_number),
    "never_linked": (3, never_linked),
    "total_by_category": (3, total_by_category),
}
HELD_OUT_TEMPLATES: dict[str, tuple[int, Template]] = {
    "filter_between": (2, filter_between),
    "delete_links_below": (2, delete_links_below),
    "amount_by_group": (3, amount_by_group),
    "spending_over": (4, spending_over),
    "above_category_average": (4, above_category_average),
}
