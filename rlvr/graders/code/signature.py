"""Is the candidate typed at least as far as the prompt declares? (the types layer's reference point)

pyright counts the errors in what is annotated, so a candidate that drops the prompt's annotations
(or widens them to `Any`) hides the errors they would expose and scores higher for typing less. Each
function the prompt declares at the top level is found in the candidate (by name) and compared, one
annotation at a time, with the declaration: a declared parameter or return annotation the candidate
drops, or weakens — to `Any` or `object` where the declaration names neither, or to a bare generic
(`list`) where the declaration gives its arguments (`list[int]`) — costs one error. Spellings of the
same type (`List[int]` for `list[int]`, a string forward reference) are free. A declared function the
candidate binds some other way than `def` (a lambda, an assignment) loses every declared annotation.

Trusted text only decides what is declared (the prompt); the candidate's text is parsed here with
`ast` (it has passed the syntax layer) and never run.
"""

from __future__ import annotations

import ast

from rlvr.graders.code.evasions import Evasion

KIND = "signature"
_WIDE = frozenset({"Any", "object"})
_GENERICS = frozenset(
    {
        "list",
        "List",
        "dict",
        "Dict",
        "set",
        "Set",
        "frozenset",
        "FrozenSet",
        "tuple",
        "Tuple",
        "Sequence",
        "Iterable",
        "Iterator",
        "Mapping",
        "Callable",
        "Optional",
        "Union",
        "type",
        "Type",
    }
)
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)

Function = ast.FunctionDef | ast.AsyncFunctionDef


def signature_losses(prompt: str, program: str) -> list[Evasion]:
    """One entry per declared annotation the candidate drops or weakens (see the module docstring)."""
    try:
        declared = _top_level_functions(ast.parse(prompt))
    except _PARSE_ERRORS:
        return []
    declared = {name: f for name, f in declared.items() if _annotations(f)}
    if not declared:
        return []
    try:
        module = ast.parse(program)
    except _PARSE_ERRORS:
        return []  # the syntax layer has already failed it
    written = _top_level_functions(module)
    losses: list[Evasion] = []
    for name, declaration in declared.items():
        candidate = written.get(name)
        if candidate is None:
            line = _binding_line(module, name)
            if line is not None:
                count = len(_annotations(declaration))
                losses.append(
                    Evasion(line, KIND, f"`{name}` is not a def: its {count} declared annotation(s) are lost")
                )
            continue
        losses += _compare(name, declaration, candidate)
    return losses


def _top_level_functions(module: ast.Module) -> dict[str, Function]:
    found: dict[str, Function] = {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node  # the last definition is the one that runs
    return found


def _parameters(function: Function) -> list[ast.arg]:
    arguments = function.args
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def _annotations(function: Function) -> list[ast.expr]:
    found = [a.annotation for a in _parameters(function) if a.annotation is not None]
    return found + ([function.returns] if function.returns is not None else [])


def _compare(name: str, declaration: Function, candidate: Function) -> list[Evasion]:
    losses: list[Evasion] = []
    written = _parameters(candidate)
    by_name = {a.arg: a for a in written}
    for position, parameter in enumerate(_parameters(declaration)):
        if parameter.annotation is None:
            continue
        match = by_name.get(parameter.arg) or (written[position] if position < len(written) else None)
        why = _weaker(parameter.annotation, match.annotation if match is not None else None)
        if why:
            line = match.lineno if match is not None else candidate.lineno
            losses.append(Evasion(line, KIND, f"parameter `{parameter.arg}` of `{name}` {why}"))
    if declaration.returns is not None:
        why = _weaker(declaration.returns, candidate.returns)
        if why:
            losses.append(Evasion(candidate.lineno, KIND, f"the return type of `{name}` {why}"))
    return losses


def _weaker(declared: ast.expr, written: ast.expr | None) -> str | None:
    wanted = ast.unparse(declared)
    if written is None:
        return f"drops the declared annotation `{wanted}`"
    declared_names, written_names = _names(declared), _names(written)
    wide = (written_names & _WIDE) - declared_names
    if wide:
        return f"widens the declared `{wanted}` to `{sorted(wide)[0]}`"
    resolved_declared, resolved_written = _resolved(declared), _resolved(written)
    if (
        isinstance(resolved_declared, ast.Subscript)
        and isinstance(resolved_written, ast.Name | ast.Attribute)
        and _last_name(resolved_written) in _GENERICS
    ):
        return f"drops the type arguments of the declared `{wanted}`"
    return None


def _resolved(annotation: ast.expr) -> ast.expr:
    """A string forward reference read as the annotation it spells."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return ast.parse(annotation.value, mode="eval").body
        except _PARSE_ERRORS:
            return annotation
    return annotation


def _names(annotation: ast.expr) -> set[str]:
    try:
        return {
            _last_name(n) for n in ast.walk(_resolved(annotation)) if isinstance(n, ast.Name | ast.Attribute)
        }
    except RecursionError:  # an annotation too deep to read is no declared type
        return {"Any"}


def _last_name(node: ast.Name | ast.Attribute) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr


def _binding_line(module: ast.Module, name: str) -> int | None:
    """Where `name` is bound at the top level other than by `def` (assignment, import, class...)."""
    for node in module.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any((alias.asname or alias.name).split(".")[0] == name for alias in node.names):
                return node.lineno
        elif isinstance(node, ast.ClassDef) and node.name == name:
            return node.lineno
        for target in targets:
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                return node.lineno
    return None
