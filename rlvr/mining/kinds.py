"""Candidate tasks of each kind, from a project's package and its captured scenarios.

- `bug`: one source-level mutation (the operator/constant/`not`/`min`-`max` swaps of
  `rlvr.graders.repo.generate.find_mutations`) inside a function of a package module;
- `feature`: a public function or method whose body (after its docstring) is removed;
- `multi`: two kept bugs in different functions, each observable on its own.

`Candidate.base` is the broken module text(s). Whether a candidate is kept (a captured scenario
differs in the sandbox and at least one of the repo's tests fails) is decided by the miner.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rlvr.graders.repo.generate import Mutation, find_mutations, symptom
from rlvr.mining.replay import ADAPTER_TARGET, shown

KINDS = ("bug", "feature", "multi")


@dataclass
class Candidate:
    kind: str
    edits: dict[str, str]  # path -> broken text (the base state)
    where: list[str]  # "path:line: what", hidden (notes)
    function: str = ""  # "module:qualified" of the function touched
    docstring: str = ""
    parts: list[Candidate] = field(default_factory=list)
    lines: list[tuple[str, int]] = field(default_factory=list)  # (path, line) the change touches

    @property
    def paths(self) -> list[str]:
        return sorted(self.edits)


def module_name(path: str) -> str:
    name = path[:-3].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """(qualified name, node, public) for module-level functions and methods of module-level classes."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node, not node.name.startswith("_")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    public = not node.name.startswith("_") and (
                        not item.name.startswith("_") or item.name == "__init__"
                    )
                    yield f"{node.name}.{item.name}", item, public


def _enclosing(tree: ast.Module, line: int) -> str | None:
    for name, node, _ in _functions(tree):
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            return name
    return None


def _headers_of_run_functions(tree: ast.Module, lines: set[int]) -> set[int]:
    """The decorator and signature lines of each function with a body line in `lines`: a line tracer
    never reports them during a call."""
    out: set[int] = set()
    for _, node, _ in _functions(tree):
        body_start = node.body[0].lineno
        if any(body_start <= line <= (node.end_lineno or body_start) for line in lines):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out.update(range(first, body_start))
    return out


def bug_candidates(
    path: str, text: str, rng: random.Random, per_function: int = 3, lines: set[int] | None = None
) -> list[Candidate]:
    """Every mutation inside a function of the module, shuffled, at most `per_function` per function;
    with `lines`, only mutations on those lines (the ones some hidden scenario runs) or in the header
    of a function that ran (a default value: evaluated at import, used by every call)."""
    tree = ast.parse(text)
    reached = lines if lines is None else lines | _headers_of_run_functions(tree, lines)
    by_function: dict[str, list[Mutation]] = {}
    for mutation in find_mutations(path, text):
        if reached is not None and mutation.line not in reached:
            continue
        owner = _enclosing(tree, mutation.line)
        if owner is not None:
            by_function.setdefault(owner, []).append(mutation)
    out: list[Candidate] = []
    for owner, mutations in by_function.items():
        rng.shuffle(mutations)
        for mutation in mutations[:per_function]:
            mutated = mutation.apply(text)
            try:
                compile(mutated, path, "exec")
            except SyntaxError:
                continue
            out.append(
                Candidate(
                    "bug",
                    {path: mutated},
                    [f"{path}:{mutation.line}: {mutation.description}"],
                    function=f"{module_name(path)}:{owner}",
                    lines=[(path, mutation.line)],
                )
            )
    rng.shuffle(out)
    return out


def remove_body(text: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """`text` with the function's body after its docstring replaced by `raise NotImplementedError`."""
    body = function.body
    if len(body) < 2 or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Constant):
        return None
    if not isinstance(body[0].value.value, str):
        return None
    lines = text.splitlines(keepends=True)
    first, last = body[1].lineno, body[-1].end_lineno or body[-1].lineno
    if body[1].lineno == body[0].end_lineno:  # docstring and code on one line
        return None
    indent = " " * body[1].col_offset
    stub = f'{indent}raise NotImplementedError("{function.name} is not implemented yet")\n'
    return "".join(lines[: first - 1]) + stub + "".join(lines[last:])


