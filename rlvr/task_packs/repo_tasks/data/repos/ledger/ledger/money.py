"""Amounts as integer cents: parsing user text and formatting for display."""


def parse_amount(text: str) -> int:
    """Parse "12", "12.5", "12.50" or "-3.07" into cents; raise ValueError on anything else."""
    cleaned = text.strip().replace(",", "")
    negative = cleaned.startswith("-")
    if negative:
        cleaned = cleaned[1:]
    whole, _, fraction = cleaned.partition(".")
    if not whole.isdigit() or (fraction and not fraction.isdigit()) or len(fraction) > 2:
        raise ValueError(f"not an amount: {text!r}")
    cents = int(whole) * 100 + int(fraction.ljust(2, "0") or "0")
    return -cents if negative else cents


def format_cents(cents: int) -> str:
    """Format cents as "1,234.05" (with a leading "-" when negative)."""
    sign = "-" if cents < 0 else ""
    whole, fraction = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{fraction:02d}"


def split_evenly(cents: int, parts: int) -> list[int]:
    """Split an amount into `parts` shares that differ by at most one cent, largest first."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    share, remainder = divmod(cents, parts)
    return [share + 1 if index < remainder else share for index in range(parts)]
