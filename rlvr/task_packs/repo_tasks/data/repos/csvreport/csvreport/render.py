"""Rendering totals as an aligned text table."""


def render_table(totals: dict[str, float], title: str) -> str:
    """A title line, then one "name  amount" line per group, names left-aligned to the widest."""
    width = max((len(name) for name in totals), default=0)
    lines = [title]
    for name, amount in totals.items():
        lines.append(f"{name.ljust(width)}  {amount:.2f}")
    return "\n".join(lines)
