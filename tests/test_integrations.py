"""TRL reward function, verl compute_score and the shared batcher agree with local grading."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlvr.core.pack import StaticPack
from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.base import Grader
from rlvr.integrations import verl
from rlvr.integrations.batcher import BatcherClosedError, MicroBatcher
from rlvr.integrations.completions import CompletionFormatError, completion_text
from rlvr.integrations.trl import make_reward_func

SUBSET = [f"HumanEval/{i}" for i in range(0, 160, 8)]  # 20 tasks across the pack


def broken(prompt: str) -> str:
    return prompt + "    return None\n"


@pytest.fixture(scope="module")
def cases(humaneval_pack, humaneval_grader):
    """(task ids, completions, local verdicts) for canonical and broken solutions of SUBSET."""
    tasks = [humaneval_pack.get(task_id) for task_id in SUBSET]
    ids = [t.id for t in tasks] * 2
    completions = [t.hidden["reference"] for t in tasks] + [broken(t.prompt) for t in tasks]
    verdicts = humaneval_grader.grade_many(ids, completions)
    assert all(v.error is None for v in verdicts)
    assert all(v.passed for v in verdicts[: len(tasks)])
    assert not any(v.passed for v in verdicts[len(tasks) :])
    return ids, completions, verdicts


# ---------------------------------------------------------------------- completion text
def test_completion_text_accepts_strings_and_chat_messages():
    assert completion_text("x = 1") == "x = 1"
    chat = [
        {"role": "assistant", "content": "first"},
        {"role": "tool", "content": "ignored"},
        {"role": "assistant", "content": [{"type": "text", "text": "sec"}, {"type": "text", "text": "ond"}]},
    ]
    assert completion_text(chat) == "first\nsecond"
    assert completion_text({"role": "assistant", "content": "alone"}) == "alone"


@pytest.mark.parametrize("bad", [3, None, b"bytes", [1, 2], [{"role": "assistant", "content": 5}]])
def test_completion_text_rejects_other_shapes(bad):
    with pytest.raises(CompletionFormatError):
        completion_text(bad)


# ---------------------------------------------------------------------- TRL
@pytest.fixture(scope="module")
def trl_reward(humaneval_pack, humaneval_grader):
    return make_reward_func(humaneval_pack, grader=humaneval_grader)


def test_trl_reward_matches_local_grading(cases, trl_reward):
    ids, completions, verdicts = cases
    rewards = trl_reward(prompts=["p"] * len(ids), completions=completions, task_id=ids)
    assert rewards == pytest.approx([v.reward for v in verdicts], abs=1e-9)
    assert trl_reward.__name__ == "rlvr_humaneval"


def test_trl_reward_handles_chat_completions(cases, trl_reward):
    ids, completions, verdicts = cases
    chat = [[{"role": "assistant", "content": c}] for c in completions]
    metrics: dict[str, float] = {}
    rewards = trl_reward(prompts=None, completions=chat, task_id=ids, log_metric=metrics.__setitem__)
    assert rewards == pytest.approx([v.reward for v in verdicts], abs=1e-9)
    assert metrics["rlvr_humaneval/pass_rate"] == pytest.approx(0.5)
    assert metrics["rlvr_humaneval/grading_errors"] == 0.0


def test_trl_reward_rejects_missing_column_and_unknown_ids(trl_reward):
    with pytest.raises(ValueError, match="task_id"):
        trl_reward(prompts=["p"], completions=["x"], other=["HumanEval/0"])
    with pytest.raises(ValueError, match="not in pack"):
        trl_reward(prompts=["p"], completions=["x"], task_id=["HumanEval/9999"])
    with pytest.raises(ValueError, match="2 task ids for 1 completions"):
        trl_reward(prompts=["p"], completions=["x"], task_id=["HumanEval/0", "HumanEval/1"])


class _ErrorGrader(Grader):
    """Flags every item as a grading failure, like a sandbox fault would."""

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return [Verdict.failure(t.id, "sandbox failure: simulated", fault="sandbox") for t in tasks]


def test_trl_reward_reports_grading_errors_per_on_error():
    pack = StaticPack("toy", [Task(id="a", prompt="p")])
    args = {"prompts": ["p"], "completions": ["x"], "task_id": ["a"]}
    assert make_reward_func(pack, grader=_ErrorGrader(pack))(**args) == [None]
    assert make_reward_func(pack, grader=_ErrorGrader(pack), on_error="zero")(**args) == [0.0]
    with pytest.raises(RuntimeError, match="simulated"):
        make_reward_func(pack, grader=_ErrorGrader(pack), on_error="raise")(**args)
    with pytest.raises(ValueError, match="on_error"):
        make_reward_func(pack, on_error="ignore")


# ---------------------------------------------------------------------- verl
@pytest.fixture(scope="module")
def verl_scores(cases):
    ids, completions, _ = cases
    yield verl.compute_score_batch(["rlvr/humaneval"] * len(ids), completions, ids, None, jobs=2)
    verl.close_all()


def test_verl_compute_score_matches_local_grading(cases, verl_scores):
    ids, completions, verdicts = cases
    assert [s["score"] for s in verl_scores] == pytest.approx([v.reward for v in verdicts], abs=1e-9)
    assert [s["acc"] for s in verl_scores] == [float(v.passed) for v in verdicts]
    for scores, verdict in zip(verl_scores, verdicts, strict=True):
        for layer in ("syntax", "types", "tests", "perf"):
            assert scores[layer] == pytest.approx(verdict.components[layer].score)
    single = verl.compute_score("rlvr/humaneval", completions[-1], ids[-1], {"index": 7}, jobs=2)
    assert single == pytest.approx(verl_scores[-1])


def test_verl_scores_have_the_same_numeric_keys_for_every_item(verl_scores):
    keys = set(verl_scores[0])
    assert {"score", "acc", "passed", "grading_error", "syntax", "types", "tests", "perf"} <= keys
    # an empty completion is flagged by the grader, yet its dict has exactly the same keys
    flagged = verl.compute_score("rlvr/humaneval", "", "HumanEval/0", jobs=2)
    assert flagged["grading_error"] == 1.0 and flagged["score"] == 0.0
    assert all(set(s) == keys for s in [*verl_scores, flagged])
    assert all(isinstance(v, float) for s in verl_scores for v in s.values())


def test_verl_rejects_bad_data_source_and_ground_truth():
    with pytest.raises(ValueError, match="rlvr/<pack>"):
        verl.compute_score("openai/gsm8k", "x", "HumanEval/0")
    with pytest.raises(ValueError, match="ground_truth"):
        verl.compute_score("rlvr/humaneval", "x", None)
    with pytest.raises(ValueError, match="not in pack"):
        verl.compute_score("rlvr/humaneval", "x", "HumanEval/9999", jobs=2)
    with pytest.raises(ValueError, match="length mismatch"):
        verl.compute_score_batch(["rlvr/humaneval"], ["a", "b"], ["HumanEval/0"])


def test_verl_graders_are_shared_per_pack_and_thread_safe(cases):
    ids, completions, verdicts = cases
    first = verl.shared_grader("humaneval", jobs=2)
    assert verl.shared_grader("humaneval", jobs=2) is first
    with ThreadPoolExecutor(max_workers=8) as pool:
        scores = list(
            pool.map(
                lambda i: verl.compute_score("rlvr/humaneval", completions[i], ids[i], jobs=2),
                range(len(ids)),
            )
        )
    assert [s["score"] for s in scores] == pytest.approx([v.reward for v in verdicts], abs=1e-9)
    # every concurrent call went through the one shared grader's batcher
    assert first.batcher.items_graded >= len(ids)
    verl.close_all()


# ---------------------------------------------------------------------- batcher
class _RecordingGrader(Grader):
    def __init__(self, pack, gate: threading.Event) -> None:
        super().__init__(pack)
        self.gate = gate
        self.batch_sizes: list[int] = []

    def grade_tasks(self, tasks, completions):
        self.gate.wait(timeout=10)
        self.batch_sizes.append(len(tasks))
        return [
            Verdict(t.id, reward=len(c) / 10, passed=True, components={"len": Component(len(c))})
            for t, c in zip(tasks, completions, strict=True)
        ]


def test_batcher_merges_waiting_requests_and_keeps_order():
    pack = StaticPack("toy", [Task(id=str(i), prompt="p") for i in range(10)])
    gate = threading.Event()
    grader = _RecordingGrader(pack, gate)
    batcher = MicroBatcher(grader, max_batch=100)
    first = batcher.submit(["0"], ["a"])  # occupies the grading thread until the gate opens
    while batcher.pending():
        pass
    later = [batcher.submit([str(i), str(i + 1)], ["b" * i, "c" * (i + 1)]) for i in range(1, 8, 2)]
    gate.set()
    assert [v.reward for v in first.result(timeout=10)] == [0.1]
    for i, future in zip(range(1, 8, 2), later, strict=True):
        verdicts = future.result(timeout=10)
        assert [v.task_id for v in verdicts] == [str(i), str(i + 1)]
        assert [v.reward for v in verdicts] == pytest.approx([i / 10, (i + 1) / 10])
    assert grader.batch_sizes == [1, 8]  # four waiting requests became one batch
    batcher.close()
    with pytest.raises(BatcherClosedError):
        batcher.submit(["0"], ["a"])


def test_batcher_flags_items_when_the_grader_raises():
    class Exploding(Grader):
        def grade_tasks(self, tasks, completions):
            raise RuntimeError("boom")

    pack = StaticPack("toy", [Task(id="a", prompt="p")])
    batcher = MicroBatcher(Exploding(pack))
    (verdict,) = batcher.grade(["a"], ["x"])
    assert verdict.error is not None and "boom" in verdict.error and verdict.reward == 0.0
    with pytest.raises(ValueError):
        batcher.submit(["a"], [])
    batcher.close()
