import sqlite3

from bookings.cli import main
from bookings.dates import nights, overlaps, weekend_nights
from bookings.pricing import quote
from bookings.schema import MIGRATIONS, migrate, schema_version
from bookings.store import Bookings, run_script


def test_dates() -> None:
    assert nights(3, 5) == 2
    assert overlaps(0, 3, 2, 4) and not overlaps(0, 2, 2, 4)
    assert weekend_nights(0, 7) == 2


def test_quote() -> None:
    assert quote(100, 0, 2) == 200
    assert quote(100, 4, 6) == 225
    assert quote(100, 0, 7, "half") == 337


def test_migrate_is_idempotent() -> None:
    connection = sqlite3.connect(":memory:")
    assert migrate(connection) == len(MIGRATIONS)
    assert migrate(connection) == len(MIGRATIONS)
    assert schema_version(connection) == len(MIGRATIONS)


def test_store() -> None:
    store = Bookings(sqlite3.connect(":memory:"))
    store.add_room("blue", 100)
    first = store.book("blue", "ann", 1, 3)
    assert store.free_rooms(2, 4) == [] and store.free_rooms(3, 5) == ["blue"]
    assert store.cancel(first) and not store.cancel(first)
    assert store.invoice(first) == 200


def test_script_and_cli() -> None:
    assert run_script([["room", "a", 10], ["book", "a", "x", 0, 2], ["book", "a", "y", 1, 3]]) == [
        None,
        1,
        "error: ValueError",
    ]
    assert main(["nights", "1", "4"]) == 0
    assert main(["frob"]) == 2
