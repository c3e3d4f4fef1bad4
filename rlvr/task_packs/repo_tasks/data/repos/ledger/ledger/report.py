"""Statements: an account's postings with a running balance, and a summary of all accounts."""

from ledger.accounts import Ledger
from ledger.money import format_cents


def statement(ledger: Ledger, name: str) -> list[str]:
    """One line per posting of `name`: "memo: amount -> running balance", oldest first."""
    running = 0
    lines: list[str] = []
    for posting in ledger.postings:
        if posting.account != name:
            continue
        running += posting.cents
        lines.append(f"{posting.memo}: {format_cents(posting.cents)} -> {format_cents(running)}")
    return lines


def summary(ledger: Ledger) -> dict[str, str]:
    """Every account's formatted balance, plus "total"."""
    out = {name: format_cents(ledger.balance(name)) for name in ledger.accounts()}
    out["total"] = format_cents(sum(ledger.balance(name) for name in ledger.accounts()))
    return out
