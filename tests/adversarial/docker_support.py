"""Skip docker tests only when a docker engine truly cannot exist here, and say why."""

from __future__ import annotations

import os
import shutil

import pytest


def require_docker(runtime: str = "runc") -> None:
    try:
        import docker
    except ImportError:
        pytest.skip("the docker SDK is not installed (pip install rlvr[docker])")
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as exc:
        if shutil.which("dockerd") is None and os.geteuid() != 0:
            pytest.skip(f"no docker engine and no root to start one (scripts/services/docker.sh): {exc}")
        if not os.path.exists("/var/run/docker.sock") and shutil.which("dockerd") is None:
            pytest.skip(f"docker engine not installed; run scripts/services/docker.sh as root: {exc}")
        raise AssertionError(f"docker is installed but the engine is not reachable: {exc}") from exc
    runtimes = client.info().get("Runtimes") or {}
    client.close()
    if runtime != "runc" and runtime not in runtimes:
        if not os.path.exists(f"/usr/bin/{runtime}"):
            pytest.skip(
                f"container runtime {runtime} is not installed (scripts/services/docker.sh installs it)"
            )
        raise AssertionError(f"{runtime} is installed but not registered with dockerd")
