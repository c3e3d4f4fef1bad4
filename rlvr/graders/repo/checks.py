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
  upper/lower case (normalisation neither added nor dropped); a script argument (a list of commands)
  as each command alone and with its last argument dropped (inputs the reference rejects).
- **CLI and object words**: every argv word and every string argument of an object scenario's steps
  upper-cased, lower-cased and space-padded.
- **API surface**: every top-level name of a base module, and every member of a class it keeps, that
  the reference removed (a rename, a dropped alias) is an `absent` check, on the module and on every
  package it sits in: the name must not resolve in the candidate by attribute access (so a class
  attribute alias, a wrapper, a module or class `__getattr__` and a package re-export all count).
- **Calls twice**: each call target's first listed call run twice in one process (an entry point
  that keeps state between calls where the reference starts fresh differs on the second).
- **Migrations twice and from a later version**: every sqlite scenario again with the migration run
  twice on one database, and on its database marked as already past every version
  (`PRAGMA user_version = 1000`): a migration that ignores the schema version differs there.
- **Steps that do not commute, statuses, orders** (`data_variants`): listed calls crossed with each
  other's values and at the smallest unit, mapping keys renamed to a name another argument uses,
  strings that hit two normalisations at once (padded and case-swapped, only spaces); every sqlite
  seed row and list record with each value of its status field the base code names plus one it never
  names, and the rows and lists in reverse order. What a call prints is compared with its value.
- **Domain edges only a docstring states** (`domain_variants`): integers at 0, negated, one off and
  past a limit constant the base names (also in object steps); strings holding a digit run signed,
  underscored and padded; multi-line text with spaces inside brackets and
  around separators; collections whose entries name each other with a reference to a missing entry.
- **Functions reached only through callers** (`fed_calls`): a touched one-parameter function no
  scenario calls, called on what a listed call target returns where that target's return
  annotation is its parameter's (and on inputs naming a missing entry).
- **Orders, lines, callables, swapped sides** (this round): a mapping argument's keys in reverse
  order (and all tied, where the repository states a tie rule); a text of lines with a blank or a
  comment line first (`line_shift_checks`, compared where the reference raises on both, with what the
  exception carries, `ConfigError.line`); the registrations of callables the code makes on a class
  (`router.add(..., lambda ...)`) made again with callables of ours: returning, raising, in reverse
  order, each after a twin for another method (`callable_variants`); an object step's two string
  arguments swapped, also with its amounts at 1 (a source's overdraft).
- **Generated sequences and observed state** (`sequences`): each object target's methods and each
  script argument's commands in seeded orders the listed scenarios never use (entities interleaved,
  keys updated and deleted, the touched method in each), compared only where the reference finishes
  them; the object's public attributes its base class sets too are read after every step; the
  entities made in reverse order and read at once (several results, in the order stated), and a
  touched step whose range ends exactly where a stored range starts or starts where it ends
  (boundary coincidences, `sequences.coincidences`).
- **Order inside entries** (`data_variants.inner_order_variants`): a collection of entries with each
  entry's lists of names or values reversed (a job's dependencies), where "the first listed" and a
  rule over them all differ.
- **A digit past a stated rounding** (`rounding_variants`): where a touched function's docstring says
  "rounded to N places", each listed call holding floats again with one more digit than N.
