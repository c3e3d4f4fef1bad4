"""From pyright's diagnostics for one candidate to its `TypeReport`: the score, the counts and a few
short messages a policy can read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from rlvr.graders.code.evasions import OPAQUE, Evasion
from rlvr.graders.code.typecheck.run import Diagnostic
from rlvr.graders.code.typecheck.unreachable import harmless_lines

MAX_MESSAGES = 5
MAX_MESSAGE_CHARS = 160


@dataclass
class TypeReport:
    score: float
    errors: int
    warnings: int
    messages: list[str] = field(default_factory=list)
    error: str | None = None  # the checker itself failed (machinery): no judgement of the source
    # the source itself could not be checked within a limit (e.g. "timeout:types"): a scored 0
    flag: str | None = None


def type_score(errors: int) -> float:
    """1.0 when clean, decaying with each error; warnings are free."""
    return 1.0 / (1.0 + errors)


def failed_report(reason: str) -> TypeReport:
    """The checker could not judge this source: no credit, and the reason is said, never a silent 0."""
    return TypeReport(score=0.0, errors=0, warnings=0, messages=[], error=reason)


def limited_report(flag: str, reason: str) -> TypeReport:
    """The source's own content kept the checker from judging it (too slow, too complex, too big):
    no credit, a flag naming the limit, and no `error` - it is the candidate's failure, not ours."""
    return TypeReport(score=0.0, errors=0, warnings=0, messages=[reason], flag=flag)


_UNREACHABLE = re.compile(r"\bunreachable\b", re.IGNORECASE)


def diagnostics_report(items: list[Diagnostic], source: str | None = None) -> TypeReport:
    """Errors first, then warnings, each by line; at most MAX_MESSAGES messages. Unreachable code
    (pyright's `reportUnreachable`) costs an error unless it holds nothing to check (`break`,
    `pass`, a bare `return`, as after a `return` inside a loop; the rule is `unreachable`'s)."""
    if source is not None:
        items = [item for item in items if not _harmless_unreachable(item, source)]
    errors = sum(1 for _, severity, _ in items if severity == "error")
    ordered = sorted(items, key=lambda item: (item[1] != "error", item[0]))
    messages = [_short(line, severity, message) for line, severity, message in ordered[:MAX_MESSAGES]]
    return TypeReport(
        score=type_score(errors), errors=errors, warnings=len(items) - errors, messages=messages
    )


def charge_evasions(report: TypeReport, evasions: list[Evasion]) -> TypeReport:
    """One error for each construct that hides running code from pyright (see `evasions`), and no
    score at all when code built at run time is run (`opaque_code`: nothing of it was checked)."""
    if not evasions:
        return report
    errors = report.errors + len(evasions)
    notes = [f"line {e.line}: {e.description}" for e in evasions]
    messages = (notes + report.messages)[:MAX_MESSAGES]
    score = 0.0 if any(e.kind == OPAQUE for e in evasions) else type_score(errors)
    return TypeReport(score=score, errors=errors, warnings=report.warnings, messages=messages)


def copy_report(report: TypeReport) -> TypeReport:
    """A copy whose message list a caller may mutate without touching the original."""
    return replace(report, messages=list(report.messages))


def _short(line: int, severity: str, message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    if len(first) > MAX_MESSAGE_CHARS:
        first = first[: MAX_MESSAGE_CHARS - 1] + "…"
    prefix = "" if severity == "error" else "warning: "
    return f"line {line}: {prefix}{first}"


def _harmless_unreachable(item: Diagnostic, source: str) -> bool:
    line, severity, message = item
    if severity != "error" or not _UNREACHABLE.search(message):
        return False
    return line in harmless_lines(source)
