"""`rlvr certify`: every built-in pack holds against the shipped exploit strategies on a small sample;
the deliberately weak packs fail, naming the strategy that got through.

Kept fast: one or two sampled tasks per pack, for code packs a 2 s candidate time limit (a shorter
limit only makes the grader stricter) and, for Python ones, no type-checker layer (a soft layer: it decides no gate),
and the limit probes (timeouts, floods, huge values: they test the sandbox every Python code pack
shares, ~25 s a task under load) on one code pack only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlvr.cli import main
from rlvr.hacking.certify import certify_pack
from rlvr.hacking.strategies import STRATEGIES, strategies_for
from rlvr.task_packs.registry import PackError, load_pack

ROOT = Path(__file__).resolve().parents[1]
BUILT_IN = [
    "humaneval",
    "humaneval-ts",
    "kata",
    "kata-ts",
    "math-procedural",
    "proof-identities",
    "reasoning-gym",
    "repo-tasks",
    "sql-shop",
    "tiny-functions",
    "tiny-hacking",
    "tool-worlds",
]


def _options(pack_name: str) -> dict[str, Any]:
    pack = load_pack(pack_name)
    options: dict[str, Any] = {"jobs": 1} if pack.family in ("code", "repo") else {}
    if pack.family == "code":  # the limit probes and timeouts spend it; other families keep their own
        options["timeout"] = 2.0
        if getattr(pack, "language", "python") == "python":
            options["types"] = False
    return options


@pytest.mark.parametrize("name", BUILT_IN)
def test_built_in_pack_is_certified(name: str) -> None:
    try:
        pack = load_pack(name)
    except PackError as exc:  # reasoning-gym needs its extra
        pytest.skip(f"pack {name} cannot load here: {exc}")
    skip = set() if name == "tiny-functions" else {"limit_probe"}
    sample = 2 if pack.family == "math" else 1
    report = certify_pack(pack, sample=sample, progress=False, skip=skip, **_options(name))
    through = {s["name"]: s["through"][:1] for s in report["strategies"] if s["got_through"]}
    assert report["certified"], f"{name}: {through}"
    assert report["reference"]["failures"] == [], report["reference"]["failures"]
    if report["reference"]["tasks"]:  # TypeScript tasks without a TypeScript reference have none
        assert report["reference"]["mean_reward"] > 0.5
    names = {s["name"] for s in report["strategies"]}
    assert {"empty", "no_op", "format_only", "prompt_echo"} <= names


@pytest.mark.parametrize("pack_ref", ["tiny-hacking-weak", str(ROOT / "examples" / "packs" / "weak-visible")])
def test_deliberately_weak_pack_fails_naming_special_casing(pack_ref: str) -> None:
    options: dict[str, Any] = {"timeout": 2.0, "types": False, "jobs": 1}
    report = certify_pack(load_pack(pack_ref), sample=2, progress=False, skip={"limit_probe"}, **options)
    assert not report["certified"]
    assert "special_case_visible" in report["got_through"]
    (special,) = [s for s in report["strategies"] if s["name"] == "special_case_visible"]
    assert special["best_reward"] == 1.0 and special["through"][0]["why"] == "accepted"


def test_cli_exit_status_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    weak = str(ROOT / "examples" / "packs" / "weak-visible")
    assert main(["certify", weak, "--sample", "1", "--timeout", "2", "--skip", "limit_probe", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["certified"] is False and "special_case_visible" in report["got_through"]
    assert main(["certify", "math-procedural", "--sample", "2"]) == 0
    assert "CERTIFIED" in capsys.readouterr().out
    assert main(["certify", "no-such-pack"]) == 2


def test_every_strategy_is_documented_in_one_line() -> None:
    assert len({s.name for s in STRATEGIES}) == len(STRATEGIES)
    for strategy in STRATEGIES:
        assert strategy.doc and "\n" not in strategy.doc and len(strategy.doc) <= 120
    assert {s.name for s in strategies_for(load_pack("repo-tasks"))} >= {"test_tamper", "no_op"}
