"""Authoring script for `answers.jsonl` (benchmark data; never imported by the package).

Written from the task PROMPTS only (schema, visible rows, task sentence) -- never from the pack's reference SQL.
For every chosen task it emits two correct answers with different formulations (c1, c2), a formatting variant
of c1 wrapped in SQL comments (c3), and two wrong-but-plausible answers (w1, w2), each wrong one with a counterexample dataset (rows per table) meant to separate it from the correct
ones. Parameters (constants, group/category names, N, percent) are parsed from the task sentence; the visible
rows (for the "copied from the visible data" wrong answers) are read by executing the prompt's own INSERTs.
`bench_sql_fidelity.py` re-checks every counterexample with plain sqlite3; this script only writes the data.

    PYTHONPATH=. .venv/bin/python benchmarks/independent_solutions_sql/author.py
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from rlvr.task_packs.registry import load_pack

OUT = Path(__file__).parent / "answers.jsonl"

# the three worlds, read off the schemas in the prompts
WORLDS = {
    "customers": dict(
        P="customers",
        pn="name",
        pg="city",
        T="products",
        tn="name",
        tc="category",
        tv="price",
        L="orders",
        lp="customer_id",
        lt="product_id",
        lv="quantity",
    ),
    "members": dict(
        P="members",
        pn="name",
        pg="branch",
        T="books",
        tn="title",
        tc="genre",
        tv="weight",
        L="loans",
        lp="member_id",
        lt="book_id",
        lv="days",
    ),
    "students": dict(
        P="students",
        pn="name",
        pg="house",
        T="courses",
        tn="name",
        tc="subject",
        tv="fee",
        L="enrollments",
        lp="student_id",
        lt="course_id",
        lv="credits",
    ),
}
PHRASES = {
    "more than": ">",
    "at least": ">=",
    "less than": "<",
    "at most": "<=",
    "below": "<",
    "exceeds": ">",
}
FLIP = {">": ">=", ">=": ">", "<": "<=", "<=": "<"}  # the off-by-one boundary
NEGATE = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
MIRROR = {">": "<", ">=": "<=", "<": ">", "<=": ">="}
NUM = r"(-?\d+(?:\.\d+)?)"


def world_of(prompt: str) -> dict[str, str]:
    for table, world in WORLDS.items():
        if f"CREATE TABLE {table} " in prompt:
            return world
    raise ValueError("unknown schema")


def sentence(prompt: str) -> str:
    return prompt.split("Task:")[1].split("Answer with")[0].strip()


def visible(prompt: str) -> sqlite3.Connection:
    script = prompt.split("Database schema (SQLite):")[1].split("Task:")[0].replace("Current data:", "")
    connection = sqlite3.connect(":memory:")
    connection.executescript(script)
    return connection


def schema_of(prompt: str) -> str:
    """The CREATE statements the prompt shows."""
    return prompt.split("Database schema (SQLite):")[1].split("Current data:")[0].strip()


def ordered(prompt: str) -> bool:
    """Whether the task sentence fixes the row order ("sorted by ...", "highest first")."""
    return bool(re.search(r"sorted by|\bfirst\b", sentence(prompt)))


def comparison(text: str) -> tuple[str, str]:
    match = re.search(r"(more than|at least|less than|at most|below|exceeds) " + NUM, text)
    assert match, text
    return PHRASES[match.group(1)], match.group(2)


def step(literal: str) -> float:
    return 0.01 if "." in literal else 1


def q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# ------------------------------------------------------------------ counterexample datasets


def base_rows(w: dict[str, str], group: str = "G1", category: str = "C1") -> dict[str, list[list[Any]]]:
    """Duplicate names, ties on the value (name order != id order), a group and a category without links,
    a linked person sharing a name with an unlinked one."""
    people = [
        [1, "Ana", group],
        [2, "Ana", group],
        [3, "Bo", "G2"],
        [4, "Cy", "G3"],
        [5, "Di", "G2"],
        [6, "Ana", "G2"],
        [7, "Eve", group],
        [8, "Fay", "G4"],
    ]
    things = [
        [1, "pen", category, 50.0],
        [2, "pen", "C2", 40.0],
        [3, "cup", category, 40.0],
        [4, "box", "C3", 30.0],
        [5, "mat", "C2", 30.0],
        [6, "axe", category, 30.0],
        [7, "zip", "C4", 10.0],
        [8, "cup", "C3", 5.0],
    ]
    links = [
        [1, 1, 1, 2],
        [2, 1, 3, 5],
        [3, 2, 2, 4],
        [4, 3, 4, 1],
        [5, 4, 5, 3],
        [6, 4, 6, 6],
        [7, 3, 1, 7],
        [8, 2, 8, 2],
    ]
    return {w["P"]: people, w["T"]: things, w["L"]: links}


def with_thing_values(data: dict, w: dict[str, str], literals: list[str], category: str = "C1") -> dict:
    things = data[w["T"]]
    for literal in literals:
        c, s = float(literal), step(literal)
        for value in (c - s, c, c, c + s):
            things.append([len(things) + 1, f"b{len(things) + 1}", category, round(value, 6)])
    return data


def with_link_values(data: dict, w: dict[str, str], literal: str) -> dict:
    links = data[w["L"]]
    c = int(literal)
    for value in (c - 1, c, c, c + 1):
        links.append([len(links) + 1, 5, 7, value])
    return data


def spending_rows(w: dict[str, str], k: int) -> dict:
    """Bo exactly k (one link 2 x k/2), Cy 1.2k over two links of 0.6k, the two Anas 0.6k each (1.2k if
    merged by name), Di 1.5k in one link, Eve no links."""
    people = [
        [1, "Ana", "G1"],
        [2, "Ana", "G1"],
        [3, "Bo", "G2"],
        [4, "Cy", "G2"],
        [5, "Di", "G3"],
        [6, "Eve", "G1"],
    ]
    things = [[1, "gem", "C1", k / 2], [2, "dot", "C1", k * 3 / 10], [3, "ink", "C2", k / 10]]
    links = [[1, 3, 1, 2], [2, 4, 2, 2], [3, 4, 2, 2], [4, 1, 2, 2], [5, 2, 2, 2], [6, 5, 1, 3]]
    return {w["P"]: people, w["T"]: things, w["L"]: links}


# ------------------------------------------------------------------ answers per template


def answers(template: str, prompt: str) -> list[dict]:
    w = world_of(prompt)
    P, pn, pg, T, tn, tc, tv, L, lp, lt, lv = (
        w[k] for k in ("P", "pn", "pg", "T", "tn", "tc", "tv", "L", "lp", "lt", "lv")
    )
    text = sentence(prompt)
    shown = visible(prompt)
    out: list[dict] = []

    def ok(sql: str) -> None:
        out.append({"kind": "correct", "sql": sql})

    def bad(sql: str, why: str, counterexample: dict) -> None:
        out.append({"kind": "wrong", "sql": sql, "why": why, "counterexample": counterexample})

    if template in ("count_in_city", "count_in_group"):
        match = re.search(r"live in ([^?]+)\?", text) or re.search(r"have \w+ '((?:[^']|'')*)'", text)
        assert match, text
        group = match.group(1).replace("''", "'")
        ok(f"SELECT COUNT(*) FROM {P} WHERE {pg} = {q(group)}")
        ok(f"SELECT COALESCE(SUM(CASE WHEN {pg} = {q(group)} THEN 1 ELSE 0 END), 0) AS n FROM {P}")
        seen = shown.execute(f"SELECT COUNT(*) FROM {P} WHERE {pg} = ?", (group,)).fetchone()[0]
        data = base_rows(w, group=group)
        while sum(r[2] == group for r in data[P]) in (seen, 0):
            data[P].append([len(data[P]) + 1, "Gus", group])
        bad(
            f"SELECT COUNT(DISTINCT {pn}) FROM {P} WHERE {pg} = {q(group)}",
            "counts distinct names, so two people with the same name in the group count once",
            data,
        )
        bad(f"SELECT {seen}", "the count copied from the visible rows", data)

    elif template in ("cheap_products", "filter_number"):
        op, c = comparison(text)
        ok(f"SELECT {tn} FROM {T} WHERE {tv} {op} {c}")
        ok(f"SELECT t.{tn} FROM {T} AS t WHERE t.id IN (SELECT id FROM {T} WHERE {c} {MIRROR[op]} {tv})")
        data = with_thing_values(base_rows(w), w, [c])
        bad(
            f"SELECT {tn} FROM {T} WHERE {tv} {FLIP[op]} {c}",
            f"uses {FLIP[op]} where the task says {op}",
            data,
        )
        names = [r[0] for r in shown.execute(f"SELECT {tn} FROM {T} WHERE {tv} {op} {c}")]
        bad(
            f"SELECT {tn} FROM {T} WHERE {tn} IN ({', '.join(map(q, names)) or 'NULL'})",
            "the matching names copied from the visible rows",
            data,
        )

    elif template == "filter_between":
        match = re.search(rf"between {NUM} and {NUM}", text)
        assert match, text
        lo, hi = match.groups()
        ok(f"SELECT {tn} FROM {T} WHERE {tv} BETWEEN {lo} AND {hi}")
        ok(f"SELECT {tn} FROM {T} WHERE NOT ({tv} < {lo} OR {tv} > {hi})")
        data = with_thing_values(base_rows(w), w, [lo, hi])
        bad(f"SELECT {tn} FROM {T} WHERE {tv} > {lo} AND {tv} < {hi}", "excludes both bounds", data)
        bad(f"SELECT {tn} FROM {T} WHERE {tv} >= {lo} AND {tv} < {hi}", "excludes the upper bound", data)

    elif template == "links_by_amount":
        op, c = comparison(text)
        ok(f"SELECT id FROM {L} WHERE {lv} {op} {c}")
        ok(f"SELECT id FROM {L} EXCEPT SELECT id FROM {L} WHERE {lv} {NEGATE[op]} {c}")
        data = with_link_values(base_rows(w), w, c)
        bad(
            f"SELECT id FROM {L} WHERE {lv} {FLIP[op]} {c}", f"uses {FLIP[op]} where the task says {op}", data
        )
        bad(
            f"SELECT {lt} FROM {L} WHERE {lv} {op} {c}", f"returns the {lt} instead of the row's own id", data
        )

    elif template in ("delete_links_above", "delete_links_below", "delete_small_orders"):
        op, c = comparison(text)
        ok(f"DELETE FROM {L} WHERE {lv} {op} {c};")
        ok(f"DELETE FROM {L} WHERE id IN (SELECT id FROM {L} WHERE NOT ({lv} {NEGATE[op]} {c}));")
        data = with_link_values(base_rows(w), w, c)
        bad(f"DELETE FROM {L} WHERE {lv} {FLIP[op]} {c};", f"uses {FLIP[op]} where the task says {op}", data)
        ids = [r[0] for r in shown.execute(f"SELECT id FROM {L} WHERE {lv} {op} {c}")]
        bad(
            f"DELETE FROM {L} WHERE id IN ({', '.join(map(str, ids)) or 'NULL'});",
            "deletes the row ids that match in the visible data",
            data,
        )

    elif template == "insert_thing":
        match = re.search(rf"with \w+ '((?:[^']|'')*)', \w+ '((?:[^']|'')*)' and \w+ {NUM}", text)
        assert match, text
        name, cat, value = (
            match.group(1).replace("''", "'"),
            match.group(2).replace("''", "'"),
            match.group(3),
        )
        ok(f"INSERT INTO {T} ({tn}, {tc}, {tv}) VALUES ({q(name)}, {q(cat)}, {value});")
        ok(
            f"INSERT INTO {T} (id, {tv}, {tc}, {tn}) SELECT COALESCE(MAX(id), 0) + 1, {value}, {q(cat)}, {q(name)} "
            f"FROM {T};"
        )
        next_id = shown.execute(f"SELECT COUNT(*) + 1 FROM {T}").fetchone()[0]
        data = base_rows(w)
        data[T] = data[T][:3]
        bad(
            f"INSERT INTO {T} VALUES ({next_id}, {q(name)}, {q(cat)}, {value});",
            "hard-codes the id the visible table would give",
            data,
        )
        bad(
            f"INSERT INTO {T} VALUES (NULL, {q(cat)}, {q(name)}, {value});",
            f"puts the {tc} in the {tn} column and vice versa",
            data,
        )

    elif template in ("scale_category", "raise_prices"):
        match = re.search(
            rf"(Raise|Lower) the \w+ of every \w+ in the '((?:[^']|'')*)' \w+ by {NUM} percent", text
        )
        assert match, text
        sign = 1 if match.group(1) == "Raise" else -1
        cat, pct = match.group(2).replace("''", "'"), match.group(3)
        factor = 1 + sign * float(pct) / 100
        ok(f"UPDATE {T} SET {tv} = {tv} * {factor!r} WHERE {tc} = {q(cat)};")
        ok(
            f"UPDATE {T} SET {tv} = {tv} {'+' if sign > 0 else '-'} {tv} * {pct} / 100.0 "
            f"WHERE id IN (SELECT id FROM {T} WHERE {tc} = {q(cat)});"
        )
        data = base_rows(w, category=cat)
        bad(
            f"UPDATE {T} SET {tv} = {tv} {'+' if sign > 0 else '-'} {pct} WHERE {tc} = {q(cat)};",
            "changes the value by the percentage as an absolute amount",
            data,
        )
        bad(
            f"UPDATE {T} SET {tv} = (100 {'+' if sign > 0 else '-'} {pct}) / 100 * {tv} WHERE {tc} = {q(cat)};",
            "integer division (100 +- p) / 100 truncates the factor to 1 or 0",
            data,
        )

    elif template in ("never_linked", "never_ordered"):
        ok(f"SELECT {pn} FROM {P} WHERE id NOT IN (SELECT {lp} FROM {L})")
        ok(f"SELECT p.{pn} FROM {P} AS p LEFT JOIN {L} AS l ON l.{lp} = p.id WHERE l.id IS NULL")
        data = base_rows(w)
        bad(
            f"SELECT {pn} FROM {P} EXCEPT SELECT p.{pn} FROM {P} p JOIN {L} l ON l.{lp} = p.id",
            "EXCEPT works on names: an unlinked person sharing a name with a linked one is lost",
            data,
        )
        bad(
            f"SELECT {pn} FROM {P} WHERE id NOT IN (SELECT {lt} FROM {L})",
            f"compares with {lt} instead of {lp}",
            data,
        )

    elif template in ("count_per_person", "orders_per_customer"):
        ok(f"SELECT p.{pn}, COUNT(*) FROM {P} p JOIN {L} l ON l.{lp} = p.id GROUP BY p.id")
        ok(
            f"SELECT {pn}, (SELECT COUNT(*) FROM {L} WHERE {L}.{lp} = {P}.id) AS n FROM {P} "
            f"WHERE EXISTS (SELECT 1 FROM {L} WHERE {L}.{lp} = {P}.id)"
        )
        data = base_rows(w)
        bad(
            f"SELECT p.{pn}, COUNT(*) FROM {P} p JOIN {L} l ON l.{lp} = p.id GROUP BY p.{pn}",
            "groups by name: two people with the same name are merged",
            data,
        )
        bad(
            f"SELECT p.{pn}, COUNT(l.id) FROM {P} p LEFT JOIN {L} l ON l.{lp} = p.id GROUP BY p.id",
            "LEFT JOIN keeps people with no links (count 0)",
            data,
        )

    elif template == "amount_per_thing":
        ok(f"SELECT t.{tn}, SUM(l.{lv}) FROM {T} t JOIN {L} l ON l.{lt} = t.id GROUP BY t.id")
        ok(
            f"WITH s AS (SELECT {lt} AS thing, SUM({lv}) AS total FROM {L} GROUP BY {lt}) "
            f"SELECT t.{tn}, s.total FROM s JOIN {T} t ON t.id = s.thing"
        )
        data = base_rows(w)
        bad(
            f"SELECT t.{tn}, SUM(l.{lv}) FROM {T} t JOIN {L} l ON l.{lt} = t.id GROUP BY t.{tn}",
            "groups by name: two things with the same name are merged",
            data,
        )
        bad(
            f"SELECT t.{tn}, COALESCE(SUM(l.{lv}), 0) FROM {T} t LEFT JOIN {L} l ON l.{lt} = t.id GROUP BY t.id",
            "LEFT JOIN keeps things that appear in no link",
            data,
        )

    elif template == "category_extremes":
        ok(f"SELECT {tc}, MIN({tv}) FROM {T} GROUP BY {tc}")
        ok(f"SELECT DISTINCT {tc}, MIN({tv}) OVER (PARTITION BY {tc}) AS lowest FROM {T}")
        data = base_rows(w)
        bad(
            f"SELECT DISTINCT {tc}, (SELECT MIN({tv}) FROM {T}) FROM {T}",
            "the overall minimum instead of each group's",
            data,
        )
        bad(
            f"SELECT t.{tc}, MIN(t.{tv}) FROM {T} t JOIN {L} l ON l.{lt} = t.id GROUP BY t.{tc}",
            "only counts things that appear in some link",
            data,
        )

    elif template == "top_by_number":
        match = re.search(r"of the (\d+) ", text)
        assert match, text
        n = match.group(1)
        ok(f"SELECT {tn}, {tv} FROM {T} ORDER BY {tv} DESC, {tn} LIMIT {n}")
        ok(
            f"WITH r AS (SELECT {tn}, {tv}, ROW_NUMBER() OVER (ORDER BY {tv} DESC, {tn} ASC) AS k FROM {T}) "
            f"SELECT {tn}, {tv} FROM r WHERE k <= {n} ORDER BY k"
        )
        data = base_rows(w)
        bad(
            f"SELECT {tn}, {tv} FROM {T} ORDER BY {tv} DESC LIMIT {n}",
            "no tie-break by name: tied rows come in storage order",
            data,
        )
        bad(
            f"SELECT {tn}, {tv} FROM (SELECT {tn}, {tv} FROM {T} ORDER BY {tv} DESC, {tn} LIMIT {n}) ORDER BY {tn}",
            "the right rows sorted by name instead of highest first",
            data,
        )

    elif template in ("total_by_category", "revenue_by_category"):
        ok(
            f"SELECT t.{tc}, SUM(t.{tv} * l.{lv}) AS total FROM {L} l JOIN {T} t ON t.id = l.{lt} "
            f"GROUP BY t.{tc} ORDER BY total DESC, t.{tc}"
        )
        ok(
            f"WITH per AS (SELECT {lt} AS thing, SUM({lv}) AS amount FROM {L} GROUP BY {lt}) "
            f"SELECT t.{tc}, SUM(t.{tv} * per.amount) FROM {T} t JOIN per ON per.thing = t.id "
            f"GROUP BY t.{tc} ORDER BY 2 DESC, 1 ASC"
        )
        data = base_rows(w)
        bad(
            f"SELECT t.{tc}, SUM(t.{tv}) * SUM(l.{lv}) AS total FROM {L} l JOIN {T} t ON t.id = l.{lt} "
            f"GROUP BY t.{tc} ORDER BY total DESC, t.{tc}",
            "multiplies the two sums instead of summing products",
            data,
        )
        bad(
            f"SELECT t.{tc}, SUM(t.{tv} * l.{lv}) AS total FROM {T} t LEFT JOIN {L} l ON l.{lt} = t.id "
            f"GROUP BY t.{tc} ORDER BY total DESC, t.{tc}",
            "LEFT JOIN keeps groups without links (NULL total)",
            data,
        )

    elif template in ("amount_by_group", "quantity_by_city"):
        ok(f"SELECT p.{pg}, SUM(l.{lv}) FROM {L} l JOIN {P} p ON p.id = l.{lp} GROUP BY p.{pg}")
        ok(
            f"SELECT g, (SELECT SUM(l.{lv}) FROM {L} l JOIN {P} x ON x.id = l.{lp} WHERE x.{pg} = g) "
            f"FROM (SELECT DISTINCT {pg} AS g FROM {P} WHERE id IN (SELECT {lp} FROM {L}))"
        )
        data = base_rows(w)
        bad(
            f"SELECT p.{pg}, COUNT(*) FROM {L} l JOIN {P} p ON p.id = l.{lp} GROUP BY p.{pg}",
            "counts the links instead of summing the amount",
            data,
        )
        bad(
            f"SELECT p.{pg}, SUM(l.{lv}) FROM {P} p LEFT JOIN {L} l ON l.{lp} = p.id GROUP BY p.{pg}",
            "LEFT JOIN keeps groups whose people have no links (NULL total)",
            data,
        )

    elif template in ("spending_over", "big_spenders"):
        op, k = comparison(text)
        ok(
            f"SELECT p.{pn} FROM {P} p JOIN {L} l ON l.{lp} = p.id JOIN {T} t ON t.id = l.{lt} "
            f"GROUP BY p.id HAVING SUM(t.{tv} * l.{lv}) {op} {k} ORDER BY p.{pn}"
        )
        ok(
            f"SELECT {pn} FROM (SELECT p.{pn}, (SELECT SUM(t.{tv} * l.{lv}) FROM {L} l JOIN {T} t "
            f"ON t.id = l.{lt} WHERE l.{lp} = p.id) AS spent FROM {P} p) WHERE spent {op} {k} ORDER BY {pn} ASC"
        )
        data = spending_rows(w, int(float(k)))
        bad(
            f"SELECT p.{pn} FROM {P} p JOIN {L} l ON l.{lp} = p.id JOIN {T} t ON t.id = l.{lt} "
            f"GROUP BY p.id HAVING SUM(t.{tv} * l.{lv}) {FLIP[op]} {k} ORDER BY p.{pn}",
            f"uses {FLIP[op]} where the task says {op}",
            data,
        )
        if template == "big_spenders":
            bad(
                f"SELECT DISTINCT p.{pn} FROM {P} p JOIN {L} l ON l.{lp} = p.id JOIN {T} t ON t.id = l.{lt} "
                f"WHERE t.{tv} * l.{lv} {op} {k} ORDER BY p.{pn}",
                "tests each link on its own instead of the total",
                data,
            )
        else:
            bad(
                f"SELECT p.{pn} FROM {P} p JOIN {L} l ON l.{lp} = p.id JOIN {T} t ON t.id = l.{lt} "
                f"GROUP BY p.{pn} HAVING SUM(t.{tv} * l.{lv}) {op} {k} ORDER BY p.{pn}",
                "groups by name: two people with the same name are added together",
                data,
            )

    elif template == "above_category_average":
        ok(
            f"SELECT t.{tn}, t.{tv} FROM {T} t WHERE t.{tv} > (SELECT AVG(x.{tv}) FROM {T} x WHERE x.{tc} = t.{tc})"
        )
        ok(
            f"SELECT {tn}, {tv} FROM (SELECT {tn}, {tv}, AVG({tv}) OVER (PARTITION BY {tc}) AS a FROM {T}) "
            f"WHERE {tv} > a"
        )
        data = base_rows(w)
        bad(
            f"SELECT t.{tn}, t.{tv} FROM {T} t WHERE t.{tv} >= (SELECT AVG(x.{tv}) FROM {T} x WHERE x.{tc} = t.{tc})",
            "keeps rows equal to their group's average",
            data,
        )
        bad(
            f"SELECT {tn}, {tv} FROM {T} WHERE {tv} > (SELECT AVG({tv}) FROM {T})",
            "compares with the overall average instead of the group's",
            data,
        )
    else:
        raise KeyError(template)
    # a formatting variant of the first correct answer, as models often write it: a leading comment line
    # and a comment after the final semicolon (SQLite itself runs this unchanged)
    first = out[0]["sql"].rstrip(";")
    out.insert(2, {"kind": "correct", "sql": f"-- {template}: my answer\n{first}; -- end of answer"})
    return out


def chosen_tasks() -> list[tuple[str, Any]]:
    pack = load_pack("sql-shop")
    picked = []
    for split in ("train", "test"):
        by_key: dict[tuple[str, str | None], list] = {}
        for task in pack.tasks(split):
            by_key.setdefault((task.meta["template"], task.meta.get("domain")), []).append(task)
        for (_template, domain), tasks in sorted(by_key.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
            if domain is None:
                picked += [(split, t) for t in tasks[:2]]
            else:
                index = {"shop": 0, "library": 1, "school": 2}[domain]
                picked.append((split, tasks[index % len(tasks)]))
    return picked


def main() -> None:
    lines = []
    for split, task in chosen_tasks():
        for number, answer in enumerate(answers(task.meta["template"], task.prompt)):
            label = f"c{number + 1}" if answer["kind"] == "correct" else f"w{number - 2}"
            lines.append(
                json.dumps(
                    {
                        "task_id": task.id,
                        "split": split,
                        "template": task.meta["template"],
                        "label": label,
                        "schema": schema_of(task.prompt),
                        "ordered": ordered(task.prompt),
                        **answer,
                    }
                )
            )
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} answers -> {OUT}")


if __name__ == "__main__":
    main()
