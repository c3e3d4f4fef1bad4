"""Docker backend: one long-lived container per worker hosting the same zygote protocol.

Each container: no network, read-only root, memory/pids/CPU limits, every capability dropped,
no-new-privileges, user `nobody`, the sandbox's own syscall filter (installed by the launcher in
`bare` mode before it execs the zygote: no file system writes, no other process addressable), a /tmp
capped in bytes and inodes, and only the runtime view (interpreter, its libraries, the standard
library with site-packages hidden) bound read-only. The image is an empty one imported locally when
none is configured, so no registry is needed. `runtime="runsc"` runs the containers under gVisor.

Debian's runsc (20221219) cannot start a container that has a pids cgroup limit here, so under
runsc the process cap is the zygote's RLIMIT_NPROC=0 for candidates, enforced by gVisor's kernel.

The zygote is pid 1 of the container, so its kill(-1) clean-up reaches every stray process; when our
attach stream closes, the container's stdin closes, the zygote exits and docker removes the container.
"""

from __future__ import annotations

import io
import json
import os
import select
import socket
import struct
import tarfile
import time
from dataclasses import dataclass
from typing import Any

from rlvr.sandbox.node import node_binary, node_binds
from rlvr.sandbox.pool import (
    LAUNCHER_SOURCE,
    STARTUP_SECONDS,
    TMP_INODES,
    ZYGOTE_SOURCE,
    SandboxUnavailable,
    WorkerPool,
    ZygoteWorker,
    isolation_required,
    syscall_filter_hex,
)
from rlvr.sandbox.view import runtime_view

EMPTY_IMAGE = "rlvr-sandbox-empty:1"
LABEL = "rlvr.sandbox"
STDOUT_STREAM = 1


def docker_client() -> Any:
    try:
        import docker
    except ImportError as exc:
        raise SandboxUnavailable(
            "the docker backend needs the `docker` package (pip install rlvr[docker])"
        ) from exc
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except Exception as exc:  # docker raises several unrelated types for "no engine"
        raise SandboxUnavailable(f"no docker engine reachable: {exc}") from exc
    return client


def ensure_image(client: Any, image: str | None) -> str:
    """The configured image, or an empty image imported locally (the view supplies everything run)."""
    import docker.errors

    name = image or EMPTY_IMAGE
    try:
        client.images.get(name)
        return name
    except docker.errors.ImageNotFound:
        if image:
            raise SandboxUnavailable(f"docker image {image!r} not found locally") from None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w"):
        pass
    repository, _, tag = EMPTY_IMAGE.partition(":")
    client.api.import_image_from_data(buffer.getvalue(), repository=repository, tag=tag)
    return name


def runtime_available(client: Any, runtime: str | None) -> None:
    if runtime is None:
        return
    runtimes = client.info().get("Runtimes") or {}
    if runtime not in runtimes:
        raise SandboxUnavailable(
            f"docker runtime {runtime!r} is not registered (have: {', '.join(sorted(runtimes))}); "
            "see scripts/services/docker.sh"
        )


