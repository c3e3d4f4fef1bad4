def area(width: float, height: float) -> float:
    return width * height


def perimeter(width: float, height: float) -> float:
    return 2 * (width + height)


def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to the range [low, high]."""
    return max(low, value)