def feature_candidates(path: str, text: str, rng: random.Random) -> list[Candidate]:
    tree = ast.parse(text)
    out: list[Candidate] = []
    for qualified, node, public in _functions(tree):
        if not public or node.name.startswith("__"):
            continue
        removed = remove_body(text, node)
        if removed is None:
            continue
        try:
            compile(removed, path, "exec")
        except SyntaxError:
            continue
        out.append(
            Candidate(
                "feature",
                {path: removed},
                [f"{path}:{node.lineno}: body of {qualified} removed"],
                function=f"{module_name(path)}:{qualified}",
                docstring=ast.get_docstring(node) or "",
                lines=[(path, n) for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)],
            )
        )
    rng.shuffle(out)
    return out


def combine(first: Candidate, second: Candidate, files: dict[str, str]) -> Candidate | None:
    """Both bugs at once (different functions; in one module both mutations must still apply)."""
    if first.function == second.function:
        return None
    edits = dict(first.edits)
    for path, text in second.edits.items():
        if path in edits:
            merged = _merge_edit(files[path], edits[path], text)
            if merged is None:
                return None
            edits[path] = merged
        else:
            edits[path] = text
    return Candidate(
        "multi", edits, first.where + second.where, parts=[first, second], lines=first.lines + second.lines
    )


def _merge_edit(original: str, one: str, two: str) -> str | None:
    """Both single-site edits of `original` applied together, when they touch different lines."""
    a, b, c = original.splitlines(keepends=True), one.splitlines(keepends=True), two.splitlines(keepends=True)
    if not len(a) == len(b) == len(c):
        return None
    out = []
    for base, left, right in zip(a, b, c, strict=True):
        if left != base and right != base:
            return None
        out.append(left if left != base else right)
    return "".join(out)


# ---------------------------------------------------------------------------------- issue text
def _call(scenario: dict[str, Any]) -> str:
    module, _, name = str(scenario["target"]).partition(":")
    parts = [repr(a) for a in scenario.get("args", [])]
    parts += [f"{k}={v!r}" for k, v in (scenario.get("kwargs") or {}).items()]
    shown = ", ".join(parts)
    if len(shown) > 200:
        shown = shown[:197] + "..."
    return f"`{module}.{name}({shown})`"


def _describe(outcome: Any, value_text: Any = None) -> str:
    """An outcome as the issue text states it: no answer, an exception, or the value (shown by
    `value_text`, default its repr cut at 240 characters)."""
    if outcome is None:
        return "no answer (it ran out of time or crashed)"
    if isinstance(outcome, dict) and "raises" in outcome:
        name = str(outcome["raises"])
        return f"{'an' if name[:1] in 'AEIOU' else 'a'} {name} exception"
    value = outcome.get("value") if isinstance(outcome, dict) else outcome
    if value_text is not None:
        return value_text(value)
    text = repr(value)
    return f"`{text if len(text) <= 240 else text[:237] + '...'}`"


def _adapter_value(value: Any) -> str:
    """A replay adapter result as a reader sees it (an iterator's items as the list they make)."""
    if isinstance(value, dict) and "$items" in value:
        items = _shown(value["$items"])
        more = " and more" if value.get("$more") else ""
        raised = f", then raises {value['$raises']}" if value.get("$raises") else ""
        return f"an iterator over {items}{more}{raised}"
    return f"`{_shown(value)[:240]}`"


def _adapter_outcome(outcome: Any) -> str:
    return _describe(outcome, _adapter_value)


def _adapter_call(target: str, args: Any, kwargs: Any) -> str:
    module, _, name = target.partition(":")
    parts = [shown(a) for a in args or []] + [f"{k}={shown(v)}" for k, v in (kwargs or {}).items()]
    text = ", ".join(parts)
    return f"`{module}.{name}({text if len(text) <= 200 else text[:197] + '...'})`"


