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


def without_audit_hook(source: str) -> str:
    """The zygote's source with its audit hook switched off (a no-op `note`), for tests of the layers
    behind it. Fails loudly when the zygote no longer installs the hook in exactly one place."""
    start = source.find("    note = install_audit_hook(")
    assert start >= 0 and source.count("    note = install_audit_hook(") == 1, "the zygote's hook call moved"
    end = (
        source.index("\n    )\n", start) + len("\n    )\n")
        if source[start:].split("\n", 1)[0].endswith("(")
        else (source.index("\n", start) + 1)
    )
    return source[:start] + "    note = lambda op: None\n" + source[end:]