- **Next to the literals** (`literal_variants`): every argv word and each script verb cut by its
  last character and extended before and after (`stays` -> `stay`, `/health` -> `/healthx`: an
  alias, a prefix or containment test), the verbs upper-cased too; a mapping's keys behind one more
  prefix; a text's `[name]` lines with doubled brackets; an object made from a string with one word
  at a time in the other case (a placeholder's name) and with the whole string upper-cased, lower-cased
  and padded.
- **Fresh objects** (`fresh_object_checks`): each object scenario whose target is a factory
  function, also reporting whether a second call returns another object (no shared instance).
- **Migrations from every earlier version** (`earlier_version_checks`, derived from the reference's run
  in the sandbox): the reference's migration of each sqlite scenario's database is traced, and the
  scenario runs again on a database built by the traced statements up to each `PRAGMA user_version`
  it sets before its last (a migration that skips or repeats an intermediate step differs there).

Kept where the reference shows them in the domain (`kept_by_reference`): a generated or derived call
that makes a count-like parameter (`max_words`, `count`) negative where no listed call does, or puts
two adjacent numbers every listed call orders (a start and its end) in the other order, is compared
only where the reference rejects it (raises): what the reference returns on an empty or reversed
range, or a negative count, no docstring states.

Comparison (`agrees`): plain data as `rlvr.graders.repo.runner.same_value` compares it (values as `==`
sees them, see `child_driver.plain`; the exact type too where the reference's return annotation names
a repository class the agent can see, `exact_return_types`; order only inside lists and tuples), except that an
exception whose type name the agent cannot see (it appears neither in the issue text nor anywhere in
the base repository) only has to be raised, of any type: the reference's exact exception is not a
behaviour the agent was shown.

A text that differs only where the reference prints an exception message the agent cannot see
(`invisible_messages`: a message of the reference's code whose literal text neither the issue
text nor the base repository holds) counts as the same: `error: {exc}` of a correct fix carries
its own words.

Scoring (`progress`): the checks the base state already passes are regression guards; only the checks
it fails measure progress, so a no-op earns nothing for the many checks it already passes.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from rlvr.graders.repo.callable_variants import callable_checks
from rlvr.graders.repo.data_variants import (
    crossed_calls,
    inner_order_variants,
    mapping_order_variants,
    overlapping_keys,
    record_variants,
    seed_variants,
    states_ties,
    status_vocabulary,
)
from rlvr.graders.repo.domain_variants import (
    coincident_ranges,
    comment_lines,
    limit_constants,
    line_shift_variants,
    number_like_variants,
    number_variants,
    structured_text_variants,
    swapped_arguments,
    unknown_reference_variants,
)
from rlvr.graders.repo.invisible_messages import loosened
from rlvr.graders.repo.literal_variants import (
    nested_brackets,
    prefixed_keys,
    token_case_variants,
    word_variants,
)
from rlvr.graders.repo.rounding_variants import rounding_checks
from rlvr.graders.repo.runner import same_value
from rlvr.graders.repo.sequences import sequence_checks, sequence_kept
from rlvr.graders.repo.source_modules import is_test_path, module_of, package_functions, package_modules

MAX_DERIVED_CHECKS = 330
Item = TypeVar("Item")
UNKNOWN_FLAG = "--rlvr-unknown-option"
EXTRA_ARGUMENT = "rlvr-extra-argument"
ANY_EXCEPTION = "<an exception>"
FUTURE_VERSION = "PRAGMA user_version = 1000"
WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
VERSION_SET = re.compile(r"\s*PRAGMA\s+user_version\s*=", re.IGNORECASE)
TRANSACTION_CONTROL = re.compile(r"\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b", re.IGNORECASE)


def top_level_names(source: str) -> set[str]:
    """Public names a module defines at top level (functions, classes, assignments, imports)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return _public_bindings(tree.body, imports=True)


def class_members(source: str) -> dict[str, set[str]]:
    """Public names each top-level class of a module defines in its body (methods, class attributes)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    return {
        node.name: _public_bindings(node.body, imports=False)
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }


def _public_bindings(body: list[ast.stmt], *, imports: bool) -> set[str]:
    """The public names a block of statements binds: defs, classes, assignments (and imports)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif imports and isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return {name for name in names if not name.startswith("_")}


def _enclosing_packages(module: str, base: dict[str, str]) -> list[str]:
    """The packages of the base state a module sits in, innermost first: the public API of a name
    can be reached through any of them (a re-export from a package `__init__`)."""
    parts = module.split(".")
    return [
        ".".join(parts[:end])
        for end in range(len(parts) - 1, 0, -1)
        if "/".join(parts[:end]) + "/__init__.py" in base
    ]


def removed_names(base: dict[str, str], reference: dict[str, str]) -> list[str]:
    """Targets `module:name` (and `module:Class.member`) the base defines and the reference no longer
    does, each also through every package the module sits in: an alias, wrapper, `__getattr__` or
    re-export that keeps the old name reachable there keeps it resolving."""
    targets: list[str] = []
    for path in sorted(base):
        module = module_of(path)
        if module is None or is_test_path(path):
            continue
        after_text = reference.get(path, "")
        before = top_level_names(base[path])
        after = top_level_names(after_text) if path in reference else set()
        gone = sorted(before - after)
        targets += [f"{module}:{name}" for name in gone]
        kept_classes = class_members(after_text)
        for cls, members in sorted(class_members(base[path]).items()):
            if cls in kept_classes:
                targets += [f"{module}:{cls}.{name}" for name in sorted(members - kept_classes[cls])]
        for package in _enclosing_packages(module, base):
            targets += [f"{package}:{name}" for name in gone]
    return list(dict.fromkeys(targets))


def declared_exports(source: str) -> tuple[str, ...] | None:
    """The names a module's literal top-level `__all__` lists (its last assignment), None without one;
    a computed `__all__` counts as a declaration whose names are not known here."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: tuple[str, ...] | None = None
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AugAssign | ast.AnnAssign)
            else []
        )
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = getattr(node, "value", None)
        try:
            names = ast.literal_eval(value) if value is not None else ()
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            names = ("<computed>",)
        listed = tuple(str(n) for n in names) if isinstance(names, list | tuple) else ("<computed>",)
        found = (*(found or ()), *listed) if isinstance(node, ast.AugAssign) else listed
    return found


