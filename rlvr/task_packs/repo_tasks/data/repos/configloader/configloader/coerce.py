"""Turning value text into bool, int, float, list or str."""

Value = bool | int | float | str | list[str]

TRUE = frozenset({"true", "yes", "on"})
FALSE = frozenset({"false", "no", "off"})


def coerce(text: str) -> Value:
    """"yes" -> True, "42" -> 42, "-1.5" -> -1.5, "a, b" -> ["a", "b"], quoted text -> the text inside."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "\"'":
        return stripped[1:-1]
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        return float(stripped)
    except ValueError:
        pass
    if "," in stripped:
        return [item.strip() for item in stripped.split(",") if item.strip()]
    return stripped
