"""The one verdict cache (rlvr/core/verdict_cache.py): what it keeps, what its keys tell apart, that a
hit is a copy, and that a grader's `grade_each` and the serving batcher reuse verdicts through it."""

from __future__ import annotations

import pytest

from rlvr.core.pack import StaticPack
from rlvr.core.types import Task, Verdict, grader_fault
from rlvr.core.verdict_cache import VerdictCache, VerdictKey, cacheable, grade_once_each
from rlvr.graders.base import Grader
from rlvr.integrations.batcher import MicroBatcher

PACK = StaticPack("toy-cache", [Task(id="t1", prompt="p"), Task(id="t2", prompt="q")], family="math")


class CountingGrader(Grader):
    """Grades one completion at a time through `grade_each` and a verdict cache, counting the work.
    "RAISE" makes the grading code raise (a grader fault), "SLOW" earns a timeout flag."""

    family = "math"

    def __init__(self, pack: StaticPack = PACK, cache: VerdictCache | None = None, **options) -> None:
        super().__init__(pack, **options)
        self.cache = cache if cache is not None else VerdictCache()
        self.graded: list[tuple[str, str]] = []

    def grade_tasks(self, tasks, completions):
        return self.grade_each(tasks, completions, self._grade_one, self.cache)

    def _grade_one(self, task: Task, completion: str) -> Verdict:
        self.graded.append((task.id, completion))
        if completion == "RAISE":
            raise RuntimeError("a bug in the grading code")
        if completion == "SLOW":
            return Verdict(task.id, flags=["timeout:answer"])
        return Verdict(task.id, reward=len(completion) / 10, passed=True, flags=["toy"], feedback="ok")


def key(**changes: str) -> VerdictKey:
    return VerdictKey("pack@1 grader", "options", "t1", "task", "completion")._replace(**changes)


def test_only_verdicts_the_completion_decided_are_kept():
    assert cacheable(Verdict("t1", reward=1.0, passed=True, flags=["toy"]))
    assert not cacheable(grader_fault("t1", RuntimeError("boom")))  # disrupted
    assert not cacheable(Verdict.failure("t1", "the sandbox died", fault="sandbox"))
    assert not cacheable(Verdict.failure("t1", "the task could not be prepared", fault="task"))
    assert not cacheable(Verdict.failure("t1", "completion must be a string"))  # an input error
    assert not cacheable(Verdict("t1", flags=["timeout:tests"]))
    assert not cacheable(Verdict("t1", flags=["crash:sandbox"]))
    cache = VerdictCache()
    assert not cache.put(key(), grader_fault("t1", RuntimeError("boom")))
    assert cache.get(key()) is None and len(cache) == 0


def test_a_grader_fault_is_never_served_from_the_cache():
    grader = CountingGrader()
    first = grader.grade_many(["t1", "t1"], ["RAISE", "RAISE"])
    again = grader.grade("t1", "RAISE")
    assert all(v.disrupted and v.fault == "grader" for v in [*first, again])
    assert grader.graded == [("t1", "RAISE")] * 3  # graded every time, never pinned
    grader.grade_many(["t1", "t1"], ["SLOW", "SLOW"])
    assert grader.graded.count(("t1", "SLOW")) == 2  # a timeout may not repeat: graded again


def test_a_repeat_is_served_from_the_cache_with_the_same_verdict():
    grader = CountingGrader()
    first = grader.grade("t1", "abc")
    second = grader.grade("t1", "abc")
    assert grader.graded == [("t1", "abc")]
    assert second.to_json() == first.to_json()  # the receipt included
    assert grader.cache.hits == 1


def test_different_options_task_or_completion_miss_and_execution_options_do_not():
    shared = VerdictCache()
    plain = CountingGrader(cache=shared)
    weighted = CountingGrader(cache=shared, weights={"answer": 2.0})
    slower = CountingGrader(cache=shared, timeout=30.0)
    elsewhere = CountingGrader(cache=shared, jobs=4)  # where code runs never changes a verdict
    plain.grade("t1", "abc")
    weighted.grade("t1", "abc")
    slower.grade("t1", "abc")
    elsewhere.grade("t1", "abc")
    assert len(plain.graded) == len(weighted.graded) == len(slower.graded) == 1
    assert elsewhere.graded == []  # served from the entry `plain` made
    assert plain.verdict_key("t1", "abc") == elsewhere.verdict_key("t1", "abc")
    assert plain.verdict_key("t1", "abc") != plain.verdict_key("t2", "abc")
    assert plain.verdict_key("t1", "abc") != plain.verdict_key("t1", "abd")
    edited = Task(id="t1", prompt="another prompt")  # the same id, other content: another task
    assert plain.verdict_key(edited, "abc") != plain.verdict_key("t1", "abc")
    other_pack = CountingGrader(StaticPack("toy-other", PACK.tasks(), family="math"), cache=shared)
    assert other_pack.verdict_key("t1", "abc") != plain.verdict_key("t1", "abc")
    assert plain.verdict_key("nope", "abc") is None and plain.verdict_key("t1", 3) is None


