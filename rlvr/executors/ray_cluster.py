"""Connect to a Ray cluster, or start a private one that listens on loopback only.

A local cluster (no address) binds every Ray server to 127.0.0.1: Ray picks the machine's
routable IP as the node address unless told it runs single-machine, so we set that switch
(`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`) before Ray is imported and verify the node address after
start-up, refusing to keep a cluster that would listen on other interfaces. Usage statistics are
off (`RAY_USAGE_STATS_ENABLED=0`): a grader must not phone home.
"""

from __future__ import annotations

import logging
import os
import sys
from types import ModuleType

LOOPBACK_ADDRESSES = ("127.0.0.1", "::1", "localhost")
LOCAL_OBJECT_STORE_BYTES = 256 << 20


class RayUnavailableError(RuntimeError):
    """Ray is not installed or the cluster cannot be reached or started safely."""


def import_ray(*, single_machine: bool) -> ModuleType:
    """Import Ray; for a private single-machine cluster, first pin its servers to loopback."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if single_machine:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailableError("the Ray executor needs Ray: pip install 'rlvr[ray]'") from exc
    if single_machine and not ray.is_initialized():
        # Ray read the switch when it was first imported, possibly before we set it; its node
        # address lookup consults the module constant at call time, so pin that as well. The
        # address is verified after start-up either way.
        constants = sys.modules.get("ray._private.ray_constants")
        if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
            multi_machine = os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] not in ("0", "false")
            setattr(constants, "ENABLE_RAY_CLUSTER", multi_machine)  # noqa: B010
    return ray


def connect(address: str | None = None, *, num_cpus: int | None = None) -> tuple[ModuleType, bool]:
    """Make sure this process is connected to Ray. Returns (ray, started_here).

    `address=None` or "local" starts a private loopback-only cluster with `num_cpus` CPUs
    (default: this machine's count); any other address ("auto", "HOST:PORT", "ray://...")
    connects to an existing cluster. An already-connected process keeps its connection.
    """
    local = address in (None, "local")
    ray = import_ray(single_machine=local)
    if ray.is_initialized():
        return ray, False
    if not local:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except Exception as exc:
            raise RayUnavailableError(f"cannot connect to the Ray cluster at {address!r}: {exc}") from exc
        return ray, True
    ray.init(
        address="local",
        num_cpus=num_cpus or os.cpu_count() or 1,
        include_dashboard=False,
        object_store_memory=LOCAL_OBJECT_STORE_BYTES,
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    node_ip = ray.util.get_node_ip_address()
    if node_ip not in LOOPBACK_ADDRESSES:
        ray.shutdown()
        raise RayUnavailableError(
            f"the local Ray cluster would listen on {node_ip}, not only on loopback. Ray was imported "
            "before rlvr could pin it; set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 in the environment, "
            "or start a cluster yourself and pass its address."
        )
    return ray, True
