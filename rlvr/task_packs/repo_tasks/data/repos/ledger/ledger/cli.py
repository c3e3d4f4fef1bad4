"""`ledger` command line: run a script of operations and print the summary.

Usage: main(["open:alice", "deposit:alice:10.50", "transfer:alice:bob:2", "show"])
"""

from ledger.accounts import InsufficientFunds, Ledger
from ledger.money import parse_amount
from ledger.report import statement, summary


def main(argv: list[str]) -> int:
    ledger = Ledger()
    for command in argv:
        verb, *args = command.split(":")
        try:
            if verb == "open":
                ledger.open(args[0])
            elif verb == "deposit":
                ledger.deposit(args[0], parse_amount(args[1]))
            elif verb == "withdraw":
                ledger.withdraw(args[0], parse_amount(args[1]))
            elif verb == "transfer":
                ledger.transfer(args[0], args[1], parse_amount(args[2]))
            elif verb == "statement":
                print("\n".join(statement(ledger, args[0])))
            elif verb == "show":
                for name, amount in summary(ledger).items():
                    print(f"{name}\t{amount}")
            else:
                print(f"unknown command: {verb}")
                return 2
        except (InsufficientFunds, KeyError, ValueError, IndexError) as exc:
            print(f"error in {command!r}: {type(exc).__name__}")
            return 1
    return 0
