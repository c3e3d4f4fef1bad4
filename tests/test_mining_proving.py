"""What makes `rlvr packs mine` fit its budget without trading trust: tasks that share one reference (every
task mined from a project) run the reference's imports and visible tests once per prover, not once per
task, and each task is still proved in full; the kind scheduler hands an exhausted kind's share on."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rlvr.graders.repo.prove import prove_repo_tasks
from rlvr.mining.miner import _next_kind
from rlvr.sandbox import make_sandbox
from tests.repo_fixtures import one_module_task
from tests.test_repo_prove import CORE, TESTS

SCENARIOS = [
    {"kind": "call", "target": "pkg.core:double", "args": [4]},
    {"kind": "call", "target": "pkg.core:clamp", "args": [5, 0, 3]},
    {"kind": "call", "target": "pkg.core:clamp", "args": [-5, 0, 3]},
]


class CountingSandbox:
    """A sandbox pool that counts the prover's runs of a reference's imports and visible tests."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.reference_test_runs = 0

    def _count(self, job: Any) -> None:
        ops = [call[0] for call in job.calls]
        if "imports" in ops and "tests" in ops:  # the prover's run of a reference (grading runs no imports)
            self.reference_test_runs += 1

    def run(self, job: Any) -> Any:
        self._count(job)
        return self.pool.run(job)

    def run_many(self, jobs: list[Any]) -> list[Any]:
        for job in jobs:
            self._count(job)
        return self.pool.run_many(jobs)

    def close(self) -> None:
        pass


def test_tasks_sharing_a_reference_run_its_visible_tests_once_and_are_each_proved() -> None:
    doubling = one_module_task(
        "double", "double is wrong", "pkg/core.py", CORE.replace("x * 2", "x * 3"), CORE, SCENARIOS, TESTS
    )
    clamping = one_module_task(
        "clamp", "clamp is wrong", "pkg/core.py", CORE.replace("min(high", "max(high"), CORE, SCENARIOS, TESTS
    )
    # the same reference, but a visible test it fails: its own run, and refused
    failing_reference = CORE.replace("return x * 2", "return x + x + 1")
    failing = one_module_task(
        "failing", "x", "pkg/core.py", CORE.replace("x * 2", "x * 3"), failing_reference, SCENARIOS, TESTS
    )
    with make_sandbox("local", workers=2) as pool:
        sandbox = CountingSandbox(pool)
        report = prove_repo_tasks(
            "mined", [doubling, clamping, failing], sandbox=sandbox, types=False, progress=False
        )
    refused = Counter(problem.file.rsplit(":", 1)[-1] for problem in report.problems)
    assert set(refused) == {"failing"}, report.problems
    assert any("fails its own visible tests" in p.message for p in report.problems)
    assert [proof.reference_reward for proof in report.proofs[:2]] == [1.0, 1.0]
    assert sandbox.reference_test_runs == 2  # one per distinct reference, not one per task


def test_a_kind_with_no_candidates_left_hands_its_share_to_the_others() -> None:
    quota = {"bug": 6, "feature": 3, "multi": 1}
    assert _next_kind(quota, Counter(), set()) == "feature"  # ties: the first kind listed
    assert _next_kind(quota, Counter(feature=1), set()) == "bug"
    assert _next_kind(quota, Counter(feature=1, bug=2), set()) == "multi"
    # the features are out: the bugs take every slot they leave, past their own quota
    assert _next_kind(quota, Counter(feature=1, bug=9, multi=3), {"feature"}) == "bug"
    assert _next_kind(quota, Counter(bug=1), {"feature", "bug", "multi"}) is None
