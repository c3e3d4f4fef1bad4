from shapes.geometry import area, clamp, perimeter


def test_area() -> None:
    assert area(2, 3) == 6


def test_perimeter() -> None:
    assert perimeter(2, 3) == 10


def test_clamp_low() -> None:
    assert clamp(-5, 0, 10) == 0
    assert clamp(5, 0, 10) == 5
