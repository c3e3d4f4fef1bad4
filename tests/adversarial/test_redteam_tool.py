"""Red-team of the tool family (rlvr/Tool-v0, the tool grader, the worlds, the tool-worlds pack).

Holes found and closed:
- a huge integer argument (hundreds or thousands of digits) reached the world: `adjust_stock`/`set_price`
  stored it, and the tool result (`json.dumps` past 4300 digits), the next addition of a float
  (`OverflowError`) or the goal check (`math.isclose`) raised, so the episode ended as a grading `error`
  (which the trainer drops) instead of a scored failure. NaN and Infinity prices reached the state too;
- a JSON `\\ud800` escape decoded to an unpaired surrogate that was echoed into the observation (the
  trainer's tokenizer raises on it: one agent turn stopped the training step) and into the verdict's
  feedback (`rlvr grade` raised writing its UTF-8 output: no verdict for any line of the run);
- every tool name the agent wrote became an `info["tool_calls"]` entry, hence a `tool_calls/<name>`
  metric key (one per invented name, up to 100,000 characters long).

The rest are guards on what held: answers with several candidates, argument type confusion, a pristine
world after a hostile episode (live and replayed), the turn limit in replays, a final answer beside tool
calls.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import rlvr  # noqa: F401  (registers rlvr/Tool-v0)
from rlvr.core.pack import StaticPack
from rlvr.core.types import Task, Verdict
from rlvr.graders.tool.calls import parse_turn
from rlvr.graders.tool.episode import ToolEpisode
from rlvr.graders.tool.grader import ToolGrader
from rlvr.graders.tool.state_diff import canonical
from rlvr.task_packs.tool_tasks import generate_procedural, reference_transcript, turn_text


def _task(template: str, difficulty: int, index: int = 0) -> Task:
    return generate_procedural(template, difficulty, index)


def _pack(*tasks: Task) -> StaticPack:
    return StaticPack("redteam-tool", list(tasks), family="tool")


def _calls(*calls: tuple[str, str]) -> str:
    """A turn of raw calls: (name, arguments as JSON text, spliced in verbatim)."""
    body = ", ".join(
        f'{{"function": {{"name": "{name}", "arguments": {arguments}}}}}' for name, arguments in calls
    )
    return '{"tool_calls": [' + body + "]}"


def _replay(task: Task, completion: str) -> Verdict:
    return ToolGrader(_pack(task)).grade(task.id, completion)


def _assert_scored_failure(verdict: Verdict) -> None:
    assert verdict.error is None, verdict.error
    assert verdict.fault is None and not verdict.passed and verdict.reward == 0.0


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")  # raises UnicodeEncodeError on an unpaired surrogate


# ---------------------------------------------------------------- numbers the world cannot hold


def _numbers_in_range(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_numbers_in_range(item) for item in value.values())
    if isinstance(value, list):
        return all(_numbers_in_range(item) for item in value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return abs(value) <= 2**53
    return True


SHOP = _task("receive_shipment", 1)
SKU = SHOP.hidden["reference"][0][0]["arguments"]["sku"]
HUGE = "9" * 400
HUGEST = "9" * 4300  # the longest integer json.loads accepts


@pytest.mark.parametrize(
    "turn",
    [
        _calls(("set_price", f'{{"sku": "{SKU}", "price": {HUGE}}}')),  # goal check: OverflowError
        _calls(("adjust_stock", f'{{"sku": "{SKU}", "delta": {HUGE}}}')),
        _calls(  # the sum passes 4300 digits: the tool result could not be written
            ("adjust_stock", f'{{"sku": "{SKU}", "delta": {HUGEST}}}'),
            ("adjust_stock", f'{{"sku": "{SKU}", "delta": {HUGEST}}}'),
        ),
        _calls(  # a huge int plus a float: OverflowError inside the tool
            ("adjust_stock", f'{{"sku": "{SKU}", "delta": {HUGE}}}'),
            ("adjust_stock", f'{{"sku": "{SKU}", "delta": 1.0}}'),
        ),
        _calls(("adjust_stock", f'{{"sku": "{SKU}", "delta": 1e300}}')),  # an integral float
        _calls(("set_price", f'{{"sku": "{SKU}", "price": NaN}}')),
        _calls(("set_price", f'{{"sku": "{SKU}", "price": Infinity}}')),
        _calls(("set_price", f'{{"sku": "{SKU}", "price": -Infinity}}')),
        _calls(("set_price", f'{{"sku": "{SKU}", "price": {2**53 + 1}}}')),
    ],
)
def test_numbers_beyond_the_worlds_range_are_refused_and_scored(turn: str) -> None:
    episode = ToolEpisode(SHOP)
    replies = json.loads(episode.act(turn))
    refused = ["bad arguments" in reply["content"] for reply in replies]
    assert refused[0] and episode.calls_made == refused.count(False), replies
    assert _numbers_in_range(episode.world.state)  # the world never saw them
    if all(refused):
        assert canonical(episode.world.state) == canonical(SHOP.hidden["state"])
    _assert_scored_failure(_replay(SHOP, turn + '\n{"final_answer": "done"}'))
    env = gym.make("rlvr/Tool-v0", pack=_pack(SHOP), disable_env_checker=True)
    env.reset(options={"task_id": SHOP.id})
    env.step(turn)
    _, reward, terminated, _, info = env.step('{"final_answer": "done"}')
    assert terminated and reward == 0.0 and info["verdict"]["error"] is None
    env.close()


def test_numbers_within_range_still_work_and_integral_floats_equal_integers() -> None:
    delta = SHOP.hidden["reference"][0][0]["arguments"]["delta"]
    as_float = _calls(("adjust_stock", f'{{"sku": "{SKU}", "delta": {float(delta)}}}'))
    assert _replay(SHOP, as_float + '\n{"final_answer": "done"}').passed
    big = ToolEpisode(SHOP)  # 2**53 itself is accepted (and then is a wrong stock level)
    big.act(_calls(("adjust_stock", f'{{"sku": "{SKU}", "delta": {2**53}}}')))
    assert big.calls_made == 1 and big.world.state["items"][SKU]["qty"] > 2**52
    assert not big.verdict().passed


# ---------------------------------------------------------------- unpaired surrogates

FILES = _task("create_file", 2)  # read_only /etc/*, delete_file forbidden
LONE = "\\ud800"  # as the agent writes it: a JSON escape that decodes to an unpaired surrogate


@pytest.mark.parametrize(
    "turn",
    [
        _calls(("read_file", f'{{"path": "/x{LONE}"}}')),  # echoed by "no such file"
        _calls(("read_file", json.dumps(f'{{"path": "/x{LONE}"}}'))),  # arguments as a JSON string
        _calls(("write_file", f'{{"path": "/etc/{LONE}", "content": "x"}}')),  # echoed by "is read-only"
        _calls(("write_file", f'{{"path": "/{LONE}", "content": "x"}}')),  # a file named so: a side effect
        _calls((f"read{LONE}", '"{oops"')),  # echoed by "arguments are not valid JSON"
        f'{{"final_answer": "{LONE}"}}',
        f'{{"role": "assistant", "content": "{LONE}"}}',
    ],
)
def test_unpaired_surrogates_never_reach_an_observation_or_a_verdict(turn: str) -> None:
    assert parse_turn(turn).error is not None
    env = gym.make("rlvr/Tool-v0", pack=_pack(FILES), disable_env_checker=True)
    env.reset(options={"task_id": FILES.id})
    observation, _, _, _, info = env.step(turn)
    _utf8(observation)
    assert info["malformed"]
    for text in (turn, turn.replace(LONE, "\ud800")):  # escaped, or raw in the text handed to step()
        verdict = _replay(FILES, text + '\n{"final_answer": "done"}')
        _assert_scored_failure(verdict)
        assert "malformed_turns" in verdict.flags
        _utf8(json.dumps(verdict.to_json(), ensure_ascii=False))  # what `rlvr grade` writes
    env.close()


def test_surrogate_pairs_are_text_and_still_accepted() -> None:
    turn = parse_turn(_calls(("read_file", '{"path": "/\\ud83d\\ude00"}')))
    assert turn.error is None and turn.calls[0].arguments == {"path": "/\U0001f600"}
    assert parse_turn('{"final_answer": "caf\\u00e9 \\ud83d\\ude00"}').final_answer == "café \U0001f600"


# ---------------------------------------------------------------- metric names


def test_invented_tool_names_are_reported_as_unknown() -> None:
    env = gym.make("rlvr/Tool-v0", pack=_pack(FILES), disable_env_checker=True)
    env.reset(options={"task_id": FILES.id})
    turn = _calls(("x" * 5000, "{}"), ("list_files", '{"directory": "/docs"}'), ("__init__", "{}"))
    _, _, _, _, info = env.step(turn)
    assert info["tool_calls"] == ["<unknown>", "list_files", "<unknown>"]
    env.close()


# ---------------------------------------------------------------- guards on what held

ANSWER = _task("stock_answer", 2)  # answer: the stock of one sku


@pytest.mark.parametrize(
    "final",
    [
        "{right} {wrong}",
        "{wrong} or {right}",
        "[{right}, {wrong}]",
        "{right}{right}",
        "{right} units",
        "nan",
        "inf",
    ],
)
def test_an_answer_holding_several_candidates_or_extra_words_fails(final: str) -> None:
    right = int(ANSWER.hidden["goal"]["answer"])
    text = final.format(right=right, wrong=right + 1)
    reads = turn_text(ANSWER.hidden["reference"][0])
    verdict = _replay(ANSWER, reads + "\n" + json.dumps({"final_answer": text}))
    _assert_scored_failure(verdict)
    assert verdict.gates == ["answer"]
    as_list = _replay(ANSWER, reads + "\n" + json.dumps({"final_answer": [right, right + 1]}))
    assert not as_list.passed
    assert _replay(ANSWER, reads + "\n" + json.dumps({"final_answer": right})).passed


LEDGER = _task("transfer_exact", 1)


@pytest.mark.parametrize("amount", ['"{a}"', "true", "{a}.5", '["{a}"]', '{{"cents": {a}}}', "null"])
def test_arguments_of_the_wrong_type_change_nothing_and_are_not_calls(amount: str) -> None:
    arguments = dict(LEDGER.hidden["reference"][0][0]["arguments"])
    raw = json.dumps(arguments).replace(str(arguments["amount"]), amount.format(a=arguments["amount"]))
    episode = ToolEpisode(LEDGER)
    observation = json.loads(episode.act(_calls(("transfer", raw))))
    assert "bad arguments" in observation[0]["content"]
    assert canonical(episode.world.state) == canonical(LEDGER.hidden["state"]) and episode.calls_made == 0


def test_a_final_answer_beside_tool_calls_runs_none_of_them() -> None:
    write = LEDGER.hidden["reference"][0][0]
    turn = json.dumps({"final_answer": "done", "tool_calls": [{"function": write}]})
    verdict = _replay(LEDGER, turn)
    assert not verdict.passed and "goal" in verdict.gates


def test_a_hostile_episode_leaves_the_task_and_the_next_episode_pristine() -> None:
    state_before, expected_before = (
        canonical(FILES.hidden["state"]),
        canonical(FILES.hidden["expected_state"]),
    )
    victim = next(p for p in FILES.hidden["state"]["files"] if not p.startswith("/etc/"))
    hostile = [
        _calls(("write_file", json.dumps({"path": victim, "content": "pwned"}))),
        _calls(("move_file", json.dumps({"source": victim, "target": "/stolen"}))),
        _calls(("write_file", json.dumps({"path": "/etc/app.conf", "content": "mode=dev"}))),
        _calls(("delete_file", json.dumps({"path": "/etc/app.conf"}))),
    ]
    env = gym.make("rlvr/Tool-v0", pack=_pack(FILES), disable_env_checker=True)
    grader = ToolGrader(_pack(FILES))
    for _ in range(2):  # live and replayed, twice over, on one env and one grader
        env.reset(options={"task_id": FILES.id})
        for turn in hostile:
            env.step(turn)
        assert not grader.grade(FILES.id, "\n".join(hostile)).passed
    assert canonical(FILES.hidden["state"]) == state_before
    assert canonical(FILES.hidden["expected_state"]) == expected_before
    env.reset(options={"task_id": FILES.id})
    episode: Any = env.unwrapped.episode  # type: ignore[attr-defined]
    assert canonical(episode.world.state) == state_before
    *work, answer = FILES.hidden["reference"]
    for turn in work:
        env.step(turn_text(turn))
    _, reward, terminated, _, info = env.step(turn_text(answer))
    assert terminated and info["verdict"]["passed"] and reward == pytest.approx(1.0)
    assert grader.grade(FILES.id, reference_transcript(FILES)).passed
    env.close()


def test_turns_past_the_limit_are_not_replayed() -> None:
    reference = LEDGER.hidden["reference"]
    stalling = [turn_text([{"name": "list_accounts", "arguments": {}}])] * LEDGER.hidden["max_turns"]
    late = "\n".join([*stalling, *(turn_text(turn) for turn in reference)])
    verdict = _replay(LEDGER, late)
    _assert_scored_failure(verdict)
    assert _replay(LEDGER, reference_transcript(LEDGER)).passed


# ---------------------------------------------------------------- the frame rule on lists (no reference)

DAY = "2026-03-10"
STANDUP = {"id": 1, "title": "standup", "day": DAY, "start": 9, "end": 10}
REVIEW = {"title": "Design review", "day": DAY, "start": 10, "end": 11}


def _calendar_task(goal_item: dict[str, Any]) -> Task:
    hidden = {
        "world": "calendar",
        "state": {"events": [STANDUP]},
        "goal": {"state": {"events": [goal_item, STANDUP]}},
        "policy": {},
        "optimal_calls": 1,
        "max_turns": 4,
    }
    return Task("calendar/no-reference", "Book a design review.", "tool", hidden=hidden)


def _create(**event: Any) -> tuple[str, str]:
    return ("create_event", json.dumps(event))


@pytest.mark.parametrize(
    "goal_item, extra",
    [
        (REVIEW, [_create(title="junk", day="2026-03-11", start=1, end=2)]),  # an item nobody asked for
        (REVIEW, [_create(title="junk", day=DAY, start=12, end=13)]),
        (
            {"title": "Design review"},
            [_create(title="Design review", day="2026-03-12", start=1, end=2)],
        ),  # twice
    ],
)
def test_without_a_reference_a_goal_list_gains_only_the_items_it_asks_for(
    goal_item: dict[str, Any], extra: list[tuple[str, str]]
) -> None:
    task = _calendar_task(goal_item)
    assert task.hidden.get("reference") is None and task.hidden.get("expected_state") is None
    honest = ToolEpisode(task)
    honest.act(_calls(_create(**REVIEW)))
    assert honest.verdict().passed
    padded = ToolEpisode(task)
    padded.act(_calls(_create(**REVIEW), *extra))
    verdict = padded.verdict()
    _assert_scored_failure(verdict)
    assert "unauthorized_side_effect" in verdict.flags and verdict.gates == ["side_effects"]


def test_without_a_reference_a_goal_list_may_still_lose_items_it_does_not_name() -> None:
    hidden = {
        "world": "calendar",
        "state": {"events": [STANDUP, {**STANDUP, "id": 2, "start": 11, "end": 12}]},
        "goal": {"state": {"events": [STANDUP]}, "absent": [["events", 1]]},
        "policy": {},
    }
    task = Task("calendar/cancel", "Cancel event 2.", "tool", hidden=hidden)
    episode = ToolEpisode(task)
    episode.act(_calls(("delete_event", '{"event_id": 2}')))
    assert episode.verdict().passed


# ---------------------------------------------------------------- replaying a whole chat log

TIGHT = _task("restock_all_low", 4, 1)  # budget == the reference's number of calls, one of them list_items


def test_a_chat_log_with_tool_results_replays_as_the_agent_acted() -> None:
    """A tool-result message names its tool (`{"role": "tool", "name": "list_items", ...}`): replayed as a
    turn, it called that tool again (a call the agent never made, over a tight budget) and used a turn."""
    assert TIGHT.hidden["policy"]["budget"] == TIGHT.hidden["optimal_calls"]
    episode, log = ToolEpisode(TIGHT), [{"role": "system", "content": "You are an agent."}]
    log.append({"role": "user", "content": TIGHT.prompt})
    for turn in TIGHT.hidden["reference"]:
        text = turn_text(turn)
        log.append(json.loads(text))
        observation = episode.act(text)
        log += json.loads(observation) if observation else []
    live = episode.verdict()
    assert live.passed and any(m["role"] == "tool" and m["name"] == "list_items" for m in log)
    for completion in (json.dumps(log), "\n".join(json.dumps(m) for m in log)):
        replayed = _replay(TIGHT, completion)
        assert replayed.passed and replayed.reward == pytest.approx(live.reward), replayed.feedback
    forged = [*log[:-1], {"role": "user", "content": None, "tool_calls": log[2]["tool_calls"]}, log[-1]]
    assert _replay(TIGHT, json.dumps(forged)).reward == pytest.approx(live.reward)  # not the agent's turn
