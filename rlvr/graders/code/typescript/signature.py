"""The prompt's declared signature, as a check the type checker runs on the candidate.

A candidate that widens or drops the prompt's annotations (`): unknown`, `): number | string`,
`): {}`, no return annotation at all, or a `const f = (...) => ...` whose type is inferred) hides
from the checker the very errors the annotations would expose, and so scored *more* types credit
than an honest candidate that keeps them. The type layer therefore also checks that the
candidate's entry point is assignable to the prompt's declared function type: one line appended
to the (comment-blanked) program, `const <name>: <declared type> = <entry>;`. Widening a parameter
stays free (a function that accepts more is still a valid implementation); widening the result,
narrowing a parameter or adding a required one costs an error, as a missing annotation costs one
in the Python family.
"""

from __future__ import annotations

from tree_sitter import Node

from rlvr.graders.code.typescript.syntax import parse

CHECK_NAME = "__rlvr_declared_signature"


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _parameter(node: Node) -> str | None:
    """A parameter of a function *type* (no initializer: one becomes an optional parameter)."""
    if node.type not in ("required_parameter", "optional_parameter"):
        return None
    pattern = node.child_by_field_name("pattern")
    annotation = node.child_by_field_name("type")
    if pattern is None or annotation is None:
        return None  # an unannotated parameter: the prompt declares nothing to check it against
    optional = node.type == "optional_parameter" or node.child_by_field_name("value") is not None
    name = _text(pattern)
    if optional and not name.startswith("..."):
        name += "?"
    return f"{name}{_text(annotation)}"


def declared_type(prompt: str, entry_point: str) -> str | None:
    """The function type the prompt declares for `entry_point` (`<T>(a: T[]) => T`), or None when
    the prompt declares no fully annotated function of that name."""
    root = parse(prompt + "\n}\n")
    for statement in root.named_children:
        node = statement
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        if node.type != "function_declaration" or _text(node.child_by_field_name("name")) != entry_point:
            continue
        if node.has_error:
            return None
        parameters = node.child_by_field_name("parameters")
        returns = node.child_by_field_name("return_type")
        if parameters is None or returns is None:
            return None
        parts = [_parameter(child) for child in parameters.named_children if child.type != "comment"]
        if any(part is None for part in parts):
            return None
        generics = _text(node.child_by_field_name("type_parameters"))
        result = _text(returns).lstrip()[1:].strip()  # ": T" -> "T"
        return f"{generics}({', '.join(p for p in parts if p)}) => {result}"
    return None


def with_signature_check(program: str, prompt: str, entry_point: str) -> str:
    """`program` with the declared-signature check appended (unchanged when the prompt declares none)."""
    declared = declared_type(prompt, entry_point)
    if declared is None or not entry_point.isidentifier():
        return program
    return f"{program}\n;const {CHECK_NAME}: {declared} = {entry_point};\n"
