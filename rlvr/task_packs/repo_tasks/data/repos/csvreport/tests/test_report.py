from csvreport.aggregate import average, group_sum, top_groups
from csvreport.cli import main
from csvreport.parse import parse_rows
from csvreport.render import render_table

CSV = "region,amount\nnorth,10\nsouth,2.5\nnorth,1\n"


def test_parse_and_sum() -> None:
    rows = parse_rows(CSV, ["amount"])
    assert rows[1] == {"region": "south", "amount": 2.5}
    assert group_sum(rows, "region", "amount") == {"north": 11.0, "south": 2.5}
    assert average(rows, "amount") == 4.5


def test_top_and_render() -> None:
    assert top_groups({"a": 1.0, "b": 3.0, "c": 3.0}, 2) == ["b", "c"]
    assert render_table({"ab": 1.0, "c": 2.5}, "T") == "T\nab  1.00\nc   2.50"


def test_cli() -> None:
    assert main(["sum", "region", "amount", CSV]) == 0
    assert main(["nope"]) == 2
