"""The hidden checks of a repository task beyond its listed scenarios, and how outcomes are compared.

Derived in the trusted process from trusted data only (the task's scenarios, base and reference
states), deterministically, within `MAX_DERIVED_CHECKS` per task:

- **CLI domain**: every command line a scenario runs, again with an unknown flag, an extra argument
  and its last argument dropped (a command that accepts what the reference rejects, or the reverse,
  differs in exit status or output).
- **Annotated domain**: every public function the reference changes, called over values its parameters'
  annotations admit (`int`, `str`, `bool`, `float`, `list[int]`, `list[str]`: boundaries and ordinary values).
- **Call domain**: every call a scenario makes, again with one argument more and one fewer (arity),
  each argument replaced by None (what the reference rejects must still be rejected: errors are not
  swallowed), integers at n - 1, n + 1 and 0 (boundaries) and strings padded with spaces and in
  upper case (normalisation neither added nor dropped).
- **API surface**: every top-level name of a base module that the reference removed (a rename, a
  dropped alias) is an `absent` check: the name must not resolve in the candidate.
- **Migrations twice and from a later version**: every sqlite scenario again with the migration run
  twice on one database, and on its database marked as already past every version
  (`PRAGMA user_version = 1000`): a migration that ignores the schema version differs there.

Comparison (`agrees`): plain data as `rlvr.graders.repo.runner.same_value` compares it, except that an
exception whose type name the agent cannot see (it appears neither in the issue text nor anywhere in
the base repository) only has to be raised, of any type: the reference's exact exception is not a
behaviour the agent was shown.

Scoring (`progress`): the checks the base state already passes are regression guards; only the checks
it fails measure progress, so a no-op earns nothing for the many checks it already passes.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from rlvr.graders.repo.runner import same_value

MAX_DERIVED_CHECKS = 120
UNKNOWN_FLAG = "--rlvr-unknown-option"
EXTRA_ARGUMENT = "rlvr-extra-argument"
ANY_EXCEPTION = "<an exception>"
FUTURE_VERSION = "PRAGMA user_version = 1000"
WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _module_of(path: str) -> str | None:
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        path.startswith("tests/")
        or "/tests/" in path
        or name == "conftest.py"
        or name.startswith("test_")
        or name.endswith("_test.py")
    )


def top_level_names(source: str) -> set[str]:
    """Public names a module defines at top level (functions, classes, assignments, imports)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return {name for name in names if not name.startswith("_")}


def removed_names(base: dict[str, str], reference: dict[str, str]) -> list[str]:
    """Targets `module:name` the base defines at top level and the reference no longer does."""
    targets: list[str] = []
    for path in sorted(base):
        module = _module_of(path)
        if module is None or is_test_path(path):
            continue
        before = top_level_names(base[path])
        after = top_level_names(reference[path]) if path in reference else set()
        targets += [f"{module}:{name}" for name in sorted(before - after)]
    return targets


def added_names(
    base: dict[str, str], reference: dict[str, str], files: dict[str, str], changed: list[str]
) -> list[str]:
    """Top-level public names (`module:name`) a changed module of `files` defines that neither the base
    nor the reference state defines there: API surface the task did not ask for (reported, not scored)."""
    found: list[str] = []
    for path in changed:
        module = _module_of(path)
        if module is None or is_test_path(path) or path not in files:
            continue
        known = top_level_names(base.get(path, "")) | top_level_names(reference.get(path, ""))
        found += [f"{module}:{name}" for name in sorted(top_level_names(files[path]) - known)]
    return found


ANNOTATION_VALUES: dict[str, list[Any]] = {
    "int": [0, 1, -1, 7, 100],
    "str": ["", "a", " Hello World "],
    "bool": [True, False],
    "float": [0.0, 1.5, -2.25],
    "list[int]": [[], [3, 1, 2]],
    "list[str]": [[], ["b", "a", "b"]],
}
MAX_ANNOTATION_CALLS = 12  # per function


def _parameter_values(function: ast.FunctionDef) -> list[list[Any]] | None:
    """Values for each parameter from its annotation, or None if one is not a kind we generate."""
    arguments = function.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        return None
    values: list[list[Any]] = []
    for argument in arguments.args:
        annotation = ast.unparse(argument.annotation) if argument.annotation is not None else None
        if annotation not in ANNOTATION_VALUES:
            return None
        values.append(ANNOTATION_VALUES[annotation])
    return values if values else None


def touched_functions(base: dict[str, str], reference: dict[str, str]) -> list[tuple[str, ast.FunctionDef]]:
    """(module, function) for every public top-level function the reference defines differently from
    the base state (or newly): the functions the task touches."""
    found: list[tuple[str, ast.FunctionDef]] = []
    for path in sorted(reference):
        module = _module_of(path)
        if module is None or is_test_path(path) or base.get(path) == reference[path]:
            continue
        try:
            after, before = ast.parse(reference[path]), ast.parse(base.get(path, ""))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        old = {n.name: ast.dump(n) for n in before.body if isinstance(n, ast.FunctionDef)}
        for node in after.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                if old.get(node.name) != ast.dump(node):
                    found.append((module, node))
    return found


