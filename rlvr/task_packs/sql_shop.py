"""`sql-shop`: SQLite tasks over small three-table databases (people, things, and the links between them).

Every task has its own seeded visible database, shown in the prompt; the grader also runs the query on hidden
variants generated from the same schema, and on boundary datasets for its comparisons. Two kinds of tasks:
- the original hand-written templates over the shop schema (`sql/<template>/<index>`, 30 tasks; `HELD_OUT`
  ones form the `test` split);
- procedural tasks (`sql/<template>/<domain>/<index>`, rlvr/task_packs/sql_templates.py): a domain (shop,
  library, school), rows, constants and comparison operators drawn per seed, difficulty 1-4; held-out
  templates form the `test` split.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.task_packs import sql_templates

SCHEMA = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);"""

NAMES = ["Ada", "Ben", "Chloe", "Dev", "Elif", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lena"]
CITIES = ["Lisbon", "Oslo", "Lima", "Pune", "Accra"]
PRODUCTS = {
    "books": ["atlas", "novel", "cookbook", "diary"],
    "garden": ["hose", "rake", "seeds", "pot"],
    "kitchen": ["kettle", "pan", "whisk", "mug"],
}
TASKS_PER_TEMPLATE = 3  # the original templates
PROCEDURAL_TRAIN_PER_CELL = 30  # per template and domain: 12 templates x 3 domains x 30 = 1080 train tasks
PROCEDURAL_TEST_PER_CELL = 8  # 5 held-out templates x 3 domains x 8 = 120 test tasks

Spec = dict[str, Any]  # question, reference, and optional kind / ordered
Template = Callable[[random.Random, dict[str, list[list[Any]]]], Spec]


def shop_rows(rng: random.Random) -> dict[str, list[list[Any]]]:
    names = rng.sample(NAMES, rng.randint(6, 9))
    customers = [[i + 1, name, rng.choice(CITIES)] for i, name in enumerate(names)]
    items = [(category, item) for category, values in PRODUCTS.items() for item in values]
    chosen = rng.sample(items, rng.randint(6, 9))
    products = [
        [i + 1, item, category, round(rng.uniform(2, 60), 2)] for i, (category, item) in enumerate(chosen)
    ]
    orders = [
        [i + 1, rng.randint(1, len(customers) - 2), rng.randint(1, len(products)), rng.randint(1, 9)]
        for i in range(rng.randint(10, 18))
    ]
    return {"customers": customers, "products": products, "orders": orders}


def _any(rng: random.Random, rows: list[list[Any]], column: int) -> Any:
    return rng.choice(rows)[column]


# ---------------------------------------------------------------- train templates


def count_in_city(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    city = _any(rng, data["customers"], 2)
    return {
        "question": f"How many customers live in {city}? Return a single number.",
        "reference": f"SELECT COUNT(*) FROM customers WHERE city = '{city}'",
    }


def cheap_products(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    limit = rng.choice([10, 15, 20, 30])
    return {
        "question": f"List the name of every product that costs less than {limit}.",
        "reference": f"SELECT name FROM products WHERE price < {limit}",
    }


def orders_per_customer(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    return {
        "question": "For every customer with at least one order, return the customer's name and their number of orders.",
        "reference": "SELECT c.name, COUNT(*) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id",
    }


def revenue_by_category(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    return {
        "question": "For each product category that has orders, return the category and its revenue "
        "(sum of price times quantity), highest revenue first (ties by category name).",
        "reference": "SELECT p.category, SUM(p.price * o.quantity) AS revenue FROM orders o "
        "JOIN products p ON p.id = o.product_id GROUP BY p.category ORDER BY revenue DESC, p.category",
        "ordered": True,
    }


def never_ordered(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    return {
        "question": "Return the name of every customer who has never placed an order.",
        "reference": "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders)",
    }


def raise_prices(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    category = _any(rng, data["products"], 2)
    percent = rng.choice([5, 10, 20])
    return {
        "question": f"Raise the price of every product in the '{category}' category by {percent} percent. "
        "Change nothing else.",
        "reference": f"UPDATE products SET price = price * {1 + percent / 100} WHERE category = '{category}'",
        "kind": "dml",
        "check": ["SELECT id, name, category, round(price, 6) FROM products"],
    }


# ---------------------------------------------------------------- held-out templates


def quantity_by_city(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    return {
        "question": "For each city where customers placed orders, return the city and the total quantity "
        "ordered by its customers.",
        "reference": "SELECT c.city, SUM(o.quantity) FROM orders o JOIN customers c ON c.id = o.customer_id "
        "GROUP BY c.city",
    }


def above_category_average(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    return {
        "boundary_rows": [sql_templates.flat_category(data, sql_templates.DOMAINS[0])],
        "question": "Return the name and price of every product that costs more than the average price of "
        "the products in its own category.",
        "reference": "SELECT p.name, p.price FROM products p WHERE p.price > "
        "(SELECT AVG(q.price) FROM products q WHERE q.category = p.category)",
    }


def delete_small_orders(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    threshold = rng.randint(2, 5)
    return {
        "question": f"Delete every order whose quantity is below {threshold}. Change nothing else.",
        "reference": f"DELETE FROM orders WHERE quantity < {threshold}",
        "kind": "dml",
    }


def big_spenders(rng: random.Random, data: dict[str, list[list[Any]]]) -> Spec:
    threshold = rng.choice([50, 100, 150])
    shop = sql_templates.DOMAINS[0]
    return {
        "boundary_rows": [sql_templates.exactly_on(data, shop, threshold)],
        "question": f"Return the name of every customer whose total spending (price times quantity over all "
        f"their orders) exceeds {threshold}, sorted by name.",
        "reference": "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
        f"JOIN products p ON p.id = o.product_id GROUP BY c.id HAVING SUM(p.price * o.quantity) > {threshold} "
        "ORDER BY c.name",
        "ordered": True,
    }


TRAIN_TEMPLATES: dict[str, tuple[int, Template]] = {
    "count_in_city": (1, count_in_city),
    "cheap_products": (1, cheap_products),
    "orders_per_customer": (2, orders_per_customer),
    "raise_prices": (2, raise_prices),
    "revenue_by_category": (3, revenue_by_category),
    "never_ordered": (4, never_ordered),
}
HELD_OUT: dict[str, tuple[int, Template]] = {
    "quantity_by_city": (3, quantity_by_city),
    "delete_small_orders": (3, delete_small_orders),
    "big_spenders": (4, big_spenders),
    "above_category_average": (5, above_category_average),
}


def render_rows(data: dict[str, list[list[Any]]]) -> str:
    lines = []
    for table, rows in data.items():
        values = ",\n  ".join("(" + ", ".join(repr(v) for v in row) + ")" for row in rows)
        lines.append(f"INSERT INTO {table} VALUES\n  {values};")
    return "\n".join(lines)


def prompt_for(question: str, data: dict[str, list[list[Any]]], kind: str, schema: str = SCHEMA) -> str:
    what = (
        "one SQLite SELECT query"
        if kind == "query"
        else "the SQLite statements (INSERT/UPDATE/DELETE) to run"
    )
    return (
        f"Database schema (SQLite):\n{schema}\n\nCurrent data:\n{render_rows(data)}\n\n"
        f"Task: {question}\nAnswer with {what} in a ```sql block. It must be correct for any data in this "
        "schema, not only the rows shown."
    )


def generate(template: str, index: int) -> Task:
    difficulty, function = TRAIN_TEMPLATES.get(template) or HELD_OUT[template]
    rng = random.Random(f"sql/{template}/{index}")
    data = shop_rows(rng)
    spec = function(rng, data)
    kind = spec.get("kind", "query")
    hidden = {"schema": SCHEMA, "rows": data, "reference": spec["reference"], "kind": kind}
    hidden |= {key: spec[key] for key in ("ordered", "check", "boundary_rows") if key in spec}
    return Task(
        id=f"sql/{template}/{index}",
        prompt=prompt_for(spec["question"], data, kind),
        family="sql",
        difficulty=difficulty,
        split="test" if template in HELD_OUT else "train",
        hidden=hidden,
        meta={"template": template, "kind": kind},
    )


def generate_procedural(template: str, domain: str, index: int) -> Task:
    """One procedural task; the same arguments give the same task on every machine."""
    held_out = template in sql_templates.HELD_OUT_TEMPLATES
    difficulty, function = (sql_templates.HELD_OUT_TEMPLATES if held_out else sql_templates.TRAIN_TEMPLATES)[
        template
    ]
    chosen = next(d for d in sql_templates.DOMAINS if d.key == domain)
    rng = random.Random(f"sql-shop/{template}/{domain}/{index}")
    data = sql_templates.draw_rows(rng, chosen)
    spec = function(rng, chosen, data)
    kind = spec.get("kind", "query")
    schema = chosen.schema()
    hidden = {"schema": schema, "rows": data, "reference": spec["reference"], "kind": kind}
    hidden |= {key: spec[key] for key in ("ordered", "boundary_rows") if key in spec}
    return Task(
        id=f"sql/{template}/{domain}/{index}",
        prompt=prompt_for(spec["question"], data, kind, schema),
        family="sql",
        difficulty=difficulty,
        split="test" if held_out else "train",
        hidden=hidden,
        meta={"template": template, "kind": kind, "domain": domain, "procedural": True},
    )


def procedural_tasks(template: str, count: int) -> Iterable[Task]:
    """`count` distinct tasks per domain for one template (an index repeating an earlier prompt is skipped)."""
    for domain in sql_templates.DOMAINS:
        seen: set[str] = set()
        index = 0
        while len(seen) < count and index < 20 * count:
            task = generate_procedural(template, domain.key, index)
            index += 1
            if task.prompt not in seen:
                seen.add(task.prompt)
                yield task


class SQLShopPack(TaskPack):
    name = "sql-shop"
    family = "sql"
    version = "2"
    description = (
        "SQLite query and DML tasks over shop, library and school databases; graded on the visible rows, hidden "
        "variants and boundary datasets; 30 hand-written tasks plus procedural ones at difficulty 1-4 (1,080 "
        "train); test split = held-out templates."
    )

    def _load(self) -> Iterable[Task]:
        for template in [*TRAIN_TEMPLATES, *HELD_OUT]:
            for index in range(TASKS_PER_TEMPLATE):
                yield generate(template, index)
        for template in sql_templates.TRAIN_TEMPLATES:
            yield from procedural_tasks(template, PROCEDURAL_TRAIN_PER_CELL)
        for template in sql_templates.HELD_OUT_TEMPLATES:
            yield from procedural_tasks(template, PROCEDURAL_TEST_PER_CELL)
