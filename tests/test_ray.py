"""The Ray executor on a private local cluster (2 CPUs, loopback only)."""

from __future__ import annotations

import ipaddress
import json
import os
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")

from rlvr.core.pack import StaticPack  # noqa: E402
from rlvr.core.types import Task, Verdict  # noqa: E402
from rlvr.executors import make_executor_grader  # noqa: E402
from rlvr.executors.ray_cluster import connect  # noqa: E402
from rlvr.executors.ray_grader import WORKER_LOST_FLAG, RayGrader  # noqa: E402
from rlvr.graders.base import Grader  # noqa: E402

SUBSET = [f"HumanEval/{i}" for i in range(0, 160, 8)]


@pytest.fixture(scope="module")
def ray_cluster():
    ray, started = connect(None, num_cpus=2)
    # the test-only graders below must reach the actors by value (the tests dir is not a package)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield ray
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    if started:
        ray.shutdown()


def is_loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    mapped = getattr(address, "ipv4_mapped", None)  # "::ffff:127.0.0.1" is IPv4 loopback too
    return (mapped or address).is_loopback


def test_local_cluster_listens_on_loopback_only(ray_cluster):
    me = psutil.Process()
    processes = [me, *me.children(recursive=True)]
    listening = []
    for process in processes:
        try:
            connections = process.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        listening += [(process.name(), c.laddr.ip) for c in connections if c.status == psutil.CONN_LISTEN]
    assert any("gcs_server" in name or "raylet" in name for name, _ in listening)
    assert all(is_loopback(ip) for _, ip in listening), listening


def test_ray_grader_agrees_with_local_grading(ray_cluster, humaneval_pack, humaneval_grader):
    tasks = [humaneval_pack.get(task_id) for task_id in SUBSET]
    ids = [t.id for t in tasks] * 2 + ["HumanEval/9999"]
    completions = (
        [t.hidden["reference"] for t in tasks] + [t.prompt + "    return None\n" for t in tasks] + ["x"]
    )
    local = humaneval_grader.grade_many(ids, completions)
    grader = make_executor_grader(humaneval_pack, "ray", workers=2, chunk_size=4)
    try:
        assert isinstance(grader, RayGrader) and len(set(grader.worker_pids())) == 2
        remote = grader.grade_many(ids, completions)
    finally:
        grader.close()
    assert [v.task_id for v in remote] == ids
    assert [v.reward for v in remote] == pytest.approx([v.reward for v in local], abs=1e-9)
    assert [v.passed for v in remote] == [v.passed for v in local]
    assert all(v.passed for v in remote[: len(tasks)]) and not any(v.passed for v in remote[len(tasks) :])
    assert remote[-1].error is not None and "unknown task" in remote[-1].error
    assert grader.weights == humaneval_grader.weights  # type: ignore[attr-defined]
    assert ray_cluster.is_initialized()  # the grader did not shut down a cluster it did not start


def test_rlvr_grade_with_executor_ray_matches_local(ray_cluster, humaneval_pack, tmp_path):
    from rlvr.cli import main

    tasks = [humaneval_pack.get(task_id) for task_id in SUBSET[:10]]
    lines = [{"task_id": t.id, "completion": t.hidden["reference"]} for t in tasks]
    lines += [{"task_id": t.id, "completion": t.prompt + "    return None\n"} for t in tasks]
    source = tmp_path / "completions.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    outputs = {}
    for executor in ("local", "ray"):
        out = tmp_path / f"{executor}.jsonl"
        argv = ["grade", "--pack", "humaneval", "--completions", str(source), "--out", str(out)]
        assert main([*argv, "--jobs", "1", "--executor", executor]) == 0
        outputs[executor] = [json.loads(line) for line in out.read_text().splitlines()]
    local, remote = outputs["local"], outputs["ray"]
    assert [r["task_id"] for r in remote] == [line["task_id"] for line in lines]
    assert [r["reward"] for r in remote] == pytest.approx([r["reward"] for r in local], abs=1e-9)
    assert [r["passed"] for r in remote] == [True] * 10 + [False] * 10
    assert [r["components"] for r in remote] == [r["components"] for r in local]


