"""Repository tasks (rlvr/Repo-v0): grading cost, tool-call round trips, leaks, and the scripted agents.

  grade      workspace create + submit grading of a 10-file repository (ledger + 4 extra modules),
             also without the derived hidden checks (their cost, measured in the same run),
             p50/p95 over --grades distinct candidates (each adds a distinct line of code, so pyright
             really runs; the base state's pyright and the reference's scenario outcomes are cached after
             the first submit, as in training), with the whole-repo pyright on the cold CLI engine
             (before) and on the warm language server (after), in the same run; then the server on
             submits alternating between two repositories (its worst case). Split into syntax / types /
             behaviour (sandbox).
  tools      round trip of env.step() for one tool call: workspace tools (read_file, edit, search) and
             sandboxed ones (run_python, run_tests, regex search), p50/p95.
  leaks      --episodes episodes with sandboxed tool calls; every 10th runs an infinite loop (its child
             is killed at the timeout), every 25th kills a sandbox worker mid-episode, every 7th is
             abandoned (never submitted), the rest submit (every 100th also through whole-repo pyright).
             Counts the family's temporary directories (rlvr-repo-*) and this process's descendant
             processes left behind afterwards.
  agents     every task: a scripted agent applying the reference diff through apply_patch (must pass),
             the base state submitted as is (must fail), and a test-file edit (must fail, flagged).

Usage: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_repo.py [--only grade tools leaks agents]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from typing import Any

import gymnasium as gym
from tqdm import tqdm

import rlvr  # noqa: F401
from rlvr.core.types import Task
from rlvr.envs.repo_env import RepoEnv
from rlvr.graders.base import make_grader
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.patch import make_unified_diff
from rlvr.graders.repo.workspace import Workspace, changed_paths
from rlvr.task_packs.registry import load_pack


def call(name: str, **arguments: Any) -> str:
    return json.dumps(
        {"tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}]}
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ten_file_task(pack_task: Task) -> Task:
    """The ledger feature task with four more modules (copies of money.py), so the repository has 10 files."""
    base, reference = dict(pack_task.hidden["base"]), dict(pack_task.hidden["reference"])
    for index in range(4):
        text = reference["ledger/money.py"]
        base[f"ledger/extra_{index}.py"] = reference[f"ledger/extra_{index}.py"] = text
    assert len(base) == 10
    return Task(
        id=pack_task.id,
        prompt=pack_task.prompt,
        family="repo",
        hidden={**pack_task.hidden, "base": base, "reference": reference},
    )


def _candidate(task: Task, index: int) -> dict[str, str]:
    """The reference state with one more distinct line of code (a comment alone would hit the cache:
    comments are blanked before pyright sees the files)."""
    files = dict(task.hidden["reference"])
    files["ledger/money.py"] = files.get("ledger/money.py", "") + f"\n_CANDIDATE_{index}: int = {index}\n"
    return files


def _create_and_grade(grader: RepoGrader, task: Task, files: dict[str, str]) -> Any:
    """Workspace create (a fresh copy of the base state), the candidate's edits written through it,
    then submit grading: what one agent-mode submit costs outside the agent."""
    workspace = Workspace.fresh(task.hidden["base"])
    for path in changed_paths(workspace.files, files):
        if path in files:
            workspace.write(path, files[path])
        else:
            workspace.delete(path)
    return grader.grade_state(task, workspace.files)


def _server_cpu(grader: RepoGrader) -> float | None:
    """CPU seconds (user + system, all threads) used so far by the grader's pyright-langserver."""
    checker = grader._types
    engine = checker._server if checker is not None else None
    connection = engine._connection if engine is not None else None
    if connection is None:
        return None
    try:
        with open(f"/proc/{connection.process.pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_grade(pack: Any, grades: int) -> dict[str, Any]:
    task = ten_file_task(pack.get("ledger-feature-split_evenly"))
    other = next(t for t in pack.tasks() if t.hidden["repo"] == "textkit" and t.meta["kind"] == "feature")
    out: dict[str, Any] = {}
    settings = {
        "types, cli engine (before: one cold pyright per submit)": {"types": True, "type_engine": "cli"},
        "types, server engine (warm pyright-langserver)": {"types": True, "type_engine": "server"},
        "types=False": {"types": False},
        # the cost of the derived hidden checks (issue 31), in the same run: listed + domain scenarios only
        "types, server engine, no derived checks (baseline)": {"types": True, "type_engine": "server"},
    }
    for label, options in settings.items():
        grader = make_grader(pack, jobs=1, **options)
        assert isinstance(grader, RepoGrader)
        if "no derived checks" in label:
            listed = grader.scenarios
            grader.scenarios = lambda task, listed=listed: [s for s in listed(task) if "derived" not in s]
        first = time.perf_counter()
        verdict = _create_and_grade(grader, task, task.hidden["reference"])
        cold = time.perf_counter() - first
        assert verdict.passed, verdict
        totals, parts = [], {"syntax": [], "types": [], "behaviour": []}
        server_cpu: list[float] = []
        for index in tqdm(range(grades), desc=label[:30]):
            files = _candidate(task, index)
            cpu = _server_cpu(grader)
            started = time.perf_counter()
            verdict = _create_and_grade(grader, task, files)
            totals.append(time.perf_counter() - started)
            if cpu is not None:
                after = _server_cpu(grader)
                server_cpu.append(after - cpu if after is not None else float("nan"))
            assert verdict.passed, verdict
            for name in parts:
                parts[name].append(verdict.timings.get(name, 0.0))
        row: dict[str, Any] = {
            "first_submit_s": round(cold, 3),
            "p50_s": round(pct(totals, 0.5), 3),
            "p95_s": round(pct(totals, 0.95), 3),
            **{f"{name}_p50_s": round(pct(values, 0.5), 3) for name, values in parts.items()},
            "types_p95_s": round(pct(parts["types"], 0.95), 3),
        }
        if server_cpu:  # load-independent: CPU seconds the language server spent per submit
            row["pyright_server_cpu_p50_s"] = round(pct(server_cpu, 0.5), 3)
            row["pyright_server_cpu_p95_s"] = round(pct(server_cpu, 0.95), 3)
        if options.get("type_engine") == "server":
            # Worst case for the incremental server: submits alternating between two repositories
            # (10-file ledger, textkit), so every check replaces the whole state on disk.
            assert _create_and_grade(grader, other, other.hidden["reference"]).passed
            alternating = []
            for index in tqdm(range(grades), desc="alternating repositories"):
                files = _candidate(task, grades + index)
                other_files = dict(other.hidden["reference"])
                first_module = next(p for p in sorted(other_files) if p.startswith("textkit/"))
                other_files[first_module] += f"\n_CANDIDATE_{index}: int = {index}\n"
                for current, state in ((task, files), (other, other_files)):
                    verdict = grader.grade_state(current, state)
                    assert verdict.passed, verdict
                    alternating.append(verdict.timings["types"])
            row["alternating_repos_types_p50_s"] = round(pct(alternating, 0.5), 3)
            row["alternating_repos_types_p95_s"] = round(pct(alternating, 0.95), 3)
        grader.close()
        out[label] = row
    return out


def bench_tools(pack: Any, repeats: int) -> dict[str, Any]:
    grader = make_grader(pack, jobs=1, types=False)
    env = gym.make(
        "rlvr/Repo-v0", pack=pack, grader=grader, task_id="ledger-feature-split_evenly", max_turns=10_000
    )
    env.reset(seed=0)
    actions = {
        "read_file": call("read_file", path="ledger/accounts.py"),
        "edit": call("edit", path="ledger/money.py", old="Split an amount", new="Split an amount"),
        "search (text)": call("search", pattern="cents"),
        "search (regex, sandbox)": call("search", pattern=r"def \w+", regex=True),
        "run_python (sandbox)": call("run_python", code="import ledger.report; print(1)"),
        "run_tests (sandbox)": call("run_tests"),
    }
    out: dict[str, Any] = {}
    for name, action in actions.items():
        times = []
        for _ in range(repeats):
            if name.startswith("run_tests"):
                inner = env.unwrapped
                assert isinstance(inner, RepoEnv) and inner.episode is not None
                inner.episode.test_runs = 0
            started = time.perf_counter()
            observation, *_ = env.step(action)
            times.append(time.perf_counter() - started)
            assert "error" not in json.loads(observation)[0]["content"][:6], observation
        out[name] = {"p50_ms": round(1000 * pct(times, 0.5), 2), "p95_ms": round(1000 * pct(times, 0.95), 2)}
    env.close()
    grader.close()
    return out


def _own_descendants() -> list[int]:
    me, found, frontier = os.getpid(), [], [os.getpid()]
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    while frontier:
        current = frontier.pop()
        for pid, parent in parents.items():
            if parent == current and pid != me:
                found.append(pid)
                frontier.append(pid)
    return found


def bench_leaks(pack: Any, episodes: int) -> dict[str, Any]:
    temp = tempfile.gettempdir()
    before_dirs = {n for n in os.listdir(temp) if n.startswith("rlvr-repo-")}
    before_procs = set(_own_descendants())
    grader = make_grader(pack, jobs=1, types=False, timeout=1.0)
    assert isinstance(grader, RepoGrader)
    typed = make_grader(pack, jobs=1, timeout=1.0)  # every 100th episode submits through whole-repo pyright
    env = gym.make("rlvr/Repo-v0", pack=pack, grader=grader, max_turns=8)
    typed_env = gym.make("rlvr/Repo-v0", pack=pack, grader=typed, max_turns=8)
    counts = {
        "submitted": 0,
        "submitted_with_pyright": 0,
        "abandoned": 0,
        "child_killed_at_timeout": 0,
        "worker_killed": 0,
    }
    for episode in tqdm(range(episodes), desc="episodes"):
        env.reset(seed=episode)
        env.step(call("run_python", code="import sys; print(len(sys.modules))"))
        if episode % 10 == 0:
            observation, *_ = env.step(call("run_python", code="while True: pass"))
            assert "timeout" in observation
            counts["child_killed_at_timeout"] += 1
        if episode % 25 == 0:
            worker = grader.sandbox.workers[0]
            worker.kill()  # the machinery dies mid-episode; the next job restarts it
            counts["worker_killed"] += 1
            env.step(call("run_python", code="print(1)"))
        if episode % 7 == 0:
            counts["abandoned"] += 1
            continue
        if episode % 100 == 1:
            typed_env.reset(seed=episode)
            typed_env.step(call("submit"))
            counts["submitted_with_pyright"] += 1
        env.step(call("submit"))
        counts["submitted"] += 1
    env.close()
    typed_env.close()
    grader.close()
    typed.close()
    time.sleep(0.5)
    leaked_dirs = sorted({n for n in os.listdir(temp) if n.startswith("rlvr-repo-")} - before_dirs)
    leaked_procs = sorted(set(_own_descendants()) - before_procs)
    return counts | {
        "episodes": episodes,
        "leaked_temp_dirs": len(leaked_dirs),
        "leaked_processes": len(leaked_procs),
    }


def bench_agents(pack: Any) -> dict[str, Any]:
    grader = make_grader(pack, jobs=1, types=False)
    assert isinstance(grader, RepoGrader)
    results = {"tasks": 0, "reference_passed": 0, "base_failed": 0, "test_edit_failed_and_flagged": 0}
    for task in tqdm(pack.tasks(), desc="tasks"):
        results["tasks"] += 1
        env = gym.make("rlvr/Repo-v0", pack=pack, grader=grader, task_id=task.id)
        env.reset(seed=0)
        env.step(call("apply_patch", patch=make_unified_diff(task.hidden["base"], task.hidden["reference"])))
        *_, info = env.step(call("submit"))
        results["reference_passed"] += bool(info["verdict"]["passed"])
        env.reset(seed=0)
        *_, info = env.step(call("submit"))
        results["base_failed"] += not info["verdict"]["passed"]
        env.reset(seed=0)
        env.step(call("apply_patch", patch=make_unified_diff(task.hidden["base"], task.hidden["reference"])))
        test_file = next(p for p in sorted(task.hidden["base"]) if p.startswith("tests/"))
        env.step(call("write_file", path=test_file, content="def test_ok() -> None:\n    pass\n"))
        *_, info = env.step(call("submit"))
        verdict = info["verdict"]
        results["test_edit_failed_and_flagged"] += (
            not verdict["passed"]
        ) and "protected_path_edit" in verdict["flags"]
    grader.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", nargs="*", default=["grade", "tools", "leaks", "agents"])
    parser.add_argument("--grades", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--episodes", type=int, default=1000)
    args = parser.parse_args()
    pack = load_pack("repo-tasks")
    report: dict[str, Any] = {}
    if "grade" in args.only:
        report["grade"] = bench_grade(pack, args.grades)
    if "tools" in args.only:
        report["tools"] = bench_tools(pack, args.repeats)
    if "leaks" in args.only:
        report["leaks"] = bench_leaks(pack, args.episodes)
    if "agents" in args.only:
        report["agents"] = bench_agents(pack)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
