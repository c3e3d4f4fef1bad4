"""A repository's Python sources as modules: the dotted name of a file, whether a path is a test file,
and the parsed top-level statements of each package module (what the derived checks read the
reference's and the base's definitions from)."""

from __future__ import annotations

import ast
from collections.abc import Iterator


def module_of(path: str) -> str | None:
    """The dotted module name of a `.py` file (`pkg/__init__.py` is `pkg`), None for anything else."""
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


def package_modules(files: dict[str, str]) -> Iterator[tuple[str, ast.Module]]:
    """(module name, parsed source) of every package module in `files`, by path; test files and
    sources that do not parse are skipped."""
    for path, source in sorted(files.items()):
        module = module_of(path)
        if module is None or is_test_path(path):
            continue
        try:
            yield module, ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue


def package_functions(files: dict[str, str]) -> dict[str, ast.FunctionDef]:
    """{"module:function" or "module:Class.method": its definition} of a state's package modules
    (top-level functions and the methods of top-level classes)."""
    found: dict[str, ast.FunctionDef] = {}
    for module, tree in package_modules(files):
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found[f"{module}:{node.name}"] = node
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        found[f"{module}:{node.name}.{item.name}"] = item
    return found
