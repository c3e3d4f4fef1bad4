"""Perf on declared repository scenarios: counted operations on the candidate's repository against the
reference state, banded like single-function perf; never a gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.core.types import Task
from rlvr.graders.repo.grader import PerfMeasure, RepoGrader, perf_component
from rlvr.graders.repo.runner import ops_job, perf_ops
from rlvr.sandbox import CallOutcome, ExecResult, make_sandbox
from rlvr.specs.repo_perf import PerfSpecError, expand_perf
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack

PERF_TASKS = {
    "csvreport-feature-group_sum": "train",
    "ledger-feature-ledger-balance": "train",
    "configloader-feature-merge": "test",
    "configloader-feature-apply_env": "test",
}

# correct but quadratic: every row rescans all rows / every lookup sums the whole posting history /
# every section is found by a scan / every variable is merged into a fresh copy of the config
SLOW = {
    "csvreport-feature-group_sum": (
        "csvreport/aggregate.py",
        "    totals: dict[str, float] = {}\n    for row in rows:\n",
        "    totals: dict[str, float] = {}\n"
        "    for row in rows:\n"
        "        group = str(row[key])\n"
        "        if group in totals:\n"
        "            continue\n"
        "        total = 0.0\n"
        "        for other in rows:\n"
        "            if str(other[key]) == group:\n"
        "                total += float(other[value])\n"
        "        totals[group] = total\n"
        "    return {group: round(total, 2) for group, total in totals.items()}\n"
        "    for row in rows:\n",
    ),
    "ledger-feature-ledger-balance": (
        "ledger/accounts.py",
        '        """The balance of an account in cents (KeyError for an unknown account)."""\n',
        '        """The balance of an account in cents (KeyError for an unknown account)."""\n'
        "        self._balances[name]\n"
        "        total = 0\n"
        "        for posting in self.postings:\n"
        "            if posting.account == name:\n"
        "                total += posting.cents\n"
        "        return total\n",
    ),
    "configloader-feature-merge": (
        "configloader/merge.py",
        "    for section, values in override.items():\n        merged.setdefault(section, {}).update(values)\n",
        "    for section, values in override.items():\n"
        "        known = False\n"
        "        for existing in list(merged):\n"
        "            if existing == section:\n"
        "                known = True\n"
        "        if not known:\n"
        "            merged[section] = {}\n"
        "        merged[section].update(values)\n",
    ),
    "configloader-feature-apply_env": (
        "configloader/merge.py",
        "    return merge(config, overrides)\n",
        "    result = config\n"
        "    for section, values in overrides.items():\n"
        "        result = merge(result, {section: values})\n"
        "    return result\n",
    ),
}


@pytest.fixture(scope="module")
def pack():
    return load_pack("repo-tasks")


@pytest.fixture(scope="module")
def grader(pack):
    grader = RepoGrader(pack, sandbox="local", jobs=2, types=False)
    yield grader
    grader.close()


def _task(pack, task_id: str) -> Task:
    return next(t for t in pack.tasks() if t.id == task_id)


def _slow_state(task: Task) -> dict[str, str]:
    """The reference state with one function replaced by a correct but quadratic version."""
    path, old, new = SLOW[task.id]
    files = dict(task.hidden["reference"])
    assert files[path].count(old) == 1
    files[path] = files[path].replace(old, new)
    return files


def test_perf_tasks_are_declared_in_both_splits(pack) -> None:
    declared = {t.id: t.split for t in pack.tasks() if t.hidden.get("perf")}
    assert declared == PERF_TASKS
    for task_id in PERF_TASKS:
        scenarios = _task(pack, task_id).hidden["perf"]
        assert scenarios and all("$repeat" not in json.dumps(s) for s in scenarios)  # expanded at load


@pytest.mark.parametrize("task_id", sorted(PERF_TASKS))
def test_reference_gets_full_perf_marks(grader, pack, task_id: str) -> None:
    task = _task(pack, task_id)
    verdict = grader.grade_state(task, task.hidden["reference"])
    assert verdict.passed and verdict.reward == pytest.approx(1.0), verdict
    assert verdict.components["perf"].score == 1.0, verdict.components["perf"]


@pytest.mark.parametrize("task_id", sorted(SLOW))
def test_quadratic_but_correct_candidate_loses_perf_and_passes_the_gates(grader, pack, task_id: str) -> None:
    task = _task(pack, task_id)
    verdict = grader.grade_state(task, _slow_state(task))
    assert verdict.passed and not verdict.gates, verdict  # behaviour (and every gate) still passes
    assert verdict.components["behaviour"].score == 1.0
    perf = verdict.components["perf"]
    assert perf.score < 0.2, perf  # hundreds of rows: tens of times the reference's operations
    assert verdict.reward < 1.0 - 0.8 * grader.weights["perf"], verdict
    assert "slower than the reference" in verdict.feedback


def test_a_wrong_result_earns_no_perf_credit(grader, pack) -> None:
    task = _task(pack, "ledger-feature-ledger-balance")
    files = dict(task.hidden["reference"])
    old = "        return self._balances[name]\n"
    files["ledger/accounts.py"] = files["ledger/accounts.py"].replace(old, old.replace("]\n", "] + 1\n"), 1)
    verdict = grader.grade_state(task, files)
    assert not verdict.passed and verdict.components["perf"].score == 0.0, verdict
    assert "differs" in verdict.components["perf"].detail


def test_tasks_without_perf_keep_their_weights(grader, pack) -> None:
    task = next(t for t in pack.tasks() if not t.hidden.get("perf") and t.hidden["repo"] == "textkit")
    verdict = grader.grade_state(task, task.hidden["reference"])
    assert verdict.reward == pytest.approx(1.0) and verdict.components["perf"].detail == "no perf scenarios"
    assert grader.weights_without_perf["perf"] == 0.0
    assert grader.weights_without_perf["behaviour"] == pytest.approx(0.7 / 0.8)  # types off: 0.7 of 0.8


def test_counting_is_deterministic(pack) -> None:
    task = _task(pack, "csvreport-feature-group_sum")
    ops = perf_ops(task.hidden["perf"])
    with make_sandbox("local", workers=1) as sandbox:
        runs = [
            sandbox.run(ops_job(files, ops, 20.0, trace=True))
            for files in (task.hidden["reference"], task.hidden["reference"], _slow_state(task))
        ]
    first, second, slow = (run.counts[2] for run in runs)  # call 2: the first scenario's "measure"
    assert all(run.status == "ok" for run in runs), runs
    assert isinstance(first, int) and first > 0 and first == second
    assert isinstance(slow, int) and slow > 20 * first


def test_repeat_expansion_and_its_errors() -> None:
    scenario = {
        "kind": "object",
        "target": "m:C",
        "steps": [["open", ["x"]], {"$repeat": 3, "start": 1, "each": ["add", ["k{i}", "$i"]]}],
        "args": [{"$dict": [{"$repeat": 2, "each": ["s{i}", {"k{i}": "$i"}]}]}],
    }
    assert expand_perf(scenario) == {
        "kind": "object",
        "target": "m:C",
        "steps": [["open", ["x"]], ["add", ["k1", 1]], ["add", ["k2", 2]], ["add", ["k3", 3]]],
        "args": [{"s0": {"k0": 0}, "s1": {"k1": 1}}],
    }
    for bad, message in [
        ({"args": {"$repeat": 2, "each": 1}}, "inside a list"),
        ({"args": [{"$repeat": -1, "each": 1}]}, "integer from 0"),
        ({"args": [{"$repeat": 2}]}, 'needs "each"'),
        ({"args": [{"$repeat": 2, "each": 1, "x": 0}]}, "unknown key"),
        ({"args": [{"$repeat": 5000, "each": [{"$repeat": 5000, "each": "x"}]}]}, "more than"),
        ({"args": [{"$dict": [1, 2]}]}, "pairs"),
    ]:
        with pytest.raises(PerfSpecError, match=message):
            expand_perf(bad)


def test_packs_validate_flags_bad_perf_with_line_and_field(tmp_path: Path) -> None:
    repo = tmp_path / "repos" / "mini"
    (repo / "mini").mkdir(parents=True)
    (repo / "mini" / "__init__.py").write_text("def f(x: int) -> int:\n    return x\n")
    (tmp_path / "pack.toml").write_text('name = "mini"\nfamily = "repo"\nversion = "1"\n')
    line = {
        "id": "mini-1",
        "prompt": "make f double",
        "repo": "mini",
        "base_edits": {},
        "reference_edits": {"mini/__init__.py": "def f(x: int) -> int:\n    return 2 * x\n"},
        "scenarios": [{"kind": "call", "target": "mini:f", "args": [2]}],
    }
    good = line | {"perf": [{"kind": "call", "target": "mini:f", "args": [{"$repeat": 1, "each": 3}]}]}
    bad_repeat = line | {
        "id": "mini-2",
        "perf": [{"kind": "call", "target": "mini:f", "args": [{"$repeat": "9"}]}],
    }
    bad_kind = line | {"id": "mini-3", "perf": [{"kind": "shell", "target": "mini:f"}]}
    bad_type = line | {"id": "mini-4", "perf": {"kind": "call"}}
    lines = [good, bad_repeat, bad_kind, bad_type]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    problems = validate_directory(tmp_path)
    found = {(p.line, p.field) for p in problems}
    assert found == {(2, "perf[0]"), (3, "perf[0]"), (4, "perf")}, problems
    assert all(p.file.endswith("tasks.jsonl") for p in problems)
    assert any("integer from 0" in p.message for p in problems)


def test_work_moved_into_the_result_conversion_is_charged() -> None:
    """A candidate whose results do their work lazily, when converted to plain data, is charged the
    conversion's operations beyond the reference's."""
    reference = [PerfMeasure({"value": 3}, ops=1000, conversion=50)]

    def run(ops: int, conversion: int) -> ExecResult:
        outcomes: list[CallOutcome | None] = [
            CallOutcome(True, None),
            CallOutcome(True, None),
            CallOutcome(True, {"value": 3}),
        ]
        return ExecResult("ok", [CallOutcome(True, [])] + outcomes, [0, 10, ops, conversion])

    honest, _ = perf_component(reference, run(1000, 50))
    lazy, _ = perf_component(reference, run(1000, 50_000))
    assert honest.score == 1.0 and lazy.score < 0.1, (honest, lazy)
    unfinished, flags = perf_component(reference, ExecResult("timeout", [CallOutcome(True, [])], [0]))
    assert unfinished.score == 0.0 and "did not finish" in unfinished.detail and flags == ["timeout:perf"]
