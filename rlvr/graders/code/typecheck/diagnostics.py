"""pyright's diagnostics, read one way: an LSP pull-diagnostic item (severity 1, 2, ...) and an
`--outputjson` item (severity "error", "warning", ...) become the same `Diagnostic`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlvr.graders.code.typecheck.run import Diagnostic

_SEVERITY: dict[object, str] = {1: "error", 2: "warning", "error": "error", "warning": "warning"}


def diagnostic(item: Any) -> Diagnostic | None:
    """(1-based line, "error" | "warning", message), or None for information, hints and junk
    (e.g. an "unused variable" fade costs nothing)."""
    if not isinstance(item, dict):
        return None
    severity = _SEVERITY.get(item.get("severity"))
    if severity is None:
        return None
    start = item.get("range", {}).get("start", {}) if isinstance(item.get("range"), dict) else {}
    line = start.get("line", 0) if isinstance(start, dict) else 0
    return (int(line) + 1 if isinstance(line, int) else 1, severity, str(item.get("message", "")))


def pulled(result: Any) -> list[Diagnostic]:
    """The diagnostics of one `textDocument/diagnostic` response's result."""
    items = result.get("items", []) if isinstance(result, dict) else []
    found = [diagnostic(item) for item in (items if isinstance(items, list) else [])]
    return [d for d in found if d is not None]


def cli_items(payload: Any) -> list[tuple[Path, Diagnostic]] | None:
    """(file, diagnostic) of each item of `pyright --outputjson`'s report; None if it has no list."""
    items = payload.get("generalDiagnostics") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return None
    found = []
    for item in items:
        parsed = diagnostic(item)
        if parsed is not None:
            found.append((Path(str(item.get("file", ""))), parsed))
    return found