def changed_exports(base: dict[str, str], reference: dict[str, str]) -> list[str]:
    """Modules whose declared `__all__` the reference changes (a rename or a new public function
    exported): what `from module import *` binds is part of the API surface the task changes."""
    modules: list[str] = []
    for path in sorted(set(base) | set(reference)):
        module = module_of(path)
        if module is None or is_test_path(path) or path not in reference:
            continue
        after = declared_exports(reference[path])
        if after is not None and after != declared_exports(base.get(path, "")):
            modules.append(module)
    return modules


def added_names(
    base: dict[str, str], reference: dict[str, str], files: dict[str, str], changed: list[str]
) -> list[str]:
    """Top-level public names (`module:name`) a changed module of `files` defines that neither the base
    nor the reference state defines there: API surface the task did not ask for (reported, not scored)."""
    found: list[str] = []
    for path in changed:
        module = module_of(path)
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
        module = module_of(path)
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


MAX_FED_CALLS = 12  # per function


def _signatures(reference: dict[str, str]) -> dict[str, tuple[list[str], str]]:
    """{"module:function": (its parameters' annotations, its return annotation)} for the reference's
    top-level functions ("" where one is not annotated)."""
    found: dict[str, tuple[list[str], str]] = {}
    for module, tree in package_modules(reference):
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                parameters = [ast.unparse(a.annotation) if a.annotation else "" for a in node.args.args]
                returns = ast.unparse(node.returns) if node.returns else ""
                found[f"{module}:{node.name}"] = (parameters, returns)
    return found


def fed_calls(
    scenarios: list[dict[str, Any]], base: dict[str, str], reference: dict[str, str]
) -> list[dict[str, Any]]:
    """Calls of every touched one-parameter function no scenario calls, on what a listed call target
    returns where that target's return annotation is the parameter's (`topological_order(jobs:
    dict[str, Job])` on `jobs_from_spec(spec) -> dict[str, Job]`): for each listed call of the
    builder, each listed call of another function taking the same one parameter (`plan(spec)`), and
    each of those with a reference to a missing entry. A rule of the function that its callers hide
    (an unknown dependency is a KeyError, where every caller fails another way) shows."""
    called = {str(s.get("target")) for s in scenarios}
    signatures = _signatures(reference)
    listed = [s for s in scenarios if s.get("kind") == "call" and not s.get("generated")]
    checks: list[dict[str, Any]] = []
    for module, function in touched_functions(base, reference):
        target = f"{module}:{function.name}"
        arguments = function.args
        if target in called or len(arguments.args) != 1 or arguments.vararg or arguments.kwonlyargs:
            continue
        wanted = arguments.args[0].annotation
        if wanted is None:
            continue
        builders = [t for t, (_, r) in signatures.items() if r == ast.unparse(wanted) and t in called]
        inputs: list[dict[str, Any]] = []
        for builder in builders:
            takes = signatures[builder][0]
            for scenario in listed:
                theirs = signatures.get(str(scenario.get("target")), ([], ""))[0]
                args = list(scenario.get("args") or [])
                same_input = len(takes) == 1 and theirs == takes and len(args) == 1
                if scenario.get("target") != builder and not same_input:
                    continue
                missing = [[v] for v in unknown_reference_variants(args[0])] if len(args) == 1 else []
                for call in [args, *missing]:
                    feed = {"target": builder, "args": call}
                    if feed not in inputs:
                        inputs.append(feed)
        checks += [
            {"kind": "call", "target": target, "args": [], "feed": feed, "derived": "call-fed"}
            for feed in inputs[:MAX_FED_CALLS]
        ]
    return checks


def fresh_object_checks(scenarios: list[dict[str, Any]], reference: dict[str, str]) -> list[dict[str, Any]]:
    """Each listed object scenario whose target is a function of the reference (a factory, not a
    class), once per target, marked so the sandbox also reports whether a second call of the factory
    returns another object: a factory handing out one shared instance lets a caller's change to
    its object show in every later one. Compared only where the reference's objects are fresh
    (`kept_by_reference`)."""
    functions = package_functions(reference)
    out: dict[str, dict[str, Any]] = {}
    for s in scenarios:
        target = str(s.get("target"))
        if s.get("kind") == "object" and not s.get("derived") and target in functions and target not in out:
            out[target] = {**s, "fresh": True, "derived": "object-fresh"}
    return list(out.values())


def _positional_word_variants(
    scenario: dict[str, Any], field: str, derived: str, seen: set[str]
) -> list[dict[str, Any]]:
    """`scenario` once per variant of each string in its `field` list (argv or args) not seen before
    at that position of that target; `seen` is updated."""
    values = list(scenario.get(field) or [])
    out: list[dict[str, Any]] = []
    for index, word in enumerate(values):
        key = json.dumps([scenario.get("target"), index, word])
        if not isinstance(word, str) or key in seen:
            continue
        seen.add(key)
        out += [
            {**scenario, field: [*values[:index], v, *values[index + 1 :]], "derived": derived}
            for v in word_variants(word)
        ]
    return out


