"""The docker backend for real (engine from scripts/services/docker.sh): container isolation, and a
container killed mid-batch gives flagged results and a fresh container."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from adversarial.docker_support import require_docker

from rlvr.sandbox import Job, make_sandbox
from rlvr.sandbox.pool import WorkerPool

PROBE = """
import os


def probe(what):
    if what == "identity":
        return [os.getuid(), os.getgid(), os.uname().nodename, sorted(os.environ)]
    if what == "listdir":
        return sorted(os.listdir("/"))
    raise ValueError(what)
"""


@pytest.fixture(scope="module", params=["runc", "runsc"])
def pool(request: pytest.FixtureRequest) -> Iterator[WorkerPool]:
    require_docker(str(request.param))
    sandbox = make_sandbox("docker", 1, runtime=None if request.param == "runc" else str(request.param))
    yield sandbox
    sandbox.close()


def run_probe(pool: WorkerPool, what: str) -> object:
    result = pool.run(Job(PROBE, "probe", [(what,)], timeout=10))
    assert result.status == "ok", result
    outcome = result.outcomes[0]
    assert outcome is not None
    return outcome.value if outcome.ok else outcome.exception


def test_container_identity_and_view(pool: WorkerPool) -> None:
    uid, gid, hostname, environment = run_probe(pool, "identity")  # type: ignore[misc]
    assert (uid, gid, hostname, environment) == (65534, 65534, "sandbox", [])
    top = run_probe(pool, "listdir")
    assert isinstance(top, list) and "work" not in top and "home" not in top and "usr" not in top


def test_container_has_no_network_and_a_read_only_root(pool: WorkerPool) -> None:
    # candidates cannot open sockets or /proc to look for themselves, so ask the engine
    worker = pool.workers[0]
    container = getattr(worker, "container", None)
    assert container is not None
    container.reload()
    host_config = container.attrs["HostConfig"]
    assert host_config["NetworkMode"] == "none"
    assert host_config["ReadonlyRootfs"] is True
    assert host_config["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host_config["SecurityOpt"]
    assert all(m["RW"] is False for m in container.attrs["Mounts"] if m["Type"] == "bind")


def test_killed_container_mid_batch_is_flagged_and_replaced(pool: WorkerPool) -> None:
    slow = Job("import time\ndef f(x):\n    time.sleep(1.0)\n    return x\n", "f", [(1,)], timeout=10)
    worker = pool.workers[0]
    container = getattr(worker, "container", None)
    assert container is not None

    def kill_soon() -> None:
        time.sleep(0.3)
        container.kill()

    killer = threading.Thread(target=kill_soon)
    killer.start()
    killed = pool.run(slow)
    killer.join()
    assert killed.sandbox_error and "worker failed" in killed.detail
    after = pool.run(Job("def f(x):\n    return x\n", "f", [(2,)], timeout=10))
    assert after.status == "ok" and after.outcomes[0] is not None and after.outcomes[0].value == 2
    assert getattr(worker, "container", None) is not container


@pytest.mark.parametrize("runtime", ["runc", "runsc"])
def test_node_jobs_run_in_containers(runtime: str) -> None:
    """TypeScript candidates (as JavaScript) run in the docker backend too, under runc and gVisor."""
    import shutil

    if shutil.which("node") is None:
        pytest.skip("node is not installed: TypeScript candidates cannot run")
    require_docker(runtime)
    source = "function f(a, b) { __c(); return [a + b, typeof process, typeof require]; }"
    with make_sandbox("docker", 1, runtime=None if runtime == "runc" else runtime, node=True) as sandbox:
        result = sandbox.run(
            Job(source, "f", [(1, 2)], timeout=10, trace=True, runtime="node", counter="__c")
        )
        looping = sandbox.run(Job("function f() { for (;;) {} }", "f", [()], timeout=1.5, runtime="node"))
    assert result.status == "ok", result.detail
    assert result.outcomes[0] is not None and result.outcomes[0].value == [3, "undefined", "undefined"]
    assert result.counts == [1]
    assert looping.status == "timeout"
