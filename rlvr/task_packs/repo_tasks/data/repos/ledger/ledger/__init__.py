"""A small double-entry style ledger: accounts, transfers and statements in integer cents."""

from ledger.accounts import InsufficientFunds, Ledger
from ledger.money import format_cents, parse_amount

__all__ = ["InsufficientFunds", "Ledger", "format_cents", "parse_amount"]
