"""What the whole-repository type gate charges, aligned with the single-function layer's rules.

The gate counts, per changed state, the pyright errors and the type-check evasions (see
`rlvr.graders.code.evasions`) that the state has beyond the base state. Idioms that hide no code from
the checker cost nothing:

- unreachable code that holds nothing to check, by the single-function layer's own rule
  (`rlvr.graders.code.typecheck.unreachable`): `pass`, `break`, a bare `return` or `return None`, a
  docstring, a `raise` of constants, `assert False` / `assert_never(x)` closing an exhaustive branch
  (what pyright reports as unreachable there is the exhaustiveness check itself); a `return` of any
  other value is checked code (`return "text"` in a function returning int hides a type error);
- a `NoReturn` helper (`def fail(msg) -> NoReturn: raise ...`) and an `assert False`: what they could
  hide is the code after them, which pyright reports as unreachable and which costs an error unless it
  holds nothing to check;
- an evasion kind the task's reference itself uses (`allowed_kinds`), and an evasion the base file
  already had (only those a state adds are charged).

Feedback names each charged error and evasion with its file and line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rlvr.graders.code.evasions import Evasion, allowed_kinds, type_check_evasions
from rlvr.graders.code.typecheck.unreachable import harmless_lines
from rlvr.graders.repo.whole_repo_types import RepoTypeReport, is_builtins_override

UNREACHABLE_WORD = "unreachable"
FREE_KINDS = frozenset({"no_return"})  # what it hides is charged as unreachable code instead


def charged_report(report: RepoTypeReport, files: dict[str, str]) -> RepoTypeReport:
    """`report` without the unreachable-code errors whose code holds nothing to check."""
    if report.failure is not None:
        return report
    out = RepoTypeReport()
    harmless: dict[str, frozenset[int]] = {}
    for key, count in report.errors.items():
        path, message = key
        lines = report.where.get(key) or [report.lines.get(key, 0)] * count
        if UNREACHABLE_WORD in message.lower() and path in files:
            if path not in harmless:
                harmless[path] = harmless_lines(files[path])
            lines = [line for line in lines if line not in harmless[path]]
        if lines:
            out.errors[key] = len(lines)
            out.lines[key] = lines[0]
            out.where[key] = lines
    return out


@dataclass(frozen=True)
class ChargedEvasion:
    path: str
    evasion: Evasion

    def __str__(self) -> str:
        return f"{self.path}:{self.evasion.line}: {self.evasion.description}"


def reference_kinds(reference: dict[str, str]) -> frozenset[str]:
    """The evasion kinds a task's reference state uses anywhere, plus those that cost nothing."""
    used = [allowed_kinds(text) for path, text in reference.items() if path.endswith(".py")]
    return frozenset().union(*used) | FREE_KINDS


def introduced_evasions(
    base: dict[str, str], files: dict[str, str], allowed: frozenset[str], changed: list[str]
) -> list[ChargedEvasion]:
    """Evasions a changed Python file has beyond the base file's of the same kind, except `allowed`
    kinds (`reference_kinds`); a `__builtins__.py` override is always one."""
    charged: list[ChargedEvasion] = []
    for path in changed:
        if not path.endswith(".py") or path not in files:
            continue
        if is_builtins_override(path):
            charged.append(
                ChargedEvasion(path, Evasion(1, "builtins_override", "a __builtins__.py override"))
            )
            continue
        before = (
            Counter(e.kind for e in type_check_evasions(base[path], allowed)) if path in base else Counter()
        )
        for evasion in type_check_evasions(files[path], allowed):
            if before[evasion.kind] > 0:
                before[evasion.kind] -= 1
                continue
            if evasion.kind == "static_test" and _is_assert_line(files[path], evasion.line):
                continue  # `assert False`: what follows it is charged as unreachable code
            charged.append(ChargedEvasion(path, evasion))
    return charged


def _is_assert_line(source: str, line: int) -> bool:
    lines = source.splitlines()
    return 0 < line <= len(lines) and lines[line - 1].lstrip().startswith("assert ")
