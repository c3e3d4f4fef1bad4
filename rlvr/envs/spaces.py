"""A Gymnasium space of arbitrary Unicode text: real model output must always be a valid action."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

# Code points sampled from: ASCII, Latin-1, general BMP and astral planes (emoji, CJK ext.).
_SAMPLE_RANGES = (
    (0x20, 0x7E),
    (0x09, 0x0D),
    (0xA0, 0x24F),
    (0x370, 0x3FF),
    (0x4E00, 0x4FFF),
    (0x1F300, 0x1F6FF),
)


class UnicodeText(spaces.Space[str]):
    """Any `str` of at most `max_length` characters (surrogates included — nothing is rejected)."""

    def __init__(self, max_length: int = 1 << 20, seed: int | np.random.Generator | None = None) -> None:
        self.max_length = int(max_length)
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        length = int(self.np_random.integers(0, min(self.max_length, 64) + 1))
        chars = []
        for _ in range(length):
            low, high = _SAMPLE_RANGES[int(self.np_random.integers(0, len(_SAMPLE_RANGES)))]
            chars.append(chr(int(self.np_random.integers(low, high + 1))))
        return "".join(chars)

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.max_length))
