"""Object scenarios that register callables of the grader's own on a repository class (issue 31).

A repository whose code registers user-supplied callables on an object (`router.add("GET",
"/users/<id:int>", lambda p: ...)`, `bus.subscribe("saved", on_saved)`) documents what happens to
them: a handler's exception propagates, the first matching registration wins, a 405 needs every
route of the path to have another method. The listed scenarios can only use the registrations the
repository's code makes, with its handlers. Derived here, in the trusted process, from the base
state's code and the listed object scenarios:

- the class defining the registering method, built with no arguments, given the same registrations
  as the code makes (constant arguments kept, each callable replaced by one of ours returning a
  distinct value), then every step of each listed object scenario whose methods are that class's;
- the same with every callable raising (an exception a caller's handler raises must not be turned
  into a status the docstring does not name);
- the registrations in reverse order (which one wins is the rule);
- each registration preceded by a twin whose string argument at one position is another
  registration's (the same pattern for another method first: a 405 decided before later routes
  are tried differs).

The callables are `{"__rlvr_callable__": {...}}` markers that `child_driver.copy_args` turns into
functions in the sandbox. The checks compare exceptions as raised or not (which type our callable
raises was never the agent's to see).
"""

from __future__ import annotations

import ast
from typing import Any

from rlvr.graders.repo.source_modules import package_modules

CALLABLE_KEY = "__rlvr_callable__"
MAX_REGISTRATIONS = 8  # per class
MAX_TWIN_POSITIONS = 2  # string positions crossed per class
DERIVED = "object-callables"


def returning(value: str) -> dict[str, Any]:
    return {CALLABLE_KEY: {"does": "return", "value": value}}


RAISING: dict[str, Any] = {CALLABLE_KEY: {"does": "raise"}}


def _constructible(node: ast.ClassDef) -> bool:
    """Whether the class can be built with no arguments (no `__init__`, or one whose parameters
    after `self` all have defaults)."""
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            arguments = item.args
            required = len(arguments.args) - 1 - len(arguments.defaults)
            return required <= 0 and all(d is not None for d in arguments.kw_defaults)
    return True


def _registration(call: ast.Call, functions: set[str]) -> tuple[str, list[Any]] | None:
    """(method, arguments) of `obj.method(<constants>, <lambda or a function `functions` names>...)`
    when every argument is a constant or a callable (at least one callable), the callables as None."""
    if not isinstance(call.func, ast.Attribute) or call.keywords or not call.args:
        return None
    values: list[Any] = []
    callables = 0
    for argument in call.args:
        if isinstance(argument, ast.Lambda) or (isinstance(argument, ast.Name) and argument.id in functions):
            values.append(None)
            callables += 1
        elif isinstance(argument, ast.Constant) and isinstance(argument.value, str | int | float | bool):
            values.append(argument.value)
        else:
            return None
    return (call.func.attr, values) if callables and len(values) > callables else None


def _classes(base: dict[str, str]) -> dict[str, tuple[str, ast.ClassDef]]:
    """{class name: (module, node)} of the base state's top-level classes (first definition wins)."""
    found: dict[str, tuple[str, ast.ClassDef]] = {}
    for module, tree in package_modules(base):
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, (module, node))
    return found


def registrations(base: dict[str, str]) -> dict[str, tuple[str, str, list[tuple[str, list[Any]]]]]:
    """{"module:Class": (its registering method, [(method, arguments)] in code order)} for every
    constructible class of the base state that defines a method the code calls with a lambda."""
    classes = _classes(base)
    methods = {
        name: {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
        for name, (_, node) in classes.items()
    }
    trees = [tree for _, tree in package_modules(base)]
    functions = {  # module-level functions: a name passed as an argument that is one is a callable
        node.name
        for tree in trees
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    out: dict[str, tuple[str, str, list[tuple[str, list[Any]]]]] = {}
    for tree in trees:
        calls = sorted(
            (node for node in ast.walk(tree) if isinstance(node, ast.Call)),
            key=lambda node: (node.lineno, node.col_offset),
        )
        for call in calls:
            found = _registration(call, functions)
            if found is None:
                continue
            owners = [name for name, names in methods.items() if found[0] in names]
            if len(owners) != 1 or not _constructible(classes[owners[0]][1]):
                continue
            module = classes[owners[0]][0]
            key = f"{module}:{owners[0]}"
            entry = out.setdefault(key, (found[0], owners[0], []))
            if entry[0] == found[0] and len(entry[2]) < MAX_REGISTRATIONS:
                entry[2].append(found)
    return out


def _layout(
    order: list[tuple[str, list[Any]]], raising: bool, tag: str, replayed: list[list[Any]]
) -> list[list[Any]]:
    """The registrations `order` (callables of ours: each returning a distinct value, or all
    raising), then the replayed steps."""
    steps: list[list[Any]] = []
    for method, args in order:
        filled = [
            (RAISING if raising else returning(f"rlvr-callable-{tag}{len(steps)}")) if v is None else v
            for v in args
        ]
        steps.append([method, filled])
    return steps + replayed


def _twins(sites: list[tuple[str, list[Any]]]) -> list[list[tuple[str, list[Any]]]]:
    """For each string position where the registrations differ: every registration preceded by a
    copy holding, at that position, the next registration's different value there."""
    out: list[list[tuple[str, list[Any]]]] = []
    width = min(len(args) for _, args in sites)
    for position in range(width):
        values = [args[position] for _, args in sites]
        if not all(isinstance(v, str) for v in values) or len(set(values)) < 2:
            continue
        crossed: list[tuple[str, list[Any]]] = []
        for index, (method, args) in enumerate(sites):
            other = next(v for v in values[index + 1 :] + values[:index] if v != args[position])
            crossed.append((method, [*args[:position], other, *args[position + 1 :]]))
            crossed.append((method, args))
        out.append(crossed)
        if len(out) >= MAX_TWIN_POSITIONS:
            break
    return out


def callable_checks(scenarios: list[dict[str, Any]], base: dict[str, str]) -> list[dict[str, Any]]:
    """The derived object scenarios described in the module docstring."""
    checks: list[dict[str, Any]] = []
    for target, (method, name, sites) in registrations(base).items():
        own = {
            item.name
            for item in _classes(base)[name][1].body
            if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
        }
        replayed = [
            [step_method, list(step_args)]
            for s in scenarios
            if s.get("kind") == "object" and not s.get("derived")
            for step_method, step_args in (s.get("steps") or [])
            if all(m in own and m != method for m, _ in (s.get("steps") or []))
        ]
        if not replayed:
            continue
        layouts = [
            _layout(sites, False, "", replayed),
            _layout(sites, True, "", replayed),
            _layout(sites[::-1], False, "r", replayed),
            *(_layout(twins, False, f"t{n}-", replayed) for n, twins in enumerate(_twins(sites))),
        ]
        checks += [
            {"kind": "object", "target": target, "args": [], "steps": layout, "derived": DERIVED}
            for layout in layouts
        ]
    return checks
