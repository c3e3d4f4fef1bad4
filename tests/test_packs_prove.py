"""`rlvr packs validate` proves every task: each broken pack the issue lists is refused, each example
pack validates, a pack's own tool world is graded like a built-in one, and trivial answers earn nothing."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from rlvr.cli import main
from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "packs"


def write_pack(root: Path, family: str, lines: Sequence[Mapping[str, object]], extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pack.toml").write_text(f'name = "t"\nfamily = "{family}"\n{extra}')
    (root / "tasks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["packs", "validate", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def code_line(**fields: object) -> dict[str, object]:
    line: dict[str, object] = {
        "id": "c/1",
        "prompt": "def double(x: int) -> int:\n",
        "entry_point": "double",
        "reference": "def double(x: int) -> int:\n    return 2 * x\n",
        "tests": [{"args": [1]}, {"args": [-3]}, {"args": [10]}],
    }
    return {**line, **fields}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"check": "def check(candidate):\n    assert candidate(2) == 5\n"}, "fails its own check"),
        ({"entry_point": "triple"}, "does not define 'triple'"),
        ({"entry_point": None}, "entry_point"),
        ({"reference": "def double(x: int) -> int:\n    return str(2 * x)  # type: ignore\n"}, "reference"),
        (  # a no-op (returns None) scores as the reference does
            {"reference": "def double(x: int) -> None:\n    return None\n"},
            "a no-op answer scores 1.000",
        ),
    ],
    ids=["fails-own-check", "entry-point-undefined", "no-entry-point", "reference-type-error", "noop-passes"],
)
def test_a_broken_code_pack_is_refused(tmp_path: Path, capsys, fields, expected) -> None:
    line = {k: v for k, v in code_line(**fields).items() if v is not None}
    code, output = validate(write_pack(tmp_path, "code", [line]), capsys)
    assert code == 1 and expected in output, output


def test_a_sound_code_pack_prints_its_trivial_rewards(tmp_path: Path, capsys) -> None:
    code, output = validate(write_pack(tmp_path, "code", [code_line()]), capsys)
    assert code == 0, output
    assert "c/1: reference 1.000, empty 0.000, no-op " in output and "per 100" in output


def test_a_math_task_whose_prompt_states_its_answer_is_refused(tmp_path: Path, capsys) -> None:
    line = {"id": "m/1", "prompt": "Seven apples minus two apples leaves 5.", "answer": "5"}
    code, output = validate(write_pack(tmp_path, "math", [line]), capsys)
    assert code == 1 and "echo answer scores 1.000" in output, output


def test_a_math_answer_of_plain_words_earns_no_format_credit() -> None:
    pack = load_pack(EXAMPLES / "math-basics")
    with make_grader(pack) as grader:
        words, wrong = grader.grade_many(["basics/1"] * 2, ["\\boxed{hello world}", "\\boxed{3/8}"])
        text = grader.grade(
            Task("x", "Capital of France?", "math", hidden={"answer": "Paris"}), "Answer: Lyon"
        )
    assert words.reward == 0.0 and "format" in words.gates
    assert wrong.reward == pytest.approx(0.1)  # a wrong number still states a math answer
    assert text.reward == pytest.approx(0.1)  # a text answer to a text question is of the task's kind


SCHEMA = "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL);"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (  # a DML whose reference changes nothing: doing nothing passes
            {"kind": "dml", "reference": "UPDATE t SET v = v WHERE v > 1000"},
            "a no-op answer scores 1.000",
        ),
        ({"reference": "SELECT id FROM t", "check": ["SELECT nope FROM t"]}, "reference"),
    ],
    ids=["dml-noop", "check-does-not-resolve"],
)
def test_a_broken_sql_pack_is_refused(tmp_path: Path, capsys, line, expected) -> None:
    task = {"id": "s/1", "prompt": "p", "schema": SCHEMA, "rows": {"t": [[1, 5], [2, 7]]}, **line}
    code, output = validate(write_pack(tmp_path, "sql", [task]), capsys)
    assert code == 1 and expected in output, output


def test_a_proof_with_a_wrong_step_is_refused(tmp_path: Path, capsys) -> None:
    line = {
        "id": "p/1",
        "prompt": "p",
        "goal": "(a+b)^2 = a^2 + 2ab + b^2",
        "reference": "(a+b)^2\n= a^2 + b^2\n= a^2 + 2ab + b^2",
    }
    code, output = validate(write_pack(tmp_path, "proof", [line]), capsys)
    assert code == 1 and "the reference does not pass" in output, output


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_every_example_pack_validates(name: str, capsys) -> None:
    if name == "code-basics-ts":
        pytest.importorskip("tree_sitter_typescript", reason="the typescript extra is not installed")
    code, output = validate(EXAMPLES / name, capsys)
    assert code == 0, output
    assert "every task proved" in output


# ---------------------------------------------------------------- tool worlds a pack declares


def tickets_copy(tmp_path: Path) -> Path:
    target = tmp_path / "tool-tickets"
    shutil.copytree(EXAMPLES / "tool-tickets", target)
    return target


def test_a_pack_world_is_graded_with_the_whole_state_diff_and_policies(tmp_path: Path) -> None:
    pack = load_pack(EXAMPLES / "tool-tickets")
    call = '{"tool_calls": [{"id": "a", "type": "function", "function": {"name": "%s", "arguments": %s}}]}'
    with make_grader(pack) as grader:
        side_effect, refused, unasked, bad_args = grader.grade_many(
            [
                "tickets/close-login-loop",
                "tickets/close-login-loop",
                "tickets/count-bob",
                "tickets/count-bob",
            ],
            [
                "\n".join(
                    [  # the goal plus a change nobody asked for
                        call % ("set_status", '{"ticket_id": "T-2", "status": "closed"}'),
                        call % ("assign", '{"ticket_id": "T-5", "user": "ana"}'),
                        '{"final_answer": "done"}',
                    ]
                ),
                "\n".join(
                    [
                        call % ("set_status", '{"ticket_id": "SEC-1", "status": "closed"}'),
                        '{"final_answer": "x"}',
                    ]
                ),
                '{"final_answer": "2"}',
                "\n".join([call % ("search_tickets", '{"status": "nope"}'), '{"final_answer": "2"}']),
            ],
        )
    assert not side_effect.passed and "unauthorized_side_effect" in side_effect.flags
    assert not refused.passed and "policy_violation" in refused.flags  # the world's default policy
    assert unasked.reward == 0.0 and "answer_without_tool_use" in unasked.flags
    # an argument outside the Literal's enum never reaches the world, the call does not count
    assert bad_args.reward == 0.0 and "answer_without_tool_use" in bad_args.flags


def test_a_world_tool_without_a_valid_schema_is_refused(tmp_path: Path, capsys) -> None:
    root = tickets_copy(tmp_path)
    source = (root / "world.py").read_text()
    broken = source.replace(
        "def list_users(self) -> list[str]:", "def list_users(self, pattern: set[str]) -> list[str]:"
    )
    (root / "world.py").write_text(broken.replace('"""The users a ticket can be assigned to."""', ""))
    code, output = validate(root, capsys)
    assert code == 1
    assert "list_users, parameter 'pattern'" in output and "needs a docstring" in output, output


def test_a_world_task_already_solved_by_doing_nothing_is_refused(tmp_path: Path, capsys) -> None:
    root = tickets_copy(tmp_path)
    lines = [json.loads(line) for line in (root / "tasks.jsonl").read_text().splitlines()]
    solved = dict(lines[0], id="tickets/already", goal={"state": {"tickets": {"T-6": {"status": "closed"}}}})
    solved["reference"] = ["nothing to do"]
    (root / "tasks.jsonl").write_text(json.dumps(solved) + "\n")
    code, output = validate(root, capsys)
    assert code == 1 and "a no-action answer scores" in output, output


def test_a_pack_world_may_not_shadow_a_builtin_or_be_set_per_line(tmp_path: Path, capsys) -> None:
    root = tickets_copy(tmp_path)
    (root / "world.py").write_text(
        (root / "world.py").read_text().replace('name = "tickets"', 'name = "files"')
    )
    code, output = validate(root, capsys)
    assert code == 1 and "world name 'files' is taken" in output, output


def test_code_feedback_counts_failed_checks_and_shows_inputs_off_the_test_split_only() -> None:
    pack = load_pack(EXAMPLES / "code-basics")  # [options] feedback = "visible"
    wrong_clamp = "def clamp(x: int, lo: int, hi: int) -> int:\n    return min(hi, x)\n"  # forgets lo
    wrong_max = "def running_max(xs: list[int]) -> list[int]:\n    return list(xs)\n"
    with make_grader(pack, types=False) as grader:
        train, held_out = grader.grade_many(["basics/clamp", "basics/running_max"], [wrong_clamp, wrong_max])
    assert not train.passed and not held_out.passed
    assert re.search(r"\(\d+ of \d+ hidden checks failed\)", train.feedback), train.feedback
    assert "counterexample" in train.feedback and "'input'" in train.feedback
    assert re.search(r"\(\d+ of \d+ hidden checks failed\)", held_out.feedback), held_out.feedback
    assert "counterexample" not in held_out.feedback and "'input'" not in held_out.feedback


def test_a_pack_world_runs_through_the_env_and_the_trainers_teacher() -> None:
    import gymnasium as gym

    import rlvr  # noqa: F401  (registers the env ids)
    from rlvr.trainer.teachers import has_reference_turns, reference_turns

    pack = load_pack(EXAMPLES / "tool-tickets")
    assert has_reference_turns(pack, "train")  # `rlvr train` can warm-start on it
    env = gym.make("rlvr/Tool-v0", pack=pack, disable_env_checker=True)
    try:
        for task in pack.tasks():
            env.reset(options={"task_id": task.id})
            reward, terminated, info = 0.0, False, {}
            for turn in reference_turns(task):
                _, reward, terminated, truncated, info = env.step(turn)
                if terminated or truncated:
                    break
            assert terminated and reward == pytest.approx(1.0), (task.id, info["verdict"])
    finally:
        env.close()


def test_a_whole_class_answer_is_not_graded_beside_the_prompts_class_stub() -> None:
    """Found by proving kata: the stateful-class references scored 0.9, the prompt's stub class kept in
    front of the answer's made pyright report the class declared twice."""
    from rlvr.graders.code.extract import build_program
    from rlvr.task_packs.kata import KataPack

    pack = KataPack()
    task = pack.get("kata/bank_account/1/0")
    reference = task.hidden["reference"]
    assert build_program(task.prompt, reference, "Account").count("class Account") == 1
    with make_grader(pack, jobs=1) as grader:
        verdict = grader.grade(task, reference)
    assert verdict.passed and verdict.reward == pytest.approx(1.0), verdict.components


