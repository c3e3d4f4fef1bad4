"""Write what an agent sees of a Repo-v0 task into a directory: the issue text (the reset observation)
and every file of the base repository, read through the env's own list_files/read_file tools.

Only the public env API is used (gym.make, reset, step with tool-call turns), so an outside judge can
write fixes without seeing the task's reference or hidden checks:

  PYTHONPATH=<checkout> .venv/bin/python benchmarks/repo_agent_view.py router-bug-001 --out /tmp/view
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

import rlvr  # noqa: F401  (registers the envs)

CHUNK_LINES = 40
LINE_NUMBER = re.compile(r"^ *\d+\| ?")


def tool_turn(env: gym.Env[Any, Any], name: str, arguments: dict[str, Any]) -> str:
    action = json.dumps(
        {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]}
    )
    observation, _reward, terminated, truncated, _info = env.step(action)
    if terminated or truncated:
        raise RuntimeError(f"the episode ended on {name}: {observation!s:.300}")
    return str(observation)


def tool_result(observation: str) -> str:
    """The text of the single tool result in an observation (JSON list of results, or the text itself)."""
    try:
        parsed = json.loads(observation)
    except json.JSONDecodeError:
        return observation
    if isinstance(parsed, list) and parsed and isinstance(parsed[0], dict):
        first: dict[str, Any] = parsed[0]
        return str(first.get("content", first.get("output", observation)))
    if isinstance(parsed, dict):
        return str(parsed.get("content", parsed.get("output", observation)))
    return observation


def strip_line_numbers(numbered: str) -> str:
    """read_file numbers its lines as `   12| text`; the file's own text is what follows the bar."""
    lines = numbered.split("\n")
    if lines and all(LINE_NUMBER.match(line) for line in lines if line):
        return "\n".join(LINE_NUMBER.sub("", line, count=1) for line in lines)
    return numbered


def read_whole_file(env: gym.Env[Any, Any], path: str) -> str:
    """read_file cuts long answers, so the file is read in windows of CHUNK_LINES lines until its end."""
    chunks: list[str] = []
    start = 1
    while True:
        answer = tool_result(
            tool_turn(env, "read_file", {"path": path, "start": start, "end": start + CHUNK_LINES - 1})
        )
        if answer.startswith("error: start") and "past the end" in answer:
            break
        if "[truncated" in answer:
            raise RuntimeError(f"{path}: a window of {CHUNK_LINES} lines was still cut; lower CHUNK_LINES")
        chunks.append(strip_line_numbers(answer))
        if answer.count("\n") + 1 < CHUNK_LINES:
            break
        start += CHUNK_LINES
    return "\n".join(chunks)


def write_view(task_id: str, out: Path, *, verbose: bool = False) -> list[str]:
    env = gym.make("rlvr/Repo-v0", pack="repo-tasks")
    try:
        observation, _info = env.reset(options={"task_id": task_id})
        out.mkdir(parents=True, exist_ok=True)
        (out / "ISSUE.md").write_text(str(observation))
        listing = tool_result(tool_turn(env, "list_files", {}))
        if verbose:
            print(listing, file=sys.stderr)
        paths = [line.strip() for line in listing.splitlines() if line.strip() and not line.startswith("(")]
        written = []
        for path in paths:
            text = read_whole_file(env, path)
            target = out / "repo" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            written.append(path)
        tests = tool_result(tool_turn(env, "run_tests", {}))
        (out / "RUN_TESTS.txt").write_text(tests)
        return written
    finally:
        env.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("task_ids", nargs="+")
    parser.add_argument("--out", type=Path, required=True, help="one sub-directory per task is written here")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    for task_id in args.task_ids:
        written = write_view(task_id, args.out / task_id, verbose=args.verbose)
        print(f"{task_id}: {len(written)} files -> {args.out / task_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
