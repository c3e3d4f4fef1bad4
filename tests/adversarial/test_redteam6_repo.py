"""Red team 6, `rlvr/Repo-v0`: a turn handed to the env as data (an assistant message or a list of
calls, as trainers and adapters hold them).

Found: `RepoEnv.step` turned a turn given as data into text with `str()` - Python's repr, single
quotes, not JSON - so an honest turn given as data was refused as malformed (a false failure), and
an argument nested thousands of levels deep raised RecursionError inside `str()`, which the env
turned into a grading fault (`error` set: a trainer drops the episode, an escape from the penalty
of, say, deleting a test). And a turn given as data cost no tokens at all: the `max_tokens` budget
was charged only for text. Now a turn given as data reaches the episode as data (its depth checked
without recursion, read as JSON) and costs the tokens of its JSON text.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import rlvr  # noqa: F401  (registers the rlvr/ env ids)
from rlvr.task_packs.registry import load_pack

PACK = load_pack("repo-tasks")
TASK = next(t for t in PACK.tasks() if t.hidden["repo"] == "ledger" and t.meta["kind"] == "bug")


def _deep(levels: int) -> Any:
    value: Any = "tests/test_money.py"
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture(scope="module")
def env() -> Any:
    made = gym.make("rlvr/Repo-v0", pack=PACK, max_turns=3)
    yield made
    made.close()


@pytest.mark.parametrize("levels", [2_000, 100_000])
@pytest.mark.parametrize("shape", ["call", "assistant message"])
def test_a_deeply_nested_turn_given_as_data_is_a_scored_malformed_turn(
    env: Any, levels: int, shape: str
) -> None:
    call = {"name": "delete_file", "arguments": {"path": _deep(levels)}}
    action = call if shape == "call" else {"role": "assistant", "tool_calls": [{"function": call}]}
    env.reset(options={"task_id": TASK.id})
    observation, _, terminated, truncated, info = env.step(action)
    assert "nested deeper than" in observation, observation[:300]
    assert "verdict" not in info or info["verdict"]["error"] is None, info
    # the turn counted; the episode goes on and still ends with a scored verdict
    observation, reward, terminated, truncated, info = env.step({"name": "submit", "arguments": {}})
    assert terminated and info["verdict"]["error"] is None and reward < 1.0


def test_an_honest_turn_given_as_data_is_read_as_json(env: Any) -> None:
    env.reset(options={"task_id": TASK.id})
    observation, _, _, _, _ = env.step({"name": "list_files", "arguments": {}})
    assert "malformed" not in observation and "not valid JSON" not in observation, observation[:300]
    assert "ledger/money.py" in observation


def test_the_same_turn_as_text_is_the_control(env: Any) -> None:
    env.reset(options={"task_id": TASK.id})
    observation, _, _, _, _ = env.step(json.dumps({"name": "list_files", "arguments": {}}))
    assert "ledger/money.py" in observation


def test_a_turn_given_as_data_spends_the_token_budget() -> None:
    made = gym.make("rlvr/Repo-v0", pack=PACK, max_turns=10, max_tokens=2_000)
    try:
        made.reset(options={"task_id": TASK.id})
        padding = "x" * 12_000  # ~3,000 tokens of arguments: over the budget in one turn
        _, _, terminated, truncated, info = made.step(
            {"name": "list_files", "arguments": {"path": "ledger", "note": padding}}
        )
        assert truncated and not terminated, info
        assert "budget:tokens" in info["verdict"]["flags"]
    finally:
        made.close()


# -- the single-shot text envs share the same step: a deep action given as data was a RecursionError
# out of `step()` (Repo-v0 in patch mode, SQL-v0, Math-v0, Code-v0)
@pytest.mark.parametrize(
    "env_id, pack, options",
    [
        ("rlvr/Repo-v0", "repo-tasks", {"mode": "patch"}),
        ("rlvr/SQL-v0", "sql-shop", {}),
        ("rlvr/Math-v0", "math-procedural", {}),
    ],
)
def test_a_deep_action_given_as_data_to_a_text_env_is_a_scored_failure(
    env_id: str, pack: str, options: dict[str, Any]
) -> None:
    made = gym.make(env_id, pack=pack, **options)
    try:
        made.reset(seed=0)
        _, reward, _, _, info = made.step({"content": _deep(100_000)})
        assert info["verdict"]["error"] is None and reward == 0.0, info["verdict"]
        assert "oversized:nesting" in info["verdict"]["flags"]
    finally:
        made.close()


# -- an `edit` that multiplies a file: `text.replace(old, new)` ran before the size check
def _edit_call(path: str, old: str, new: str) -> str:
    arguments = {"path": path, "old": old, "new": new, "replace_all": True}
    return json.dumps({"tool_calls": [{"id": "e", "function": {"name": "edit", "arguments": arguments}}]})


def test_an_edit_that_would_blow_a_file_up_is_refused_before_it_is_built() -> None:
    """`edit(replace_all)` of a 150,000-character file of one letter with a 2,000-character `new`
    built a 300-million-character string in the grader's process before the size check refused
    it; with a 90,000-character `new` (one turn holds 100,000) it is 16 GB: a MemoryError (a
    grading fault, the episode dropped) or the host out of memory. Now the size is computed first."""
    import tracemalloc

    from rlvr.graders.repo.episode import RepoEpisode

    episode = RepoEpisode(TASK, run=lambda *a, **k: None, grade=lambda *a: None)  # type: ignore[arg-type,return-value]
    episode.workspace.files["ledger/filler.py"] = "a" * 150_000
    tracemalloc.start()
    try:
        observation = json.loads(episode.act(_edit_call("ledger/filler.py", "a", "b" * 2_000)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "limit" in observation[0]["content"], observation
    assert peak < 20_000_000, peak  # no 300 MB string was ever built
    assert episode.workspace.files["ledger/filler.py"] == "a" * 150_000


def test_an_honest_replace_all_edit_still_works() -> None:
    from rlvr.graders.repo.episode import RepoEpisode

    episode = RepoEpisode(TASK, run=lambda *a, **k: None, grade=lambda *a: None)  # type: ignore[arg-type,return-value]
    path = next(p for p in episode.workspace.files if p.endswith("money.py"))
    before = episode.workspace.files[path]
    observation = json.loads(episode.act(_edit_call(path, "cents", "pennies")))
    assert "replacement" in observation[0]["content"], observation
    assert episode.workspace.files[path] == before.replace("cents", "pennies")
