from ledger.accounts import InsufficientFunds, Ledger
from ledger.cli import main
from ledger.money import format_cents, parse_amount, split_evenly
from ledger.report import statement, summary


def test_parse_and_format() -> None:
    assert parse_amount("12.5") == 1250
    assert parse_amount("-3.07") == -307
    assert format_cents(123405) == "1,234.05"


def test_split_evenly() -> None:
    assert split_evenly(100, 3) == [34, 33, 33]


def test_transfer_and_overdraft() -> None:
    ledger = Ledger()
    ledger.open("a")
    ledger.open("b", overdraft=500)
    ledger.deposit("a", 1000)
    assert ledger.transfer("a", "b", 400) == (600, 400)
    assert ledger.withdraw("b", 800) == -400
    try:
        ledger.withdraw("b", 200)
    except InsufficientFunds:
        pass
    else:
        raise AssertionError("overdraft limit not enforced")


def test_statement() -> None:
    ledger = Ledger()
    ledger.open("a")
    ledger.deposit("a", 250)
    ledger.withdraw("a", 100)
    assert statement(ledger, "a") == ["deposit: 2.50 -> 2.50", "withdrawal: -1.00 -> 1.50"]
    assert summary(ledger)["total"] == "1.50"


def test_cli() -> None:
    assert main(["open:a", "deposit:a:1", "show"]) == 0
