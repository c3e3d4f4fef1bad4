"""Patch intake as forgiving as `git apply --recount` / `patch -F`: every hand-written format of
tests/data/repo_patch_formats.py gives its expected state; a patch that cannot apply is refused naming
the hunk and why."""

from __future__ import annotations

import pytest

from rlvr.graders.repo.patch import PatchError, apply_completion
from rlvr.graders.repo.workspace import Workspace
from tests.data.repo_patch_formats import BASE, FORMATS, REFUSED


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_format_is_accepted(name: str) -> None:
    patch, expected = FORMATS[name]
    workspace = Workspace.fresh(BASE)
    apply_completion(workspace, patch)
    assert workspace.files == expected


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unappliable_patch_names_the_hunk_and_why(name: str) -> None:
    patch, hunk = REFUSED[name]
    workspace = Workspace.fresh(BASE)
    with pytest.raises(PatchError) as raised:
        apply_completion(workspace, patch)
    message = str(raised.value)
    assert hunk in message and "pkg/calc.py" in message and "where the hunk expects" in message
    assert workspace.files == BASE