def literal_checks(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each distinct literal word of the listed command lines, calls and object steps (per target,
    method and position) cut short and extended (`word_variants`) in the first scenario holding it,
    and each distinct verb of a
    script argument (a list of commands) upper-cased, cut short and extended in place in the first
    script holding it: an alias kept, a prefix or containment test written for equality, a verb
    matched in any case. Once per task, so the scenarios that repeat a word add nothing."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for s in scenarios:
        if s.get("generated") or s.get("derived"):
            continue
        if s.get("kind") == "cli":
            out += _positional_word_variants(s, "argv", "cli-domain", seen)
        elif s.get("kind") == "object":
            steps = [list(step) for step in s.get("steps") or []]
            for position, (method, step_args) in enumerate(steps):
                for index, word in enumerate(step_args):
                    key = json.dumps([s.get("target"), method, index, word])
                    if not isinstance(word, str) or key in seen:
                        continue
                    seen.add(key)
                    out += [
                        {
                            **s,
                            "steps": [
                                *steps[:position],
                                [method, [*step_args[:index], v, *step_args[index + 1 :]]],
                                *steps[position + 1 :],
                            ],
                            "derived": "object-domain",
                        }
                        for v in word_variants(word)
                    ]
        elif s.get("kind") == "call":
            args = list(s.get("args") or [])
            out += _positional_word_variants(s, "args", "call-domain", seen)
            for index, script in enumerate(args):
                if not (isinstance(script, list) and script and all(isinstance(c, list) for c in script)):
                    continue
                for position, command in enumerate(script):
                    verb = command[0] if command else None
                    key = json.dumps([s.get("target"), index, verb])
                    if not isinstance(verb, str) or key in seen:
                        continue
                    seen.add(key)
                    texts = [t for t in [verb.upper(), *word_variants(verb)[:2]] if t != verb]
                    out += [
                        {
                            **s,
                            "args": [
                                *args[:index],
                                [*script[:position], [t, *command[1:]], *script[position + 1 :]],
                                *args[index + 1 :],
                            ],
                            "derived": "call-domain",
                        }
                        for t in texts
                    ]
    return out


def _cli_variants(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    argv = list(scenario.get("argv") or [])
    variants = [argv + [UNKNOWN_FLAG], argv + [EXTRA_ARGUMENT]]
    if argv:
        variants.append(argv[:-1])
    for index, value in enumerate(argv):  # each word upper-cased and space-padded: normalisation
        if isinstance(value, str) and value and not value.startswith("-"):
            texts = _text_variants(value) + number_like_variants(value)
            variants += [argv[:index] + [v] + argv[index + 1 :] for v in texts]
    return [
        {"kind": "cli", "target": scenario["target"], "argv": v, "derived": "cli-domain"} for v in variants
    ]


def _text_variants(value: str) -> list[str]:
    return [v for v in (f"  {value}  ", value.upper(), value.lower()) if v != value]


def _combined_text_variants(value: str) -> list[str]:
    """Strings that hit two normalising steps at once (padding and case together; only spaces, which
    strip-then-default and default-then-strip treat apart): where the steps' order shows."""
    out = [f" {value.swapcase()} ", "   "] if value.strip() else []
    return [v for v in out if v != value and v not in _text_variants(value)]


MAX_SCRIPT_STEPS = 6  # single-step scripts per scenario


def _script_variants(script: list[Any]) -> list[list[Any]]:
    """For a script argument (a list of commands, each a list): the first command of each kind (its
    first item) alone and alone with its last argument dropped, and its last string argument varied
    in case and spacing within the whole script, on fresh state (a malformed command the reference rejects must
    still be rejected, not turned into a message)."""
    truncated: list[list[Any]] = []
    varied: list[list[Any]] = []
    alone: list[list[Any]] = []
    heads: list[str] = []
    for position, command in enumerate(script):
        if isinstance(command, list) and command and json.dumps(command[0]) not in heads:
            heads.append(json.dumps(command[0]))
            truncated.append([command[:-1]])
            alone.append([command])
            words = [i for i, word in enumerate(command) if i and isinstance(word, str) and word]
            if words:  # its last word varied in place, the rest of the script kept
                i = words[-1]
                varied += [
                    [*script[:position], [*command[:i], text, *command[i + 1 :]], *script[position + 1 :]]
                    for text in _text_variants(command[i])
                ]
        if len(heads) >= MAX_SCRIPT_STEPS:
            break
    return truncated + varied + alone


def _value_variants(
    value: Any, vocabulary: dict[str, list[str]], limits: list[int], ties: bool = False
) -> list[Any]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return number_variants(value, limits)
    if isinstance(value, str) and value:
        return (
            _text_variants(value)
            + number_like_variants(value)
            + structured_text_variants(value)
            + record_variants(value, vocabulary)
            + nested_brackets(value)
            + _combined_text_variants(value)
        )
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return [
            [f" {item} " for item in value],
            [item.upper() for item in value],
            *record_variants(value, {}),
        ]
    if isinstance(value, list) and value and all(isinstance(item, list) for item in value):
        return inner_order_variants(value) + unknown_reference_variants(value) + _script_variants(value)
    if isinstance(value, list):
        return (
            inner_order_variants(value)
            + unknown_reference_variants(value)
            + record_variants(value, vocabulary)
        )
    if isinstance(value, dict):
        return (
            mapping_order_variants(value, ties)
            + prefixed_keys(value)
            + inner_order_variants(value)
            + unknown_reference_variants(value)
        )
    return []


def _call_variants(
    scenario: dict[str, Any],
    others: list[dict[str, Any]],
    vocabulary: dict[str, list[str]],
    limits: list[int],
    ties: bool = False,
) -> list[dict[str, Any]]:
    args = list(scenario.get("args") or [])
    kwargs = dict(scenario.get("kwargs") or {})
    values: list[list[Any]] = []
    for index, value in enumerate(args):
        values += [
            args[:index] + [v] + args[index + 1 :] for v in _value_variants(value, vocabulary, limits, ties)
        ]
    # steps that do not commute: values of two listed calls in one, names two arguments share;
    # taken in turn with the value variants, and both before the generic ones (the cap cuts those)
    crossed, units = crossed_calls(scenario, others)
    variants = _round_robin([crossed, units, values, overlapping_keys(args), coincident_ranges(args)])
    variants.append(args + [None])
    if args:
        variants.append(args[:-1])
    variants += [args[:index] + [None] + args[index + 1 :] for index in range(len(args))]
    return [
        {"kind": "call", "target": scenario["target"], "args": v, "kwargs": kwargs, "derived": "call-domain"}
        for v in variants
    ]


ORIGIN_RAISES = "origin-raises"


def line_shift_checks(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each listed call's text-of-lines argument with a blank line, and with a comment line the task's
    inputs use, put first; marked to be kept only where the reference raises on the listed call and
    on the variant (`kept_by_reference`): a line number an error reports must count every line."""
    texts = [a for s in scenarios for a in s.get("args") or [] if isinstance(a, str)]
    comments = comment_lines(texts)
    checks: list[dict[str, Any]] = []
    for origin, scenario in enumerate(scenarios):
        if scenario.get("kind") != "call" or scenario.get("generated") or scenario.get("derived"):
            continue
        args = list(scenario.get("args") or [])
        for index, value in enumerate(args):
            if not isinstance(value, str):
                continue
            checks += [
                {
                    "kind": "call",
                    "target": scenario["target"],
                    "args": [*args[:index], shifted, *args[index + 1 :]],
                    "kwargs": dict(scenario.get("kwargs") or {}),
                    "derived": "line-shift",
                    "when": ORIGIN_RAISES,
                    "variant_of": origin,
                }
                for shifted in line_shift_variants(value, comments)
            ]
    return checks


def _object_variants(
    scenario: dict[str, Any], vocabulary: dict[str, list[str]], limits: list[int]
) -> list[dict[str, Any]]:
    """Every step of an object scenario again with one string argument upper-cased, lower-cased,
    space-padded or, holding a digit run, number-like (the method's normalisation neither added nor
    dropped), or, a status value, as each other value of its field; and with one number at its
    boundaries (0, negated, one off, past a limit constant)."""
    steps = [list(step) for step in scenario.get("steps") or []]
    variants: list[dict[str, Any]] = []
    # the object made from a string in another case or padded (a pattern, a name): normalisation
    # the constructor adds shows in what it accepts and in what the steps then return
    made = list(scenario.get("args") or [])
    for index, value in enumerate(made):
        if isinstance(value, str) and value:
            variants += [
                {**scenario, "args": [*made[:index], text, *made[index + 1 :]], "derived": "object-domain"}
                for text in _text_variants(value) + token_case_variants(value)
            ]
    # two string arguments swapped (a transfer's source and target), with its amounts at 1: a rule
    # of one side (its overdraft) reached by the calls the scenario already makes; raised or not
    for position, (method, args) in enumerate(steps):
        for changed in swapped_arguments(list(args)):
            variants.append(
                {
                    **scenario,
                    "steps": [*steps[:position], [method, changed], *steps[position + 1 :]],
                    "derived": "object-boundary",
                }
            )
    for position, (method, args) in enumerate(steps):
        for index, value in enumerate(args):
            texts: list[Any] = []
            derived = "object-domain"
            if isinstance(value, str) and value:
                texts = (
                    _text_variants(value) + number_like_variants(value) + record_variants(value, vocabulary)
                )
            elif isinstance(value, int | float) and not isinstance(value, bool):
                # a boundary can break two documented rules at once (an unknown account and a
                # non-positive amount): which error comes first is not stated, only that one does
                texts, derived = list(number_variants(value, limits)), "object-boundary"
            for text in texts:
                changed = [*args[:index], text, *args[index + 1 :]]
                variants.append(
                    {
                        **scenario,
                        "steps": [*steps[:position], [method, changed], *steps[position + 1 :]],
                        "derived": derived,
                    }
                )
    return variants


def _round_robin(rows: list[list[Item]]) -> list[Item]:
    return [item for row in itertools.zip_longest(*rows) for item in row if item is not None]


ORDERED_FIELDS = ("args", "kwargs", "steps", "argv", "seed_sql", "queries")


def check_key(check: dict[str, Any]) -> str:
    """What makes two checks the same check: every field but its `derived` label, the arguments with
    the insertion order of their mappings kept (a mapping in another order is another input)."""
    fields = {k: v for k, v in check.items() if k != "derived" and k not in ORDERED_FIELDS}
    ordered = {k: json.dumps(check[k]) for k in ORDERED_FIELDS if k in check}
    return json.dumps([fields, ordered], sort_keys=True)


def derived_checks(
    scenarios: list[dict[str, Any]], base: dict[str, str], reference: dict[str, str]
) -> list[dict[str, Any]]:
    """The derived hidden checks of a task (see the module docstring), without duplicates of each
    other or of `scenarios`, at most MAX_DERIVED_CHECKS; API-surface and migration checks first."""
    seen = {check_key(s) for s in scenarios}
    ordered: list[dict[str, Any]] = [
        {"kind": "absent", "target": target, "derived": "api-surface"}
        for target in removed_names(base, reference)
    ]
    ordered += [
        {"kind": "exports", "target": module, "derived": "api-exports"}
        for module in changed_exports(base, reference)
    ]
    migrations = [s for s in scenarios if s.get("kind") == "sqlite"]
    ordered += [{**s, "repeat": 2, "derived": "migration-twice"} for s in migrations]
    # a database already past every known version: a migration that reads the version leaves it be
    ordered += [
        {**s, "seed_sql": [*s.get("seed_sql", []), FUTURE_VERSION], "derived": "migration-future"}
        for s in migrations
    ]
    seeds = [str(q) for s in scenarios for q in s.get("seed_sql") or []]
    vocabulary = status_vocabulary(base, seeds)
    limits = limit_constants(base)
    ties = states_ties(base)
    # the seed rows with every status value known, and in reverse order (filters, orderings)
    ordered += [v for s in scenarios if s.get("kind") == "sqlite" for v in seed_variants(s, vocabulary)]
    # touched functions the scenarios only reach through callers, on what the repository builds
    ordered += fed_calls(scenarios, base, reference)
    # texts of lines with a blank or a comment line first (what the exception carries is compared)
    ordered += line_shift_checks(scenarios)
    # the repository's registrations of callables made with callables of ours (raising, reordered)
    ordered += callable_checks(scenarios, base)
    # the objects' methods and the scripts' commands in generated orders (keys deleted, entities interleaved)
    ordered += sequence_checks(scenarios, base, reference)
    # floats with a digit more than a stated rounding keeps ("rounded to 2 places")
    ordered += rounding_checks(scenarios, base, reference)
    # each call target's first listed call again, twice in one process: fresh state per call
    calls = {
        s["target"]: s for s in reversed(scenarios) if s.get("kind") == "call" and not s.get("generated")
    }
    ordered += [{**s, "repeat": 2, "derived": "call-twice"} for s in reversed(calls.values())]
    # each factory called again: its second object must not be its first (no shared instance)
    ordered += fresh_object_checks(scenarios, reference)
    # the literal words of the command lines and the scripts' verbs cut short, extended, in capitals
    ordered += literal_checks(scenarios)
    listed = [s for s in scenarios if not s.get("generated")]
    per_target: dict[str, list[list[dict[str, Any]]]] = {}
    for s in listed:
        if s.get("kind") == "cli":
            rows = _cli_variants(s)
        elif s.get("kind") == "call":
            same = [o for o in listed if o.get("kind") == "call" and o.get("target") == s.get("target")]
            rows = _call_variants(s, same, vocabulary, limits, ties)
        elif s.get("kind") == "object":
            rows = _object_variants(s, vocabulary, limits)
        else:
            continue
        per_target.setdefault(str(s.get("target")), []).append(rows)
    # round robin over the entry points, and within each over its scenarios, so the cap cuts the last
    # variants of each, never a whole entry point or scenario
    domain: list[dict[str, Any]] = annotation_checks(base, reference) + _round_robin(
        [_round_robin(rows) for rows in per_target.values()]
    )
    out: list[dict[str, Any]] = []
    for check in ordered + domain:
        key = check_key(check)
        if key in seen:
            continue
        seen.add(key)
        out.append(check)
        if len(out) >= MAX_DERIVED_CHECKS:
            break
    return out


def earlier_version_checks(scenario: dict[str, Any], trace: list[str]) -> list[dict[str, Any]]:
    """`scenario` again from every schema version the reference's migration passes through: `trace` is
    what the reference executed migrating the scenario's database; the statements up to each
    `PRAGMA user_version = k` (transaction control dropped) build a database at version k."""
    checks: list[dict[str, Any]] = []
    prefix: list[str] = []
    for statement in trace:
        if TRANSACTION_CONTROL.match(statement):
            continue
        prefix.append(statement)
        if VERSION_SET.match(statement):
            checks.append(
                {
                    **scenario,
                    "seed_sql": [*scenario.get("seed_sql", []), *prefix],
                    "derived": "migration-earlier",
                }
            )
    return checks[:-1]  # the last one is the version the migration ends at, not an earlier one


def exact_return_types(reference: dict[str, str], visible: frozenset[str]) -> dict[str, str]:
    """{"module:function": class name} for every public top-level function of the reference whose return
    annotation names a class the reference repository defines and the agent can see (the class or
    its name is in the base state or the issue text): there the exact type of the value is part of
    the behaviour. Everywhere else values compare as `==` would (`child_driver.plain`: a named tuple
    equals a tuple, a defaultdict a dict, an IntEnum its int, dataclass fields with compare=False
    ignored)."""
    modules: dict[str, ast.Module] = {}
    for path, source in reference.items():
        module = module_of(path)
        if module is None or is_test_path(path):
            continue
        try:
            modules[module] = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    classes = {node.name for tree in modules.values() for node in tree.body if isinstance(node, ast.ClassDef)}
    exact: dict[str, str] = {}
    for module, tree in modules.items():
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_") or node.returns is None:
                continue
            returns = node.returns
            name = (
                returns.value
                if isinstance(returns, ast.Constant) and isinstance(returns.value, str)
                else returns.id
                if isinstance(returns, ast.Name)
                else None
            )
            if name in classes and name in visible:
                exact[f"{module}:{node.name}"] = name
    return exact


def with_exact_types(scenarios: list[dict[str, Any]], exact: dict[str, str]) -> list[dict[str, Any]]:
    """Call scenarios of a function in `exact` marked so the sandbox reports the value's type name."""
    return [
        {**s, "exact_type": True} if s.get("kind") == "call" and s.get("target") in exact else s
        for s in scenarios
    ]


def visible_words(prompt: str, base: dict[str, str]) -> frozenset[str]:
    """Every identifier the agent can read: the issue text and the whole base repository; a plural
    counts as its singular too ("unknown converters are ValueErrors" names ValueError)."""
    words = set(WORD.findall(prompt))
    for text in base.values():
        words.update(WORD.findall(text))
    words.update(word[:-1] for word in list(words) if len(word) > 2 and word.endswith("s"))
    return frozenset(words)


def _relax(want: Any, got: Any, visible: frozenset[str], depth: int = 0) -> tuple[Any, Any]:
    """(want, got) with every exception of `want` the agent cannot see replaced by ANY_EXCEPTION, and
    `got`'s exception at the same place too (any exception matches an invisible one)."""
    if depth > 12:
        return want, got
    if isinstance(want, dict):
        if "raises" in want and isinstance(want["raises"], str) and want["raises"] not in visible:
            # an exception the agent cannot see: any exception matches it, whatever it carries
            want = {k: v for k, v in want.items() if k != "detail"} | {"raises": ANY_EXCEPTION}
            if isinstance(got, dict) and "raises" in got:
                got = {k: v for k, v in got.items() if k != "detail"} | {"raises": ANY_EXCEPTION}
        if isinstance(got, dict):
            pairs = [(k, *_relax(v, got.get(k), visible, depth + 1)) for k, v in want.items() if k in got]
            want = {**want, **{k: w for k, w, _ in pairs}}
            got = {**got, **{k: g for k, _, g in pairs}}
        return want, got
    if isinstance(want, list | tuple) and isinstance(got, list | tuple) and len(want) == len(got):
        pairs = [_relax(w, g, visible, depth + 1) for w, g in zip(want, got, strict=True)]
        return type(want)(w for w, _ in pairs), type(got)(g for _, g in pairs)
    return want, got


def agrees(want: Any, got: Any, visible: frozenset[str], messages: tuple[re.Pattern[str], ...] = ()) -> bool:
    """Does outcome `got` (None: did not finish) behave as the reference's `want`? A text that differs
    only where `want` prints an exception message the agent cannot see (`messages`,
    `invisible_messages`) counts as the same."""
    if got is None:
        return False
    relaxed_want, relaxed_got = _relax(want, loosened(want, got, list(messages)), visible)
    return same_value(relaxed_want, relaxed_got)


@dataclass(frozen=True)
class ShownDomain:
    """What every listed call of a function shows of its domain: count-like argument positions that are
    never negative, and adjacent positions that never decrease (a start before its end; `strict`: never
    equal either)."""

    non_negative: frozenset[int]
    ordered: dict[int, bool]  # position i -> strict, for the pair (i, i + 1)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


COUNT_NAME = re.compile(
    r"(n|k|count|limit|size|width|length|depth|times|top|(max|min|num)_\w+|\w+_(count|words|limit|size|len|length))",
    re.IGNORECASE,
)


def parameter_names(reference: dict[str, str]) -> dict[str, list[str]]:
    """{"module:function": its positional parameters' names} for the reference's top-level functions."""
    found: dict[str, list[str]] = {}
    for module, tree in package_modules(reference):
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found[f"{module}:{node.name}"] = [a.arg for a in node.args.args]
    return found


def shown_domains(
    scenarios: list[dict[str, Any]], names: dict[str, list[str]] | None = None
) -> dict[str, ShownDomain]:
    """{target: ShownDomain} from the hand-listed call scenarios (neither generated nor derived): a
    parameter named as a count or a limit (`max_words`, `count`, `n`) that no listed call makes
    negative is never negative; an order between two adjacent positions needs two or more calls."""
    calls: dict[str, list[list[Any]]] = {}
    for s in scenarios:
        if s.get("kind") == "call" and not s.get("generated") and not s.get("derived"):
            calls.setdefault(str(s.get("target")), []).append(list(s.get("args") or []))
    out: dict[str, ShownDomain] = {}
    for target, rows in calls.items():
        width = max(len(row) for row in rows)
        counts = [i for i, name in enumerate((names or {}).get(target, [])) if COUNT_NAME.fullmatch(name)]
        signs = [
            i
            for i in counts
            if (at := [row[i] for row in rows if i < len(row)]) and all(_number(v) and v >= 0 for v in at)
        ]
        ordered: dict[int, bool] = {}
        for i in range(width - 1):
            pairs = [(row[i], row[i + 1]) for row in rows if i + 1 < len(row)]
            if len(pairs) >= 2 and all(_number(a) and _number(b) and a <= b for a, b in pairs):
                ordered[i] = all(a < b for a, b in pairs)
        out[target] = ShownDomain(frozenset(signs), ordered)
    return out


def outside_shown_domain(check: dict[str, Any], domain: ShownDomain | None) -> bool:
    """Whether a generated or derived call passes a negative number where every listed call passes
    a non-negative one, or puts two adjacent numbers in the other order (an empty or reversed range)."""
    if domain is None or check.get("kind") != "call":
        return False
    args = list(check.get("args") or [])
    if any(i < len(args) and _number(args[i]) and args[i] < 0 for i in domain.non_negative):
        return True
    for i, strict in domain.ordered.items():
        if i + 1 < len(args) and _number(args[i]) and _number(args[i + 1]):
            if args[i] > args[i + 1] or (strict and args[i] == args[i + 1]):
                return True
    return False


def _raises(outcome: Any) -> bool:
    return isinstance(outcome, dict) and "raises" in outcome


def kept_by_reference(
    check: dict[str, Any], value: Any, values: list[Any], domains: dict[str, ShownDomain]
) -> bool:
    """Whether a check the grader made up is compared, given the reference's outcomes (`value` its
    own, `values` every check's): a line-shift variant only where the reference raises the same
    exception type on it and on its listed call; a call outside the domain the listed calls show (a
    negative count, a reversed range) only where the reference rejects it: what it returns there
    was never stated."""
    if check.get("when") == ORIGIN_RAISES:
        origin = check.get("variant_of")
        if not (isinstance(origin, int) and 0 <= origin < len(values)):
            return False
        # the same error on the same path, only later in the text: another error there is not ours to judge
        if not (_raises(values[origin]) and _raises(value) and values[origin]["raises"] == value["raises"]):
            return False
    if not (check.get("derived") or check.get("generated")):
        return True
    if check.get("fresh") and not (isinstance(value, dict) and value.get("fresh") == {"value": True}):
        return False  # a factory whose objects the reference shares: not ours to judge
    if not sequence_kept(check, value):
        return False
    return _raises(value) or not outside_shown_domain(check, domains.get(str(check.get("target"))))


@dataclass(frozen=True)
class TaskChecks:
    """A task's hidden checks with the reference's outcomes and which ones the base state fails."""

    scenarios: list[dict[str, Any]]
    expected: list[Any]
    discriminating: frozenset[int]
    base_visible_passed: bool | None
    visible: frozenset[str]
    reference_denied: frozenset[str] = frozenset()  # operations the reference's or base's runs were refused
    messages: tuple[re.Pattern[str], ...] = ()  # the reference's exception messages the agent cannot see


def progress(checks: TaskChecks, matched: list[bool]) -> tuple[float, float]:
    """(progress, guard): the share of the checks the base state fails that this state passes, and the
    share of the checks the base already passes that it still passes."""
    fixing = [matched[i] for i in sorted(checks.discriminating)]
    guarding = [ok for i, ok in enumerate(matched) if i not in checks.discriminating]
    share = sum(fixing) / len(fixing) if fixing else float(all(guarding))
    kept = sum(guarding) / len(guarding) if guarding else 1.0
    return share, kept
