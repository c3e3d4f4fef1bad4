"""The SQL fidelity bench's data check (benchmarks/bench_sql_fidelity.py, plain sqlite3) can fail: a wrong
answer whose counterexample does not separate it, or a correct answer mislabelled as wrong, is a data error."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_sql_fidelity.py"


def _bench():  # noqa: ANN202 - a module loaded from a path
    spec = importlib.util.spec_from_file_location("bench_sql_fidelity", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sample(bench, task_ids: set[str]) -> list[dict]:  # noqa: ANN001
    return [a for a in bench.load_answers() if a["task_id"] in task_ids]


def test_the_recorded_counterexamples_separate_their_wrong_answers() -> None:
    bench = _bench()
    tasks = {"sql/count_per_person/shop/0", "sql/delete_links_below/school/2", "sql/top_by_number/library/1"}
    answers = _sample(bench, tasks)
    assert len(answers) == 15  # 3 correct + 2 wrong per task
    verified, errors = bench.verify_data(answers)
    assert errors == []
    assert verified == {(a["task_id"], a["label"]) for a in answers if a["kind"] == "wrong"}


def test_a_mislabelled_wrong_answer_is_a_data_error_not_counted() -> None:
    bench = _bench()
    answers = _sample(bench, {"sql/count_per_person/shop/0", "sql/delete_links_below/school/2"})
    for task_id in ("sql/count_per_person/shop/0", "sql/delete_links_below/school/2"):
        mine = [a for a in answers if a["task_id"] == task_id]
        correct = next(a for a in mine if a["kind"] == "correct")
        wrong = next(a for a in mine if a["kind"] == "wrong")
        mislabelled = {
            **copy.deepcopy(wrong),
            "label": "w9",
            "sql": correct["sql"],
        }  # a correct query called wrong
        verified, errors = bench.verify_data([*mine, mislabelled])
        assert (task_id, "w9") not in verified
        assert any("w9" in e and "does not separate" in e for e in errors), errors
        assert (task_id, wrong["label"]) in verified


def test_a_counterexample_without_the_difference_is_reported() -> None:
    bench = _bench()
    answers = _sample(bench, {"sql/top_by_number/library/1"})
    wrong = next(a for a in answers if a["label"] == "w1")  # no tie-break: needs tied weights to show
    weak = copy.deepcopy(wrong)
    books = weak["counterexample"]["books"]
    for index, row in enumerate(books):
        row[3] = 100.0 - index  # no ties any more
    verified, errors = bench.verify_data([a for a in answers if a["kind"] == "correct"] + [weak])
    assert verified == set()
    assert len(errors) == 1 and "does not separate" in errors[0]
