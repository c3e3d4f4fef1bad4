"""One JSONL reader for every file someone else wrote: each hostile line is a problem with file and
line, the good lines around it are still read, and nothing raises.

The hostile lines are the ones `json.loads` fails on in ways other than `JSONDecodeError`: an
integer past Python's int/str digit limit (ValueError), nesting deeper than the recursion limit
(RecursionError), bytes that are not UTF-8 (UnicodeDecodeError), plus plain bad syntax and a line
of the wrong JSON type."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.core.jsonl import json_lines

HOSTILE: dict[str, bytes] = {
    "bad JSON": b'{"id": "a", oops}',
    "5,000-digit integer": b'{"id": "a", "n": ' + b"7" * 5000 + b"}",
    "100k-deep nesting": b'{"id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "non-UTF-8 bytes": b'{"id": "caf\xe9"}',
    "not an object": b'["id", "a"]',
}
EXPECTED_WORDS = {
    "bad JSON": "not valid JSON",
    "5,000-digit integer": "digits",
    "100k-deep nesting": "nested too deeply",
    "non-UTF-8 bytes": "not UTF-8",
    "not an object": "expected a JSON object",
}


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@pytest.mark.parametrize("kind", HOSTILE)
def test_each_hostile_line_is_a_problem_with_file_and_line(tmp_path: Path, kind: str) -> None:
    path = write_lines(tmp_path / "x.jsonl", [b'{"id": "before"}', b"", HOSTILE[kind], b'{"id": "after"}'])
    entries = list(json_lines(path))
    assert [e.number for e in entries] == [1, 3, 4]  # the blank line 2 is skipped, not reported
    assert [e.value for e in entries if not e.problem] == [{"id": "before"}, {"id": "after"}]
    (bad,) = [e for e in entries if e.problem]
    assert bad.problem is not None and bad.value is None
    assert (bad.problem.file, bad.problem.line) == (str(path), 3)
    assert EXPECTED_WORDS[kind] in bad.problem.message
    assert str(bad.problem).startswith(f"{path}:3: ")


def test_a_byte_order_mark_and_crlf_endings_are_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a"}\r\n{"id": "b"}\r\n')
    assert [e.value for e in json_lines(path)] == [{"id": "a"}, {"id": "b"}]


def test_a_missing_file_is_one_problem_without_a_line(tmp_path: Path) -> None:
    (entry,) = json_lines(tmp_path / "absent.jsonl")
    assert entry.problem is not None and entry.problem.line is None and "cannot read" in entry.problem.message


def test_non_objects_pass_when_the_caller_accepts_any_value(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "v.jsonl", [b"[1, 2]", b"3", b'"s"'])
    assert [e.value for e in json_lines(path, objects=False)] == [[1, 2], 3, "s"]


# ---------------------------------------------------------------- the readers built on it


RLVR = [sys.executable, "-m", "rlvr"]
CODE_TASK = {
    "id": "ok",
    "prompt": "p",
    "entry_point": "f",
    "reference": "def f(x):\n    return x\n",
    "tests": [{"args": [1]}],
}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RLVR, *args], capture_output=True, text=True, timeout=300)


def test_packs_validate_reports_every_hostile_line_and_exits_non_zero(tmp_path: Path) -> None:
    (tmp_path / "pack.toml").write_text('name = "hostile"\nfamily = "code"\n')
    write_lines(tmp_path / "tasks.jsonl", [json.dumps(CODE_TASK).encode(), *HOSTILE.values()])
    result = run_cli("packs", "validate", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    for number, kind in enumerate(HOSTILE, start=2):
        line = next(x for x in result.stderr.splitlines() if f"tasks.jsonl:{number}:" in x)
        assert EXPECTED_WORDS[kind] in line, (kind, line)


def test_packs_import_reports_every_hostile_line_and_keeps_the_good_rows(tmp_path: Path) -> None:
    good = {
        "id": "mini/echo",
        "prompt": "Echo the input.",
        "program": {"tests": [{"input": "1\n", "output": "1\n"}]},
    }
    source = write_lines(tmp_path / "rows.jsonl", [json.dumps(good).encode(), *HOSTILE.values()])
    result = run_cli("packs", "import", "--format", "jsonl", str(source), "--out", str(tmp_path / "pack"))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    for number, kind in enumerate(HOSTILE, start=2):
        line = next(x for x in result.stderr.splitlines() if f"rows.jsonl:{number}:" in x)
        assert EXPECTED_WORDS[kind] in line, (kind, line)
    assert [json.loads(x)["id"] for x in (tmp_path / "pack" / "tasks.jsonl").read_text().splitlines()] == [
        "mini/echo"
    ]


@pytest.mark.parametrize("kind", ["5,000-digit integer", "100k-deep nesting", "non-UTF-8 bytes"])
def test_packs_import_of_a_whole_json_file_reports_instead_of_crashing(tmp_path: Path, kind: str) -> None:
    source = tmp_path / "rows.json"
    source.write_bytes(b"[" + HOSTILE[kind] + b"]")
    result = run_cli("packs", "import", "--format", "jsonl", str(source), "--out", str(tmp_path / "pack"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{source}:1:" in result.stderr and EXPECTED_WORDS[kind] in result.stderr


def test_recorded_completions_swebench_instances_and_bench_records_share_the_rules(tmp_path: Path) -> None:
    from rlvr.bench.inspect import _records
    from rlvr.bench.policies.base import PolicyError
    from rlvr.bench.policies.jsonl import read_recorded
    from rlvr.bench.store import SampleStore
    from rlvr.cli.completions import read_completions
    from rlvr.graders.repo.swebench import InstanceError, load_instances, read_instances

    for kind, line in HOSTILE.items():
        path = write_lines(tmp_path / "c.jsonl", [b'{"task_id": "t", "completion": "x"}', line])
        rows = list(read_completions(path))
        assert rows[0][1:] == ("t", "x", None) and EXPECTED_WORDS[kind] in str(rows[1][3]), kind
        with pytest.raises(PolicyError, match=f"c.jsonl:2: .*{EXPECTED_WORDS[kind]}"):
            read_recorded(path)
        found, problems = read_instances(path)
        assert found == {} and problems[1][0] == 2 and EXPECTED_WORDS[kind] in problems[1][1], kind
        with pytest.raises(InstanceError, match="c.jsonl:1: "):  # the first line lacks instance fields
            load_instances(path)
        write_lines(path, [line])
        with pytest.raises(InstanceError, match=f"c.jsonl:1: .*{EXPECTED_WORDS[kind]}"):
            load_instances(path)

        run = tmp_path / kind.replace(" ", "_")
        run.mkdir()
        record = {"pack": "p", "task_id": "t", "sample": 0, "completion": "x", "reward": 1.0, "flags": []}
        write_lines(run / "samples.jsonl", [json.dumps(record).encode(), line])
        assert [where for where, _ in _records(run)] == ["samples.jsonl:1"]  # a cut-short line is skipped
        store = SampleStore(run)
        assert store.unreadable_lines == 1 and len(store.records) == 1
