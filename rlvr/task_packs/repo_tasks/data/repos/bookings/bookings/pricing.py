"""Prices in cents: the nightly rate, weekend nights 25% dearer, a week or more 10% off, promo codes."""

from bookings.dates import is_weekend, nights

LONG_STAY_NIGHTS = 7
PROMOS: dict[str, int] = {"HALF": 50, "TENOFF": 10}


def nightly_rates(rate: int, start: int, end: int) -> list[int]:
    """The price of each night of the stay, in order."""
    return [rate * 5 // 4 if is_weekend(day) else rate for day in range(start, start + nights(start, end))]


def quote(rate: int, start: int, end: int, promo: str = "") -> int:
    """Total price of a stay: the nights' prices, 10% off for LONG_STAY_NIGHTS or more, then the promo's
    percentage off (an unknown promo code is ignored). Rounded down to whole cents."""
    if rate < 0:
        raise ValueError("rate must not be negative")
    prices = nightly_rates(rate, start, end)
    total = sum(prices)
    if len(prices) >= LONG_STAY_NIGHTS:
        total = total * 9 // 10
    percent = PROMOS.get(promo.upper(), 0)
    return total * (100 - percent) // 100
