"""The booking store: rooms with a nightly rate, stays that may not overlap, cancellations, invoices."""

import sqlite3

from bookings.dates import overlaps
from bookings.pricing import quote
from bookings.schema import migrate


class Bookings:
    """Rooms and stays in a sqlite database (migrated on open)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        migrate(connection)

    def add_room(self, name: str, rate: int) -> None:
        if rate < 0:
            raise ValueError("rate must not be negative")
        with self.connection:
            self.connection.execute("INSERT INTO rooms (name, rate) VALUES (?, ?)", (name, rate))

    def rate(self, room: str) -> int:
        row = self.connection.execute("SELECT rate FROM rooms WHERE name = ?", (room,)).fetchone()
        if row is None:
            raise KeyError(room)
        return int(row[0])

    def stays(self, room: str) -> list[tuple[int, int, str]]:
        """Active stays of a room as (start, end, guest), by start."""
        rows = self.connection.execute(
            "SELECT start, end, guest FROM stays WHERE room = ? AND status = 'active' ORDER BY start, id",
            (room,),
        ).fetchall()
        return [(int(start), int(end), str(guest)) for start, end, guest in rows]

    def is_free(self, room: str, start: int, end: int) -> bool:
        return not any(overlaps(start, end, s, e) for s, e, _ in self.stays(room))

    def book(self, room: str, guest: str, start: int, end: int) -> int:
        """A new stay's id; ValueError if the room is taken on any of its nights."""
        self.rate(room)
        if end <= start:
            raise ValueError("a stay must end after it starts")
        if not self.is_free(room, start, end):
            raise ValueError(f"{room} is taken")
        with self.connection:
            cursor = self.connection.execute(
                "INSERT INTO stays (room, guest, start, end) VALUES (?, ?, ?, ?)", (room, guest, start, end)
            )
        return int(cursor.lastrowid or 0)

    def cancel(self, stay: int) -> bool:
        """Cancel an active stay; True if there was one."""
        with self.connection:
            cursor = self.connection.execute(
                "UPDATE stays SET status = 'cancelled' WHERE id = ? AND status = 'active'", (stay,)
            )
        return cursor.rowcount > 0

    def free_rooms(self, start: int, end: int) -> list[str]:
        """Rooms with no active stay on any night from start to end, by name."""
        names = [str(row[0]) for row in self.connection.execute("SELECT name FROM rooms ORDER BY name")]
        return [name for name in names if self.is_free(name, start, end)]

    def invoice(self, stay: int, promo: str = "") -> int:
        row = self.connection.execute("SELECT room, start, end FROM stays WHERE id = ?", (stay,)).fetchone()
        if row is None:
            raise KeyError(stay)
        room, start, end = str(row[0]), int(row[1]), int(row[2])
        return quote(self.rate(room), start, end, promo)


def run_script(commands: list[list[object]]) -> list[object]:
    """Apply commands to a fresh in-memory store: ["room", name, rate], ["book", room, guest, start, end],
    ["cancel", id], ["stays", room], ["free", start, end], ["invoice", id, promo]; each command's result,
    or "error: <ExceptionType>" when it raises ValueError or KeyError."""
    store = Bookings(sqlite3.connect(":memory:"))
    results: list[object] = []
    for command in commands:
        verb, args = command[0], command[1:]
        try:
            if verb == "room":
                store.add_room(str(args[0]), int(str(args[1])))
                results.append(None)
            elif verb == "book":
                results.append(store.book(str(args[0]), str(args[1]), int(str(args[2])), int(str(args[3]))))
            elif verb == "cancel":
                results.append(store.cancel(int(str(args[0]))))
            elif verb == "stays":
                results.append(store.stays(str(args[0])))
            elif verb == "free":
                results.append(store.free_rooms(int(str(args[0])), int(str(args[1]))))
            elif verb == "invoice":
                results.append(store.invoice(int(str(args[0])), str(args[1]) if len(args) > 1 else ""))
            else:
                raise ValueError(f"unknown command {verb}")
        except (ValueError, KeyError) as exc:
            results.append(f"error: {type(exc).__name__}")
    return results
