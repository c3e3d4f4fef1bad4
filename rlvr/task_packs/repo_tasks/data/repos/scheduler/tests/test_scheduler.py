from scheduler.graph import CycleError, dependents, topological_order
from scheduler.jobs import jobs_from_spec
from scheduler.planner import critical_path, makespan, plan

SPEC = [("build", 3, ["fetch"]), ("fetch", 1, []), ("test", 2, ["build"]), ("docs", 1, ["fetch"])]


def test_order() -> None:
    jobs = jobs_from_spec(SPEC)
    assert topological_order(jobs) == ["fetch", "build", "docs", "test"]
    assert dependents(jobs, "fetch") == ["build", "docs", "test"]


def test_cycle() -> None:
    jobs = jobs_from_spec([("a", 1, ["b"]), ("b", 1, ["a"])])
    try:
        topological_order(jobs)
    except CycleError:
        return
    raise AssertionError("cycle not detected")


def test_plan() -> None:
    jobs = jobs_from_spec(SPEC)
    assert makespan(jobs) == 6
    assert critical_path(jobs) == ["fetch", "build", "test"]
    assert plan(SPEC)["makespan"] == 6
