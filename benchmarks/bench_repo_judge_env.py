"""The judge's fixes graded the way an agent submits them: through Repo-v0's own tools (edit, write_file or
apply_patch, then submit), to check that the env path gives the verdict bench_repo_judge.py gives.

Each fix is sent with every one of the three tools in turn (a fresh episode each); the reward of each is
printed next to the bench path's (grade_state on the same edits):

  PYTHONPATH=<checkout> .venv/bin/python benchmarks/bench_repo_judge_env.py \\
      --data benchmarks/data/repo_judge2_fixes.json --tasks router-rename-dispatch bookings-migration-checkout
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
from repo_agent_view import read_whole_file, tool_result, tool_turn
from tqdm import tqdm

import rlvr  # noqa: F401  (registers the envs)

MODES = ("edit", "write_file", "apply_patch")


def edited_files(env: gym.Env[Any, Any], edits: list[list[Any]]) -> dict[str, tuple[str, str]]:
    """path -> (text before, text after) for every file the edits touch, read through read_file."""
    files: dict[str, tuple[str, str]] = {}
    for path, old, new in edits:
        if path not in files:
            listing = tool_result(tool_turn(env, "list_files", {})).splitlines()
            before = read_whole_file(env, path) if path in listing else ""
            files[path] = (before, before)
        before, after = files[path]
        files[path] = (before, new if old is None else after.replace(old, new, 1))
    return files


def send(env: gym.Env[Any, Any], mode: str, edits: list[list[Any]]) -> list[str]:
    answers: list[str] = []
    if mode == "edit":
        for path, old, new in edits:
            if old is None:
                answers.append(tool_result(tool_turn(env, "write_file", {"path": path, "content": new})))
            else:
                answers.append(tool_result(tool_turn(env, "edit", {"path": path, "old": old, "new": new})))
        return answers
    files = edited_files(env, edits)
    if mode == "write_file":
        for path, (_before, after) in files.items():
            answers.append(tool_result(tool_turn(env, "write_file", {"path": path, "content": after + "\n"})))
        return answers
    patch = "".join(
        "".join(
            difflib.unified_diff(
                (before + "\n").splitlines(keepends=True) if before else [],
                (after + "\n").splitlines(keepends=True),
                fromfile=f"a/{path}" if before else "/dev/null",
                tofile=f"b/{path}",
            )
        )
        for path, (before, after) in files.items()
    )
    answers.append(tool_result(tool_turn(env, "apply_patch", {"patch": patch})))
    return answers


def submit(task_id: str, mode: str, edits: list[list[Any]]) -> tuple[float, str, list[str]]:
    env = gym.make("rlvr/Repo-v0", pack="repo-tasks")
    try:
        env.reset(options={"task_id": task_id})
        answers = send(env, mode, edits)
        action = json.dumps(
            {"tool_calls": [{"id": "s", "type": "function", "function": {"name": "submit", "arguments": {}}}]}
        )
        observation, reward, _terminated, _truncated, _info = env.step(action)
        return float(reward), str(observation)[:200], answers
    finally:
        env.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--tasks", nargs="+", required=True)
    parser.add_argument(
        "--bench", type=Path, default=None, help="bench_repo_judge.py --out JSON to compare with"
    )
    args = parser.parse_args()
    fixes = [
        (index, fix)
        for index, fix in enumerate(json.loads(args.data.read_text()))
        if fix["task"] in args.tasks
    ]
    bench_rows = json.loads(args.bench.read_text())["rows"] if args.bench else None
    disagreements = 0
    for index, fix in tqdm(fixes, desc="env path", file=sys.stderr):
        rewards = {}
        for mode in MODES:
            reward, observation, answers = submit(fix["task"], mode, fix["edits"])
            rewards[mode] = reward
            if any(answer.startswith("error") for answer in answers):
                print(f"  {mode}: tool answered {answers}", file=sys.stderr)
        bench = bench_rows[index]["reward"] if bench_rows else None
        agree = bench is None or all(abs(reward - bench) < 1e-3 for reward in rewards.values())
        disagreements += not agree
        shown = " ".join(f"{mode}={reward:.3f}" for mode, reward in rewards.items())
        print(f"{fix['task']:32s} {fix['class']:8s} bench={bench} {shown} {'ok' if agree else 'DISAGREE'}")
    print(json.dumps({"fixes": len(fixes), "env_vs_bench_disagreements": disagreements}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
