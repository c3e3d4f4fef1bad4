"""A Gymnasium space of arbitrary Unicode text: real model output must always be a valid action.

Importing this module also registers shared-memory support for the space, so async vector envs
(`gym.make_vec(..., vectorization_mode="async")`) pass text observations without extra arguments.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

_CODE_POINT = np.dtype("<u4")

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


# ---------------------------------------------------------------------- async shared memory
def _slot_size(space: UnicodeText) -> int:
    return space.max_length + 1  # one length word, then the code points


@create_shared_memory.register(UnicodeText)
def _create_text_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = multiprocessing) -> Any:
    return ctx.Array("I", n * _slot_size(space))


@write_to_shared_memory.register(UnicodeText)
def _write_text_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    if not isinstance(value, str) or len(value) > space.max_length:
        raise ValueError(f"observation is not a str of at most {space.max_length} characters")
    code_points = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=_CODE_POINT)
    size = _slot_size(space)
    destination = np.frombuffer(shared_memory.get_obj(), dtype=_CODE_POINT)
    destination[index * size] = len(code_points)
    destination[index * size + 1 : index * size + 1 + len(code_points)] = code_points


class SharedTextBatch(Sequence[str]):
    """A live view of the strings in shared memory. AsyncVectorEnv reads the buffer once, at
    start-up, and relies on the view reflecting later writes (as numpy views do); a `deepcopy`
    (what the vector env returns by default, `copy=True`) is a plain tuple snapshot."""

    def __init__(self, slots: np.ndarray) -> None:
        self._slots = slots

    def __len__(self) -> int:
        return self._slots.shape[0]

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self._slots[index]
        return row[1 : 1 + int(row[0])].tobytes().decode("utf-32-le", "surrogatepass")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@read_from_shared_memory.register(UnicodeText)
def _read_text_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> Any:  # a SharedTextBatch
    return SharedTextBatch(
        np.frombuffer(shared_memory.get_obj(), dtype=_CODE_POINT).reshape(n, _slot_size(space))
    )
