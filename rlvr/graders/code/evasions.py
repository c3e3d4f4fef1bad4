"""Constructs that hide running code from the type checker, so type errors there would cost nothing.

pyright does not check what it considers unreachable, what a string holds, or what `@no_type_check`
marks. Each construct found here costs the types layer one error (`typecheck.report.charge_evasions`);
code pyright itself finds unreachable is charged through its `reportUnreachable` diagnostics. Kinds:

  no_type_check   `@no_type_check` (any reference outside an import).
  type_checking   `TYPE_CHECKING` anywhere except a plain `if TYPE_CHECKING:` holding only imports: a
                  negated or combined test, an `else`/`elif`, a ternary, an alias.
  static_test     a test pyright decides without running it (`sys.platform`, `sys.version_info`,
                  `os.name`, constants such as `if False:` or `assert 0`), so one branch is never
                  checked. `while True:` and `assert <true constant>` hide nothing and are not charged.
  no_return       `NoReturn` / `Never` in candidate code (also as a string annotation or an alias):
                  a call to such a function makes pyright skip everything after it.
  dynamic_code    running code built at run time: `exec`/`eval`/`compile` in any form (called,
                  aliased, fetched by name), `__builtins__`, `import builtins`, modules that run
                  serialized or textual code (`runpy`, `code`, `codeop`, `marshal`, `pickle`,
                  `ctypes`), frame and function internals (`__globals__`, `__code__`,
                  `__subclasses__`, `f_globals`, `sys._getframe`, `sys.modules`) and `__import__` /
                  `import_module` of a computed name.
  dynamic_import  `__import__("m")` / `import_module("m")` of a module outside the standard
                  library, which pyright does not resolve the way it resolves `import m`.
  opaque_code     `exec`/`eval`/`compile` of a source that is not a string literal (built at run
                  time, so none of it can be checked), or the runner reached any other way than a
                  direct call (aliased, fetched by name): the types layer scores 0 (`OPAQUE`).

A task whose own reference uses a kind (HumanEval/160 evaluates an expression it builds) lets its
candidates use that kind for free: `allowed_kinds(reference)`.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass

from tree_sitter import Node

from rlvr.graders.code.syntax import dynamic_import, parse_source, subtree, text_of

_NO_TYPE_CHECK = frozenset({"no_type_check", "no_type_check_decorator"})
_CODE_RUNNERS = frozenset({"exec", "eval", "compile"})
_NO_RETURN = frozenset({"NoReturn", "Never"})
_DYNAMIC_IMPORTERS = frozenset({"__import__", "import_module"})
_CODE_MODULES = frozenset({"builtins", "runpy", "code", "codeop", "marshal", "pickle", "_pickle", "ctypes"})
_INTERNALS = frozenset(
    {
        "__builtins__",
        "__globals__",
        "__code__",
        "__subclasses__",
        "__closure__",
        "f_globals",
        "f_builtins",
        "f_locals",
        "f_back",
        "_getframe",
        "gi_frame",
        "tb_frame",
    }
)
# names that, spelled in a string, fetch a code runner or an internal (`getattr(b, "exec")`)
_HANDLE_STRINGS = _CODE_RUNNERS | _INTERNALS | {"builtins", "__import__"}
_STATIC_ATTRIBUTES = frozenset({"sys.platform", "sys.version_info", "os.name"})
_CONSTANT_NODES = frozenset(
    {
        "true",
        "false",
        "none",
        "integer",
        "float",
        "string",
        "string_start",
        "string_content",
        "string_end",
        "escape_sequence",
        "concatenated_string",
        "not_operator",
        "boolean_operator",
        "comparison_operator",
        "unary_operator",
        "binary_operator",
        "parenthesized_expression",
        "tuple",
    }
)
OPAQUE = "opaque_code"
_LITERAL_STRINGS = frozenset({"string", "concatenated_string"})
_TESTS = {"if_statement", "elif_clause", "while_statement", "conditional_expression", "assert_statement"}
_ANNOTATION_WORDS = re.compile(r"\b(?:NoReturn|Never)\b")


@dataclass(frozen=True)
class Evasion:
    line: int  # 1-based
    kind: str
    description: str


def type_check_evasions(source: str, allowed: frozenset[str] = frozenset()) -> list[Evasion]:
    """Every construct in `source` that hides running code from pyright, except kinds in `allowed`."""
    encoded = source.encode("utf-8", "surrogatepass")
    encoded = encoded.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    found: list[Evasion] = []
    for node, _depth in subtree(parse_source(encoded).root_node):
        evasion = _evasion(node)
        if evasion is not None and evasion[0] not in allowed:
            found.append(Evasion(node.start_point[0] + 1, *evasion))
    return found


def allowed_kinds(reference: str) -> frozenset[str]:
    """The kinds a task's own (trusted) reference uses: its candidates are not charged for them (a
    reference that runs built code allows the milder literal form too)."""
    kinds = {e.kind for e in type_check_evasions(reference)}
    return frozenset(kinds | {"dynamic_code"} if OPAQUE in kinds else kinds)


def _evasion(node: Node) -> tuple[str, str] | None:
    kind = node.type
    if kind == "identifier":
        return _identifier(node)
    if kind in _TESTS:
        return _static_test(node)
    if kind == "call":
        return _call(node)
    if kind in ("import_statement", "import_from_statement"):
        return _import(node)
    if kind == "string" and _in_annotation(node) and _ANNOTATION_WORDS.search(text_of(node)):
        return "no_return", "a NoReturn/Never annotation makes the type checker skip code after its calls"
    if kind == "string_content" and text_of(node) in _HANDLE_STRINGS and _fetched_by_name(node):
        if text_of(node) in _CODE_RUNNERS:
            return OPAQUE, f'"{text_of(node)}" fetched by name runs code the type checker never sees'
        return (
            "dynamic_code",
            f'"{text_of(node)}" spelled as a string fetches code the type checker never sees',
        )
    return None


def _identifier(node: Node) -> tuple[str, str] | None:
    name = text_of(node)
    if name in _NO_RETURN:  # also `from typing import NoReturn as Fine`
        return "no_return", f"{name} makes the type checker skip code after calls to it"
    if _inside(node, ("import_statement", "import_from_statement")):
        if name == "TYPE_CHECKING" and _inside(node, ("aliased_import",)):
            return "type_checking", "TYPE_CHECKING under another name hides code from the type checker"
        return None
    if _is_keyword_name(node):
        return None
    if name in _NO_TYPE_CHECK:
        return "no_type_check", f"{name} hides code from the type checker"
    if name == "TYPE_CHECKING" and not _plain_import_guard(node):
        return "type_checking", "TYPE_CHECKING test hides runtime code from the type checker"
    if name in _INTERNALS:
        return "dynamic_code", f"{name} reaches code the type checker never sees"
    if name in _CODE_RUNNERS and _is_builtin_reference(node):
        if not _runs_a_literal(node):
            return OPAQUE, f"{name} of a source built at run time: none of that code can be type-checked"
        return "dynamic_code", f"{name} runs code the type checker never sees"
    if name == "modules" and _attribute_of(node) == "sys":
        return "dynamic_code", "sys.modules reaches modules the type checker never sees"
    return None


def _call(node: Node) -> tuple[str, str] | None:
    function = node.child_by_field_name("function")
    if function is None:
        return None
    name = (
        text_of(function.child_by_field_name("attribute") or function)
        if function.type == "attribute"
        else text_of(function)
    )
    if name not in _DYNAMIC_IMPORTERS:
        return None
    module = dynamic_import(node)
    if module is None:
        return "dynamic_code", f"{name} of a computed name imports what the type checker never sees"
    if module.split(".")[0] in _CODE_MODULES:
        return "dynamic_code", f'dynamic import of "{module}" reaches code the type checker never sees'
    if module.split(".")[0] not in sys.stdlib_module_names:
        return "dynamic_import", f'dynamic import of "{module}", which is not in the standard library'
    return None


def _import(node: Node) -> tuple[str, str] | None:
    names = [text_of(n) for n in node.children_by_field_name("name")]
    module = node.child_by_field_name("module_name")
    roots = [text_of(module)] if module is not None else [n.split(" as ")[0] for n in names]
    for root in roots:
        if root.split(".")[0] in _CODE_MODULES:
            return "dynamic_code", f'importing "{root}" reaches code the type checker never sees'
    return None


def _static_test(node: Node) -> tuple[str, str] | None:
    condition = _condition(node)
    if condition is None or not _is_static(condition):
        return None
    if node.type == "while_statement" and _truthy_constant(condition):
        return None  # `while True:` hides nothing
    if node.type == "assert_statement" and _truthy_constant(condition):
        return None
    if any(n.type == "identifier" and text_of(n) == "TYPE_CHECKING" for n, _ in subtree(condition)):
        return None  # charged (or excused) as a TYPE_CHECKING use
    return "static_test", "a test decided without running it hides a branch from the type checker"


def _condition(node: Node) -> Node | None:
    if node.type == "conditional_expression":
        named = [c for c in node.named_children if c.type != "comment"]
        return named[1] if len(named) == 3 else None
    if node.type == "assert_statement":
        return next((c for c in node.named_children if c.type != "comment"), None)
    return node.child_by_field_name("condition")


def _is_static(condition: Node) -> bool:
    constant = True
    for child, _depth in subtree(condition):
        if child.type == "attribute" and text_of(child).replace(" ", "") in _STATIC_ATTRIBUTES:
            return True
        if child.type == "identifier" and text_of(child) == "TYPE_CHECKING":
            return True
        if child.is_named and child.type not in _CONSTANT_NODES:
            constant = False
    return constant


def _truthy_constant(condition: Node) -> bool:
    try:
        return bool(ast.literal_eval(text_of(condition)))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _inside(node: Node, kinds: tuple[str, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in kinds:
            return True
        parent = parent.parent
    return False


def _is_keyword_name(node: Node) -> bool:
    parent = node.parent
    return (
        parent is not None
        and parent.type == "keyword_argument"
        and parent.child_by_field_name("name") == node
    )


def _attribute_of(node: Node) -> str | None:
    """For `x.name`, the text of `x` when `node` is `name`; None when `node` is not an attribute name."""
    parent = node.parent
    if parent is None or parent.type != "attribute" or parent.child_by_field_name("attribute") != node:
        return None
    owner = parent.child_by_field_name("object")
    return text_of(owner) if owner is not None else ""


def _is_builtin_reference(node: Node) -> bool:
    """`exec`, `builtins.exec`, `__builtins__.exec` - but not `re.compile` or `self.eval`."""
    owner = _attribute_of(node)
    if owner is None:
        parent = node.parent  # a definition's own name (`def compile(...)`) is not the builtin
        return not (
            parent is not None
            and parent.type in ("function_definition", "class_definition")
            and parent.child_by_field_name("name") == node
        )
    return owner in ("builtins", "__builtins__")


def _runs_a_literal(node: Node) -> bool:
    """`exec("...")` / `builtins.eval("...")`: a direct call whose source is a plain string literal (no
    f-string interpolation), so the text run is at least in the candidate's file."""
    callee = node if _attribute_of(node) is None else node.parent
    call = callee.parent if callee is not None else None
    if call is None or call.type != "call" or call.child_by_field_name("function") != callee:
        return False
    arguments = call.child_by_field_name("arguments")
    first = next((c for c in arguments.named_children if c.type != "comment"), None) if arguments else None
    return (
        first is not None
        and first.type in _LITERAL_STRINGS
        and not any(n.type == "interpolation" for n, _ in subtree(first))
    )


