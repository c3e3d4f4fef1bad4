"""The project's environment at mine time: its declared dependencies installed once into a prefix,
and its pytest suite run on a working copy of a repository state.

The suite runs in a child interpreter of its own (real pytest needs the file system, which the grading
sandbox denies), on a fresh copy in a temporary directory, with a scratch HOME, no network where the
kernel lets us drop it (`unshare -n`), and a wall-clock limit. This is the user's own project run at
mine time, like `pip install` runs it; no candidate's code ever runs here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PLUGIN_DIR = Path(__file__).parent / "plugin"
PLUGIN = "rlvr_mining_plugin"
DRIVER_PATH = Path(__file__).resolve().parents[1] / "graders" / "repo" / "child_driver.py"
RLVR_ROOT = Path(__file__).resolve().parents[2]


class ProjectEnvironmentError(RuntimeError):
    """The project's environment cannot be set up; the message says what failed and what to do."""


@dataclass
class SuiteRun:
    """One pytest run: each test's outcome by node id, and the run's own error text if it broke."""

    outcomes: dict[str, str] = field(default_factory=dict)
    returncode: int = 0
    output: str = ""
    timed_out: bool = False

    @property
    def failing(self) -> list[str]:
        return sorted(n for n, o in self.outcomes.items() if o in ("failed", "error"))

    @property
    def passing(self) -> list[str]:
        return sorted(n for n, o in self.outcomes.items() if o == "passed")


def install_requirements(requirements: list[str], prefix: Path, pure_only: bool = True) -> list[str]:
    """Install `requirements` (with their own dependencies) into `prefix`; the installed
    distributions as `name==version`. With `pure_only` (a prefix the sandbox mounts), extension
    modules are refused: the sandbox imports pure Python only."""
    prefix.mkdir(parents=True, exist_ok=True)
    if not requirements:
        return []
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--target",
        str(prefix),
        *requirements,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise ProjectEnvironmentError(
            f"cannot install the project's dependencies {requirements}: {done.stderr.strip()[-1500:]}\n"
            "Install problems are the project's: check its declared dependencies, or mine with --no-deps "
            "if it imports without them."
        )
    compiled = sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*") if p.suffix in (".so", ".pyd"))
    if compiled and pure_only:
        raise ProjectEnvironmentError(
            f"the dependencies hold compiled extension modules ({', '.join(compiled[:5])}); "
            "the sandbox imports pure Python only"
        )
    installed = []
    for info in sorted(prefix.glob("*.dist-info")):
        stem = info.name[: -len(".dist-info")]
        name, _, version = stem.partition("-")
        installed.append(f"{name}=={version}")
    return installed


def write_tree(files: dict[str, str], root: Path) -> Path:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def _network_free() -> list[str]:
    """A command prefix that runs the rest in a new network namespace with only loopback up (tests
    that open local sockets still work; nothing leaves the machine), or [] where that is not allowed."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        return []
    prefix = [unshare, "-n", "sh", "-c", f'"{ip}" link set lo up && exec "$0" "$@"']
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
    return prefix if probe.returncode == 0 else []


NETWORK_FREE: list[list[str]] = []


def run_suite(
    files: dict[str, str],
    targets: list[str],
    deps: Path | list[Path] | None,
    timeout: float,
    trace: dict[str, str] | None = None,
    stop_at_first_failure: bool = False,
    test_timeout: float = 20.0,
    deselect: list[str] | None = None,
    select: Path | None = None,
) -> SuiteRun:
    """Run pytest on `targets` (paths or node ids) of a copy of `files`. With `trace` (the tracer's
    settings: package, output file), the plugin records the tests' calls into the package. With
    `select` (a JSON list of node ids), only the collected tests it names run (ids it names that are
    not collected are ignored, unlike node ids given on the command line)."""
    if not NETWORK_FREE:
        NETWORK_FREE.append(_network_free())
    with tempfile.TemporaryDirectory(prefix="rlvr-mine-") as scratch:
        repo = write_tree(files, Path(scratch) / "repo")
        home = Path(scratch) / "home"
        home.mkdir()
        report = Path(scratch) / "report.jsonl"
        prefixes = [deps] if isinstance(deps, Path) else deps or []
        paths = [str(repo), str(PLUGIN_DIR), str(RLVR_ROOT)] + [str(prefix) for prefix in prefixes]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join(paths),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "RLVR_MINE_REPORT": str(report),
            "RLVR_MINE_DRIVER": str(DRIVER_PATH),
            "RLVR_MINE_TEST_TIMEOUT": str(test_timeout),
        }
        if select is not None:
            env["RLVR_MINE_SELECT"] = str(select)
        if trace:
            env |= {f"RLVR_TRACE_{key.upper()}": value for key, value in trace.items()}
        command = [
            *NETWORK_FREE[0],
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            PLUGIN,
            "-o",
            "addopts=",
            "-o",
            "python_files=test_*.py *_test.py test.py",
            "--rootdir",
            str(repo),
            "--import-mode=prepend",
            "-W",
            "ignore",
            # pytest's assertion rewriting re-parses and recompiles every test file (and this plugin)
            # on each run: most of a short run's CPU (1.3 of 1.8 s on one 1,000-line test file);
            # outcomes are the same with plain asserts, only failure messages are shorter
            "--assert=plain",
            # a test file that does not import (a missing test dependency) is reported, and the
            # rest of the suite still runs
            "--continue-on-collection-errors",
        ]
        if stop_at_first_failure:
            command.append("-x")
        # a whole file (one that did not collect) is left out: deselecting comes after collection
        left_out = {nodeid for nodeid in deselect or [] if "::" not in nodeid}
        for nodeid in deselect or []:
            command += ["--deselect", nodeid] if "::" in nodeid else [f"--ignore={nodeid}"]
        command += [target for target in targets if target.split("::", 1)[0] not in left_out]
        try:
            done = subprocess.run(
                command, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout, check=False
            )
            run = SuiteRun(returncode=done.returncode, output=(done.stdout + done.stderr)[-4000:])
        except subprocess.TimeoutExpired:
            run = SuiteRun(returncode=-1, output=f"the suite ran past {timeout:.0f}s", timed_out=True)
        if report.is_file():
            for line in report.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                previous = run.outcomes.get(entry["nodeid"])
                if previous not in ("failed", "error"):
                    run.outcomes[entry["nodeid"]] = entry["outcome"]
        return run
