"""Tool family: turn parsing (OpenAI function-calling shapes), worlds and schemas, permission policies,
efficiency and the gate, transcript replay, the tool-worlds pack, directory tool packs, rlvr/Tool-v0."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rlvr  # noqa: F401
from rlvr.core.types import Task
from rlvr.graders.tool.calls import parse_turn
from rlvr.graders.tool.episode import ToolEpisode, subset_matches
from rlvr.graders.tool.grader import ToolGrader, split_transcript
from rlvr.specs.tool_worlds import WORLDS
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack
from rlvr.task_packs.tool_tasks import reference_transcript, turn_text

EXAMPLE = Path(__file__).parents[1] / "examples" / "packs" / "tool-office"


def call(name: str, **arguments: object) -> dict:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def ledger_task(**hidden: object) -> Task:
    base = {
        "world": "ledger",
        "state": {"accounts": {"a": 100, "b": 0, "vault": 999}, "transfers": []},
        "goal": {"state": {"accounts": {"a": 60, "b": 40}}},
        "policy": {"read_only": ["vault"], "forbidden_tools": ["list_accounts"], "budget": 3},
        "optimal_calls": 1,
        "max_turns": 4,
    }
    return Task("ledger", "p", "tool", hidden={**base, **hidden})


def message(*calls: dict) -> str:
    return json.dumps({"role": "assistant", "content": None, "tool_calls": list(calls)})


def test_parse_turn_shapes() -> None:
    assert parse_turn(message(call("get_balance", account="a"))).calls[0].arguments == {"account": "a"}
    assert parse_turn(json.dumps([call("x")])).calls[0].name == "x"
    assert parse_turn('{"name": "x", "arguments": {"k": 1}}').calls[0].arguments == {"k": 1}
    assert parse_turn('```json\n{"final_answer": "42"}\n```').final_answer == "42"
    assert parse_turn('{"role": "assistant", "content": "done"}').final_answer == "done"
    huge_number = '{"name": "transfer", "arguments": {"amount": ' + "9" * 5000 + "}}"
    huge_in_string = json.dumps([{"function": {"name": "x", "arguments": '{"a": ' + "9" * 5000 + "}"}}])
    for bad in [
        huge_number,
        huge_in_string,
        "[" * 50_000 + "]" * 50_000,
        "hello",
        "{",
        '{"tool_calls": 5}',
        '[{"function": {"name": "x", "arguments": "{oops"}}]',
        "[]",
        "7",
    ]:
        assert parse_turn(bad).error


def test_schemas_come_from_type_hints() -> None:
    transfer = WORLDS["ledger"].tools()["transfer"].schema["function"]
    assert transfer["parameters"]["properties"]["amount"] == {"type": "integer"}
    assert set(transfer["parameters"]["required"]) == {"source", "target", "amount"}
    assert all(spec.schema["function"]["description"] for w in WORLDS.values() for spec in w.tools().values())


def test_goal_reached_cleanly_and_efficiently() -> None:
    episode = ToolEpisode(ledger_task())
    observation = episode.act(message(call("transfer", source="a", target="b", amount=40)))
    assert json.loads(json.loads(observation)[0]["content"]) == {"result": "ok"}
    episode.act('{"final_answer": "done"}')
    verdict = episode.verdict()
    assert verdict.passed and verdict.reward == pytest.approx(1.0)


def test_malformed_and_invalid_calls_get_error_observations() -> None:
    episode = ToolEpisode(ledger_task())
    assert "malformed" in episode.act("not json at all")
    assert "unknown tool" in episode.act(message(call("rm_rf")))
    assert "bad arguments" in episode.act(message(call("transfer", source="a", target="b", amount="40")))
    assert not episode.done and episode.calls_made == 0


def test_policy_violations_fail_the_gate_even_if_the_goal_is_reached() -> None:
    episode = ToolEpisode(ledger_task())
    assert "permission denied" in episode.act(message(call("list_accounts")))
    episode.act(message(call("transfer", source="a", target="b", amount=40)))
    verdict = episode.verdict()
    assert not verdict.passed and verdict.gates == ["policy"] and verdict.reward == 0.0
    read_only = ToolEpisode(ledger_task())
    assert "read-only" in read_only.act(message(call("transfer", source="vault", target="b", amount=40)))
    assert read_only.world.state["accounts"]["vault"] == 999  # refused, no side effect


def test_budget_is_enforced() -> None:
    episode = ToolEpisode(ledger_task())
    for _ in range(3):
        episode.act(message(call("get_balance", account="a")))
    assert "budget" in episode.act(message(call("transfer", source="a", target="b", amount=40)))
    assert not episode.verdict().passed


@settings(max_examples=40, deadline=None)
@given(extra_reads=st.integers(0, 2), goal_weight=st.floats(0.05, 1.0), efficiency_weight=st.floats(0.0, 1.0))
def test_efficiency_is_soft_and_never_outranks_a_failed_gate(
    extra_reads: int, goal_weight: float, efficiency_weight: float
) -> None:
    weights = {"goal": goal_weight, "efficiency": efficiency_weight}
    task = ledger_task(policy={"budget": 10})
    success = ToolEpisode(task, weights)
    for _ in range(extra_reads):
        success.act(message(call("get_balance", account="a")))
    success.act(message(call("transfer", source="a", target="b", amount=40)))
    failure = ToolEpisode(task, weights)
    failure.act(message(call("transfer", source="a", target="b", amount=39)))
    good, bad = success.verdict(), failure.verdict()
    assert good.passed and not bad.passed and good.reward > bad.reward
    if extra_reads and efficiency_weight > 0.01:
        assert good.reward < 1.0


def test_answer_goals() -> None:
    task = ledger_task(goal={"answer": "100"}, policy={})
    right, wrong = ToolEpisode(task), ToolEpisode(task)
    right.act(message(call("get_balance", account="a")))
    right.act('{"final_answer": " 100 "}')
    wrong.act('{"final_answer": "99"}')
    assert right.verdict().passed and wrong.verdict().gates == ["answer"]


def test_subset_matching() -> None:
    assert subset_matches({"a": {"b": 1}}, {"a": {"b": 1.0, "c": 2}})
    assert subset_matches([{"x": 1}], [{"x": 2}, {"x": 1, "y": 0}])
    assert not subset_matches({"a": 1}, {"a": True}) and not subset_matches({"a": 1}, {"a": 2})


def test_transcript_replay_forms() -> None:
    turns = [message(call("get_balance", account="a")), '{"final_answer": "x"}']
    as_list = json.dumps([json.loads(t) for t in turns])
    assert split_transcript(as_list) == [json.dumps(json.loads(t)) for t in turns]
    assert split_transcript("\n".join(turns)) == turns
    assert split_transcript("free text") == ["free text"]


def test_pack_references_solve_every_task() -> None:
    pack = load_pack("tool-worlds")
    tasks = pack.tasks()
    assert {t.meta["world"] for t in tasks} == set(WORLDS) and {t.split for t in tasks} == {"train", "test"}
    verdicts = ToolGrader(pack).grade_many([t.id for t in tasks], [reference_transcript(t) for t in tasks])
    assert all(v.passed and v.reward == pytest.approx(1.0) for v in verdicts)
    assert all("reference" not in t.prompt and "optimal_calls" not in t.prompt for t in tasks)


def test_directory_pack_validates_and_grades() -> None:
    assert validate_directory(EXAMPLE) == []
    pack = load_pack(str(EXAMPLE))
    assert all(
        v.passed
        for v in ToolGrader(pack).grade_many(
            [t.id for t in pack.tasks()], [t.hidden["reference"] for t in pack.tasks()]
        )
    )


def test_directory_pack_errors_are_explained(tmp_path: Path) -> None:
    (tmp_path / "pack.toml").write_text('name = "bad"\nfamily = "tool"\n')
    good_prompt = " ".join(WORLDS["ledger"].tools())
    lines = [
        {"id": "1", "prompt": "p", "world": "moon", "goal": {"answer": "1"}},
        {
            "id": "2",
            "prompt": "p",
            "world": "ledger",
            "goal": {"answer": "1"},
            "policy": {"forbidden_tools": ["fly"]},
        },
        {
            "id": "3",
            "prompt": good_prompt,
            "world": "ledger",
            "state": {"accounts": {"a": 1}, "transfers": []},
            "goal": {"state": {"accounts": {"a": 2}}},
            "reference": turn_text([{"name": "get_balance", "arguments": {"account": "a"}}]),
        },
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    problems = [str(p) for p in validate_directory(tmp_path)]
    assert any(":1: world: must be one of" in p for p in problems)
    assert any(":2: policy.forbidden_tools: unknown tool" in p for p in problems)
    assert any(":2: prompt: does not show tool(s)" in p for p in problems)
    assert any(":3: reference: does not solve the task" in p for p in problems)


def test_tool_env_multi_turn_flow() -> None:
    env = gym.make("rlvr/Tool-v0")
    observation, _ = env.reset(options={"task_id": "tool/top_up/0"})
    assert '"name": "transfer"' in observation
    turns = env.unwrapped.task.hidden["reference"]
    for turn in turns:
        observation, reward, terminated, truncated, info = env.step(turn_text(turn))
        if turn is not turns[-1]:
            assert reward == 0.0 and not terminated and "tool_call_id" in observation
    observation, reward, terminated, truncated, info = env.step('{"final_answer": "done"}')
    assert terminated and not truncated and reward == pytest.approx(1.0) and info["verdict"]["passed"]
    env.close()


def test_tool_env_truncates_at_the_turn_limit() -> None:
    env = gym.make("rlvr/Tool-v0", max_turns=2)
    env.reset(options={"task_id": "tool/pay_invoice/0"})
    _, _, terminated, truncated, _ = env.step("oops")
    assert not terminated and not truncated
    _, reward, terminated, truncated, info = env.step("oops again")
    assert truncated and not terminated and reward == 0.0 and "malformed_turns" in info["verdict"]["flags"]
    env.close()
