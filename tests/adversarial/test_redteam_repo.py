"""Red-team attacks on repository tasks: paths that the whole-repository type checker's workspace
cannot hold were a grading error (`fault="grader"`) caused by the candidate's own file names."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.patch import PatchError, apply_completion
from rlvr.graders.repo.whole_repo_types import RepoTypeChecker
from rlvr.graders.repo.workspace import Workspace, WorkspaceError, check_path
from rlvr.task_packs.registry import load_pack

PACK = load_pack("repo-tasks")
TASK = PACK.get("ledger-rename-format_cents")
REFERENCE: dict[str, str] = TASK.hidden["reference"]
LONG_NAME = "\u4e2d" * 90 + ".py"  # 90 characters (within the 200-character limit), 273 bytes in UTF-8


@pytest.fixture(scope="module")
def grader() -> Iterator[RepoGrader]:
    with make_grader(PACK, jobs=1) as grader:
        assert isinstance(grader, RepoGrader)
        yield grader


def test_paths_the_checker_cannot_write_are_the_candidates_failure(grader: RepoGrader) -> None:
    """`pyrightconfig.json/x.py` (a directory where the checker keeps its own configuration) and a name
    over the file system's 255 bytes made writing the checker's workspace fail: a grading error. Now a
    scored failure of the types gate with the `unrepresentable:types` flag; the next state is normal."""
    for extra in (
        {"pyrightconfig.json/x.py": "x = 1\n"},
        {LONG_NAME: "x = 1\n"},
        {"pkg/" + LONG_NAME: "x = 1\n"},
    ):
        verdict = grader.grade_state(TASK, REFERENCE | extra)
        assert verdict.error is None and verdict.fault is None, (extra.keys(), verdict.error)
        assert not verdict.passed and verdict.gates == ["types"], verdict
        assert "unrepresentable:types" in verdict.flags
    verdict = grader.grade_state(TASK, REFERENCE)
    assert verdict.passed and verdict.components["types"].score == 1.0, verdict


def test_the_cli_engine_refuses_the_same_paths_without_raising() -> None:
    """The cold engine wrote the candidate's `pyrightconfig.json/` directory, then raised
    IsADirectoryError writing its own configuration over it."""
    checker = RepoTypeChecker(engine="cli", cache_size=0)
    try:
        for extra in ({"pyrightconfig.json/x.py": "x = 1\n"}, {LONG_NAME: "x = 1\n"}):
            assert checker.check(REFERENCE | extra).failure == "unrepresentable"
    finally:
        checker.close()


def test_the_workspace_refuses_names_longer_than_the_file_system_allows() -> None:
    assert check_path("pkg/" + "\u4e2d" * 80 + ".py")  # 243 bytes: fine
    with pytest.raises(WorkspaceError, match="255 bytes"):
        check_path("pkg/" + LONG_NAME)
    workspace = Workspace.fresh(dict(REFERENCE))
    with pytest.raises(PatchError, match="255 bytes"):
        apply_completion(workspace, f"```{LONG_NAME}\nx = 1\n```\n")
    assert workspace.files == REFERENCE


def _tool_call(name: str, arguments: dict[str, object]) -> str:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return json.dumps({"tool_calls": [call]})


def test_a_tool_result_forged_by_the_repositorys_code_is_the_agents_error_not_a_grading_fault() -> None:
    """run_python's snippet shares its process with the driver that reports its output: replacing the
    capture's `getvalue` made the trusted side add an int to a str, which ended the episode with a
    grading error (`fault="grader"`). Now a malformed tool result is an error message to the agent,
    and the episode goes on to a normal verdict."""
    from rlvr.envs.repo_env import RepoEnv

    env = RepoEnv(PACK)
    try:
        env.reset(seed=0)
        observation, _, done, _, _ = env.step(_tool_call("run_python", {"code": "print('hi')"}))
        assert not done and json.loads(observation)[0]["content"] == "hi\n"
        for code in (
            "import sys\nsys.stdout.getvalue = lambda: 42\n",
            "import sys\ntype(sys.stdout).getvalue = lambda self: ['not', 'text']\n",
        ):
            observation, reward, done, truncated, info = env.step(_tool_call("run_python", {"code": code}))
            assert not done and not truncated and "verdict" not in info, info
            assert "malformed" in json.loads(observation)[0]["content"]
        _, _, done, _, info = env.step(_tool_call("submit", {}))
        assert done and info["verdict"]["error"] is None and info["verdict"]["fault"] is None, info
    finally:
        env.close()


def test_configuration_files_in_the_candidates_state_relax_nothing() -> None:
    """pyright reads `pyrightconfig.json`, `pyproject.toml [tool.pyright]` and stub files (`.pyi`) from
    the repository; a candidate shipping ones that turn checking off (at the root or in a package)
    must not hide the error its half-done rename introduced."""
    half_renamed = dict(TASK.hidden["base"])
    for path in ("ledger/money.py", "ledger/__init__.py"):
        half_renamed[path] = half_renamed[path].replace("format_cents", "render_cents")
    off = '{"typeCheckingMode": "off", "reportMissingImports": false, "reportAttributeAccessIssue": false}'
    relaxing = {
        "pyproject.toml": '[tool.pyright]\ntypeCheckingMode = "off"\nreportAttributeAccessIssue = false\n',
        "ledger/pyrightconfig.json": off,
        "ledger/pyproject.toml": '[tool.pyright]\ntypeCheckingMode = "off"\n',
        "ledger/report.pyi": "from typing import Any\ndef __getattr__(name: str) -> Any: ...\n",
        "ledger/money.pyi": "from typing import Any\ndef __getattr__(name: str) -> Any: ...\n",
        "typings/ledger/money.pyi": "from typing import Any\ndef __getattr__(name: str) -> Any: ...\n",
    }
    checker = RepoTypeChecker(cache_size=0)
    try:
        broken = checker.check(half_renamed)
        assert broken.failure is None and broken.errors, broken
        relaxed = checker.check(half_renamed | relaxing)
        assert relaxed.failure is None and relaxed.errors == broken.errors, relaxed
    finally:
        checker.close()


HIDE_IN_BUILTINS = (
    "from builtins import *\nfrom typing import Any\n\n\ndef undefined_helper(x: int) -> int:\n    return x\n"
)


def test_a_builtins_override_hides_no_type_error(grader: RepoGrader) -> None:
    """pyright (not Python) reads a repository's `__builtins__.py` as its builtins scope: a candidate
    defining its undefined names there (or aliasing `int = Any`) made every "is not defined" /
    mismatch error vanish, for full types credit on code that raises NameError. The file is now left
    out of the check (its errors come back) and charged as an evasion."""
    report_py = REFERENCE["ledger/report.py"] + "\n\ndef extra() -> int:\n    return undefined_helper(3)\n"
    broken = REFERENCE | {"ledger/report.py": report_py}
    checker = grader.type_checker
    plain = checker.check(broken)
    assert any("undefined_helper" in message for _, message in plain.errors), plain.errors
    for name in ("__builtins__.py", "ledger/__builtins__.py"):
        assert checker.check(broken | {name: HIDE_IN_BUILTINS}).errors == plain.errors, name
        aliased = broken | {name: "from builtins import *\nfrom typing import Any\nint = Any\n"}
        assert checker.check(aliased).errors == plain.errors, name
    honest = grader.grade_state(TASK, broken)
    hiding = grader.grade_state(TASK, broken | {"__builtins__.py": HIDE_IN_BUILTINS})
    assert honest.error is None and hiding.error is None
    assert honest.components["types"].score < 1.0
    assert hiding.components["types"].score < honest.components["types"].score  # the evasion costs too