# ---------------------------------------------------------------------- lost workers
class FaultyGrader(Grader):
    """Grades `len(completion) / 100`, but misbehaves on marked completions:
    CRASH-ALWAYS kills the actor process, CRASH-ONCE:<path> kills it the first time only,
    HANG sleeps past any deadline, RAISE raises."""

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        for completion in completions:
            if completion == "CRASH-ALWAYS":
                os._exit(1)
            if completion.startswith("CRASH-ONCE:"):
                marker = Path(completion.split(":", 1)[1])
                if not marker.exists():
                    marker.write_text("crashed")
                    os._exit(1)
            if completion == "HANG":
                time.sleep(3600)
            if completion == "RAISE":
                raise RuntimeError("grader bug")
        return [
            Verdict(t.id, reward=len(c) / 100, passed=True) for t, c in zip(tasks, completions, strict=True)
        ]


def faulty_factory(pack, **options):
    return FaultyGrader(pack)


def slow_after_crash_factory(pack, crash_marker: str = "", **options):
    """Builds slowly (6 s) once a crash has happened: a replacement that takes long to start."""
    if crash_marker and Path(crash_marker).exists():
        time.sleep(6)
    return FaultyGrader(pack)


@pytest.fixture(scope="module")
def toy_pack():
    return StaticPack("toy", [Task(id=f"t{i}", prompt="p") for i in range(12)])


def toy_grader(pack, **kwargs) -> RayGrader:
    return RayGrader(pack, workers=2, grader_factory=faulty_factory, chunk_size=4, **kwargs)


def test_worker_dying_once_mid_batch_is_retried(ray_cluster, toy_pack, tmp_path):
    ids = [f"t{i}" for i in range(12)]
    completions = ["a" * i for i in range(12)]
    completions[5] = f"CRASH-ONCE:{tmp_path / 'marker'}"
    grader = toy_grader(toy_pack)
    try:
        verdicts = grader.grade_many(ids, completions)
        assert grader.replacements == 1
    finally:
        grader.close()
    assert all(v.error is None for v in verdicts)
    assert [v.reward for v in verdicts] == pytest.approx([len(c) / 100 for c in completions])


def test_slow_replacement_start_does_not_count_against_the_deadline(ray_cluster, toy_pack, tmp_path):
    marker = tmp_path / "crashed"
    grader = RayGrader(
        toy_pack,
        workers=1,
        grader_factory=slow_after_crash_factory,
        crash_marker=str(marker),
        chunk_size=3,
        chunk_timeout=4.0,  # a loaded CI box can take seconds per trivial call; the start-up is longer still
    )
    try:
        verdicts = grader.grade_many(["t0", "t1", "t2"], [f"CRASH-ONCE:{marker}", "a", "bb"])
        assert grader.replacements == 1  # the crash; the 6 s start-up did not trigger another
    finally:
        grader.close()
    assert all(v.error is None for v in verdicts)
    assert [v.reward for v in verdicts[1:]] == pytest.approx([0.01, 0.02])


def test_item_that_kills_its_worker_twice_is_flagged_and_neighbours_survive(ray_cluster, toy_pack):
    ids = [f"t{i}" for i in range(12)]
    completions = ["b" * i for i in range(12)]
    completions[6] = "CRASH-ALWAYS"
    grader = toy_grader(toy_pack)
    try:
        verdicts = grader.grade_many(ids, completions)
        again = grader.grade("t1", "bb")  # the pool still works after replacing lost actors
    finally:
        grader.close()
    lost = verdicts[6]
    assert lost.error is not None and "lost twice" in lost.error and WORKER_LOST_FLAG in lost.flags
    assert lost.reward == 0.0 and not lost.passed
    others = [v for i, v in enumerate(verdicts) if i != 6]
    assert all(v.error is None for v in others)
    assert [v.reward for v in others] == pytest.approx(
        [len(c) / 100 for i, c in enumerate(completions) if i != 6]
    )
    assert again.error is None and again.reward == pytest.approx(0.02)


