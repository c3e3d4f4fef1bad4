"""Every verdict carries a receipt: what was graded (candidate, task content), how (options), by what
(pack and grader versions). Equal inputs give equal receipts in any process; any change shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.graders.receipts import RECEIPT_KEYS, canonical_digest, task_digest
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def math_pack() -> StaticPack:
    tasks = [
        Task(id="m/1", prompt="What is 2 + 3?", family="math", hidden={"answer": "5"}),
        Task(id="m/2", prompt="What is 1/2 + 1/4?", family="math", hidden={"answer": "3/4"}),
    ]
    return StaticPack("receipt-math", tasks, family="math", version="7")


def test_every_verdict_carries_a_complete_receipt(math_pack: StaticPack) -> None:
    with make_grader(math_pack) as grader:
        verdicts = grader.grade_many(["m/1", "m/2", "m/1"], ["\\boxed{5}", "\\boxed{0.75}", "6"])
    for verdict in verdicts:
        assert verdict.receipt is not None
        assert set(verdict.receipt) == set(RECEIPT_KEYS)
        assert verdict.receipt["pack"] == "receipt-math" and verdict.receipt["pack_version"] == "7"
        assert verdict.receipt["grader"].startswith("math:MathGrader@")
        assert verdict.to_json()["receipt"] == verdict.receipt
    first, _, third = verdicts
    assert first.receipt["task"] == third.receipt["task"]  # type: ignore[index]
    assert first.receipt["candidate"] != third.receipt["candidate"]  # type: ignore[index]


def test_same_inputs_same_receipt_and_changes_show(math_pack: StaticPack) -> None:
    with make_grader(math_pack) as a, make_grader(math_pack) as b, make_grader(math_pack, strict=False) as c:
        ra = a.grade("m/1", "\\boxed{5}").receipt
        rb = b.grade("m/1", "\\boxed{5}").receipt
        rc = c.grade("m/1", "\\boxed{5}").receipt
    assert ra == rb
    assert ra is not None and rc is not None
    assert ra["options"] != rc["options"]
    assert {k for k in RECEIPT_KEYS if ra[k] != rc[k]} == {"options"}


def test_where_code_runs_is_not_part_of_the_options_digest() -> None:
    pack = load_pack("tiny-functions")
    with make_grader(pack, types=False) as a, make_grader(pack, types=False, jobs=1) as b:
        assert a.receipt_book().options == b.receipt_book().options
    with make_grader(pack, types=True, jobs=1) as c:
        assert c.receipt_book().options != a.receipt_book().options


def test_task_digest_sees_the_hidden_spec() -> None:
    task = Task(id="t", prompt="p", family="math", hidden={"answer": "5"})
    changed = Task(id="t", prompt="p", family="math", hidden={"answer": "6"})
    assert task_digest(task) != task_digest(changed)
    assert canonical_digest({"b": 1, "a": {2, 1}}) == canonical_digest({"a": {1, 2}, "b": 1})


def test_task_digests_are_the_same_in_a_fresh_process() -> None:
    pack = load_pack("kata")
    here = [task_digest(t) for t in pack.tasks()[:20]]
    code = (
        "import json; from rlvr.task_packs.registry import load_pack; "
        "from rlvr.graders.receipts import task_digest; "
        "print(json.dumps([task_digest(t) for t in load_pack('kata').tasks()[:20]]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, timeout=120
    )
    assert json.loads(out.stdout) == here