def test_a_hit_is_a_copy_that_no_caller_can_corrupt():
    cache = VerdictCache()
    verdict = Verdict("t1", reward=0.5, passed=True, flags=["toy"], feedback="ok")
    assert cache.put(key(), verdict)
    verdict.flags.append("edited after put")
    hit = cache.get(key())
    assert hit is not None and hit is not verdict and hit.flags == ["toy"]
    hit.flags.append("edited by a caller")
    hit.reward = 0.0
    hit.receipt = {"candidate": "x"}
    again = cache.get(key())
    assert again is not None and again.flags == ["toy"] and again.reward == 0.5 and again.receipt is None


def test_the_cache_is_bounded_least_recently_used_first():
    cache = VerdictCache(capacity=2)
    for name in ("a", "b"):
        cache.put(key(completion=name), Verdict("t1", reward=1.0))
    assert cache.get(key(completion="a")) is not None  # "a" is now the most recent
    cache.put(key(completion="c"), Verdict("t1", reward=1.0))
    assert len(cache) == 2
    assert cache.get(key(completion="b")) is None
    assert cache.get(key(completion="a")) is not None and cache.get(key(completion="c")) is not None
    nothing = VerdictCache(capacity=0)
    assert not nothing.put(key(), Verdict("t1", reward=1.0)) and nothing.get(key()) is None
    with pytest.raises(ValueError):
        VerdictCache(capacity=-1)


def test_grade_once_each_grades_distinct_items_once_and_gives_each_position_its_own_verdict():
    calls: list[list[str]] = []

    def grade(items: list[str]) -> list[Verdict]:
        calls.append(items)
        return [Verdict("t1", reward=len(item) / 10, feedback=item) for item in items]

    verdicts = grade_once_each(["ab", "c", "ab", "ab"], grade)
    assert calls == [["ab", "c"]]
    assert [v.reward for v in verdicts] == [0.2, 0.1, 0.2, 0.2]
    assert len({id(v) for v in verdicts}) == 4  # no two positions share an object
    verdicts[0].feedback = "edited"
    assert verdicts[2].feedback == verdicts[3].feedback == "ab"
    with pytest.raises(RuntimeError):
        grade_once_each(["a", "b"], lambda items: [Verdict("t1")])


def test_the_batcher_reuses_verdicts_through_the_grader_key():
    grader = CountingGrader(cache=VerdictCache(capacity=0))  # the grader itself keeps nothing
    batcher = MicroBatcher(grader, cache_items=16)
    try:
        first = batcher.grade(["t1", "t1", "t2"], ["abc", "abc", "abc"])
        assert grader.graded == [("t1", "abc"), ("t2", "abc")]  # the repeat within the batch: once
        assert first[0] is not first[1] and first[0].to_json() == first[1].to_json()
        again = batcher.grade(["t1"], ["abc"])
        assert grader.graded == [("t1", "abc"), ("t2", "abc")]
        assert again[0].to_json() == first[0].to_json() and batcher.stats().cache_hits == 1
        batcher.grade(["t1"], ["RAISE"])
        batcher.grade(["t1"], ["RAISE"])
        assert grader.graded.count(("t1", "RAISE")) == 2
    finally:
        batcher.close()


def test_the_vector_env_prefetch_grades_repeats_once_and_hands_each_sub_env_its_own_verdict():
    from rlvr.envs.vector import PrefetchingGrader

    inner = CountingGrader(cache=VerdictCache(capacity=0))
    grader = PrefetchingGrader(inner)
    grader.prefetch(["t1", "t1", "t2"], ["abc", "abc", "RAISE"])
    assert inner.graded == [("t1", "abc"), ("t2", "RAISE")]
    first, second = grader.grade("t1", "abc"), grader.grade("t1", "abc")
    assert first is not second and first.to_json() == second.to_json()
    assert grader.grade("t2", "RAISE").disrupted
    assert len(inner.graded) == 2  # all three served from the prefetched batch
    grader.grade("t1", "abc")  # a third sub-env with that item was not prefetched: graded now
    assert inner.graded[-1] == ("t1", "abc") and grader.batches == 2
