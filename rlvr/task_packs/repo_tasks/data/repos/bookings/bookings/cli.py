"""`bookings quote RATE START END [PROMO]` prints a stay's price in cents; `bookings nights START END`."""

from bookings.dates import nights
from bookings.pricing import quote


def main(argv: list[str]) -> int:
    if len(argv) >= 4 and argv[0] == "quote" and len(argv) <= 5:
        try:
            print(quote(int(argv[1]), int(argv[2]), int(argv[3]), argv[4] if len(argv) == 5 else ""))
        except ValueError as exc:
            print(f"error: {exc}")
            return 1
        return 0
    if len(argv) == 3 and argv[0] == "nights":
        try:
            print(nights(int(argv[1]), int(argv[2])))
        except ValueError as exc:
            print(f"error: {exc}")
            return 1
        return 0
    print("usage: bookings quote RATE START END [PROMO] | bookings nights START END")
    return 2
