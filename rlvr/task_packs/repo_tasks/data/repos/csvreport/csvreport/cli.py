"""Command line: main(["sum", KEY, VALUE, CSV_TEXT]) or main(["avg", VALUE, CSV_TEXT])."""

from csvreport.aggregate import average, group_sum
from csvreport.parse import parse_rows
from csvreport.render import render_table


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "sum":
        _, key, value, text = argv
        try:
            rows = parse_rows(text, [value])
        except (KeyError, ValueError) as exc:
            print(f"bad input: {type(exc).__name__}")
            return 1
        print(render_table(group_sum(rows, key, value), f"{value} by {key}"))
        return 0
    if len(argv) == 3 and argv[0] == "avg":
        _, value, text = argv
        try:
            print(f"{average(parse_rows(text, [value]), value):.2f}")
        except (KeyError, ValueError) as exc:
            print(f"bad input: {type(exc).__name__}")
            return 1
        return 0
    print("usage: sum KEY VALUE CSV | avg VALUE CSV")
    return 2
