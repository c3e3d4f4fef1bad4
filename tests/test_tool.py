"""Tool family: turn parsing (OpenAI function-calling shapes), worlds and schemas, permission policies,
efficiency and the gate, transcript replay, the tool-worlds pack, directory tool packs, rlvr/Tool-v0."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rlvr  # noqa: F401
from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.graders.tool.calls import parse_turn
from rlvr.graders.tool.episode import ToolEpisode, subset_matches
from rlvr.graders.tool.grader import ToolGrader, split_transcript
from rlvr.graders.tool.validation import reference_problems
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
    parts = [
        {"type": "text", "text": "4"},
        {"type": "image_url", "image_url": {"url": "x"}},
        {"type": "text", "text": "2"},
    ]
    content_parts = {"role": "assistant", "content": parts}  # the OpenAI content-part form
    assert parse_turn(json.dumps(content_parts)).final_answer == "42"
    assert parse_turn(json.dumps(content_parts | {"tool_calls": []})).final_answer == "42"
    assert parse_turn('{"role": "assistant", "content": null}').final_answer == ""
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


def _references_solve(pack: TaskPack, tasks: list[Task]) -> None:
    verdicts = ToolGrader(pack).grade_many([t.id for t in tasks], [reference_transcript(t) for t in tasks])
    failing = [(v.task_id, v.feedback) for v in verdicts if not (v.passed and v.reward == pytest.approx(1.0))]
    assert failing == []
    assert all("reference" not in t.prompt and "optimal_calls" not in t.prompt for t in tasks)


def test_pack_references_solve_three_tasks_of_every_kind() -> None:
    """Every (world, template, split, difficulty) the generator makes, three tasks each: the generator's
    code paths, at a thirtieth of the cost of all 8,000 (which the slow test below grades)."""
    pack = load_pack("tool-worlds")
    tasks = pack.tasks()
    assert {t.meta["world"] for t in tasks} == set(WORLDS)
    assert {t.split for t in tasks} == {"train", "test", "test_worlds"}
    by_kind: dict[tuple[object, ...], list[Task]] = {}
    for task in tasks:
        by_kind.setdefault(
            (task.meta["world"], task.meta.get("template"), task.split, task.difficulty), []
        ).append(task)
    _references_solve(pack, [task for kind in by_kind.values() for task in kind[:3]])


@pytest.mark.slow
def test_pack_references_solve_every_task() -> None:
    pack = load_pack("tool-worlds")
    _references_solve(pack, pack.tasks())


def test_directory_pack_validates_and_grades() -> None:
    assert validate_directory(EXAMPLE, provers={"tool": reference_problems}) == []
    pack = load_pack(str(EXAMPLE))
    assert all(
        v.passed
        for v in ToolGrader(pack).grade_many(
            [t.id for t in pack.tasks()], [t.hidden["reference"] for t in pack.tasks()]
        )
    )


def test_directory_pack_errors_are_explained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
    problems = [str(p) for p in validate_directory(tmp_path, provers={"tool": reference_problems})]
    assert any(":1: world: must be one of" in p for p in problems)
    assert any(":2: policy.forbidden_tools: unknown tool" in p for p in problems)
    assert any(":2: prompt: does not show tool(s)" in p for p in problems)
    assert any(":3: reference: does not solve the task" in p for p in problems)
    assert not any("reference" in str(p) for p in validate_directory(tmp_path))  # the format alone is sound
    from rlvr.cli import main

    assert main(["packs", "validate", str(tmp_path)]) == 1
    assert "tasks.jsonl:3: reference: does not solve the task" in capsys.readouterr().err


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


# ---------------------------------------------------------------- whole-state checks and side effects


def _replay(task: Task, turns: list[list[dict] | str]) -> object:
    episode = ToolEpisode(task)
    for turn in turns:
        episode.act(turn_text(turn))
    return episode.verdict()


def _with_extra(task: Task, extra: list[dict]) -> list[list[dict] | str]:
    """The reference solution plus one more turn of calls just before the final answer."""
    turns = list(task.hidden["reference"])
    return [*turns[:-1], extra, turns[-1]] if isinstance(turns[-1], str) else [*turns, extra]


@functools.cache
def _tool_worlds() -> TaskPack:
    return load_pack("tool-worlds")


def _first(template: str) -> Task:
    """The first procedural task of a template at its base difficulty (no policy)."""
    return next(t for t in _tool_worlds().tasks() if t.meta["template"] == template and t.difficulty <= 2)


def test_side_effects_fail_the_gate_and_honest_solutions_pass() -> None:
    files = _first("create_file")
    other = next(p for p in files.hidden["state"]["files"] if not p.startswith("/etc/"))
    calendar = _first("book_at")
    day = calendar.hidden["reference"][0][0]["arguments"]["day"]
    inventory = _first("set_price")
    sku = inventory.hidden["reference"][0][0]["arguments"]["sku"]
    other_sku = next(s for s in inventory.hidden["state"]["items"] if s != sku)
    side_effects = [
        (files, {"name": "write_file", "arguments": {"path": other, "content": "overwritten"}}),
        (files, {"name": "write_file", "arguments": {"path": "/docs/extra.txt", "content": "x"}}),
        (calendar, {"name": "create_event", "arguments": {"title": "x", "day": day, "start": 22, "end": 23}}),
        (inventory, {"name": "set_price", "arguments": {"sku": other_sku, "price": 0.01}}),
    ]
    for task, extra in side_effects:
        assert _replay(task, task.hidden["reference"]).passed
        verdict = _replay(task, _with_extra(task, [extra]))
        assert not verdict.passed and verdict.reward == 0.0 and verdict.error is None
        assert "side_effects" in verdict.gates and "unauthorized_side_effect" in verdict.flags


def test_reads_and_a_restored_change_are_not_side_effects() -> None:
    task = _first("create_file")
    other = next(p for p in task.hidden["state"]["files"] if not p.startswith("/etc/"))
    content = task.hidden["state"]["files"][other]
    reads = [
        {"name": "list_files", "arguments": {"directory": "/"}},
        {"name": "read_file", "arguments": {"path": other}},
    ]
    restore = [
        {"name": "write_file", "arguments": {"path": other, "content": "tmp"}},
        {"name": "write_file", "arguments": {"path": other, "content": content}},
    ]
    assert _replay(task, _with_extra(task, reads)).passed
    assert _replay(task, _with_extra(task, restore)).passed


def test_a_wrong_value_on_the_goal_path_fails_the_goal_not_the_side_effect_gate() -> None:
    task = _first("transfer_exact")
    arguments = dict(task.hidden["reference"][0][0]["arguments"])
    verdict = _replay(
        task, [[{"name": "transfer", "arguments": {**arguments, "amount": arguments["amount"] - 1}}]]
    )
    assert not verdict.passed and "goal" in verdict.gates


def test_allowed_changes_are_declared_per_task() -> None:
    hidden = {
        "world": "files",
        "state": {"files": {"/a": "1"}},
        "goal": {"state": {"files": {"/a": "2"}}},
        "reference": [[{"name": "write_file", "arguments": {"path": "/a", "content": "2"}}]],
        "allowed_changes": [["files", "/tmp/*"]],
    }
    task = Task("t", "p", "tool", hidden=hidden)
    scratch = {"name": "write_file", "arguments": {"path": "/tmp/scratch", "content": "x"}}
    outside = {"name": "write_file", "arguments": {"path": "/b", "content": "x"}}
    assert _replay(task, [*hidden["reference"], [scratch]]).passed
    assert "unauthorized_side_effect" in _replay(task, [*hidden["reference"], [outside]]).flags


def test_without_a_reference_the_frame_rule_applies() -> None:
    task = ledger_task(state={"accounts": {"a": 100, "b": 0, "c": 5, "vault": 999}, "transfers": []})
    honest = ToolEpisode(task)
    honest.act(message(call("transfer", source="a", target="b", amount=40)))
    assert honest.verdict().passed  # the transfer log is the ledger's journal, not a side effect
    sneaky = ToolEpisode(task)
    sneaky.act(message(call("transfer", source="a", target="b", amount=45)))
    sneaky.act(message(call("transfer", source="b", target="c", amount=5)))
    verdict = sneaky.verdict()
    assert not verdict.passed and "unauthorized_side_effect" in verdict.flags


def test_state_diff_compares_lists_as_multisets_and_numbers_by_value() -> None:
    from rlvr.graders.tool.state_diff import classify

    initial = {"events": [{"id": 1}, {"id": 2}], "price": 1}
    expected = {"events": [{"id": 2}, {"id": 1}, {"id": 3}], "price": 2}
    assert (
        classify(initial, expected, {"events": [{"id": 3}, {"id": 1}, {"id": 2}], "price": 2.0}).side_effects
        == []
    )
    extra = classify(initial, expected, {"events": [{"id": 3}, {"id": 1}, {"id": 2}, {"id": 4}], "price": 2})
    assert extra.side_effects and not extra.missing
    dropped = classify(initial, expected, {"events": [{"id": 3}, {"id": 1}], "price": 2})
    assert dropped.side_effects and not dropped.missing
    wrong = classify(initial, expected, {"events": [{"id": 1}, {"id": 2}], "price": 3})
    assert wrong.missing and not wrong.side_effects


@pytest.mark.parametrize("depth", [40, 700, 900])
def test_deep_tool_arguments_are_a_scored_failure_with_a_flag(depth: int) -> None:
    pack = _tool_worlds()
    task = pack.get("tool/pay_invoice/0")
    deep = "[" * depth + "]" * depth
    as_object = '{"source": "checking", "target": "acme", "amount": 1, "x": ' + deep + "}"
    for arguments in (json.dumps(as_object), as_object):
        turn = '{"tool_calls": [{"function": {"name": "transfer", "arguments": ' + arguments + "}}]}"
        for completion in (turn, f"[{turn}]"):
            verdict = ToolGrader(pack).grade_many([task.id], [completion])[0]
            assert verdict.error is None and not verdict.passed and verdict.reward == 0.0
            assert "oversized:nesting" in verdict.flags or "oversized:json_size" in verdict.flags


# ---------------------------------------------------------------- the procedural generator


def test_procedural_pack_has_enough_distinct_tasks_and_held_out_templates_and_worlds() -> None:
    from rlvr.task_packs import tool_templates

    tasks = _tool_worlds().tasks()
    procedural = [t for t in tasks if t.meta.get("procedural")]
    train = [t for t in procedural if t.split == "train"]
    test = [t for t in procedural if t.split == "test"]
    assert len({json.dumps([t.prompt, t.hidden["state"]], sort_keys=True) for t in train}) >= 1000
    assert {t.meta["template"] for t in test} == set(tool_templates.HELD_OUT_TEMPLATES)
    assert not {t.meta["template"] for t in train} & set(tool_templates.HELD_OUT_TEMPLATES)
    assert {t.difficulty for t in procedural} == {1, 2, 3, 4}
    assert sum(t.difficulty <= 2 for t in test) >= 100  # enough short held-out tasks for a small-model demo
    train_words = {w for t in train for w in json.dumps(t.hidden["state"]).replace('"', " ").split()}
    for name in (*tool_templates.TEST_NAMES.accounts, *tool_templates.TEST_NAMES.items):
        assert name not in train_words
    assert all(len(t.hidden["reference"]) + 2 >= t.hidden["max_turns"] for t in procedural)
    assert all(t.meta["instruction"] in t.prompt for t in tasks)


def test_procedural_tasks_are_reproducible_and_expected_state_is_the_reference_s() -> None:
    from rlvr.specs.tool_worlds import replay_calls
    from rlvr.task_packs.tool_tasks import generate_procedural

    a, b = generate_procedural("top_up_to", 3, 5), generate_procedural("top_up_to", 3, 5)
    assert a == b and a.hidden["policy"]["budget"] >= a.hidden["optimal_calls"]
    calls = [
        (c["name"], c["arguments"]) for turn in a.hidden["reference"] if isinstance(turn, list) for c in turn
    ]
    assert a.hidden["expected_state"] == replay_calls("ledger", a.hidden["state"], calls)
    with pytest.raises(ValueError, match="difficulties"):
        generate_procedural("top_up_to", 1, 0)


def test_test_worlds_split_holds_trained_templates_in_worlds_never_trained_on() -> None:
    from rlvr.task_packs import tool_templates

    pack = _tool_worlds()
    train, worlds = pack.tasks("train"), pack.tasks("test_worlds")
    assert {t.meta["template"] for t in worlds} == set(tool_templates.TRAIN_TEMPLATES)
    assert all(t.id.rsplit("/", 1)[1].startswith("w") for t in worlds)
    assert not {t.meta["instruction"] for t in worlds} & {t.meta["instruction"] for t in train}
    assert not {json.dumps(t.hidden["state"], sort_keys=True) for t in worlds} & {
        json.dumps(t.hidden["state"], sort_keys=True) for t in train
    }
    assert sum(t.difficulty <= 2 for t in worlds) >= 100
    from rlvr.graders.base import make_grader

    grader = make_grader(pack)
    sample = worlds[::10]
    verdicts = grader.grade_many([t.id for t in sample], [reference_transcript(t) for t in sample])
    assert all(v.passed for v in verdicts), [v.feedback for v in verdicts if not v.passed]
    with pytest.raises(ValueError, match="held out"):
        tool_templates.draw_spec("refund", 1, 0, unseen_world=True)


FINGERPRINT = """
import hashlib, json, sys
from rlvr.task_packs.registry import load_pack
tasks = load_pack(sys.argv[1]).tasks()
rows = [[t.id, t.prompt, t.split, t.hidden] for t in tasks]
print(hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest())
"""


@pytest.mark.parametrize("pack", ["tool-worlds", "sql-shop", "proof-identities"])
def test_procedural_packs_are_the_same_in_every_process(pack: str) -> None:
    """A task's world must not depend on the process's string-hash seed (a set iterated while drawing
    calendar days once made `book_at` worlds differ between runs, and with them the warm start)."""
    import os
    import subprocess
    import sys

    prints = set()
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", FINGERPRINT, pack],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        prints.add(done.stdout.strip())
    assert len(prints) == 1
