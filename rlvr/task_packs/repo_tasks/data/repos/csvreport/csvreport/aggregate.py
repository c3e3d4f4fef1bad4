"""Aggregations over parsed rows."""

from csvreport.parse import Row


def group_sum(rows: list[Row], key: str, value: str) -> dict[str, float]:
    """Sum of `value` per distinct `key`, keys in first-seen order, sums rounded to 2 places."""
    totals: dict[str, float] = {}
    for row in rows:
        group = str(row[key])
        totals[group] = totals.get(group, 0.0) + float(row[value])
    return {group: round(total, 2) for group, total in totals.items()}


def average(rows: list[Row], value: str) -> float:
    """Mean of a numeric column rounded to 2 places; ValueError for no rows."""
    if not rows:
        raise ValueError("no rows")
    return round(sum(float(row[value]) for row in rows) / len(rows), 2)


def top_groups(totals: dict[str, float], count: int) -> list[str]:
    """The `count` groups with the largest totals, ties broken by name."""
    return [name for name, _ in sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:count]]
