"""The syntax layer: is a candidate valid Python, and what does its structure say?

`compile()` is the authority on validity (it also runs the symbol-table checks the parser alone misses,
such as `return` outside a function). tree-sitter locates errors compile() cannot place and answers the
structural queries: comments, type-checker suppression directives, imported modules and McCabe complexity.
`neutralize_comments` blanks every comment so a later type check cannot be told to suppress anything.

Positions in this module are 1-based lines and 1-based character (not byte) columns, like SyntaxError.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Tree

MAX_SOURCE_CHARS = 200_000
MAX_TREE_DEPTH = 1000

_LANGUAGE = Language(tree_sitter_python.language())

# McCabe decision points: each branch, loop, handler, short-circuit operator, comprehension
# clause, conditional expression and match case adds one path through the code.
_DECISION_NODES = frozenset(
    {
        "if_statement",
        "elif_clause",
        "for_statement",
        "while_statement",
        "except_clause",
        "boolean_operator",
        "conditional_expression",
        "for_in_clause",
        "if_clause",
        "case_clause",
    }
)

# Directives understood by Python type checkers (pyright, mypy, pyre, pytype, ty). `# type: int`
# annotations and lint markers (noqa) are not suppressions.
_SUPPRESSION = re.compile(
    r"#\s*(?:type\s*:\s*ignore|pyright\s*:|mypy\s*:|pyre-(?:ignore|fixme|strict|unsafe)|pytype\s*:|ty\s*:\s*ignore)",
    re.IGNORECASE,
)

_DYNAMIC_IMPORTERS = frozenset({"__import__", "import_module"})


@dataclass(frozen=True)
class Comment:
    line: int
    column: int
    text: str


@dataclass
class SyntaxReport:
    ok: bool
    message: str
    line: int | None = None
    column: int | None = None
    comments: list[Comment] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    complexity: int = 0
    suppressions: list[Comment] = field(default_factory=list)
    limit: str | None = None  # a flag naming the limit the source broke ("oversized:source", ...)


def analyze(source: str) -> SyntaxReport:
    """Validate `source` and describe its structure. Never raises: hostile input (huge, NUL bytes,
    unencodable text, pathological nesting) gives `ok=False` with a message saying why."""
    try:
        return _analyze(source)
    except Exception as exc:  # a verdict, never a crash of the grader; the message names the fault
        return SyntaxReport(ok=False, message=f"syntax layer failed: {type(exc).__name__}: {exc}")


def _analyze(source: str) -> SyntaxReport:
    if not isinstance(source, str):
        return SyntaxReport(ok=False, message=f"source must be str, got {type(source).__name__}")
    if len(source) > MAX_SOURCE_CHARS:
        return SyntaxReport(
            ok=False,
            message=f"source is {len(source)} characters, above the {MAX_SOURCE_CHARS} limit",
            limit="oversized:source",
        )
    nul = source.find("\0")
    if nul >= 0:
        line, column = _position_of(source, nul)
        return SyntaxReport(ok=False, message="source contains a NUL byte", line=line, column=column)
    try:
        encoded = source.encode("utf-8")
    except UnicodeEncodeError as exc:
        line, column = _position_of(source, exc.start)
        return SyntaxReport(
            ok=False, message="source is not valid Unicode text (lone surrogate)", line=line, column=column
        )

    python_lines = _python_line_breaks(encoded)
    walk = _walk(parse_source(python_lines), python_lines)
    report = SyntaxReport(
        ok=True,
        message="ok",
        comments=walk.comments,
        imports=walk.imports,
        complexity=walk.complexity,
        suppressions=[c for c in walk.comments if _SUPPRESSION.search(c.text)],
    )

    compile_error = _compile_error(source)
    if compile_error is not None:
        message, line, column = compile_error
        if line is None and walk.first_error is not None:
            line, column = walk.first_error
        report.ok, report.message, report.line, report.column = False, message, line, column
        if "nested too deeply" in message or "too many nested" in message:
            report.limit = "oversized:nesting"
    elif walk.max_depth > MAX_TREE_DEPTH:
        report.ok = False
        report.message = f"nesting deeper than {MAX_TREE_DEPTH} syntax-tree levels"
        report.limit = "oversized:nesting"
    return report


def neutralize_comments(source: str) -> str:
    """`source` with every comment replaced by spaces of the same character length, so lines and
    columns are unchanged. Strings containing `#` are untouched (tree-sitter knows what is a comment).
    A comment ends where Python ends it, also at a lone "\r" (tree-sitter alone would run it on).
    The shebang and the encoding declaration are comments too and are blanked: the source is already
    decoded text, and type checkers read it as UTF-8, so neither line carries meaning there.
    Unencodable text (lone surrogates) is passed through byte-for-byte with `surrogatepass`."""
    encoded = source.encode("utf-8", "surrogatepass")
    pieces: list[bytes] = []
    cursor = 0
    for start, end in _comment_spans(encoded):
        pieces.append(encoded[cursor:start])
        pieces.append(b" " * len(encoded[start:end].decode("utf-8", "surrogatepass")))
        cursor = end
    pieces.append(encoded[cursor:])
    return b"".join(pieces).decode("utf-8", "surrogatepass")


def _python_line_breaks(encoded: bytes) -> bytes:
    """Python ends a line at "\r\n", "\r" or "\n"; tree-sitter only at "\n". Give it only "\n"."""
    return encoded.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in encoded else encoded


def _comment_spans(encoded: bytes) -> list[tuple[int, int]]:
    """Byte spans of the comments in `encoded`, found on the "\n"-only text and mapped back."""
    python_lines = _python_line_breaks(encoded)
    spans = [(n.start_byte, n.end_byte) for n in _nodes(parse_source(python_lines)) if n.type == "comment"]
    if python_lines is encoded:
        return spans
    # Each dropped "\r" of a "\r\n" shifts later bytes left by one; undo that shift. A comment never
    # contains a line break, so its bytes map one to one.
    dropped_at = [m.start() - j for j, m in enumerate(re.finditer(rb"\r(?=\n)", encoded))]
    return [
        (start + bisect.bisect_right(dropped_at, start), end + bisect.bisect_right(dropped_at, end - 1))
        for start, end in spans
        if end > start
    ]


def subtree(node: Node) -> Iterator[tuple[Node, int]]:
    """`node` and its descendants in document order with their depth below `node`, iteratively."""
    cursor = node.walk()
    depth = 0
    while True:
        current = cursor.node
        if current is not None:
            yield current, depth
        if cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if depth == 0 or not cursor.goto_parent():
                return
            depth -= 1
        if depth == 0:
            return


@dataclass
class _Walk:
    comments: list[Comment] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    complexity: int = 1
    max_depth: int = 0
    first_error: tuple[int, int] | None = None


def max_scope_complexity(source: str) -> int:
    """The most McCabe decision points in one code-flow scope (the module's top level, or one
    function or lambda without the functions nested in it): the type checker analyses each scope's
    branches together, and its cost grows steeply with them."""
    encoded = _python_line_breaks(source.encode("utf-8", "surrogatepass"))
    scopes: list[tuple[int, int]] = [(-1, 0)]  # (depth of the scope's node, decisions so far)
    most = 0
    for node, depth in _nodes_with_depth(parse_source(encoded)):
        while len(scopes) > 1 and depth <= scopes[-1][0]:
            _, count = scopes.pop()
            most = max(most, count)
        if node.type in ("function_definition", "lambda"):
            scopes.append((depth, 0))
        elif node.type in _DECISION_NODES:
            scopes[-1] = (scopes[-1][0], scopes[-1][1] + 1)
    return max([most] + [count for _, count in scopes])


def parse_source(encoded: bytes) -> Tree:
    return Parser(_LANGUAGE).parse(encoded)


def _nodes(tree: Tree) -> Iterator[Node]:
    """Every node in document order, iteratively (deep trees cannot exhaust the Python stack)."""
    for node, _depth in _nodes_with_depth(tree):
        yield node


def _nodes_with_depth(tree: Tree) -> Iterator[tuple[Node, int]]:
    return subtree(tree.root_node)


def _walk(tree: Tree, encoded: bytes) -> _Walk:
    walk = _Walk()
    seen_imports: set[str] = set()

    def add_import(name: str) -> None:
        if name and name not in seen_imports:
            seen_imports.add(name)
            walk.imports.append(name)

    for node, depth in _nodes_with_depth(tree):
        walk.max_depth = max(walk.max_depth, depth)
        kind = node.type
        if kind in _DECISION_NODES:
            walk.complexity += 1
        elif kind == "comment":
            line, column = _point(node, encoded)
            walk.comments.append(Comment(line, column, text_of(node)))
        elif kind == "import_statement":
            for name_node in node.children_by_field_name("name"):
                add_import(_module_name(name_node))
        elif kind == "import_from_statement":
            module = node.child_by_field_name("module_name")
            if module is not None:
                add_import(text_of(module))
        elif kind == "future_import_statement":
            add_import("__future__")
        elif kind == "call":
            add_import(dynamic_import(node) or "")
        if walk.first_error is None and (kind == "ERROR" or node.is_missing):
            walk.first_error = _point(node, encoded)
    return walk


def _module_name(name_node: Node) -> str:
    """`a.b` for both `import a.b` and `import a.b as c`."""
    if name_node.type == "aliased_import":
        inner = name_node.child_by_field_name("name")
        return text_of(inner) if inner is not None else ""
    return text_of(name_node)


def dynamic_import(call: Node) -> str | None:
    """The module named by `__import__("x")` / `importlib.import_module("x")` when it is a literal."""
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None:
        return None
    if function.type == "attribute":
        attribute = function.child_by_field_name("attribute")
        name = text_of(attribute) if attribute is not None else ""
    else:
        name = text_of(function)
    if name not in _DYNAMIC_IMPORTERS:
        return None
    first = next((child for child in arguments.named_children if child.type != "comment"), None)
    if first is None or first.type not in ("string", "concatenated_string"):
        return None
    try:
        value = ast.literal_eval(text_of(first))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None  # f-strings and other non-literals: the module name is not known statically
    return value if isinstance(value, str) else None


def _compile_error(source: str) -> tuple[str, int | None, int | None] | None:
    try:
        with warnings.catch_warnings():
            # SyntaxWarnings (e.g. `x is 1`) must neither print nor, under `-W error`, become errors.
            warnings.simplefilter("ignore")
            compile(source, "<candidate>", "exec", dont_inherit=True)
    except SyntaxError as exc:  # includes IndentationError / TabError
        return f"{type(exc).__name__}: {exc.msg}", exc.lineno, exc.offset
    except RecursionError:
        return "code is nested too deeply to compile (recursion limit)", None, None
    except MemoryError:
        return "code is nested too deeply to compile (parser stack overflow)", None, None
    except (ValueError, OverflowError) as exc:
        return f"{type(exc).__name__}: {exc}", None, None
    return None


def text_of(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def _point(node: Node, encoded: bytes) -> tuple[int, int]:
    """1-based line and character column of a node (tree-sitter columns count bytes)."""
    row, byte_column = node.start_point
    line_start = node.start_byte - byte_column
    column = len(encoded[line_start : node.start_byte].decode("utf-8", "replace")) + 1
    return row + 1, column


def _position_of(source: str, index: int) -> tuple[int, int]:
    line_start = source.rfind("\n", 0, index) + 1
    return source.count("\n", 0, index) + 1, index - line_start + 1