def test_an_answer_that_repeats_the_prompts_helper_is_not_charged_for_it() -> None:
    """Found by proving humaneval: a whole program repeating the prompt's helper (HumanEval/10's
    `is_palindrome`) was graded after the prompt's own copy, a redeclaration pyright charges."""
    pack = load_pack("humaneval")
    task = pack.get("HumanEval/10")
    with make_grader(pack, jobs=1) as grader:
        verdict = grader.grade(task, task.hidden["reference"])
    assert verdict.passed and verdict.reward == pytest.approx(1.0), verdict.components


COUNTER_WORLD = """
from typing import Any
from rlvr.specs.tool_worlds import World, tool

class Counter(World):
    name = "counter"

    def initial_state(self) -> dict[str, Any]:
        return {"total": 0}

    @tool("write")
    def add(self, values: list[int]) -> int:
        \"\"\"Add every value to the total; returns the new total.\"\"\"
        self.state["total"] += sum(values)
        return self.state["total"]
"""


def test_a_pack_worlds_tool_never_sees_a_huge_number_inside_a_list_argument(tmp_path: Path) -> None:
    from rlvr.specs.tool_worlds import tool_prompt, world_class

    (tmp_path / "world.py").write_text(COUNTER_WORLD)
    world = world_class("counter", str(tmp_path / "world.py"))
    line = {
        "id": "c/1",
        "prompt": tool_prompt("Add 2 and 3 to the total.", world, 4),
        "world": "counter",
        "goal": {"state": {"total": 5}},
        "reference": [[{"name": "add", "arguments": {"values": [2, 3]}}], "done"],
    }
    write_pack(tmp_path, "tool", [line], extra='worlds = ["world.py"]\n')
    pack = load_pack(tmp_path)
    call = '{"tool_calls": [{"id": "a", "type": "function", "function": {"name": "add", "arguments": %s}}]}'
    with make_grader(pack) as grader:
        honest = grader.grade("c/1", call % '{"values": [2, 3]}' + '\n{"final_answer": "done"}')
        episode = grader.new_episode(pack.get("c/1"))  # type: ignore[attr-defined]
    assert honest.passed and honest.reward == pytest.approx(1.0)
    observation = episode.act(call % '{"values": [1, 1e300]}')
    assert "bad arguments" in observation and episode.world.state == {"total": 0}  # the world never saw it


