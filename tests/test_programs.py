"""Whole programs on stdin/stdout and call-based tasks with expected outputs: importers for the
common dataset layouts, end-to-end grading, and programs that try to forge their way to credit."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import rlvr  # noqa: F401  (registers the rlvr/ env ids)
from rlvr.cli import main
from rlvr.core import StaticPack, Task
from rlvr.graders.base import Grader, make_grader
from rlvr.graders.code.programs.compare import value_matches
from rlvr.specs.programs import ProgramSpecError, parse_spec
from rlvr.task_packs.importers import import_dataset
from rlvr.task_packs.registry import load_pack

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "datasets"

# (layout, task id) -> (a correct program, a wrong program)
ANSWERS = {
    ("apps", "apps/1"): ("input()\nprint(sum(map(int, input().split())))\n", "print(0)\n"),
    ("apps", "apps/2"): (
        "def kth_smallest(numbers, k):\n    return sorted(numbers)[k - 1]\n",
        "def kth_smallest(numbers, k):\n    return sorted(numbers)[-k]\n",
    ),
    ("apps", "apps/3"): (  # special judge: any order is accepted
        "n = int(input())\nprint(*[d for d in range(n, 0, -1) if n % d == 0])\n",
        "n = int(input())\nprint(*[d for d in range(1, n) if n % d == 0])\n",
    ),
    ("codecontests", "codecontests/max_of_list"): (
        "import sys\nt = sys.stdin.buffer.read().split()\nprint(max(map(int, t[1:])))\n",
        "import sys\nt = sys.stdin.read().split()\nprint(max(map(int, t)))\n",
    ),
    ("codecontests", "codecontests/mean_value"): (
        "n = int(input())\nv = list(map(int, input().split()))\nprint(f'{sum(v) / n:.9f}')\n",
        "n = int(input())\nv = list(map(int, input().split()))\nprint(sum(v) // n)\n",
    ),
    ("livecodebench", "livecodebench/lcb-1"): ("print(*input().split()[::-1])\n", "print(input())\n"),
    ("livecodebench", "livecodebench/lcb-2"): (
        "class Solution:\n    def countEvens(self, nums: list[int]) -> int:\n        return sum(n % 2 == 0 for n in nums)\n",
        "class Solution:\n    def countEvens(self, nums: list[int]) -> int:\n        return len(nums)\n",
    ),
    ("livecodebench", "livecodebench/lcb-3"): (  # special judge: any valid pair
        "n = int(input())\na = list(map(int, input().split()))\nt = int(input())\n"
        "print(*next((i + 1, j + 1) for i in range(n) for j in range(i + 1, n) if a[i] + a[j] == t))\n",
        "print(1, 2)\n",
    ),
    ("jsonl", "mini/double"): ("print(2 * int(input()))\n", "print(int(input()) + 2)\n"),
    ("jsonl", "mini/square"): ("def square(x):\n    return x * x\n", "def square(x):\n    return x + x\n"),
    ("jsonl", "mini/shuffle"): ("print(*range(int(input()), 0, -1))\n", "print(*range(int(input())))\n"),
}
LAYOUT_FILES = {
    "apps": "apps.jsonl",
    "codecontests": "codecontests.jsonl",
    "livecodebench": "livecodebench.jsonl",
    "jsonl": "programs.jsonl",
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("imported")
    out = {}
    for layout, filename in LAYOUT_FILES.items():
        count, problems = import_dataset(EXAMPLES / filename, layout, root / layout)
        assert problems == [] and count == sum(1 for key in ANSWERS if key[0] == layout)
        out[layout] = root / layout
    return out


@pytest.fixture(scope="module")
def graders(imported: dict[str, Path]):
    made = {layout: make_grader(load_pack(str(path)), types=False) for layout, path in imported.items()}
    yield made
    for grader in made.values():
        grader.close()


@pytest.mark.parametrize("layout", sorted(LAYOUT_FILES))
def test_imported_packs_validate(imported: dict[str, Path], layout: str) -> None:
    assert main(["packs", "validate", str(imported[layout])]) == 0


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_right_programs_pass_and_wrong_ones_fail(graders: dict[str, Grader], key: tuple[str, str]) -> None:
    layout, task_id = key
    right, wrong = ANSWERS[key]
    good, bad = graders[layout].grade_many([task_id, task_id], [right, wrong])
    assert good.passed and good.error is None and good.reward > 0.9, good.to_json()
    assert not bad.passed and bad.error is None and "tests" in bad.gates, bad.to_json()


def test_rlvr_grade_and_gym_make_agree(imported: dict[str, Path], tmp_path: Path) -> None:
    right, wrong = ANSWERS[("apps", "apps/1")]
    lines = [{"task_id": "apps/1", "completion": right}, {"task_id": "apps/1", "completion": wrong}]
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert (
        main(["grade", "--pack", str(imported["apps"]), "--completions", str(source), "--out", str(out)]) == 0
    )
    graded = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["passed"] for g in graded] == [True, False]
    env = gym.make("rlvr/Code-v0", pack=str(imported["apps"]), types=False)
    try:
        env.reset(options={"task_id": "apps/1"})
        _, reward, terminated, _, info = env.step(f"```python\n{right}```")
        assert terminated and info["verdict"]["passed"] and reward == pytest.approx(graded[0]["reward"])
    finally:
        env.close()


HOSTILE = {
    "reads its own tests from disk": "import glob\nprint(open(glob.glob('/**/tasks.jsonl', recursive=True)[0]).read())\n",
    "prints what the prompt shows": "print(6)\n",
    "endless output": "while True:\n    print('9' * 1000)\n",
    "endless loop": "while True:\n    pass\n",
    "exits before answering": "import os\nos._exit(0)\n",
    "huge allocation": "x = [0] * (10 ** 10)\n",
    "patches the driver's streams": "import sys\nsys.stdout = None\nprint(6)\n",
    "forges a result frame": "import os\nos.write(1, b'\\x00\\x00\\x00\\x10' + b'[\"x\",\"result\",0]')\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_forging_programs_get_no_credit(graders: dict[str, Grader], name: str) -> None:
    verdict = graders["apps"].grade("apps/1", HOSTILE[name])
    assert not verdict.passed and verdict.error is None, verdict.to_json()
    assert verdict.components["tests"].score == 0.0


def test_limits_are_flagged_as_scored_failures(graders: dict[str, Grader]) -> None:
    looping, flooding = graders["apps"].grade_many(
        ["apps/1", "apps/1"], [HOSTILE["endless loop"], HOSTILE["endless output"]]
    )
    assert "timeout:tests" in looping.flags and looping.error is None
    assert "output_limit" in flooding.flags and flooding.error is None


def test_malformed_rows_are_reported_and_the_rest_imported(tmp_path: Path) -> None:
    rows = [
        {"problem_id": 1, "question": "ok", "input_output": {"inputs": ["1\n"], "outputs": ["1\n"]}},
        {"problem_id": 2, "question": "bad", "input_output": {"inputs": ["1\n"], "outputs": []}},
        {"problem_id": 3, "input_output": {"inputs": ["1\n"], "outputs": ["1\n"]}},
        {
            "problem_id": 4,
            "question": "ok too",
            "input_output": json.dumps({"inputs": ["2\n"], "outputs": ["2\n"]}),
        },
    ]
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{not json\n")
    count, problems = import_dataset(source, "apps", tmp_path / "pack")
    assert count == 2
    assert [(p.line, p.field) for p in problems] == [(2, "input_output"), (3, "question"), (5, "(line)")]
    assert all(p.file == str(source) for p in problems)
    assert main(["packs", "import", "--format", "apps", str(source), "--out", str(tmp_path / "cli")]) == 1
    assert len((tmp_path / "cli" / "tasks.jsonl").read_text().splitlines()) == 2


def test_compressed_private_tests_refuse_pickled_objects(tmp_path: Path) -> None:
    import base64
    import pickle
    import zlib

    class Boom:
        def __reduce__(self):
            return (print, ("pwned",))

    payload = base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()
    row = {
        "question_id": "x",
        "question_content": "q",
        "public_test_cases": "[]",
        "private_test_cases": payload,
    }
    source = tmp_path / "lcb.jsonl"
    source.write_text(json.dumps(row) + "\n")
    count, problems = import_dataset(source, "livecodebench", tmp_path / "pack")
    assert count == 0 and problems and "refusing to load" in problems[0].message


@pytest.mark.parametrize(
    "program",
    [
        {"tests": []},
        {"tests": [{"input": "1"}]},
        {"tests": [{"input": "1", "output": "1"}], "compare": "judge"},
        {"tests": [{"input": "1", "output": "1"}], "time_limit": 0},
        {"tests": [{"input": "1", "output": "1"}], "bogus": 1},
        {"call": "f", "tests": [{"args": 3, "output": 1}]},
    ],
)
def test_bad_program_specs_are_refused(program: dict) -> None:
    with pytest.raises(ProgramSpecError):
        parse_spec({"program": program})


def test_broken_program_task_is_the_tasks_fault() -> None:
    task = Task(id="broken", prompt="", hidden={"program": {"tests": []}})
    with make_grader(StaticPack("broken", [task]), types=False) as grader:
        verdict = grader.grade("broken", "print(1)")
    assert verdict.error and verdict.fault == "task" and verdict.disrupted


@pytest.mark.parametrize(
    ("expected", "got", "ok"),
    [
        ([1], 1, True),
        ([[1, 2]], (1, 2), True),
        (True, 1, False),
        (1, True, False),
        ({"a": 1}, {"a": 1}, True),
    ],
)
def test_call_based_values_compare_as_data(expected: object, got: object, ok: bool) -> None:
    spec = parse_spec({"program": {"call": "f", "tests": [{"args": [], "output": expected}]}})
    assert value_matches(spec, expected, got) is ok


def test_generated_stdin_catches_a_program_that_only_fits_the_visible_tests() -> None:
    program = {
        "tests": [{"input": "3 4\n", "output": "7\n"}],
        "reference": "a, b = map(int, input().split())\nprint(a + b)\n",
        "generator": "def generate(rng):\n    return f'{rng.randint(-99, 99)} {rng.randint(-99, 99)}\\n'\n",
        "generated_tests": 12,
    }
    task = Task(id="gen/add", prompt="Print a + b.", hidden={"program": program})
    with make_grader(StaticPack("gen", [task]), types=False) as grader:
        honest, fitted = grader.grade_many(
            ["gen/add", "gen/add"], ["a, b = map(int, input().split())\nprint(b + a)\n", "print(7)\n"]
        )
    assert honest.passed and not fitted.passed and "test 2 of 13" in fitted.feedback


def test_a_whole_program_with_a_fence_in_a_string_is_graded_whole(graders: dict[str, Grader]) -> None:
    program = 'NOTE = """```python\\nprint(0)\\n```"""\ninput()\nprint(sum(map(int, input().split())))\n'
    assert graders["apps"].grade("apps/1", "\ufeff" + program).passed
