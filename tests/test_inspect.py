"""`rlvr inspect` ranks flagged samples (hard-coding first) from what runs already write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.bench.inspect import flag_rates, suspicious_samples
from rlvr.cli import main
from rlvr.core.flags import exploit_flags, flag_name


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + '{"cut short', encoding="utf-8")


RECORDS = [
    {"task_id": "t/honest", "completion": "def f(): return 1", "reward": 1.0, "passed": True, "flags": []},
    {
        "task_id": "t/limit",
        "completion": "while True: pass",
        "reward": 0.1,
        "passed": False,
        "flags": ["timeout"],
    },
    {
        "task_id": "t/socket",
        "completion": "import socket",
        "reward": 0.2,
        "passed": False,
        "flags": ["sandbox:denied:socket"],
    },
    {
        "task_id": "t/hardcode",
        "completion": "def f(x):\n    return {1: 2}[x]",
        "reward": 0.3,
        "passed": False,
        "flags": ["special_cases_visible"],
    },
    {
        "task_id": "t/side",
        "completion": "[...]",
        "reward": 0.9,
        "passed": True,
        "flags": ["unauthorized_side_effect"],
    },
]


def test_flag_names_match_by_prefix_and_limits_are_not_exploits() -> None:
    assert flag_name("sandbox:denied:socket") == "sandbox:denied"
    assert flag_name("timeout:types") == "timeout"
    assert exploit_flags(["timeout", "sandbox:denied:open", "degraded:no-namespaces", "forged_output"]) == [
        "sandbox:denied:open",
        "forged_output",
    ]


def test_hard_coding_ranks_first_then_by_reward(tmp_path: Path) -> None:
    _write(tmp_path / "samples.jsonl", RECORDS)
    ranked = suspicious_samples(tmp_path)
    assert [s.task_id for s in ranked] == ["t/hardcode", "t/side", "t/socket"]
    assert ranked[1].reason.startswith("PASSED despite")
    assert flag_rates(RECORDS) == {
        "sandbox:denied": 0.2,
        "special_cases_visible": 0.2,
        "unauthorized_side_effect": 0.2,
    }


def test_cli_prints_and_emits_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "flagged_samples.jsonl", [dict(r, step=3) for r in RECORDS])
    assert main(["inspect", str(tmp_path), "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert text.index("t/hardcode") < text.index("t/side") and "t/socket" not in text
    assert main(["inspect", str(tmp_path), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["task_id"] == "t/hardcode" and lines[0]["step"] == 3 and len(lines) == 3


def test_a_directory_without_samples_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(tmp_path)]) == 2
    assert "holds no samples.jsonl" in capsys.readouterr().err


def test_hacking_gap_is_visible_minus_hidden_over_tasks_that_show_examples() -> None:
    from rlvr.bench.metrics import hacking_gap

    records = [
        {"visible_passed": True, "passed": True},
        {"visible_passed": True, "passed": False},
        {"visible_passed": True, "passed": False},
        {"visible_passed": False, "passed": False},
        {"visible_passed": None, "passed": True},
    ]
    assert hacking_gap(records) == 0.5
    assert hacking_gap([{"visible_passed": None, "passed": True}]) is None


def test_trainer_step_metrics_report_the_hacking_gap_and_exploit_rates() -> None:
    from rlvr.core.types import Verdict
    from rlvr.trainer.metrics import verdict_metrics

    verdicts = [
        Verdict("a", 0.1, False, visible_passed=True, flags=["special_cases_visible:literal_outputs"]),
        Verdict("b", 1.0, True, visible_passed=True),
        Verdict("c", 0.0, False, flags=["sandbox:denied:socket", "timeout"]),
        Verdict("d", 0.0, False, visible_passed=False),
    ]
    out = verdict_metrics(verdicts)
    assert out["hacking_gap"] == (2 - 1) / 3
    assert out["exploit/special_cases_visible"] == 0.25 and out["exploit/sandbox:denied"] == 0.25
    assert "exploit/timeout" not in out
