"""False failures and false passes of rlvr's SQL grader against independently written answers.

Data: `benchmarks/independent_solutions_sql/answers.jsonl` (written by `author.py` there, from the task prompts
only -- never from the pack's reference SQL): for 71 `sql-shop` tasks covering every template of both splits,
two correct answers with different formulations, a third that is the first wrapped in SQL comments (a leading
comment line, a comment after the final `;` -- sqlite runs it unchanged), and two wrong-but-plausible ones. Each wrong answer carries a
counterexample dataset.

(i) The data is checked with plain sqlite3 (no rlvr code): on each wrong answer's counterexample database the
task's correct answers must agree and the wrong one must differ (a query's rows -- as a list when the task sentence
fixes the order, else as a multiset; numbers compared to 9 significant digits; for DML every table after the
statements). A wrong answer whose counterexample shows no difference is a data error: reported, not counted.
(ii) Every answer is graded by the real SQL grader (`make_executor_grader(pack, "local", None)`), wrapped in a
```sql block as the prompts ask. Reported: false failures (correct answers not passing, with the grader's
feedback), false passes (verified-wrong answers passing), a per-template table, totals and wall time.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_sql_fidelity.py [--strict] [--out FILE]

--strict: exit 1 when there is a false verdict (or a data error).
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "independent_solutions_sql" / "answers.jsonl"


def load_answers(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------ (i) data verification, plain sqlite3


def _number(value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        rounded = float(f"{value:.9g}")
        return int(rounded) if rounded.is_integer() else rounded
    return value


def _database(schema: str, rows: dict[str, list[list[Any]]]) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.executescript(schema)
    for table, table_rows in rows.items():
        for row in table_rows:
            connection.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" for _ in row)})', row)
    return connection


def outcome(schema: str, rows: dict[str, list[list[Any]]], sql: str, *, dml: bool, ordered: bool) -> Any:
    """What an answer produces on a dataset: its rows (query) or every table afterwards (DML); an error is an
    outcome too ("error: ...")."""
    connection = _database(schema, rows)
    try:
        if dml:
            connection.executescript(sql)
            tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {
                t: sorted(repr(tuple(map(_number, r))) for r in connection.execute(f'SELECT * FROM "{t}"'))
                for t in sorted(tables)
            }
        cursor = connection.execute(sql)
        result = [repr(tuple(map(_number, r))) for r in cursor.fetchall()]
        width = len(cursor.description or ())
        return (width, result if ordered else sorted(result))
    except sqlite3.Error as exc:
        return f"error: {exc}"
    finally:
        connection.close()


def is_dml(sql: str) -> bool:
    return sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "REPLACE"))


def verify_data(answers: list[dict[str, Any]]) -> tuple[set[tuple[str, str]], list[str]]:
    """(keys of the verified wrong answers, data errors). A wrong answer is verified when, on its
    counterexample, the task's correct answers agree with each other and it differs from them."""
    correct: dict[str, list[dict]] = defaultdict(list)
    for answer in answers:
        if answer["kind"] == "correct":
            correct[answer["task_id"]].append(answer)
    verified: set[tuple[str, str]] = set()
    errors: list[str] = []
    for answer in answers:
        if answer["kind"] != "wrong":
            continue
        key = (answer["task_id"], answer["label"])
        goods = correct.get(answer["task_id"], [])
        if len(goods) < 2:
            errors.append(f"{key}: fewer than two correct answers to compare with")
            continue
        dml = is_dml(goods[0]["sql"])
        schema, rows, ordered = answer["schema"], answer["counterexample"], answer["ordered"]
        expected = [outcome(schema, rows, g["sql"], dml=dml, ordered=ordered) for g in goods]
        if any(isinstance(e, str) for e in expected):
            errors.append(f"{key}: a correct answer fails on the counterexample: {expected}")
        elif any(e != expected[0] for e in expected[1:]):
            errors.append(f"{key}: the correct answers disagree on the counterexample")
        elif outcome(schema, rows, answer["sql"], dml=dml, ordered=ordered) == expected[0]:
            errors.append(f"{key}: the counterexample does not separate it from the correct answers")
        else:
            verified.add(key)
    return verified, errors


# ------------------------------------------------------------------ (ii) the real grader


def grade(answers: list[dict[str, Any]]) -> list[Any]:
    from rlvr.executors import make_executor_grader
    from rlvr.task_packs.registry import load_pack

    grader = make_executor_grader(load_pack("sql-shop"), "local", None)
    try:
        return grader.grade_many(
            [a["task_id"] for a in answers], [f"```sql\n{a['sql']}\n```" for a in answers]
        )
    finally:
        grader.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 on a false verdict or a data error")
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    started = time.perf_counter()
    answers = load_answers()
    verified, errors = verify_data(answers)
    verdicts = grade(answers)

    lines: list[str] = []
    say = lines.append
    tasks = {a["task_id"] for a in answers}
    templates = sorted({(a["split"], a["template"]) for a in answers})
    say(
        f"sql-shop fidelity: {len(tasks)} tasks, {len(templates)} templates (split/template), "
        f"{len(answers)} answers ({sum(a['kind'] == 'correct' for a in answers)} correct, "
        f"{sum(a['kind'] == 'wrong' for a in answers)} wrong)"
    )
    say(
        f"data check (plain sqlite3): {len(verified)} wrong answers verified by their counterexample, "
        f"{len(errors)} data errors"
    )
    for error in errors:
        say(f"  DATA ERROR {error}")

    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    false_failures, false_passes = [], []
    for answer, verdict in zip(answers, verdicts, strict=True):
        row = table[(answer["split"], answer["template"])]
        key = (answer["task_id"], answer["label"])
        if answer["kind"] == "correct":
            row["correct"] += 1
            if verdict.passed:
                row["correct passed"] += 1
            else:
                false_failures.append((answer, verdict))
        elif key in verified:
            row["wrong"] += 1
            if verdict.passed:
                false_passes.append((answer, verdict))
            else:
                row["wrong failed"] += 1

    say("")
    say(
        f"false failures (correct answers not passing): {len(false_failures)} / "
        f"{sum(a['kind'] == 'correct' for a in answers)}"
    )
    for answer, verdict in false_failures:
        say(
            f"  {answer['task_id']} {answer['label']}: {verdict.feedback} | {' '.join(answer['sql'].split())}"
        )
    say(f"false passes (verified-wrong answers passing): {len(false_passes)} / {len(verified)}")
    for answer, _verdict in false_passes:
        say(f"  {answer['task_id']} {answer['label']}: {answer['why']} | {' '.join(answer['sql'].split())}")

    say("")
    say(f"{'split':5} {'template':24} {'correct pass':>13} {'wrong fail':>11}")
    for split, template in templates:
        row = table[(split, template)]
        say(
            f"{split:5} {template:24} {row['correct passed']:>6} / {row['correct']:<4} "
            f"{row['wrong failed']:>4} / {row['wrong']:<4}"
        )
    say("")
    say(
        f"totals: false failures {len(false_failures)}, false passes {len(false_passes)}, "
        f"data errors {len(errors)}; wall {time.perf_counter() - started:.1f} s"
    )
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n", encoding="utf-8")
    if args.strict and (false_failures or false_passes or errors):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
