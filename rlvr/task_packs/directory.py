"""Directory packs: `pack.toml` (name, family, version, description, optional language, [weights],
[options]) plus `tasks.jsonl`, one task a line. Every problem is reported with file, line and field.

A code pack with `language = "typescript"` (its name then contains `typescript` or ends in `-ts`) keeps
the Python `reference` and `check`/`tests` as the trusted oracle; candidates are TypeScript, the prompt
shows the TypeScript signature, and a line may add `ts_reference` (TypeScript, for the perf layer) and
`forbid_any` (default true)."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rlvr.core.pack import PUBLIC_FIELDS, Problem, TaskPack
from rlvr.core.types import FAMILIES, Task
from rlvr.specs.programs import ProgramSpecError, parse_spec
from rlvr.task_packs.task_lines import need_str, read_task_lines

LANGUAGES = ("python", "typescript")


class PackValidationError(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


# family -> function(line dict) -> list of (field, message). Families register their own schema.
Checker = Callable[[dict[str, Any]], list[tuple[str, str]]]
TASK_CHECKERS: dict[str, Checker] = {}
# family -> function(line dict) -> hidden spec dict (everything the policy must not see)
HiddenBuilder = Callable[[dict[str, Any]], dict[str, Any]]
HIDDEN_BUILDERS: dict[str, HiddenBuilder] = {}
# family -> function(pack root) -> (tasks, problems), for families that read more than tasks.jsonl
# (a reader that takes a second argument gets the grader-side `prover` line check, see read_tasks)
DIRECTORY_READERS: dict[str, Callable[..., tuple[list[Task], list[Problem]]]] = {}


def register_family_schema(family: str, checker: Checker, hidden: HiddenBuilder) -> None:
    TASK_CHECKERS[family] = checker
    HIDDEN_BUILDERS[family] = hidden


def _check_program(line: dict[str, Any]) -> list[tuple[str, str]]:
    try:
        parse_spec({"program": line["program"]})
    except ProgramSpecError as exc:
        return [("program", str(exc))]
    return []


def _check_code(line: dict[str, Any]) -> list[tuple[str, str]]:
    if "program" in line:  # a whole program on stdin/stdout, or call-based with expected outputs
        return _check_program(line)
    problems = need_str(line, "entry_point") + need_str(line, "reference")
    tests, check = line.get("tests"), line.get("check")
    if tests is None and check is None:
        problems.append(("tests", 'a code task needs `tests` (list of {"args": [...]}) or `check` code'))
    if tests is not None:
        if not isinstance(tests, list) or not all(
            isinstance(t, dict) and isinstance(t.get("args"), list) for t in tests
        ):
            problems.append(("tests", 'must be a list of objects like {"args": [1, 2]}'))
    if check is not None and not isinstance(check, str):
        problems.append(("check", "must be Python source defining check(candidate)"))
    if "ts_reference" in line and not isinstance(line["ts_reference"], str):
        problems.append(("ts_reference", "must be TypeScript source defining the entry point"))
    if "forbid_any" in line and not isinstance(line["forbid_any"], bool):
        problems.append(("forbid_any", "must be true or false"))
    for name in ("reference", "check"):
        source = line.get(name)
        if isinstance(source, str):
            try:
                compile(source, f"<{name}>", "exec")
            except SyntaxError as exc:
                problems.append((name, f"does not compile: {exc.msg} (line {exc.lineno})"))
    return problems


def _hidden_code(line: dict[str, Any]) -> dict[str, Any]:
    if "program" in line:
        return {"program": line["program"]}
    return {
        "entry_point": line["entry_point"],
        "reference": line["reference"],
        "check": line.get("check"),
        "calls": [tuple(t["args"]) for t in line.get("tests") or []],
        "mode": line.get("mode", "hidden"),
        # TypeScript packs (language = "typescript"): the reference and check stay Python (the oracle)
        **{key: line[key] for key in ("ts_reference", "forbid_any") if key in line},
    }


def _check_math(line: dict[str, Any]) -> list[tuple[str, str]]:
    answer = line.get("answer")
    if answer is None:
        return [("answer", "missing (required)")]
    if not isinstance(answer, str | int | float):
        return [("answer", "must be a string or a number")]
    return []


def _hidden_math(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in PUBLIC_FIELDS}


register_family_schema("code", _check_code, _hidden_code)
register_family_schema("math", _check_math, _hidden_math)


def _ensure_family_schemas() -> None:
    """Import the modules of families that register their schema on import (they import this one)."""
    import rlvr.task_packs.repo_tasks.format
    import rlvr.task_packs.schemas  # noqa: F401


def read_manifest(root: Path) -> tuple[dict[str, Any], list[Problem]]:
    manifest_path = root / "pack.toml"
    if not manifest_path.is_file():
        return {}, [Problem(str(manifest_path), None, None, "missing: a pack directory needs pack.toml")]
    try:
        manifest = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return {}, [Problem(str(manifest_path), None, None, f"not valid TOML: {exc}")]
    problems = []
    for name in ("name", "family"):
        if not isinstance(manifest.get(name), str) or not manifest.get(name):
            problems.append(Problem(str(manifest_path), None, name, "missing or not a string (required)"))
    language = manifest.get("language", "python")
    if language not in LANGUAGES:
        problems.append(
            Problem(str(manifest_path), None, "language", f"must be one of {', '.join(LANGUAGES)}")
        )
    elif language == "typescript":
        name = str(manifest.get("name") or "")
        if manifest.get("family") != "code":
            problems.append(Problem(str(manifest_path), None, "language", "typescript is for code packs"))
        if "typescript" not in name and not name.endswith("-ts"):
            problems.append(
                Problem(
                    str(manifest_path),
                    None,
                    "name",
                    "a TypeScript pack's name contains `typescript` or ends in `-ts`",
                )
            )
    family = manifest.get("family")
    if isinstance(family, str) and family not in FAMILIES:
        problems.append(Problem(str(manifest_path), None, "family", f"must be one of {', '.join(FAMILIES)}"))
    weights = manifest.get("weights")
    if weights is not None and (
        not isinstance(weights, dict)
        or not all(isinstance(v, int | float) and v >= 0 for v in weights.values())
    ):
        problems.append(
            Problem(str(manifest_path), None, "weights", "must be a table of non-negative numbers")
        )
    return manifest, problems


def read_tasks(root: Path, family: str, prover: Checker | None = None) -> tuple[list[Task], list[Problem]]:
    """The tasks of a pack directory and every problem found. `prover` (a check that needs the
    family's grader, e.g. replaying a reference) runs on each line whose format is sound."""
    _ensure_family_schemas()
    if family in DIRECTORY_READERS:  # families whose tasks need more of the directory than tasks.jsonl
        reader = DIRECTORY_READERS[family]
        return reader(root) if prover is None else reader(root, prover)
    checker = TASK_CHECKERS.get(family)
    builder = HIDDEN_BUILDERS.get(family)
    if checker is None or builder is None:
        return [], [Problem(str(root / "pack.toml"), None, "family", f"no task schema for family {family!r}")]
    if prover is not None:
        checker = _then(checker, prover)
    return read_task_lines(root / "tasks.jsonl", family, checker, builder)


def _then(checker: Checker, prover: Checker) -> Checker:
    return lambda line: checker(line) or prover(line)


def validate_directory(root: str | Path, provers: dict[str, Checker] | None = None) -> list[Problem]:
    """Every problem of a pack directory. `provers` (family -> line check) add the checks that need a
    grader: the layer above passes them in (`rlvr packs validate`), this data layer imports none."""
    root = Path(root)
    if not root.is_dir():
        return [Problem(str(root), None, None, "not a directory")]
    manifest, problems = read_manifest(root)
    if manifest.get("family") in FAMILIES:
        family = manifest["family"]
        problems += read_tasks(root, family, (provers or {}).get(family))[1]
    return problems


class DirectoryPack(TaskPack):
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        manifest, problems = read_manifest(self.root)
        if problems:
            raise PackValidationError(problems)
        self.name = str(manifest["name"])
        self.family = str(manifest["family"])
        self.language = str(manifest.get("language", "python"))
        self.version = str(manifest.get("version", "1"))
        self.description = str(manifest.get("description", ""))
        self.weights = (
            {str(k): float(v) for k, v in manifest["weights"].items()} if "weights" in manifest else None
        )
        self.options = dict(manifest.get("options") or {})
        super().__init__()

    def _load(self) -> Iterable[Task]:
        tasks, problems = read_tasks(self.root, self.family)
        if problems:
            raise PackValidationError(problems)
        return tasks