class DockerWorker(ZygoteWorker):
    """A zygote in its own container, reached through the container's attached stdin/stdout."""

    def __init__(
        self,
        client: Any,
        image: str,
        runtime: str | None,
        mem_mb: int,
        cpus: float,
        pids: int,
        node: bool = False,
    ) -> None:
        self.node = node
        self.client = client
        self.image = image
        self.runtime = runtime
        self.mem_mb = mem_mb
        self.cpus = cpus
        self.pids = pids
        self.container: Any = None
        self.connection: socket.socket | None = None
        self.stdout_buffer = bytearray()
        self.frame_left = 0
        self.frame_stream = 0
        super().__init__()

    def create_container(self) -> str:
        from docker.types import Mount

        view = runtime_view()
        binds = list(view.binds)
        if self.node:
            bound = {b.target for b in binds}
            binds += [b for b in node_binds() if b.target not in bound]
        mounts = [Mount(b.target, b.source, type="bind", read_only=True) for b in binds]
        tmpfs = {"/tmp": f"rw,nosuid,nodev,noexec,size=16m,nr_inodes={TMP_INODES},mode=1777"}
        tmpfs |= {hidden: "ro,nosuid,nodev,noexec,size=4k,mode=0555" for hidden in view.hidden_dirs}
        config = {
            "mode": "bare",
            "zygote": ZYGOTE_SOURCE,
            "interpreter": view.interpreter,
            "scratch": "/tmp",
            "syscall_filter": syscall_filter_hex(),
        }
        api = self.client.api
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            mem_limit=f"{self.mem_mb}m",
            memswap_limit=f"{self.mem_mb}m",
            pids_limit=None if self.runtime == "runsc" else self.pids,
            nano_cpus=int(self.cpus * 1e9),
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ipc_mode="private",
            mounts=mounts,
            tmpfs=tmpfs,
            auto_remove=True,
            runtime=self.runtime,
        )
        created = api.create_container(
            self.image,
            command=[view.interpreter, "-I", "-S", "-B", "-c", LAUNCHER_SOURCE, json.dumps(config)],
            stdin_open=True,  # with detach=False this also sets StdinOnce: when our attach closes, the
            detach=False,  # zygote's stdin closes, it exits, and docker removes the container
            user="65534:65534",
            hostname="sandbox",
            environment={},
            working_dir="/",
            network_disabled=True,
            labels={LABEL: "zygote"},
            host_config=host_config,
        )
        return str(created["Id"])

    def start(self) -> None:
        self.stdout_buffer.clear()
        self.frame_left = 0
        try:
            self.container = self.client.containers.get(self.create_container())
            attached = self.client.api.attach_socket(
                self.container.id, params={"stdin": 1, "stdout": 1, "stderr": 0, "stream": 1}
            )
            self.connection = attached._sock  # the raw socket under docker's SocketIO wrapper
            self.container.start()
        except Exception as exc:  # engine errors come in many types; all mean "no worker"
            self.kill()
            raise SandboxUnavailable(f"could not start a sandbox container: {exc}") from exc
        try:
            hello = self.receive_message(time.monotonic() + STARTUP_SECONDS)
        except (OSError, EOFError, TimeoutError, ValueError) as exc:
            self.kill()
            raise SandboxUnavailable(
                f"sandbox container failed to start: {type(exc).__name__}: {exc}"
            ) from exc
        if hello.get("status") != "ready":
            self.kill()
            raise SandboxUnavailable(f"sandbox container unavailable: {hello.get('detail', hello)}")
        self.flags = [str(flag) for flag in hello.get("flags") or []]
        if self.runtime:
            self.flags.append(f"runtime:{self.runtime}")

    @property
    def pid(self) -> int | None:
        if self.container is None:
            return None
        self.container.reload()
        return int(self.container.attrs["State"]["Pid"]) or None

    def alive(self) -> bool:
        return self.connection is not None and self.container is not None

    def kill(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            try:
                connection.close()
            except OSError:
                pass
        container, self.container = self.container, None
        if container is not None:
            try:
                container.remove(force=True)
            except Exception:  # already gone (auto_remove) or the engine is away; nothing to leak
                pass

    def send_bytes(self, data: bytes) -> None:
        if self.connection is None:
            raise EOFError("container is gone")
        self.connection.sendall(data)

    def receive_raw(self, deadline: float) -> bytes:
        assert self.connection is not None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("sandbox container did not answer in time")
            ready, _, _ = select.select([self.connection], [], [], remaining)
            if ready:
                chunk = self.connection.recv(1 << 16)
                if not chunk:
                    raise EOFError("sandbox container exited")
                return chunk

    def receive_exact(self, size: int, deadline: float) -> bytes:
        """Demultiplex docker's attach stream (8-byte headers: stream id, 3 zero bytes, length)."""
        raw = bytearray()
        while len(self.stdout_buffer) < size:
            raw += self.receive_raw(deadline)
            while raw:
                if self.frame_left == 0:
                    if len(raw) < 8:
                        raw += self.receive_raw(deadline)
                        continue
                    self.frame_stream = raw[0]
                    (self.frame_left,) = struct.unpack(">I", bytes(raw[4:8]))
                    del raw[:8]
                    continue
                take = min(self.frame_left, len(raw))
                if self.frame_stream == STDOUT_STREAM:
                    self.stdout_buffer += raw[:take]
                del raw[:take]
                self.frame_left -= take
        data = bytes(self.stdout_buffer[:size])
        del self.stdout_buffer[:size]
        return data


class DockerSandbox(WorkerPool):
    """`LocalSandbox`'s API on containers. `runtime="runsc"` selects gVisor."""

    name = "docker"

    def __init__(
        self,
        workers: int | None = None,
        runtime: str | None = None,
        image: str | None = None,
        mem_mb: int = 2048,
        cpus: float = 1.0,
        pids: int = 64,
        require_isolation: bool | None = None,
        node: bool = False,
    ) -> None:
        self.node = node
        if node:
            node_binary()
        self.client = docker_client()
        runtime_available(self.client, runtime)
        self.image = ensure_image(self.client, image or os.environ.get("RLVR_SANDBOX_IMAGE"))
        self.runtime = runtime
        self.limits = (mem_mb, cpus, pids)
        super().__init__(workers, require_isolation=isolation_required(require_isolation))

    def make_worker(self) -> ZygoteWorker:
        mem_mb, cpus, pids = self.limits
        return DockerWorker(self.client, self.image, self.runtime, mem_mb, cpus, pids, node=self.node)

    def close(self) -> None:
        super().close()
        try:
            self.client.close()
        except Exception:
            pass


# ---------------------------------------------------------------------------------- one-shot containers
@dataclass
class OneShotResult:
    """What a one-shot container left: its exit status (None when killed at the deadline) and the
    tail of its stdout (at most `max_output` bytes)."""

    exit_code: int | None
    stdout: bytes
    timed_out: bool
    seconds: float


def run_once(
    command: list[str],
    *,
    binds: list[tuple[str, str]],
    environment: dict[str, str],
    working_dir: str,
    timeout: float,
    image: str | None = None,
    runtime: str | None = None,
    mem_mb: int = 2048,
    cpus: float = 1.0,
    pids: int = 256,
    max_output: int = 4 << 20,
    client: Any = None,
) -> OneShotResult:
    """Run `command` once in a fresh container and remove it: the runtime view (interpreter and
    standard library) plus `binds` ((host path, container path), all read-only), no network, read-only
    root, every capability dropped, no-new-privileges, user `nobody`, a /tmp capped in bytes and inodes,
    memory/CPU/pids limits, only a local image (the empty one by default: nothing is pulled). Used for
    programs that must run as they are (e.g. a repository's pytest suite), outside the zygote protocol."""
    from docker.types import LogConfig, Mount

    owned = client is None
    client = client or docker_client()
    started = time.monotonic()
    container_id: str | None = None
    try:
        runtime_available(client, runtime)
        image = ensure_image(client, image or os.environ.get("RLVR_SANDBOX_IMAGE"))
        view = runtime_view()
        mounts = [Mount(b.target, b.source, type="bind", read_only=True) for b in view.binds]
        mounts += [Mount(target, source, type="bind", read_only=True) for source, target in binds]
        tmpfs = {"/tmp": f"rw,nosuid,nodev,noexec,size=64m,nr_inodes={TMP_INODES},mode=1777"}
        tmpfs |= {hidden: "ro,nosuid,nodev,noexec,size=4k,mode=0555" for hidden in view.hidden_dirs}
        api = client.api
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            mem_limit=f"{mem_mb}m",
            memswap_limit=f"{mem_mb}m",
            pids_limit=None if runtime == "runsc" else pids,
            nano_cpus=int(cpus * 1e9),
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ipc_mode="private",
            mounts=mounts,
            tmpfs=tmpfs,
            runtime=runtime,
            # docker keeps the container's output in a log file: bounded, the newest part kept
            log_config=LogConfig(type="json-file", config={"max-size": str(max_output), "max-file": "1"}),
        )
        created = api.create_container(
            image,
            command=command,
            user="65534:65534",
            hostname="sandbox",
            environment=environment,
            working_dir=working_dir,
            network_disabled=True,
            labels={LABEL: "oneshot"},
            host_config=host_config,
        )
        container_id = str(created["Id"])
        api.start(container_id)
        exit_code: int | None
        timed_out = False
        try:
            exit_code = int(api.wait(container_id, timeout=max(1, int(timeout + 0.999)))["StatusCode"])
        except Exception:  # the engine's client raises a requests/urllib3 timeout: kill it
            timed_out, exit_code = True, None
            try:
                api.kill(container_id)
            except Exception:
                pass
        stdout = bytes(api.logs(container_id, stdout=True, stderr=False))[-max_output:]
        return OneShotResult(exit_code, stdout, timed_out, time.monotonic() - started)
    except SandboxUnavailable:
        raise
    except Exception as exc:  # engine errors come in many types; all mean "could not run"
        raise SandboxUnavailable(f"could not run a one-shot container: {type(exc).__name__}: {exc}") from exc
    finally:
        if container_id is not None:
            try:
                client.api.remove_container(container_id, force=True)
            except Exception:
                pass
        if owned:
            try:
                client.close()
            except Exception:
                pass