def annotation_checks(base: dict[str, str], reference: dict[str, str]) -> list[dict[str, Any]]:
    """Calls of every touched function over values its parameters' annotations admit (boundaries and
    ordinary values), at most MAX_ANNOTATION_CALLS per function, spread over the combinations."""
    checks: list[dict[str, Any]] = []
    for module, function in touched_functions(base, reference):
        values = _parameter_values(function)
        if values is None:
            continue
        combinations = list(itertools.product(*values))
        step = max(1, len(combinations) // MAX_ANNOTATION_CALLS)
        for args in combinations[::step][:MAX_ANNOTATION_CALLS]:
            checks.append(
                {
                    "kind": "call",
                    "target": f"{module}:{function.name}",
                    "args": list(args),
                    "derived": "call-domain",
                }
            )
    return checks


def _cli_variants(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    argv = list(scenario.get("argv") or [])
    variants = [argv + [UNKNOWN_FLAG], argv + [EXTRA_ARGUMENT]]
    if argv:
        variants.append(argv[:-1])
    return [
        {"kind": "cli", "target": scenario["target"], "argv": v, "derived": "cli-domain"} for v in variants
    ]


def _value_variants(value: Any) -> list[Any]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        return [value - 1, value + 1, 0]
    if isinstance(value, str) and value:
        return [f"  {value}  ", value.upper()]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return [[f" {item} " for item in value], [item.upper() for item in value]]
    return []


def _call_variants(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    args = list(scenario.get("args") or [])
    kwargs = dict(scenario.get("kwargs") or {})
    variants: list[list[Any]] = [args + [None]]
    if args:
        variants.append(args[:-1])
    for index, value in enumerate(args):
        variants.append(args[:index] + [None] + args[index + 1 :])
        variants += [args[:index] + [v] + args[index + 1 :] for v in _value_variants(value)]
    return [
        {"kind": "call", "target": scenario["target"], "args": v, "kwargs": kwargs, "derived": "call-domain"}
        for v in variants
    ]


def derived_checks(
    scenarios: list[dict[str, Any]], base: dict[str, str], reference: dict[str, str]
) -> list[dict[str, Any]]:
    """The derived hidden checks of a task (see the module docstring), without duplicates of each
    other or of `scenarios`, at most MAX_DERIVED_CHECKS; API-surface and migration checks first."""
    seen = {json.dumps(s, sort_keys=True) for s in scenarios}
    ordered: list[dict[str, Any]] = [
        {"kind": "absent", "target": target, "derived": "api-surface"}
        for target in removed_names(base, reference)
    ]
    migrations = [s for s in scenarios if s.get("kind") == "sqlite"]
    ordered += [{**s, "repeat": 2, "derived": "migration-twice"} for s in migrations]
    # a database already past every known version: a migration that reads the version leaves it be
    ordered += [
        {**s, "seed_sql": [*s.get("seed_sql", []), FUTURE_VERSION], "derived": "migration-future"}
        for s in migrations
    ]
    domain: list[dict[str, Any]] = annotation_checks(base, reference)
    for scenario in scenarios:
        if scenario.get("generated"):
            continue
        if scenario.get("kind") == "cli":
            domain += _cli_variants(scenario)
        elif scenario.get("kind") == "call":
            domain += _call_variants(scenario)
    out: list[dict[str, Any]] = []
    for check in ordered + domain:
        key = json.dumps({k: v for k, v in check.items() if k != "derived"}, sort_keys=True)
        if key in seen or json.dumps(check, sort_keys=True) in seen:
            continue
        seen.add(key)
        out.append(check)
        if len(out) >= MAX_DERIVED_CHECKS:
            break
    return out


def visible_words(prompt: str, base: dict[str, str]) -> frozenset[str]:
    """Every identifier the agent can read: the issue text and the whole base repository."""
    words = set(WORD.findall(prompt))
    for text in base.values():
        words.update(WORD.findall(text))
    return frozenset(words)


def _relax(want: Any, got: Any, visible: frozenset[str], depth: int = 0) -> tuple[Any, Any]:
    """(want, got) with every exception of `want` the agent cannot see replaced by ANY_EXCEPTION, and
    `got`'s exception at the same place too (any exception matches an invisible one)."""
    if depth > 12:
        return want, got
    if isinstance(want, dict):
        if "raises" in want and isinstance(want["raises"], str) and want["raises"] not in visible:
            want = {**want, "raises": ANY_EXCEPTION}
            if isinstance(got, dict) and "raises" in got:
                got = {**got, "raises": ANY_EXCEPTION}
        if isinstance(got, dict):
            pairs = [(k, *_relax(v, got.get(k), visible, depth + 1)) for k, v in want.items() if k in got]
            want = {**want, **{k: w for k, w, _ in pairs}}
            got = {**got, **{k: g for k, _, g in pairs}}
        return want, got
    if isinstance(want, list | tuple) and isinstance(got, list | tuple) and len(want) == len(got):
        pairs = [_relax(w, g, visible, depth + 1) for w, g in zip(want, got, strict=True)]
        return type(want)(w for w, _ in pairs), type(got)(g for _, g in pairs)
    return want, got


def agrees(want: Any, got: Any, visible: frozenset[str]) -> bool:
    """Does outcome `got` (None: did not finish) behave as the reference's `want`?"""
    if got is None:
        return False
    relaxed_want, relaxed_got = _relax(want, got, visible)
    return same_value(relaxed_want, relaxed_got)


@dataclass(frozen=True)
class TaskChecks:
    """A task's hidden checks with the reference's outcomes and which ones the base state fails."""

    scenarios: list[dict[str, Any]]
    expected: list[Any]
    discriminating: frozenset[int]
    base_visible_passed: bool | None
    visible: frozenset[str]
    reference_denied: frozenset[str] = frozenset()  # operations the reference's or base's runs were refused


def progress(checks: TaskChecks, matched: list[bool]) -> tuple[float, float]:
    """(progress, guard): the share of the checks the base state fails that this state passes, and the
    share of the checks the base already passes that it still passes."""
    fixing = [matched[i] for i in sorted(checks.discriminating)]
    guarding = [ok for i, ok in enumerate(matched) if i not in checks.discriminating]
    share = sum(fixing) / len(fixing) if fixing else float(all(guarding))
    kept = sum(guarding) / len(guarding) if guarding else 1.0
    return share, kept
