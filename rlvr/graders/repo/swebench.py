"""SWE-bench-style instances: a git repository + base commit + FAIL_TO_PASS / PASS_TO_PASS pytest ids,
graded by running the repository's own tests on the docker backend.

An instance (one JSON line, SWE-bench's field names): `instance_id`, `repo` (a local git repository
directory, relative to the JSONL file or absolute), `base_commit`, `FAIL_TO_PASS` and `PASS_TO_PASS`
(lists of pytest node ids, or JSON strings of them as SWE-bench ships them), and optionally
`problem_statement`, `test_patch` (applied after the candidate's patch, as SWE-bench's harness does)
and `patch` (the reference fix).

Grading a candidate patch (a unified diff, or whole-file blocks):
1. the base commit is exported with `git archive` into a fresh temporary directory (no checkout, no
   hooks; the tar is extracted with the "data" filter), in the trusted process;
2. the patch is parsed and applied to the files it names, as text, never following a symlink; a patch
   that does not apply fails the `patch` gate;
3. a patch touching a protected path — tests/, conftest.py, test_*.py / *_test.py anywhere, every file
   named by a test id or touched by `test_patch`, root-level modules the run would import in place
   of pytest, its dependencies or its plugin, and every file pytest reads configuration from (see
   TEST_PATTERNS and pytest_config.py) — fails with `protected_path_edit` and `test_tamper`, without
   running anything;
4. `test_patch` is applied, then pytest runs on the test files of the ids in a one-shot container
   (`rlvr.sandbox.docker_backend.run_once`: no network, read-only root and repository, only a local
   image, nothing downloaded) with a small reporting plugin; the verdict passes when every
   FAIL_TO_PASS and every PASS_TO_PASS id passed.

Trust: step 4 runs pytest in the same process as the candidate's code, which can make any test pass
(monkeypatch pytest, rewrite the report, exit early). Every verdict decided by it carries the flag
`untrusted_runner`: it is as trustworthy as SWE-bench's own harness, not as the repo family's
trusted-oracle grading (`rlvr/Repo-v0`), where no output of the candidate's process decides anything.
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import secrets
import shutil
import stat
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.jsonl import json_lines
from rlvr.core.types import Component, Verdict
from rlvr.graders.repo.patch import PatchError, apply_completion, parse_file_blocks, parse_unified_diff
from rlvr.graders.repo.pytest_config import (
    PROTECTED_PATTERNS,
    changed_configuration,
    is_shared_config,
    pytest_view,
)
from rlvr.graders.repo.workspace import Workspace, WorkspaceError
from rlvr.specs.repo_paths import DEFAULT_PROTECTED, is_protected

TEST_PATTERNS: tuple[str, ...] = (
    *DEFAULT_PROTECTED,
    "test_*.py",
    "**/test_*.py",
    "*_test.py",
    "**/*_test.py",
    # what the test run imports before any test, from the repository root (the first entry of its
    # sys.path under `python -m pytest`, and on PYTHONPATH): a root-level pytest, its plugin or a
    # sitecustomize there replaces the runner itself and prints whatever report it likes
    "pytest.py",
    "pytest/*",
    "_pytest.py",
    "_pytest/*",
    "pluggy.py",
    "pluggy/*",
    "py.py",
    "iniconfig.py",
    "iniconfig/__init__.py",
    "packaging.py",
    "packaging/__init__.py",
    "pygments.py",
    "pygments/__init__.py",
    "rlvr_swe_report.py",
    "sitecustomize.py",
    "usercustomize.py",
    # every file pytest reads its configuration from (`addopts = -p plugin` loads code before the
    # report): pytest's own files anywhere; pyproject.toml / tox.ini / setup.cfg may change, but not
    # what pytest reads from them (checked after the patch is applied, see pytest_config.py)
    *PROTECTED_PATTERNS,
)
REPORT_TAG = "RLVR-SWE-REPORT"
PLUGIN_MODULE = "rlvr_swe_report"
PLUGIN_SOURCE = Path(__file__).parent / "swebench_plugin.py"
CONTAINER_REPO = "/work/repo"
CONTAINER_LIBS = "/opt/rlvr"
WORKDIR_PREFIX = "rlvr-swe-"
SWE_WEIGHTS = {"patch": 0.0, "fail_to_pass": 0.5, "pass_to_pass": 0.5}
UNTRUSTED = "untrusted_runner"


class InstanceError(ValueError):
    """A malformed instance or one whose repository/commit cannot be read: a fault of the task."""


@dataclass(frozen=True)
class SweInstance:
    instance_id: str
    repo_dir: Path
    base_commit: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    problem_statement: str = ""
    test_patch: str = ""
    patch: str = ""

    @property
    def test_files(self) -> list[str]:
        """The test files the ids live in (what pytest is run on), in order."""
        return list(dict.fromkeys(i.split("::", 1)[0] for i in (*self.fail_to_pass, *self.pass_to_pass)))


def _ids(value: Any, name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # also: nested too deeply, an int too long
            raise InstanceError(f"{name} must be a list of pytest ids (or its JSON text)") from None
    if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
        raise InstanceError(f"{name} must be a list of pytest ids")
    return tuple(value)


def instance_from_json(line: dict[str, Any], root: Path) -> SweInstance:
    for name in ("instance_id", "repo", "base_commit"):
        if not isinstance(line.get(name), str) or not line[name]:
            raise InstanceError(f"{name} is missing or not a string")
    try:
        repo_dir = (root / line["repo"]).resolve()
    except (OSError, ValueError) as exc:  # a NUL byte, a name too long for the file system
        raise InstanceError(f"repo is not a usable path: {type(exc).__name__}: {str(exc)[:100]}") from None
    instance = SweInstance(
        instance_id=line["instance_id"],
        repo_dir=repo_dir,
        base_commit=line["base_commit"],
        fail_to_pass=_ids(line.get("FAIL_TO_PASS", []), "FAIL_TO_PASS"),
        pass_to_pass=_ids(line.get("PASS_TO_PASS", []), "PASS_TO_PASS"),
        problem_statement=str(line.get("problem_statement") or ""),
        test_patch=str(line.get("test_patch") or ""),
        patch=str(line.get("patch") or ""),
    )
    if not instance.fail_to_pass:
        raise InstanceError("FAIL_TO_PASS must name at least one test")
    return instance


def _is_directory(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long for the file system (is_dir lets ENAMETOOLONG through)
        return False


def read_instances(
    path: Path,
) -> tuple[dict[str, tuple[int, SweInstance]], list[tuple[int, str, str | None]]]:
    """Every instance of a JSONL file, never raising on content: ({instance_id: (line, instance)},
    [(line, problem, instance_id if the line names one)]). A line is a problem if it is not a JSON
    object, lacks a field, repeats an earlier instance_id, or its `repo` is not a directory."""
    found: dict[str, tuple[int, SweInstance]] = {}
    problems: list[tuple[int, str, str | None]] = []
    for entry in json_lines(path):
        number, line, named = entry.number, entry.value, None
        if entry.problem:
            problems.append((number, entry.problem.message, None))
            continue
        try:
            named = line["instance_id"] if isinstance(line.get("instance_id"), str) else None
            instance = instance_from_json(line, path.parent)
        except InstanceError as exc:
            problems.append((number, str(exc), named))
            continue
        if instance.instance_id in found:
            first = found[instance.instance_id][0]
            problems.append((number, f"instance_id {instance.instance_id!r} repeats line {first}", None))
        elif not _is_directory(instance.repo_dir):
            problems.append((number, f"repo {instance.repo_dir} is not a directory", named))
        else:
            found[instance.instance_id] = (number, instance)
    return found, problems


def load_instances(path: Path) -> list[SweInstance]:
    """The instances of a JSONL file; InstanceError names the line of the first malformed one."""
    instances = []
    for entry in json_lines(path):
        if entry.problem:
            raise InstanceError(f"{path}:{entry.number}: {entry.problem.message}")
        try:
            instances.append(instance_from_json(entry.value, path.parent))
        except InstanceError as exc:
            raise InstanceError(f"{path}:{entry.number}: {exc}") from None
    return instances


# ------------------------------------------------------------------------------------- the repository
def export_commit(repo_dir: Path, commit: str, target: Path) -> None:
    """The tree of `commit` as plain files under `target` (git archive; no hooks, no config)."""
    if not (repo_dir / ".git").exists() and not (repo_dir / "HEAD").is_file():
        raise InstanceError(f"{repo_dir} is not a git repository")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(target), "GIT_CONFIG_NOSYSTEM": "1"}
    completed = subprocess.run(
        ["git", "-C", str(repo_dir), "archive", "--format=tar", commit, "--"],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        reason = completed.stderr.decode("utf-8", "replace").strip()[:300]
        raise InstanceError(f"git archive {commit} failed: {reason}")
    with tarfile.open(fileobj=io.BytesIO(completed.stdout)) as archive:
        archive.extractall(target, filter="data")


def _regular_file(root: Path, path: str) -> Path | None:
    """The file at `path` under `root` if it is a regular file reached without any symlink; None if
    nothing is there; PatchError if a symlink or a non-file is in the way."""
    current = root
    for part in path.split("/"):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(mode):
            raise PatchError(f"{path}: goes through a symlink in the repository; not patched")
    if not stat.S_ISREG(os.lstat(current).st_mode):
        raise PatchError(f"{path}: not a regular file")
    return current


def touched_paths(patch: str) -> list[str]:
    """The paths a patch (unified diff or whole-file blocks) names; PatchError if it parses as neither."""
    if not isinstance(patch, str):
        raise PatchError("the patch must be text")
    if "\n+++ " in patch or patch.startswith("--- "):
        found = [p for fp in parse_unified_diff(patch) for p in (fp.old_path, fp.new_path) if p is not None]
    else:
        found = list(parse_file_blocks(patch))
    if not found:
        raise PatchError("found neither a unified diff nor whole-file blocks")
    return sorted(set(found))


def apply_to_tree(root: Path, patch: str) -> list[str]:
    """Apply `patch` to the files under `root` it names, all or nothing; returns those paths."""
    paths = touched_paths(patch)
    files: dict[str, str] = {}
    for path in paths:
        existing = _regular_file(root, path)
        if existing is not None:
            try:
                files[path] = existing.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise PatchError(f"{path}: not a UTF-8 text file; not patched") from None
    workspace = Workspace.fresh(files)
    apply_completion(workspace, patch)
    for path in paths:
        target = root / path
        if path in workspace.files:
            parent = root
            for part in path.split("/")[:-1]:
                parent = parent / part
                if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
                    raise PatchError(f"{path}: its directory is a file or a symlink in the repository")
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():
                raise PatchError(f"{path}: is a symlink in the repository; not patched")
            target.write_text(workspace.files[path], encoding="utf-8")
        elif _regular_file(root, path) is not None:
            target.unlink()
    return paths


# ------------------------------------------------------------------------------------- pytest's code
def _requirement_closure(name: str) -> list[importlib.metadata.Distribution]:
    from packaging.requirements import Requirement

    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [name]
    while pending:
        current = pending.pop()
        key = current.lower().replace("_", "-")
        if key in found:
            continue
        distribution = importlib.metadata.distribution(current)
        found[key] = distribution
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return list(found.values())


def pytest_binds() -> list[tuple[str, str]]:
    """(host, container) read-only binds making pytest and its dependencies importable from
    CONTAINER_LIBS/site — and nothing else of the grader's environment."""
    binds: dict[str, tuple[str, str]] = {}
    for distribution in _requirement_closure("pytest"):
        for entry in distribution.files or []:
            top = entry.parts[0]
            if top.endswith((".dist-info", ".egg-info", ".pth")) or top in ("..", "__pycache__", "bin"):
                continue
            source = Path(str(distribution.locate_file(top))).resolve()
            if source.exists() and top not in binds:
                binds[top] = (str(source), f"{CONTAINER_LIBS}/site/{top}")
    binds[PLUGIN_MODULE] = (str(PLUGIN_SOURCE.resolve()), f"{CONTAINER_LIBS}/{PLUGIN_MODULE}.py")
    return list(binds.values())


