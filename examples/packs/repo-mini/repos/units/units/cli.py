"""main(["3", "ft", "m"]) prints "0.9144"; exit status 2 on bad input."""

from units.convert import convert


def main(argv: list[str]) -> int:
    try:
        value, source, target = float(argv[0]), argv[1], argv[2]
        print(convert(value, source, target))
    except (ValueError, IndexError, KeyError):
        print("usage: VALUE FROM TO")
        return 2
    return 0
