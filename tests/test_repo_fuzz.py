"""Fuzzing rlvr/Repo-v0's agent mode: random tool calls, malformed JSON, huge writes, path traversal,
symlink-looking and binary content. Every bad input gets an error observation or a flagged verdict;
step() never raises; nothing is ever written outside the in-memory workspace. Seeded."""

from __future__ import annotations

import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import rlvr  # noqa: F401
from rlvr.graders.base import make_grader
from rlvr.graders.repo.workspace import check_path
from rlvr.task_packs.registry import load_pack

PACK = load_pack("repo-tasks")
PATHS = [
    "ledger/money.py",
    "../outside.py",
    "/tmp/rlvr-fuzz-abs.py",
    "ledger/../../x.py",
    "tests/test_ledger.py",
    "new/mod.py",
    "ledger",
    "",
    "a\0b",
    "link -> /etc/passwd",
    "ledger/money.py/x",
    "~/.bashrc",
    "./ledger/cli.py",
    "C:\\windows\\x.py",
    "é/ü.py",
    "x" * 500,
]
CONTENTS = [
    "x = 1\n",
    "",
    "\0\x01\x02binary",
    "\udcff",
    "y" * 250_000,
    "def f(:\n",
    "import os\nos.system('id')\n",
]


def random_arguments(rng: random.Random) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for key in rng.sample(
        [
            "path",
            "content",
            "old",
            "new",
            "pattern",
            "regex",
            "patch",
            "code",
            "start",
            "end",
            "selector",
            "start_line",  # the old names: an error observation now
            "replace_all",
        ],
        rng.randint(0, 4),
    ):
        arguments[key] = rng.choice(
            [
                rng.choice(PATHS),
                rng.choice(CONTENTS),
                rng.randint(-5, 10**6),
                None,
                True,
                [1, 2],
                {"a": 1},
                "(a+)+$",
                "--- a/ledger/money.py\n+++ b/../../escape.py\n@@ -1 +1 @@\n-x\n+y\n",
                "while True: pass",
            ]
        )
    return arguments


def random_turn(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(
            [
                "{",
                "[]",
                "null",
                '{"tool_calls": 5}',
                "x" * 200_001,
                "\ud800",
                "[" * 5000,
                '{"final_answer": 1}',
            ]
        )
    names = [
        "list_files",
        "read_file",
        "search",
        "write_file",
        "edit",
        "apply_patch",
        "delete_file",
        "run_tests",
        "run_python",
        "nope",
    ]
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {
                "name": rng.choice(names),
                "arguments": random_arguments(rng) if rng.random() < 0.9 else "{bad json",
            },
        }
        for i in range(rng.randint(1, 3))
    ]
    return json.dumps({"tool_calls": calls})


@pytest.fixture(scope="module")
def grader():
    with make_grader(PACK, jobs=1, types=False, timeout=2.0) as shared:
        yield shared


def test_fuzzed_episodes_never_crash_or_escape(grader, tmp_path: Path) -> None:
    rng = random.Random(1234)
    before = set(os.listdir(tempfile.gettempdir()))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        env = gym.make(
            "rlvr/Repo-v0", pack=PACK, grader=grader, task_id="ledger-feature-split_evenly", max_turns=12
        )
        for episode in range(6):
            env.reset(seed=episode)
            for _ in range(12):
                observation, reward, terminated, truncated, info = env.step(random_turn(rng))
                assert isinstance(observation, str) and 0.0 <= reward <= 1.0
                if terminated or truncated:
                    verdict = info["verdict"]
                    assert verdict["error"] is None or verdict["fault"] in ("input",), verdict
                    break
            workspace = env.unwrapped.episode.workspace
            for path, text in workspace.files.items():
                assert check_path(path) == path and "\0" not in text
    finally:
        os.chdir(cwd)
    assert list(tmp_path.iterdir()) == []
    assert not Path("/tmp/rlvr-fuzz-abs.py").exists() and not (Path(cwd).parent / "outside.py").exists()
    leaked = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("rlvr-repo")}
    assert leaked == set()


def test_every_episode_gets_a_fresh_workspace(grader) -> None:
    env = gym.make("rlvr/Repo-v0", pack=PACK, grader=grader, task_id="ledger-feature-split_evenly")
    env.reset(seed=0)
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "write_file", "arguments": {"path": "ledger/money.py", "content": "x = 1\n"}},
    }
    env.step(json.dumps({"tool_calls": [call]}))
    assert env.unwrapped.episode.workspace.files["ledger/money.py"] == "x = 1\n"
    env.reset(seed=1)
    assert env.unwrapped.episode.workspace.files == PACK.get("ledger-feature-split_evenly").hidden["base"]
