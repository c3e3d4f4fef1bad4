"""Unified diffs and whole-file blocks applied to an in-memory repository; workspace path rules."""

from __future__ import annotations

import pytest

from rlvr.graders.repo.patch import PatchError, apply_completion, apply_unified_diff, make_unified_diff
from rlvr.graders.repo.workspace import Workspace, WorkspaceError, check_path

BASE = {
    "pkg/a.py": "one\ntwo\nthree\nfour\nfive\n",
    "pkg/b.py": "x = 1\n",
    "tests/test_a.py": "def test(): pass\n",
}


def test_round_trip_of_made_diffs() -> None:
    after = {
        "pkg/a.py": "one\n2\nthree\nfour\nfive\nsix\n",
        "pkg/c.py": "new\n",
        "tests/test_a.py": BASE["tests/test_a.py"],
    }
    workspace = Workspace.fresh(BASE)
    touched = apply_unified_diff(workspace, make_unified_diff(BASE, after))
    assert workspace.files == after
    assert touched == ["pkg/a.py", "pkg/b.py", "pkg/c.py"]


def test_hunk_applies_at_an_offset_and_context_must_match() -> None:
    diff = "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,2 +1,2 @@\n three\n-four\n+FOUR\n"
    workspace = Workspace.fresh(BASE)
    apply_unified_diff(workspace, diff)
    assert workspace.files["pkg/a.py"] == "one\ntwo\nthree\nFOUR\nfive\n"
    with pytest.raises(PatchError, match="does not apply"):
        apply_unified_diff(Workspace.fresh(BASE), diff.replace(" three", " nine"))


def test_failed_patch_changes_nothing() -> None:
    workspace = Workspace.fresh(BASE)
    diff = (
        "--- a/pkg/b.py\n+++ b/pkg/b.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1 @@\n-zzz\n+yyy\n"
    )
    with pytest.raises(PatchError):
        apply_unified_diff(workspace, diff)
    assert workspace.files == BASE


@pytest.mark.parametrize(
    "path", ["../etc/passwd", "/etc/passwd", "a/../../b", "a//b", "a\\b", "a\0b", "./../x", "~/x"]
)
def test_paths_that_leave_the_repository_are_refused(path: str) -> None:
    with pytest.raises(WorkspaceError):
        check_path(path)
    with pytest.raises(PatchError):
        apply_unified_diff(Workspace.fresh(BASE), f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n")


def test_whole_file_blocks_and_garbage() -> None:
    workspace = Workspace.fresh(BASE)
    assert apply_completion(workspace, "Here:\n```pkg/b.py\nx = 2\n```\n") == ["pkg/b.py"]
    assert workspace.files["pkg/b.py"] == "x = 2\n"
    with pytest.raises(PatchError, match="neither"):
        apply_completion(Workspace.fresh(BASE), "I fixed it, trust me.")
    with pytest.raises(PatchError, match="not closed"):
        apply_completion(Workspace.fresh(BASE), "```pkg/b.py\nx = 2\n")


def test_workspace_refuses_binary_and_huge_content() -> None:
    workspace = Workspace.fresh(BASE)
    with pytest.raises(WorkspaceError, match="NUL"):
        workspace.write("pkg/bin.py", "a\0b")
    with pytest.raises(WorkspaceError, match="limit"):
        workspace.write("pkg/big.py", "x" * 300_000)
    with pytest.raises(WorkspaceError, match="Unicode"):
        workspace.write("pkg/s.py", "\udcff")
    with pytest.raises(WorkspaceError, match="clashes"):
        workspace.write("pkg/a.py/inner.py", "x")
    assert workspace.changed() == []