def parse_report(stdout: bytes, nonce: str) -> dict[str, str] | None:
    """Outcome by node id from the plugin's last report line carrying `nonce`; None if there is none."""
    prefix = f"{REPORT_TAG} {nonce} "
    for line in reversed(stdout.decode("utf-8", "replace").splitlines()):
        if line.startswith(prefix):
            try:
                payload = json.loads(line[len(prefix) :])
            except (ValueError, RecursionError):  # the runner's output is the candidate's: anything
                return None
            results = payload.get("results") if isinstance(payload, dict) else None
            if isinstance(results, dict):
                return {str(k): str(v) for k, v in results.items()}
            return None
    return None


# ------------------------------------------------------------------------------------- grading
@dataclass
class SweBenchRunner:
    """Grades candidate patches for SWE-bench-style instances on the docker backend."""

    timeout: float = 300.0
    image: str | None = None
    runtime: str | None = None
    mem_mb: int = 2048
    cpus: float = 1.0
    extra_protected: tuple[str, ...] = ()
    _client: Any = field(default=None, repr=False)

    def decided_without_running(self, instance: SweInstance, patch: str) -> Verdict | None:
        """The verdict of a patch that fails before any container would start (it parses as neither a
        diff nor file blocks, or it touches a protected path), else None."""
        components = {name: Component(0.0, 1.0) for name in SWE_WEIGHTS}
        try:
            touched = touched_paths(patch)
        except (PatchError, WorkspaceError) as exc:
            return self._patch_failure(instance, components, str(exc))
        protected = self._protected(instance)
        tampered = [p for p in touched if is_protected(p, protected)]
        if tampered:
            return self._tampered(instance, components, tampered)
        return None

    def _tampered(
        self, instance: SweInstance, components: dict[str, Component], paths: list[str], what: str = ""
    ) -> Verdict:
        components["patch"] = Component(0.0, 1.0, "edits tests: " + what + ", ".join(paths[:5]))
        return Verdict(
            task_id=instance.instance_id,
            reward=0.0,
            components=components,
            gates=["patch"],
            feedback=f"the patch edits test files ({what}{', '.join(paths[:5])}); tests are read-only",
            flags=["protected_path_edit", "test_tamper"],
        )

    def grade(self, instance: SweInstance, patch: str) -> Verdict:
        started = time.perf_counter()
        decided = self.decided_without_running(instance, patch)
        if decided is not None:
            return decided
        components = {name: Component(0.0, 1.0) for name in SWE_WEIGHTS}
        touched = touched_paths(patch)
        workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
        try:
            tree = workdir / "repo"
            tree.mkdir()
            try:
                export_commit(instance.repo_dir, instance.base_commit, tree)
            except (InstanceError, OSError, tarfile.TarError, subprocess.TimeoutExpired) as exc:
                return Verdict.failure(
                    instance.instance_id, f"cannot export the base commit: {exc}", fault="task"
                )
            configs = {path: pytest_view(tree, path) for path in touched if is_shared_config(path)}
            try:
                apply_to_tree(tree, patch)
            except (PatchError, WorkspaceError, OSError) as exc:
                return self._patch_failure(instance, components, str(exc))
            reconfigured = changed_configuration(configs, tree)
            if reconfigured:
                return self._tampered(instance, components, reconfigured, "pytest's configuration in ")
            components["patch"] = Component(1.0, 1.0, f"{len(touched)} file(s) changed")
            if instance.test_patch:
                try:
                    apply_to_tree(tree, instance.test_patch)
                except (PatchError, WorkspaceError, OSError) as exc:
                    return Verdict.failure(
                        instance.instance_id, f"the instance's test_patch does not apply: {exc}", fault="task"
                    )
            return self._run_tests(instance, tree, components, started)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def connect(self) -> None:
        """Reach the docker engine now rather than at the first test run (SandboxUnavailable, saying
        why, if none answers or the docker SDK is missing)."""
        from rlvr.sandbox.docker_backend import docker_client

        if self._client is None:
            self._client = docker_client()

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:
                pass

    def _protected(self, instance: SweInstance) -> tuple[str, ...]:
        named = list(instance.test_files)
        if instance.test_patch:
            try:
                named += touched_paths(instance.test_patch)
            except PatchError:
                pass
        return TEST_PATTERNS + tuple(named) + self.extra_protected

    def _patch_failure(self, instance: SweInstance, components: dict[str, Component], reason: str) -> Verdict:
        components["patch"] = Component(0.0, 1.0, reason[:300])
        return Verdict(
            task_id=instance.instance_id,
            reward=0.0,
            components=components,
            gates=["patch"],
            feedback=f"the patch does not apply: {reason[:300]}",
        )

    def _run_tests(
        self, instance: SweInstance, tree: Path, components: dict[str, Component], started: float
    ) -> Verdict:
        from rlvr.sandbox import SandboxUnavailable
        from rlvr.sandbox.docker_backend import docker_client, run_once
        from rlvr.sandbox.view import runtime_view

        nonce = secrets.token_hex(16)
        command = [
            runtime_view().interpreter,
            "-B",
            "-m",
            "pytest",
            "-p",
            PLUGIN_MODULE,
            "-p",
            "no:cacheprovider",
            "-q",
            "--tb=no",
            f"--rootdir={CONTAINER_REPO}",
            *instance.test_files,
        ]
        environment = {
            "PYTHONPATH": f"{CONTAINER_LIBS}:{CONTAINER_LIBS}/site:{CONTAINER_REPO}",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": "/tmp",
            "RLVR_REPORT_NONCE": nonce,
        }
        try:
            if self._client is None:
                self._client = docker_client()
            result = run_once(
                command,
                binds=[(str(tree), CONTAINER_REPO), *pytest_binds()],
                environment=environment,
                working_dir=CONTAINER_REPO,
                timeout=self.timeout,
                image=self.image,
                runtime=self.runtime,
                mem_mb=self.mem_mb,
                cpus=self.cpus,
                client=self._client,
            )
        except SandboxUnavailable as exc:
            return Verdict.failure(
                instance.instance_id, f"docker backend unavailable: {exc}", fault="sandbox"
            )
        flags = [UNTRUSTED]
        outcomes = parse_report(result.stdout, nonce)
        if outcomes is None:
            flags.append("timeout:tests" if result.timed_out else "crash:tests")
            outcomes = {}
        f2p = [i for i in instance.fail_to_pass if outcomes.get(i) == "passed"]
        p2p = [i for i in instance.pass_to_pass if outcomes.get(i) == "passed"]
        missing = [i for i in (*instance.fail_to_pass, *instance.pass_to_pass) if outcomes.get(i) != "passed"]
        components["fail_to_pass"] = Component(
            len(f2p) / len(instance.fail_to_pass), 1.0, f"{len(f2p)}/{len(instance.fail_to_pass)}"
        )
        components["pass_to_pass"] = Component(
            len(p2p) / len(instance.pass_to_pass) if instance.pass_to_pass else 1.0,
            1.0,
            f"{len(p2p)}/{len(instance.pass_to_pass)}",
        )
        resolved = not missing
        gates = [name for name in ("fail_to_pass", "pass_to_pass") if components[name].fraction < 1.0]
        feedback = (
            "every FAIL_TO_PASS and PASS_TO_PASS test passed"
            if resolved
            else "not passing: " + ", ".join(f"{i} ({outcomes.get(i, 'not run')})" for i in missing[:5])
        )
        return Verdict(
            task_id=instance.instance_id,
            reward=1.0 if resolved else 0.0,
            passed=resolved,
            components=components,
            gates=gates,
            feedback=feedback,
            timings={"tests": result.seconds, "total": time.perf_counter() - started},
            flags=flags,
        )
