"""Namespaced pools for tests: skip (saying why) only where the kernel refuses the namespaces."""

from __future__ import annotations

import pytest

from rlvr.sandbox import LocalSandbox, SandboxUnavailable

KERNEL_REFUSALS = ("unshare", "Operation not permitted", "Invalid argument", "No space left")


def namespaced_sandbox(workers: int) -> LocalSandbox:
    try:
        return LocalSandbox(workers, isolation="namespaces")
    except SandboxUnavailable as exc:
        if any(reason in str(exc) for reason in KERNEL_REFUSALS) and "pivot_root" not in str(exc):
            pytest.skip(f"this kernel/container refuses Linux namespaces: {exc}")
        raise