def _plain_import_guard(node: Node) -> bool:
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) with no else/elif, whose body is only imports."""
    condition = node.parent
    if condition is not None and condition.type == "attribute":
        node, condition = condition, condition.parent
    if (
        condition is None
        or condition.type != "if_statement"
        or condition.child_by_field_name("condition") != node
    ):
        return False
    if any(c.type in ("else_clause", "elif_clause") for c in condition.children):
        return False
    body = condition.child_by_field_name("consequence")
    return body is not None and all(
        c.type in ("import_statement", "import_from_statement", "future_import_statement", "comment")
        for c in body.named_children
    )


def _fetched_by_name(node: Node) -> bool:
    """A string used as a name to fetch something: an argument of getattr/attrgetter/__getattribute__
    or a subscript (`vars(m)["exec"]`), not a word in a list."""
    parent = node.parent
    while parent is not None and parent.type in ("string", "concatenated_string", "parenthesized_expression"):
        parent = parent.parent
    if parent is not None and parent.type == "subscript":
        return True
    if parent is None or parent.type != "argument_list" or parent.parent is None:
        return False
    function = parent.parent.child_by_field_name("function")
    if function is None:
        return False
    name = (
        text_of(function.child_by_field_name("attribute") or function)
        if function.type == "attribute"
        else text_of(function)
    )
    return name in ("getattr", "attrgetter", "__getattribute__", "__getattr__", "methodcaller")


def _in_annotation(node: Node) -> bool:
    """Inside a parameter, return or variable annotation (tree-sitter wraps each in a `type` node)."""
    parent = node.parent
    while parent is not None and parent.type not in ("block", "module", "expression_statement"):
        if parent.type == "type":
            return True
        parent = parent.parent
    return False
