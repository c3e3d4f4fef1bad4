"""Length conversion between metric and imperial units."""

FACTORS = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "mi": 1609.344}


def convert(value: float, source: str, target: str) -> float:
    """`value` in unit `source` expressed in unit `target`, rounded to 6 places (KeyError for unknown units)."""
    return round(value * FACTORS[source] / FACTORS[target], 6)
