from units.convert import convert


def test_convert() -> None:
    assert convert(1, "km", "m") == 1000.0