def test_json_and_format_only_modes(tmp_path: Path, capsys) -> None:
    broken = write_pack(
        tmp_path / "p",
        "sql",
        [{"id": "s/1", "prompt": "p", "schema": SCHEMA, "reference": "SELECT id FROM t WHERE v > 1000"}],
    )
    assert main(["packs", "validate", str(broken), "--format-only"]) == 0  # the files are sound
    assert "ok (format)" in capsys.readouterr().out
    assert main(["packs", "validate", str(broken), "--json"]) == 1
    report = json.loads(capsys.readouterr().out.splitlines()[0])
    assert report["proofs"][0]["task_id"] == "s/1" and report["proofs"][0]["reference_reward"] == 1.0
    assert any(p["field"] == "no-op" for p in report["problems"])


def test_an_empty_query_earns_nothing_from_databases_where_the_answer_is_empty() -> None:
    """Found by proving sql-shop: `SELECT 1 WHERE 0` earned 0.25-0.375 on 17 filter tasks, partial credit
    from the variants whose right answer is no rows. Those databases no longer pay partial credit."""
    from rlvr.core.pack import StaticPack

    hidden = {
        "schema": SCHEMA,
        "rows": {"t": [[1, 5], [2, 7]]},
        "reference": "SELECT id FROM t WHERE v > 1000",
    }
    task = Task("s/1", "p", "sql", hidden=hidden)
    with make_grader(StaticPack("t", [task], family="sql")) as grader:
        empty, half = grader.grade_many(
            ["s/1", "s/1"],
            ["```sql\nSELECT 1 WHERE 0\n```", "```sql\nSELECT id FROM t WHERE v > 1000 AND id < 0\n```"],
        )
        right = grader.grade("s/1", "```sql\nSELECT id FROM t WHERE 1000 < v\n```")
    assert empty.reward == 0.0 and not empty.passed
    assert half.reward == 0.0  # also empty everywhere: the same nothing
    assert right.passed and right.reward == 1.0
