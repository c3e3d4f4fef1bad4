"""Days are integers (day 0 is a Monday); a stay from `start` to `end` covers the nights start..end-1."""

WEEKEND = (5, 6)


def nights(start: int, end: int) -> int:
    """Number of nights of a stay; a stay must last at least one night."""
    if end <= start:
        raise ValueError(f"a stay must end after it starts ({start} -> {end})")
    return end - start


def overlaps(start: int, end: int, other_start: int, other_end: int) -> bool:
    """Do two stays share a night? Checking out on the day another checks in is not an overlap."""
    return start < other_end and other_start < end


def weekday(day: int) -> int:
    return day % 7


def is_weekend(day: int) -> bool:
    return weekday(day) in WEEKEND


def weekend_nights(start: int, end: int) -> int:
    """Nights of the stay that begin on a Saturday or a Sunday."""
    return sum(1 for day in range(start, start + nights(start, end)) if is_weekend(day))
