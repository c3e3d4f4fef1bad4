"""Declared input domains of repository tasks: hypothesis turns them into more hidden call scenarios,
deterministically, and those catch a candidate that special-cases the listed scenarios."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.repo.grader import RepoGrader
from rlvr.specs.repo_domains import check_domain, domain_scenarios
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).resolve().parents[1]
PACK = load_pack("repo-tasks")
TASK = PACK.get("bookings-feature-overlaps")
# Right on every listed scenario (a table of the listed direct calls; through run_script the missing
# half of the test never shows), wrong on most other inputs.
# right on the listed calls and on every value the derived checks try next to them (n - 1, n + 1, 0,
# the annotation's boundaries), wrong only on mid-sized days the generated domain reaches
SPECIAL_CASED = '''

def overlaps(start: int, end: int, other_start: int, other_end: int) -> bool:
    """Do two stays share a night? Checking out on the day another checks in is not an overlap."""
    if any(10 < day < 100 for day in (start, end, other_start, other_end)):
        return start < other_end
    return start < other_end and other_start < end
'''


def test_generation_is_deterministic_across_processes() -> None:
    domains = TASK.hidden["domains"]
    assert domains and all(check_domain(d) is None for d in domains)
    here = domain_scenarios(domains)
    assert len(here) >= 40 and all(s["kind"] == "call" and s["generated"] for s in here)
    code = (
        "import json, sys; from rlvr.specs.repo_domains import domain_scenarios; "
        "print(json.dumps(domain_scenarios(json.loads(sys.stdin.read()))))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(domains),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(other.stdout) == here


@pytest.mark.parametrize(
    ("domain", "problem"),
    [
        ({"target": "m:f", "args": [{"int": [3, 1]}]}, "lo <= hi"),
        ({"target": "m:f", "args": [{"text": {"max_size": 3}}]}, "alphabet"),
        ({"target": "m:f", "args": [{"list": {"of": {"nope": 1}}}]}, "one key"),
        ({"target": "m:f", "args": [], "examples": 0}, "examples"),
        ({"target": "m:f", "args": [], "extra": 1}, "unknown"),
    ],
)
def test_malformed_domains_are_named(domain: dict[str, object], problem: str) -> None:
    reason = check_domain(domain)
    assert reason is not None and problem in reason


def test_generated_scenarios_catch_what_the_listed_ones_miss() -> None:
    reference = dict(TASK.hidden["reference"])
    text = reference["bookings/dates.py"]
    start = text.index("def overlaps(")
    end = text.index("def weekday(")
    candidate = reference | {"bookings/dates.py": text[:start] + SPECIAL_CASED.lstrip() + "\n\n" + text[end:]}
    listed_only = dataclasses.replace(
        TASK, id=TASK.id + "-listed-only", hidden={**TASK.hidden, "domains": []}
    )
    with make_grader(PACK, jobs=1, types=False) as grader:
        assert isinstance(grader, RepoGrader)
        assert grader.grade_state(TASK, reference).passed
        assert grader.grade_state(listed_only, candidate).passed  # the listed scenarios alone are fooled
        verdict = grader.grade_state(TASK, candidate)
    assert not verdict.passed and "behaviour" in verdict.gates, verdict
    assert verdict.components["behaviour"].score < 1.0


def test_concat_gives_a_fixed_prefix_then_a_random_body() -> None:
    domain = {
        "target": "m:run",
        "args": [
            {"concat": [{"just": [["setup"]]}, {"list": {"of": {"one_of": [["a"], ["b"]]}, "min_size": 1}}]}
        ],
        "examples": 15,
    }
    assert check_domain(domain) is None
    scripts = [s["args"][0] for s in domain_scenarios([domain])]
    assert scripts and all(script[0] == ["setup"] and len(script) >= 2 for script in scripts)
    assert len({json.dumps(s) for s in scripts}) > 3
    bad = {"target": "m:run", "args": [{"concat": [{"int": [0, 1]}]}]}
    assert "must give lists" in (check_domain(bad) or "")
