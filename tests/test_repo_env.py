"""rlvr/Repo-v0 end to end: agent mode through the tools, patch mode, gates, budgets, and the cheats
that must fail (editing a test, hard-coding a visible test's expected value)."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import rlvr  # noqa: F401  (registers the envs)
from rlvr.graders.base import make_grader
from rlvr.graders.repo.patch import make_unified_diff
from rlvr.task_packs.registry import load_pack

PACK = load_pack("repo-tasks")


def call(name: str, **arguments: Any) -> str:
    return json.dumps(
        {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]}
    )


def content(observation: str) -> str:
    return json.loads(observation)[0]["content"]


@pytest.fixture(scope="module")
def grader():
    with make_grader(PACK, jobs=1, types=False) as shared:
        yield shared


@pytest.fixture(scope="module")
def typed_grader():
    with make_grader(PACK, jobs=1) as shared:
        yield shared


def make_env(grader, task_id: str | None = None, **kwargs: Any):
    return gym.make("rlvr/Repo-v0", pack=PACK, grader=grader, task_id=task_id, **kwargs)


def one_task_per_kind_and_repo() -> list[str]:
    seen: dict[tuple[str, str], str] = {}
    for task in PACK.tasks():
        seen.setdefault((task.hidden["repo"], task.meta["kind"]), task.id)
    return sorted(seen.values())


@pytest.mark.parametrize("task_id", one_task_per_kind_and_repo())
def test_scripted_agent_applying_the_reference_diff_passes(grader, task_id: str) -> None:
    env = make_env(grader, task_id)
    env.reset(seed=0)
    task = env.unwrapped.task
    observation, reward, terminated, truncated, _ = env.step(
        call("apply_patch", patch=make_unified_diff(task.hidden["base"], task.hidden["reference"]))
    )
    assert content(observation).startswith("patched"), observation
    assert reward == 0.0 and not terminated
    _, reward, terminated, truncated, info = env.step(call("submit"))
    assert terminated and not truncated
    assert info["verdict"]["passed"], info["verdict"]
    # the visible tests are not run for a passing state by default (`visible_tests="flag"`)
    assert info["verdict"]["visible_passed"] is None
    assert reward == pytest.approx(1.0)


@pytest.mark.parametrize("task_id", one_task_per_kind_and_repo()[:6])
def test_submitting_the_base_state_fails(grader, task_id: str) -> None:
    env = make_env(grader, task_id)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(call("submit"))
    assert terminated and not info["verdict"]["passed"] and "behaviour" in info["verdict"]["gates"]


def test_editing_a_test_file_fails_and_is_flagged(grader) -> None:
    task = next(t for t in PACK.tasks() if t.meta["kind"] == "rename" and t.hidden["repo"] == "ledger")
    env = make_env(grader, task.id)
    env.reset(seed=0)
    env.step(call("apply_patch", patch=make_unified_diff(task.hidden["base"], task.hidden["reference"])))
    test_file = next(p for p in task.hidden["base"] if p.startswith("tests/"))
    observation, *_ = env.step(
        call("edit", path=test_file, old="def test_", new="def disabled_", replace_all=True)
    )
    assert "edited" in content(observation)
    _, reward, terminated, _, info = env.step(call("submit"))
    assert terminated and reward == 0.0 and not info["verdict"]["passed"]
    assert {"protected_path_edit", "test_tamper"} <= set(info["verdict"]["flags"])
    assert info["verdict"]["gates"] == ["patch"]


def test_hard_coding_a_visible_test_value_fails(grader) -> None:
    task = PACK.get("ledger-feature-split_evenly")
    env = make_env(grader, task.id)
    env.reset(seed=0)
    stub = 'raise NotImplementedError("split_evenly is not implemented yet")'
    cheat = "if cents == 100 and parts == 3:\n        return [34, 33, 33]\n    return [cents]"
    observation, *_ = env.step(call("edit", path="ledger/money.py", old=stub, new=cheat))
    assert "edited" in content(observation)
    observation, *_ = env.step(call("run_tests"))
    assert content(observation).startswith("5 passed, 0 failed"), observation  # the visible tests are fooled
    _, reward, terminated, _, info = env.step(call("submit"))
    assert terminated and not info["verdict"]["passed"] and reward < 0.5
    assert (
        info["verdict"]["visible_passed"] is True
    )  # the hacking gap: visible tests pass, hidden checks do not


def test_tools_take_the_contract_argument_names(grader) -> None:
    """read_file(path, start?, end?), search(pattern, path?), run_tests(selector?): the names the
    tool contract gives; anything else is an error observation naming the accepted arguments."""
    env = make_env(grader, "ledger-feature-split_evenly")
    env.reset(seed=0)
    observation, *_ = env.step(call("read_file", path="ledger/money.py", start=2, end=3))
    assert [line.split("|")[0].strip() for line in content(observation).splitlines()] == ["2", "3"]
    observation, *_ = env.step(call("read_file", path="ledger/money.py", start_line=1, end_line=2))
    assert content(observation) == (
        "error: read_file takes path, start, end; unknown argument "
        "'end_line' (did you mean 'end'?), 'start_line' (did you mean 'start'?)"
    )
    observation, *_ = env.step(call("run_tests", paths=["tests/test_ledger.py"]))
    assert content(observation).startswith("error: run_tests takes selector; unknown argument 'paths'")
    observation, *_ = env.step(call("submit", now=True))
    assert content(observation) == "error: submit takes no arguments; unknown argument 'now'"
    observation, *_ = env.step(call("run_tests", selector="tests/test_ledger.py::test_parse_and_format"))
    assert content(observation).startswith("1 passed, 0 failed"), observation
    observation, *_ = env.step(call("run_tests", selector="tests/test_ledger.py::test_split_evenly"))
    assert content(observation).startswith("0 passed, 1 failed"), observation  # not implemented yet
    observation, *_ = env.step(call("run_tests", selector="tests/"))
    assert content(observation).startswith("4 passed, 1 failed"), observation
    observation, *_ = env.step(call("run_tests", selector="tests/test_nothing.py"))
    assert content(observation).startswith("0 passed, 0 failed"), observation
    observation, *_ = env.step(call("run_tests", selector=["tests/"]))
    assert content(observation).startswith("error: `selector` must be"), observation
    env.close()


def test_rename_that_breaks_a_caller_fails_the_types_gate(typed_grader) -> None:
    task = PACK.get("ledger-rename-format_cents")
    env = make_env(typed_grader, task.id)
    env.reset(seed=0)
    # rename only the definition and the public API, not the callers in report.py
    for path in ("ledger/money.py", "ledger/__init__.py"):
        env.step(call("edit", path=path, old="format_cents", new="render_cents", replace_all=True))
    _, reward, terminated, _, info = env.step(call("submit"))
    verdict = info["verdict"]
    assert terminated and not verdict["passed"] and "types" in verdict["gates"]
    assert verdict["components"]["types"] < 1.0


def test_reference_passes_with_whole_repo_types(typed_grader) -> None:
    task = PACK.get("ledger-rename-format_cents")
    verdict = typed_grader.grade_state(task, task.hidden["reference"])
    assert verdict.passed and verdict.components["types"].score == 1.0, verdict


def test_tools_read_search_and_run(grader) -> None:
    env = make_env(grader, "ledger-feature-split_evenly")
    env.reset(seed=0)
    observation, *_ = env.step(call("list_files", path="ledger"))
    assert "ledger/money.py" in content(observation) and "tests/" not in content(observation)
    observation, *_ = env.step(call("read_file", path="ledger/money.py", start=1, end=2))
    assert content(observation).startswith("   1| ")
    observation, *_ = env.step(call("search", pattern="def \\w+_cents", regex=True))
    assert "ledger/money.py" in content(observation)
    observation, *_ = env.step(call("search", pattern="NotImplementedError"))
    assert "ledger/money.py" in content(observation)
    observation, *_ = env.step(
        call("run_python", code="from ledger.money import format_cents\nprint(format_cents(5))")
    )
    assert content(observation).strip() == "0.05"
    observation, *_ = env.step(call("run_python", code="while True: pass"))
    assert "timeout" in content(observation)
    observation, *_ = env.step(call("run_python", code="open('/tmp/rlvr-repo-escape', 'w').write('x')"))
    assert "Refused" in content(observation) or "PermissionError" in content(observation)


def test_malformed_turns_cost_a_turn_and_budgets_end_the_episode(grader) -> None:
    env = make_env(grader, "ledger-feature-split_evenly", max_turns=3)
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step("{not json")
    assert "error" in json.loads(observation) and info["turn"] == 1 and not (terminated or truncated)
    observation, *_ = env.step(call("nope"))
    assert "unknown tool" in content(observation)
    _, reward, terminated, truncated, info = env.step(call("read_file", path="../../etc/passwd"))
    assert truncated and not terminated
    assert "budget:turns" in info["verdict"]["flags"] and not info["verdict"]["passed"]


def test_patch_mode_single_shot(grader) -> None:
    task = PACK.get("ledger-feature-split_evenly")
    env = make_env(grader, task.id, mode="patch")
    observation, _ = env.reset(seed=0)
    assert "```ledger/money.py" in observation and task.prompt in observation
    _, reward, terminated, _, info = env.step(
        make_unified_diff(task.hidden["base"], task.hidden["reference"])
    )
    assert terminated and info["verdict"]["passed"]
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("no patch here")
    assert terminated and reward == 0.0 and info["verdict"]["gates"] == ["patch"]


def test_check_env(grader) -> None:
    env = make_env(grader, "ledger-feature-split_evenly")
    check_env(env.unwrapped, skip_render_check=True)


HOSTILE_PRELUDES = {
    "exit_at_import": "import os\nos._exit(0)\n",
    "system_exit_at_import": "raise SystemExit(0)\n",
    "loop_at_import": "while True:\n    pass\n",
    "patch_builtins": "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: int\n",
    "break_importer": "import sys\nsys.meta_path.clear()\nsys.modules.clear()\n",
    "flood_stdout": "import sys\nsys.stdout.write('x' * 10_000_000)\n",
    "fork_bomb": "import os\nos.fork()\n",
    "read_hidden": "import gc\nprint(gc.get_objects())\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PRELUDES))
def test_hostile_candidates_get_no_false_pass(grader, name: str) -> None:
    task = PACK.get("ledger-feature-split_evenly")
    files = dict(task.hidden["reference"])  # a correct fix, plus hostile code at import time
    files["ledger/money.py"] = HOSTILE_PRELUDES[name] + files["ledger/money.py"]
    verdict = grader.grade_state(task, files)
    assert not verdict.passed and verdict.error is None, verdict
    if name in ("fork_bomb", "read_hidden", "exit_at_import"):
        assert "sandbox:denied" in verdict.flags or verdict.components["behaviour"].score == 0.0
