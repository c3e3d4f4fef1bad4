from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RLVR = [sys.executable, "-m", "rlvr"]


def run(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RLVR, *args], capture_output=True, text=True, timeout=600, **kwargs)


def test_packs_list_json_contract():
    result = run("packs", "list", "--json")
    assert result.returncode == 0, result.stderr
    packs = json.loads(result.stdout)
    humaneval = next(p for p in packs if p["name"] == "humaneval")
    assert humaneval == {"name": "humaneval", "family": "code", "size": 164, "splits": ["test"]}
    assert all(set(p) == {"name", "family", "size", "splits"} for p in packs)


def test_unknown_pack_names_the_fix():
    result = run("packs", "show", "humanevel")
    assert result.returncode == 2 and "humaneval" in result.stderr and "rlvr packs list" in result.stderr


def code_task_line(**fields: object) -> str:
    task = {"id": "a", "prompt": "p", "entry_point": "f", "reference": "def f(x):\n    return x\n"}
    task["tests"] = [{"args": [1]}]
    return json.dumps({**task, **fields})


def test_validate_reports_file_line_and_field(tmp_path: Path):
    (tmp_path / "pack.toml").write_text('name = "broken"\nfamily = "code"\n')
    lines = [
        code_task_line(),
        "{not json",
        code_task_line(id="b", reference="def f(:\n"),
        code_task_line(difficulty=9),
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    result = run("packs", "validate", str(tmp_path))
    assert result.returncode == 1
    err = result.stderr
    assert "tasks.jsonl:2: not valid JSON" in err
    assert "tasks.jsonl:3: reference: does not compile" in err
    assert "tasks.jsonl:4: id: duplicate of line 1" in err
    assert "tasks.jsonl:4: difficulty: must be an integer from 1 to 5" in err


def test_grade_contract_keeps_order_and_flags_bad_lines(tmp_path: Path, humaneval_problems):
    good = humaneval_problems["HumanEval/2"]
    rows = [
        json.dumps({"task_id": "HumanEval/2", "completion": good["canonical_solution"]}),
        "{broken json",
        json.dumps({"task_id": "Nope/1", "completion": "x"}),
        json.dumps({"task_id": "HumanEval/2", "completion": ""}),
        json.dumps(
            {
                "task_id": "HumanEval/2",
                "completion": "```python\ndef truncate_number(number: float) -> float:\n    return number % 1.0\n```",
            }
        ),
        json.dumps({"task_id": "HumanEval/2"}),
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.jsonl"
    result = run(
        "grade", "--pack", "humaneval", "--completions", str(source), "--out", str(out), "--jobs", "1"
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 6 and [row["line"] for row in lines] == [1, 2, 3, 4, 5, 6]
    for row in lines:
        assert {"task_id", "reward", "passed", "components", "error"} <= set(row)
    assert lines[0]["passed"] and lines[0]["error"] is None
    assert set(lines[0]["components"]) == {"syntax", "types", "tests", "perf"}
    assert lines[4]["passed"]
    for index in (1, 2, 3, 5):
        assert lines[index]["error"] and not lines[index]["passed"] and lines[index]["reward"] == 0.0


def test_grade_directory_pack(tmp_path: Path):
    pack = tmp_path / "mini"
    pack.mkdir()
    (pack / "pack.toml").write_text('name = "mini"\nfamily = "code"\nversion = "1"\ndescription = "tiny"\n')
    task = {
        "id": "mini/add",
        "prompt": 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n',
        "entry_point": "add",
        "reference": "def add(a: int, b: int) -> int:\n    return a + b\n",
        "tests": [{"args": [1, 2]}, {"args": [-5, 5]}, {"args": [10**20, 1]}],
    }
    (pack / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps({"task_id": "mini/add", "completion": "    return a + b\n"})
        + "\n"
        + json.dumps({"task_id": "mini/add", "completion": "    return a - b\n"})
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    result = run("grade", "--pack", str(pack), "--completions", str(source), "--out", str(out))
    assert result.returncode == 0, result.stderr
    good, bad = (json.loads(line) for line in out.read_text().splitlines())
    assert good["passed"] and not bad["passed"] and good["reward"] > bad["reward"]


def test_grade_writes_every_line_when_a_completion_holds_an_unpaired_surrogate(tmp_path: Path):
    """A `\\ud800` escape in the input decodes to text no UTF-8 writer accepts; the math grader echoes the
    answer in its feedback. Every line is still written (the surrogate as an escape), none lost."""
    from rlvr.cli import main
    from rlvr.task_packs.registry import load_pack

    task_id = load_pack("math-procedural").tasks()[0].id
    source = tmp_path / "in.jsonl"
    rows = [
        {"task_id": task_id, "completion": "\\boxed{7\ud800}"},
        {"task_id": task_id, "completion": "\\boxed{1}"},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "grade",
                "--pack",
                "math-procedural",
                "--completions",
                str(source),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["line"] for row in lines] == [1, 2] and not lines[0]["passed"] and lines[0]["error"] is None


def test_grade_takes_jobs_and_sandbox_for_a_family_that_cannot_honour_them(tmp_path: Path, capsys):
    """`rlvr grade --jobs N --sandbox docker` is the grade contract for every pack: on a math pack
    (no candidate code runs in a sandbox) the flags are dropped with a note on stderr, and every line
    is graded."""
    from rlvr.cli import main
    from rlvr.task_packs.registry import load_pack

    task = load_pack("math-procedural").tasks()[0]
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"task_id": task.id, "completion": "\\boxed{1}"}) + "\n")
    out = tmp_path / "out.jsonl"
    args = ["grade", "--pack", "math-procedural", "--completions", str(source), "--out", str(out)]
    assert main([*args, "--jobs", "2", "--sandbox", "docker"]) == 0
    stderr = capsys.readouterr().err
    assert "--jobs has no effect on math packs" in stderr and "--sandbox has no effect" in stderr
    (line,) = [json.loads(row) for row in out.read_text().splitlines()]
    assert line["task_id"] == task.id and line["error"] is None
