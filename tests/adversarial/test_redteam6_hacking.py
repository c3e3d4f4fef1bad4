"""Red team 6, the reward-hacking instruments: canaries, receipts, regrade.

A canary is worth only as much as it is indistinguishable from its task: a policy that can tell
a canary prompt apart answers canaries honestly and special-cases everything else, and the canary
pass rate then reads clean while the policy cheats. Found (and fixed in
`rlvr/trainer/canary_tasks.py`): the contradicting output of a string example was the true output
plus the literal suffix `~canary` (or the word `canary` for an empty string), so 11 of humaneval's
69 canaries carried a constant marker in the prompt the policy reads. Also found (fixed by
`rlvr/core/stored_text.py`): a completion holding two unpaired surrogates that happen to form a
pair was stored as two JSON escapes and read back as one astral character, so `rlvr regrade`
graded other text than the run did (its receipt's `candidate` changed).

Held (guards): a receipt names the exact candidate text (a completion cannot share another's
receipt), and the candidate stored for `rlvr regrade` reads back to the same text and digest,
unpaired surrogates included.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rlvr.core.types import Verdict
from rlvr.graders.receipts import candidate_digest
from rlvr.task_packs.registry import load_pack
from rlvr.trainer.canary_tasks import canary_for
from rlvr.trainer.candidates import load_candidates, write_step_candidates


def test_no_canary_prompt_carries_a_constant_marker() -> None:
    marked = []
    for task in load_pack("humaneval").tasks():
        canary = canary_for(task)
        if canary is not None and "canary" in canary.shown.prompt and "canary" not in task.prompt:
            marked.append(task.id)
    assert not marked, marked


def test_canaries_still_contradict_their_tasks() -> None:  # the control: canaries exist and differ
    made = [c for t in load_pack("humaneval").tasks() if (c := canary_for(t)) is not None]
    assert len(made) > 50
    assert all(c.shown.prompt != load_pack("humaneval").get(c.origin).prompt for c in made)


@pytest.mark.parametrize("text", ["def f():\n    return 1\n", "x = '\ud800'\n", "a\u2028b\r\nc"])
def test_a_stored_candidate_reads_back_to_the_same_text_and_receipt(tmp_path: Path, text: str) -> None:
    verdict = Verdict(task_id="t", receipt={"candidate": candidate_digest(text)})
    write_step_candidates(tmp_path, 0, "p", ["t"], [text], [verdict])
    (stored,), kind = load_candidates(tmp_path)
    assert kind == "train" and stored.completion == text
    assert stored.receipt == {"candidate": candidate_digest(stored.completion)}
    with gzip.open(tmp_path / "candidates" / "step_000000.jsonl.gz", "rt", encoding="utf-8") as handle:
        assert len([line for line in handle if line.strip()]) == 1  # one line: no text broke it
    assert json.loads(json.dumps(stored.receipt)) == stored.receipt


def test_two_unpaired_surrogates_are_not_read_back_as_a_pair(tmp_path: Path) -> None:
    text = "x = '\ud83d\ude00'\n"  # two code points, no character: graded as text that is not Unicode
    write_step_candidates(tmp_path, 0, "p", ["t"], [text], [Verdict(task_id="t")])
    (stored,), _ = load_candidates(tmp_path)
    assert stored.completion == text, [hex(ord(c)) for c in stored.completion]


def test_two_completions_never_share_a_candidate_digest() -> None:
    assert candidate_digest("a") != candidate_digest("a ") != candidate_digest("\ud800")


@pytest.mark.parametrize("text", ["x = '\ud83d\ude00'\n", "plain", "\udfff\ud800", None])
def test_a_bench_sample_reads_back_code_point_for_code_point(tmp_path: Path, text: str | None) -> None:
    from rlvr.bench.policies.base import Generation
    from rlvr.bench.records import base_record
    from rlvr.bench.store import SampleStore

    generation = Generation(text=text) if text is not None else Generation(text=None, error="timeout")
    SampleStore(tmp_path).append([base_record("p", None, "t", 0, generation)])
    if text is None:  # a failed generation is not a candidate (nothing was graded)
        assert SampleStore(tmp_path).records[("p", "t", 0)]["completion"] is None
        return
    (stored,), kind = load_candidates(tmp_path)
    assert kind == "bench" and stored.completion == text, [hex(ord(c)) for c in stored.completion]
