"""The ledger: named accounts holding cents, with a history of every posting."""

from dataclasses import dataclass


class InsufficientFunds(Exception):
    """A withdrawal or transfer larger than the account's balance (and its overdraft limit)."""


@dataclass(frozen=True)
class Posting:
    account: str
    cents: int
    memo: str


class Ledger:
    """Accounts by name. Balances never go below minus the account's overdraft limit."""

    def __init__(self) -> None:
        self._balances: dict[str, int] = {}
        self._limits: dict[str, int] = {}
        self.postings: list[Posting] = []

    def open(self, name: str, overdraft: int = 0) -> None:
        """Open an account with a zero balance; opening an existing account is a ValueError."""
        if name in self._balances:
            raise ValueError(f"account exists: {name}")
        self._balances[name] = 0
        self._limits[name] = overdraft

    def balance(self, name: str) -> int:
        """The balance of an account in cents (KeyError for an unknown account)."""
        return self._balances[name]

    def deposit(self, name: str, cents: int, memo: str = "deposit") -> int:
        """Add a positive amount; returns the new balance."""
        if cents <= 0:
            raise ValueError("deposits must be positive")
        return self._post(name, cents, memo)

    def withdraw(self, name: str, cents: int, memo: str = "withdrawal") -> int:
        """Remove a positive amount, allowed down to minus the overdraft limit; returns the new balance."""
        if cents <= 0:
            raise ValueError("withdrawals must be positive")
        if self._balances[name] - cents < -self._limits[name]:
            raise InsufficientFunds(name)
        return self._post(name, -cents, memo)

    def transfer(self, source: str, target: str, cents: int) -> tuple[int, int]:
        """Move cents between two accounts; returns both new balances (source, target)."""
        if source == target:
            raise ValueError("cannot transfer to the same account")
        self._balances[target]  # an unknown target fails before anything moves
        after_source = self.withdraw(source, cents, f"transfer to {target}")
        after_target = self.deposit(target, cents, f"transfer from {source}")
        return after_source, after_target

    def accounts(self) -> list[str]:
        """Account names in sorted order."""
        return sorted(self._balances)

    def _post(self, name: str, cents: int, memo: str) -> int:
        self._balances[name] += cents
        self.postings.append(Posting(name, cents, memo))
        return self._balances[name]