def test_hung_worker_is_replaced_after_the_chunk_deadline(ray_cluster, toy_pack):
    grader = toy_grader(toy_pack, chunk_timeout=2.0)
    try:
        verdicts = grader.grade_many(["t0", "t1", "t2"], ["HANG", "c", "cc"])
    finally:
        grader.close()
    assert verdicts[0].error is not None and WORKER_LOST_FLAG in verdicts[0].flags
    assert [v.reward for v in verdicts[1:]] == pytest.approx([0.01, 0.02])


def test_grader_exception_on_a_worker_is_flagged_not_retried(ray_cluster, toy_pack):
    grader = toy_grader(toy_pack)
    try:
        (verdict,) = grader.grade_many(["t0"], ["RAISE"])
        assert grader.replacements == 0
    finally:
        grader.close()
    assert verdict.error is not None and "grader bug" in verdict.error


def test_no_workers_left_flags_the_rest(ray_cluster, toy_pack):
    grader = RayGrader(
        toy_pack, workers=1, grader_factory=faulty_factory, chunk_size=1, max_worker_replacements=0
    )
    try:
        verdicts = grader.grade_many(["t0", "t1", "t2"], ["CRASH-ALWAYS", "d", "dd"])
    finally:
        grader.close()
    assert all(v.error is not None and WORKER_LOST_FLAG in v.flags for v in verdicts)


def test_tasks_are_queued_on_their_home_worker(ray_cluster, toy_pack):
    grader = toy_grader(toy_pack)
    try:
        tasks = toy_pack.tasks() * 3  # repeated tasks (a GRPO group) share a home
        queues = grader._queues(tasks)
        homes = {task.id: grader._home(task.id) for task in tasks}
        assert set(homes.values()) == {0, 1}  # the 12 toy ids spread over both workers
        for index, queue in enumerate(queues):
            for chunk in queue:
                assert all(homes[tasks[p].id] == index for p in chunk.positions)
        assert sorted(p for queue in queues for chunk in queue for p in chunk.positions) == list(range(36))
        # the batch still grades completely and in order when work is stolen across queues
        verdicts = grader.grade_many([t.id for t in tasks], ["e" * i for i in range(36)])
        assert [v.reward for v in verdicts] == pytest.approx([i / 100 for i in range(36)])
    finally:
        grader.close()


def test_executor_arguments_are_checked(toy_pack):
    with pytest.raises(ValueError, match="unknown executor"):
        make_executor_grader(toy_pack, "dask")
    with pytest.raises(ValueError, match="needs --executor ray"):
        make_executor_grader(toy_pack, "local", ray_address="127.0.0.1:6379")
    with pytest.raises(ValueError, match="workers"):
        RayGrader(toy_pack, workers=0)


def test_require_isolation_reaches_the_actors_through_their_runtime_env(ray_cluster, toy_pack, monkeypatch):
    """`--require-isolation` (the environment variable it sets) holds on every worker node, also on a
    cluster started without it: the actors get it through their Ray runtime environment."""
    from rlvr.sandbox.pool import REQUIRE_ISOLATION_ENV

    @ray_cluster.remote(num_cpus=0)
    def cluster_value() -> str | None:
        return os.environ.get(REQUIRE_ISOLATION_ENV)

    if ray_cluster.get(cluster_value.remote()) not in (None, "", "0"):
        pytest.skip("this cluster's workers were started with the variable set: the check would be vacuous")
    monkeypatch.setenv(REQUIRE_ISOLATION_ENV, "1")
    grader = toy_grader(toy_pack)
    try:
        described = ray_cluster.get([slot.actor.describe.remote() for slot in grader.slots])
    finally:
        grader.close()
    assert [d["require_isolation"] for d in described] == [True, True]
