"""From pyright's diagnostics for one candidate to its `TypeReport`: the score, the counts and a few
short messages a policy can read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rlvr.graders.code.typecheck.run import Diagnostic

MAX_MESSAGES = 5
MAX_MESSAGE_CHARS = 160


@dataclass
class TypeReport:
    score: float
    errors: int
    warnings: int
    messages: list[str] = field(default_factory=list)
    error: str | None = None


def type_score(errors: int) -> float:
    """1.0 when clean, decaying with each error; warnings are free."""
    return 1.0 / (1.0 + errors)


def failed_report(reason: str) -> TypeReport:
    """The checker could not judge this source: no credit, and the reason is said, never a silent 0."""
    return TypeReport(score=0.0, errors=0, warnings=0, messages=[], error=reason)


def diagnostics_report(items: list[Diagnostic]) -> TypeReport:
    """Errors first, then warnings, each by line; at most MAX_MESSAGES messages."""
    errors = sum(1 for _, severity, _ in items if severity == "error")
    ordered = sorted(items, key=lambda item: (item[1] != "error", item[0]))
    messages = [_short(line, severity, message) for line, severity, message in ordered[:MAX_MESSAGES]]
    return TypeReport(
        score=type_score(errors), errors=errors, warnings=len(items) - errors, messages=messages
    )


def charge_evasions(report: TypeReport, evasions: list[tuple[int, str]]) -> TypeReport:
    """One error for each construct that hides running code from pyright (see `type_check_evasions`)."""
    if not evasions:
        return report
    errors = report.errors + len(evasions)
    notes = [f"line {line}: {what}" for line, what in evasions]
    messages = (notes + report.messages)[:MAX_MESSAGES]
    return TypeReport(score=type_score(errors), errors=errors, warnings=report.warnings, messages=messages)


def copy_report(report: TypeReport) -> TypeReport:
    """A copy whose message list a caller may mutate without touching the original."""
    return replace(report, messages=list(report.messages))


def _short(line: int, severity: str, message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    if len(first) > MAX_MESSAGE_CHARS:
        first = first[: MAX_MESSAGE_CHARS - 1] + "…"
    prefix = "" if severity == "error" else "warning: "
    return f"line {line}: {prefix}{first}"
