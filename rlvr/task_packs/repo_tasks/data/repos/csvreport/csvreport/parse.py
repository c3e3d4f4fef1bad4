"""Parsing CSV text into typed rows."""

import csv
import io

Row = dict[str, str | float]


def parse_rows(text: str, numeric: list[str]) -> list[Row]:
    """Rows of a CSV text with a header line; the `numeric` columns become floats (ValueError if not)."""
    reader = csv.DictReader(io.StringIO(text.strip()))
    rows: list[Row] = []
    for raw in reader:
        row: Row = {key.strip(): value.strip() for key, value in raw.items() if key is not None}
        for column in numeric:
            row[column] = float(str(row[column]))
        rows.append(row)
    return rows
