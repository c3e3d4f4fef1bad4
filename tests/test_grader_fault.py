"""A crash of our grading machinery is never the policy's fault: in every env, in `rlvr grade`, the
vector env and the TRL reward function it comes back as a `grader` fault, `disrupted`, so a trainer
drops the episode instead of penalising the completion for our bug."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import rlvr  # noqa: F401  (registers the rlvr/ env ids)
from rlvr.core import Verdict, grader_fault
from rlvr.graders.base import Grader, grade_or_fault
from rlvr.task_packs.registry import resolve_pack


class CrashingGrader(Grader):
    """A grader that breaks its promise never to raise."""

    def __init__(self, pack: Any) -> None:
        super().__init__(pack)
        self.family = pack.family

    def grade_many(self, task_ids: Any, completions: Any) -> list[Verdict]:
        raise RuntimeError("verifier exploded")


TEXT_ENVS = {
    "rlvr/Code-v0": "humaneval",
    "rlvr/Math-v0": "math-procedural",
    "rlvr/SQL-v0": "sql-shop",
    "rlvr/Proof-v0": "proof-identities",
}


def assert_disrupted(verdict: Verdict) -> None:
    assert verdict.error is not None and "verifier exploded" in verdict.error
    assert verdict.fault == "grader" and verdict.disrupted
    assert verdict.reward == 0.0 and not verdict.passed


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_a_grader_crash_is_disrupted_in_every_text_env(env_id: str) -> None:
    pack = resolve_pack(TEXT_ENVS[env_id])
    env = gym.make(env_id, pack=pack, grader=CrashingGrader(pack))
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("an answer")
    assert reward == 0.0 and terminated
    assert_disrupted(env.unwrapped.last_verdict)  # type: ignore[attr-defined]
    assert info["verdict"]["fault"] == "grader"
    env.close()


def test_a_crash_in_a_repo_patch_episode_is_disrupted() -> None:
    pack = resolve_pack("repo-tasks")
    env = gym.make("rlvr/Repo-v0", pack=pack, mode="patch", grader=CrashingGrader(pack))
    env.reset(seed=0)
    env.step("--- a/x.py\n+++ b/x.py\n")
    assert_disrupted(env.unwrapped.last_verdict)  # type: ignore[attr-defined]
    env.close()


@pytest.mark.parametrize("env_id", ["rlvr/Tool-v0", "rlvr/Repo-v0"])
def test_a_crash_inside_a_multi_turn_episode_is_disrupted(
    env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    episode = env.unwrapped.episode  # type: ignore[attr-defined]

    def explode(text: str) -> str:
        raise RuntimeError("verifier exploded")

    monkeypatch.setattr(episode, "act", explode)
    _, reward, terminated, truncated, _ = env.step('{"tool_calls": []}')
    assert reward == 0.0 and (terminated or truncated)  # the episode is over either way
    verdict = env.unwrapped.last_verdict  # type: ignore[attr-defined]
    assert_disrupted(verdict)
    assert verdict.error.startswith("episode fault: RuntimeError")
    env.close()


def test_the_vector_env_prefetch_turns_a_crash_into_faults() -> None:
    from rlvr.envs.vector import PrefetchingGrader

    pack = resolve_pack("humaneval")
    grader = PrefetchingGrader(CrashingGrader(pack))
    grader.prefetch(["HumanEval/0", "HumanEval/1"], ["a", "b"])
    for verdict in grader.grade_many(["HumanEval/0", "HumanEval/1"], ["a", "b"]):
        assert_disrupted(verdict)


def test_the_trl_reward_function_treats_a_crash_by_its_on_error_rule() -> None:
    from rlvr.integrations.trl import make_reward_func

    pack = resolve_pack("humaneval")
    reward = make_reward_func(pack, grader=CrashingGrader(pack), on_error="nan")
    assert reward(completions=["a"], task_id=["HumanEval/0"]) == [None]
    assert_disrupted(reward.last_verdicts[0])


def test_rlvr_grade_reports_a_crash_per_line_and_keeps_going(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rlvr.cli.grade as grade_cli
    from rlvr.cli import main

    monkeypatch.setattr(grade_cli, "make_grader", lambda pack, **options: CrashingGrader(pack))
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "x"}) + "\n")
    out = tmp_path / "out.jsonl"
    main(["grade", "--pack", "humaneval", "--completions", str(source), "--out", str(out)])
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["fault"] == "grader" and "verifier exploded" in line["error"]


def test_one_rule_for_exceptions_and_for_sentences() -> None:
    from_exception = grader_fault("t", ValueError("bad"), where="episode")
    assert (from_exception.error, from_exception.fault) == ("episode fault: ValueError: bad", "grader")
    assert grader_fault("t", "worker lost").error == "worker lost" and grader_fault("t", "x").disrupted
    pack = resolve_pack("humaneval")
    assert all(v.disrupted for v in grade_or_fault(CrashingGrader(pack), ["HumanEval/0"], ["x"]))
