"""The repository task format: a pack directory holding `pack.toml` (family "repo"), `repos/<name>/`
(each a reference repository, read as text files) and `tasks.jsonl`, one task a line:

    {"id": "...", "prompt": "<the issue text>", "repo": "<name under repos/>",
     "base_edits": {"path": "full new text" | null}, "reference_edits": {...},
     "scenarios": [{"kind": "call" | "object" | "cli" | "sqlite", "target": "pkg.module:attr", ...}],
     "domains": [{"target": "pkg.module:function", "args": [strategy, ...], "examples": 20, "seed": 0}],
     "perf": [{"kind": ..., "target": ..., ...}],
     "protected": ["glob", ...], "difficulty": 1-5, "split": "train" | "test", "meta": {...},
     "notes": {...}}

`meta` is public (it appears in observations and logs); `notes` (how the task was made, e.g. where a
bug was injected) is hidden like the scenarios.

`domains` (optional) declares the inputs of public functions; hypothesis turns each into more hidden
call scenarios (see `rlvr/specs/repo_domains.py`; the `concat` strategy — a fixed prefix, then a random
body — is new in issue 31: older readers reject it, every other line reads as before).

The grader derives more hidden checks from these (CLI arity and unknown flags, call arity/None/boundary
variants, `absent` checks for names the reference removed, migrations twice and past every version; see
`rlvr/graders/repo/checks.py`); nothing in the format changes for them.

`perf` (optional) lists scenarios (same kinds) run with counted operations on the candidate and on the
reference state; large inputs are written with `{"$repeat": N, "each": TEMPLATE}` list items (see
`rlvr/specs/repo_perf.py`). Perf is scored, never a gate.

The base state (what the agent starts from) is the repository with `base_edits` applied; the
reference end state is the repository with `reference_edits` applied (null deletes a file). The
scenarios, the reference state and `protected` are the hidden spec: they never reach an observation.
Every problem is reported with file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlvr.core.pack import Problem
from rlvr.core.types import Task
from rlvr.specs.repo_domains import check_domain
from rlvr.specs.repo_paths import DEFAULT_PROTECTED, is_protected
from rlvr.specs.repo_perf import PerfSpecError, expand_perf
from rlvr.task_packs.task_lines import read_task_lines

SCENARIO_KINDS = ("call", "object", "cli", "sqlite")
MAX_REPO_FILES = 200
MAX_REPO_FILE_CHARS = 200_000
TEXT_SUFFIXES = (".py", ".sql", ".txt", ".md", ".toml", ".cfg", ".ini", ".json", ".csv")


def bad_path(path: object) -> str | None:
    """Why `path` is not a valid repository-relative path, or None."""
    if not isinstance(path, str) or not path:
        return "must be a non-empty string"
    if path.startswith("/") or "\\" in path or "\0" in path:
        return f"{path!r} must be relative, '/'-separated, without NUL"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return f"{path!r} has an empty, '.' or '..' part"
    return None


def read_repo(root: Path) -> dict[str, str]:
    """Every text file under `root` as {relative posix path: text}, skipping caches."""
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink() or "__pycache__" in path.parts:
            continue
        if path.suffix not in TEXT_SUFFIXES:
            continue
        files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return files


def apply_edits(files: dict[str, str], edits: dict[str, str | None]) -> dict[str, str]:
    out = dict(files)
    for path, text in edits.items():
        if text is None:
            out.pop(path, None)
        else:
            out[path] = text
    return out


def _check_target(target: object) -> str | None:
    if not isinstance(target, str):
        return "target must be a string like 'pkg.module:function'"
    module, sep, attribute = target.partition(":")
    if (
        not sep
        or not all(p.isidentifier() for p in module.split("."))
        or not all(p.isidentifier() for p in attribute.split("."))
    ):
        return f"target {target!r} must look like 'pkg.module:function' or 'pkg.module:Class'"
    return None


def check_scenario(scenario: object) -> str | None:
    """Why a scenario is malformed, or None."""
    if not isinstance(scenario, dict):
        return "must be an object"
    kind = scenario.get("kind")
    if kind not in SCENARIO_KINDS:
        return f"kind must be one of {', '.join(SCENARIO_KINDS)}"
    problem = _check_target(scenario.get("target"))
    if problem:
        return problem
    if not isinstance(scenario.get("args", []), list):
        return "args must be a list"
    if kind == "object":
        steps = scenario.get("steps", [])
        if not isinstance(steps, list) or not all(
            isinstance(s, list) and len(s) == 2 and isinstance(s[0], str) and isinstance(s[1], list)
            for s in steps
        ):
            return 'steps must be a list of ["method", [args]]'
    if kind == "cli" and not (
        isinstance(scenario.get("argv"), list) and all(isinstance(a, str) for a in scenario["argv"])
    ):
        return "a cli scenario needs argv: a list of strings"
    if kind == "sqlite":
        for name in ("seed_sql", "queries"):
            value = scenario.get(name, [])
            if not isinstance(value, list) or not all(isinstance(q, str) for q in value):
                return f"{name} must be a list of SQL strings"
    return None


def _check_edits(value: object, name: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [(name, "must be an object {path: text or null}")]
    problems = []
    for path, text in value.items():
        reason = bad_path(path)
        if reason:
            problems.append((name, f"path {reason}"))
        elif text is not None and not isinstance(text, str):
            problems.append((name, f"{path}: must be the file's full text or null"))
    return problems


def check_line(line: dict[str, Any], repos: dict[str, dict[str, str]]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    repo = line.get("repo")
    if not isinstance(repo, str) or not repo:
        problems.append(("repo", "missing: the name of a directory under repos/"))
    elif repo not in repos:
        known = ", ".join(sorted(repos)) or "none"
        problems.append(("repo", f"no repository {repo!r} under repos/ (found: {known})"))
    problems += _check_edits(line.get("base_edits"), "base_edits")
    problems += _check_edits(line.get("reference_edits"), "reference_edits")
    scenarios = line.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        problems.append(("scenarios", "a repo task needs a non-empty list of hidden scenarios"))
    else:
        for index, scenario in enumerate(scenarios):
            reason = check_scenario(scenario)
            if reason:
                problems.append((f"scenarios[{index}]", reason))
    domains = line.get("domains", [])
    if not isinstance(domains, list):
        problems.append(("domains", "must be a list of input domains (see rlvr/specs/repo_domains.py)"))
    else:
        for index, domain in enumerate(domains):
            reason = check_domain(domain) or _check_target(domain.get("target"))
            if reason:
                problems.append((f"domains[{index}]", reason))
    perf = line.get("perf", [])
    if not isinstance(perf, list):
        problems.append(("perf", "must be a list of scenarios (see rlvr/specs/repo_perf.py)"))
    else:
        for index, scenario in enumerate(perf):
            try:
                reason = check_scenario(expand_perf(scenario))
            except PerfSpecError as exc:
                reason = str(exc)
            if reason:
                problems.append((f"perf[{index}]", reason))
    protected = line.get("protected", [])
    if not isinstance(protected, list) or not all(isinstance(p, str) for p in protected):
        problems.append(("protected", "must be a list of glob patterns"))
    if not problems and isinstance(repo, str):
        base = apply_edits(repos[repo], line.get("base_edits") or {})
        reference = apply_edits(repos[repo], line.get("reference_edits") or {})
        patterns = DEFAULT_PROTECTED + tuple(protected)
        touched = sorted(p for p in set(base) | set(reference) if base.get(p) != reference.get(p))
        if not touched:
            problems.append(("reference_edits", "the reference state equals the base state: nothing to do"))
        blocked = [p for p in touched if is_protected(p, patterns)]
        if blocked:
            problems.append(
                (
                    "reference_edits",
                    f"base and reference differ in protected paths ({', '.join(blocked[:3])}): unsolvable",
                )
            )
        for path, text in reference.items():
            if path.endswith(".py"):
                try:
                    compile(text, path, "exec")
                except SyntaxError as exc:
                    problems.append(
                        ("reference_edits", f"{path} does not compile: {exc.msg} (line {exc.lineno})")
                    )
    return problems


def read_repos(root: Path) -> tuple[dict[str, dict[str, str]], list[Problem]]:
    repos_dir = root / "repos"
    if not repos_dir.is_dir():
        return {}, [
            Problem(str(repos_dir), None, None, "missing: a repo pack needs repos/<name>/ directories")
        ]
    repos: dict[str, dict[str, str]] = {}
    problems: list[Problem] = []
    for directory in sorted(p for p in repos_dir.iterdir() if p.is_dir()):
        try:
            files = read_repo(directory)
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(str(directory), None, None, f"cannot read: {exc}"))
            continue
        if not files or len(files) > MAX_REPO_FILES:
            problems.append(
                Problem(str(directory), None, None, f"must hold 1 to {MAX_REPO_FILES} text files")
            )
            continue
        for path, text in files.items():
            if len(text) > MAX_REPO_FILE_CHARS:
                problems.append(Problem(str(directory / path), None, None, "file too large"))
        repos[directory.name] = files
    return repos, problems


def read_repo_tasks(root: Path) -> tuple[list[Task], list[Problem]]:
    """The tasks of a repo pack directory and every problem found (file, line, field)."""
    repos, problems = read_repos(root)

    def hidden(line: dict[str, Any]) -> dict[str, Any]:
        files = repos[line["repo"]]
        return {
            "repo": line["repo"],
            "base": apply_edits(files, line.get("base_edits") or {}),
            "reference": apply_edits(files, line.get("reference_edits") or {}),
            "scenarios": line["scenarios"],
            "domains": list(line.get("domains") or []),
            "perf": [expand_perf(scenario) for scenario in line.get("perf") or []],
            "protected": list(line.get("protected") or []),
            "notes": line.get("notes"),
        }

    def public_meta(line: dict[str, Any]) -> dict[str, Any]:
        return {"repo": line["repo"], **dict(line.get("meta") or {})}

    tasks, line_problems = read_task_lines(
        root / "tasks.jsonl", "repo", lambda line: check_line(line, repos), hidden, public_meta
    )
    return tasks, problems + line_problems


def _register() -> None:
    from rlvr.task_packs.directory import DIRECTORY_READERS

    DIRECTORY_READERS["repo"] = read_repo_tasks


_register()