def _adapter_symptom(spec: dict[str, Any], got: Any, want: Any) -> str:
    call = _adapter_call(str(spec.get("target")), spec.get("args"), spec.get("kwargs"))
    steps = spec.get("steps")
    mine = got.get("value") if isinstance(got, dict) else None
    theirs = want.get("value") if isinstance(want, dict) else None
    if (
        steps
        and isinstance(theirs, dict)
        and isinstance(mine, dict)
        and "steps" in theirs
        and "steps" in mine
    ):
        for index, (expected, actual) in enumerate(zip(theirs["steps"], mine["steps"], strict=False)):
            if not _same(actual, expected):
                sequence = "; ".join(
                    f"{m}({', '.join([shown(a) for a in a_args] + [f'{k}={shown(v)}' for k, v in a_kwargs.items()])})"
                    for m, a_args, a_kwargs in steps[: index + 1]
                )
                return (
                    f"On {call}, the sequence `{sequence}` ends with {steps[index][0]} giving "
                    f"{_adapter_outcome(actual)}; expected {_adapter_outcome(expected)}."
                )
    if got is None:
        return f"{call} does not finish (it runs out of time or crashes); expected {_adapter_outcome(want)}."
    return f"Calling {call} gives {_adapter_outcome(got)}; expected {_adapter_outcome(want)}."


def describe_difference(scenario: dict[str, Any], got: Any, want: Any) -> str:
    """One sentence: what was called, what came back, what was expected (never where the fault is)."""
    if scenario.get("target") == ADAPTER_TARGET and scenario.get("args"):
        return _adapter_symptom(scenario["args"][0], got, want)
    steps = scenario.get("steps") or []
    if scenario["kind"] == "object" and steps and all(m == "__next__" for m, _ in steps):
        if got is None or "steps" not in got:
            return f"Iterating over {_call(scenario)} gives {_describe(got and got.get('init'))}."
        mine, theirs = got["steps"], want["steps"]
        for index, expected in enumerate(theirs):
            actual = mine[index] if index < len(mine) else None
            if actual is None or not _same(actual, expected):
                if expected.get("raises") == "StopIteration":
                    return (
                        f"Iterating over {_call(scenario)} yields more than {index} items (item {index + 1} "
                        f"is {_describe(actual)}); expected exactly {index}: "
                        f"{_shown([s.get('value') for s in theirs[:index]])}."
                    )
                return (
                    f"Iterating over {_call(scenario)}: item {index + 1} is {_describe(actual)}; expected "
                    f"{_describe(expected)} (the expected items: {_shown([s.get('value') for s in theirs if 'value' in s])})."
                )
    if got is None:
        return (
            f"{_call(scenario)} does not finish (it runs out of time or crashes); expected {_describe(want)}."
        )
    return symptom(scenario, got, want)


def _same(a: Any, b: Any) -> bool:
    from rlvr.graders.repo.runner import same_value

    return bool(same_value(b, a))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 240 else text[:237] + "..."


def bug_issue(symptoms: list[str]) -> str:
    if len(symptoms) == 1:
        return (
            "Bug report: something is wrong in this repository.\n\n"
            f"Reproduction: {symptoms[0]}\n\n"
            "Find the cause and fix it in the package. The repository's tests show the intended "
            "behaviour; do not edit them."
        )
    listed = "\n".join(f"{i}. {s}" for i, s in enumerate(symptoms, start=1))
    return (
        f"Bug report: {len(symptoms)} problems were reported against this repository.\n\n{listed}\n\n"
        "Find the causes and fix them in the package. The repository's tests show the intended "
        "behaviour; do not edit them."
    )


def feature_issue(function: str, docstring: str) -> str:
    module, _, name = function.partition(":")
    doc = "\n".join("    " + line for line in docstring.splitlines()) or "    (no docstring)"
    return (
        f"Feature request: `{module}.{name}` lost its implementation in a refactor and now raises "
        "NotImplementedError. Implement it again so that it does what its docstring says and what the "
        f"repository's tests expect:\n\n{doc}\n\nKeep its signature; other code relies on it. Do not edit the tests."
    )
