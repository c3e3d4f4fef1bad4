"""Building blocks of the `kata` pack: a family turns (seed, difficulty) into one concrete task.

A `Variant` is everything one generated function task needs: the signature and description the
policy sees, the reference source (trusted), a sampler of valid inputs, a growth-input maker for
the perf layer, and optionally a relation (for tasks with several correct answers).
A `ClassVariant` is the same for stateful-class tasks, whose hidden calls are method sequences
generated with hypothesis stateful testing (see rlvr.graders.code.properties.stateful).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from rlvr.specs.methods import MethodRule

Sampler = Callable[[random.Random], tuple[Any, ...]]
GrowthInput = Callable[[int, random.Random], tuple[Any, ...]]

DEFAULT_SIZES = (16, 32, 64, 128, 256)


@dataclass(frozen=True)
class Variant:
    entry_point: str
    signature: str  # e.g. "def rotate(values: list[int], k: int) -> list[int]:"
    description: str
    reference: str  # full source defining entry_point (trusted)
    sample: Sampler  # one valid input (argument tuple)
    growth: GrowthInput | None = None  # an input of size n for the perf layer
    sizes: tuple[int, ...] = DEFAULT_SIZES
    relation: str | None = None  # a name in rlvr.graders.code.properties.preconditions.RELATIONS
    edge_cases: tuple[tuple[Any, ...], ...] = ()  # boundary inputs always tested
    imports: str = ""  # lines placed above the signature in the prompt and reference


@dataclass(frozen=True)
class ClassVariant:
    class_name: str
    description: str  # the class contract, listing every method
    stub: str  # class skeleton shown to the policy
    reference: str  # full source defining class_name (trusted)
    init_args: st.SearchStrategy[tuple[Any, ...]]
    rules: Sequence[MethodRule]
    growth: GrowthInput | None = None  # an operation sequence of n operations
    sizes: tuple[int, ...] = DEFAULT_SIZES


Builder = Callable[[random.Random, int], Variant | ClassVariant]


@dataclass(frozen=True)
class Family:
    name: str
    topic: str  # strings, lists, dicts, arithmetic, parsing, intervals, graphs, dp, classes
    build: Builder
    split: str = "train"  # held-out families are "test"
    extra: dict[str, Any] = field(default_factory=dict)


FAMILIES: dict[str, Family] = {}


def family(name: str, topic: str, split: str = "train") -> Callable[[Builder], Builder]:
    """Register a family builder: `build(rng, difficulty) -> Variant | ClassVariant`."""

    def register(build: Builder) -> Builder:
        if name in FAMILIES:
            raise ValueError(f"duplicate kata family {name!r}")
        FAMILIES[name] = Family(name, topic, build, split)
        return build

    return register


# ------------------------------------------------------------------------------------ samplers
def ints(rng: random.Random, n: int, low: int = -20, high: int = 20) -> list[int]:
    return [rng.randint(low, high) for _ in range(n)]


def word(rng: random.Random, low: int = 1, high: int = 6, alphabet: str = "abcdefghij") -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def words(rng: random.Random, n: int, alphabet: str = "abcdefghij") -> list[str]:
    return [word(rng, alphabet=alphabet) for _ in range(n)]


def size_for(difficulty: int, rng: random.Random) -> int:
    """Input sizes grow with difficulty (0 allowed: empty inputs are boundary cases)."""
    return rng.randint(0, 3 + 3 * difficulty)
