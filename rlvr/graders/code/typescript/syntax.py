"""The TypeScript syntax layer: tree-sitter-typescript says whether a candidate parses and where it
does not, which comments it holds (suppression directives among them) and what it imports.

`blank_comments` replaces every comment with spaces (line breaks kept, so positions are unchanged)
before the type check: `// @ts-ignore`, `// @ts-expect-error`, `// @ts-nocheck` and
`/// <reference ...>` directives then buy nothing.
Positions are 1-based lines and 1-based character columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

from rlvr.graders.code.syntax import MAX_SOURCE_CHARS, MAX_TREE_DEPTH, Comment, subtree

_LANGUAGE = Language(tree_sitter_typescript.language_typescript())
SUPPRESSION = re.compile(r"@ts-(?:ignore|nocheck|expect-error)\b|^/\s*<reference\b")


@dataclass
class TsSyntaxReport:
    ok: bool
    message: str
    line: int | None = None
    column: int | None = None
    comments: list[Comment] = field(default_factory=list)
    suppressions: list[Comment] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    limit: str | None = None


def parse(source: str) -> Node:
    return Parser(_LANGUAGE).parse(source.encode("utf-8", "surrogatepass")).root_node


def _column(source_bytes: bytes, node: Node) -> int:
    row_start = source_bytes.rfind(b"\n", 0, node.start_byte) + 1
    return len(source_bytes[row_start : node.start_byte].decode("utf-8", "replace")) + 1


def analyze(source: str) -> TsSyntaxReport:
    """Never raises: hostile input gives ok=False with a message saying why."""
    try:
        return _analyze(source)
    except Exception as exc:  # a verdict, never a crash of the grader
        return TsSyntaxReport(ok=False, message=f"syntax layer failed: {type(exc).__name__}: {exc}")


def _analyze(source: str) -> TsSyntaxReport:
    if len(source) > MAX_SOURCE_CHARS:
        return TsSyntaxReport(
            ok=False,
            message=f"source is {len(source)} characters, above the {MAX_SOURCE_CHARS} limit",
            limit="oversized:source",
        )
    if "\0" in source:
        return TsSyntaxReport(ok=False, message="source contains a NUL byte")
    try:
        encoded = source.encode("utf-8")
    except UnicodeEncodeError:
        return TsSyntaxReport(ok=False, message="source is not valid Unicode text (lone surrogate)")
    root = Parser(_LANGUAGE).parse(encoded).root_node
    report = TsSyntaxReport(ok=True, message="ok")
    first_error: Node | None = None
    for node, depth in subtree(root):
        if depth > MAX_TREE_DEPTH:
            return TsSyntaxReport(
                ok=False,
                message=f"nesting deeper than {MAX_TREE_DEPTH} syntax-tree levels",
                limit="oversized:nesting",
            )
        if first_error is None and (node.is_error or node.is_missing):
            first_error = node
        if node.type == "comment":
            text = (node.text or b"").decode("utf-8", "replace")
            comment = Comment(node.start_point[0] + 1, _column(encoded, node), text)
            report.comments.append(comment)
            if SUPPRESSION.search(text.lstrip("/").lstrip()) or SUPPRESSION.search(text):
                report.suppressions.append(comment)
        elif node.type == "import_statement":
            module = node.child_by_field_name("source")
            if module is not None:
                report.imports.append((module.text or b"").decode("utf-8", "replace").strip("'\""))
        elif node.type == "call_expression":
            function = node.child_by_field_name("function")
            if function is not None and function.text == b"require":
                report.imports.append("require")
    if first_error is not None or root.has_error:
        where = first_error or root
        what = (
            "missing " + where.type
            if first_error is not None and first_error.is_missing
            else "unexpected text"
        )
        report.ok = False
        report.message = what
        report.line = where.start_point[0] + 1
        report.column = _column(encoded, where)
    return report


def blank_comments(source: str) -> str:
    """`source` with every comment replaced by spaces (its line breaks kept)."""
    encoded = source.encode("utf-8", "surrogatepass")
    spans = [(n.start_byte, n.end_byte) for n, _ in subtree(parse(source)) if n.type == "comment"]
    pieces: list[bytes] = []
    cursor = 0
    for start, end in spans:
        if start < cursor:
            continue
        pieces.append(encoded[cursor:start])
        text = encoded[start:end].decode("utf-8", "surrogatepass")
        pieces.append("".join(c if c in "\r\n" else " " for c in text).encode())
        cursor = end
    pieces.append(encoded[cursor:])
    return b"".join(pieces).decode("utf-8", "surrogatepass")


def defines(source: str, name: str) -> bool:
    """Whether the module's top level declares `name` (a function, or a const/let/var binding),
    exported or not."""
    root = parse(source)
    if root.has_error:
        return False
    for statement in root.named_children:
        node = statement
        if node.type == "export_statement":
            inner = node.child_by_field_name("declaration")
            if inner is None:
                continue
            node = inner
        if node.type in ("function_declaration", "generator_function_declaration", "class_declaration"):
            declared = node.child_by_field_name("name")
            if declared is not None and declared.text == name.encode():
                return True
        elif node.type in ("lexical_declaration", "variable_declaration"):
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    declared = declarator.child_by_field_name("name")
                    if declared is not None and declared.text == name.encode():
                        return True
    return False
