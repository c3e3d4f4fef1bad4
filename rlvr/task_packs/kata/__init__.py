"""The `kata` pack: procedurally generated Python exercises, unbounded and reproducible.

Task ids are `kata/<family>/<difficulty>/<seed>` (difficulty 1-5, seed any non-negative integer);
`get(task_id)` regenerates any task deterministically from its id, and `tasks(split)` returns a
default finite sample (every family at every difficulty, seeds 0..DEFAULT_SEEDS-1).

Each family has a reference solution, hidden inputs (edge cases plus seeded samples, judged by
differential testing against the reference or by a relation where several answers are right),
and growth inputs for the perf layer. Class families are driven by method sequences from
hypothesis stateful testing. The train/test split is by family: test families are held out
entirely, so evaluation measures generalization rather than memorized templates.
"""

from __future__ import annotations

import copy
import hashlib
import random
import textwrap
from collections.abc import Iterable
from typing import Any

from rlvr.core.codec import CodecError, dumps
from rlvr.core.pack import TaskPack, UnknownTaskError
from rlvr.core.types import Task
from rlvr.specs.methods import driver_spec, operation_sequences
from rlvr.task_packs.kata import classes as _classes  # noqa: F401 (each module registers its families)
from rlvr.task_packs.kata import numbers as _numbers  # noqa: F401
from rlvr.task_packs.kata import sequences as _sequences  # noqa: F401
from rlvr.task_packs.kata import structures as _structures  # noqa: F401
from rlvr.task_packs.kata import text as _text  # noqa: F401
from rlvr.task_packs.kata.base import FAMILIES, ClassVariant, Family, Variant
from rlvr.task_packs.kata.sequence_cache import cached_sequences, fingerprint

DIFFICULTIES = (1, 2, 3, 4, 5)
DEFAULT_SEEDS = 1
PREFIX = "kata"


class KataError(ValueError):
    """A family whose generated task is broken (a bug in the pack, reported with the task id)."""


def task_id(family_name: str, difficulty: int, seed: int) -> str:
    return f"{PREFIX}/{family_name}/{difficulty}/{seed}"


def parse_task_id(text: str) -> tuple[str, int, int]:
    parts = text.split("/")
    if len(parts) != 4 or parts[0] != PREFIX:
        raise UnknownTaskError(f"not a kata task id: {text!r} (expected kata/<family>/<difficulty>/<seed>)")
    _, name, difficulty, seed = parts
    if name not in FAMILIES:
        raise UnknownTaskError(f"unknown kata family {name!r} in {text!r}")
    if not difficulty.isdigit() or int(difficulty) not in DIFFICULTIES:
        raise UnknownTaskError(f"difficulty must be 1-5 in {text!r}")
    if not seed.isdigit():
        raise UnknownTaskError(f"seed must be a non-negative integer in {text!r}")
    return name, int(difficulty), int(seed)


def _rng(*parts: object) -> random.Random:
    return random.Random("/".join(map(str, parts)))  # str seeds hash with SHA-512: stable everywhere


def _int_seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "big")


def _exec(source: str, label: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"rlvr_kata_{label}"}
    exec(compile(source, f"<kata:{label}>", "exec"), namespace)  # trusted pack code
    return namespace


def _distinct(inputs: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    seen: set[str] = set()
    out: list[tuple[Any, ...]] = []
    for args in inputs:
        try:
            key = dumps(list(args))
        except CodecError as exc:
            raise KataError(f"generated input is not plain data: {exc}") from exc
        if key not in seen:
            seen.add(key)
            out.append(args)
    return out


def hidden_input_count(difficulty: int) -> int:
    return 30 + 10 * difficulty


def build_task(name: str, difficulty: int, seed: int) -> Task:
    family = FAMILIES[name]
    variant = family.build(_rng(name, difficulty, seed), difficulty)
    tid = task_id(name, difficulty, seed)
    if isinstance(variant, ClassVariant):
        return _class_task(tid, family, difficulty, seed, variant)
    return _function_task(tid, family, difficulty, seed, variant)


def _function_task(tid: str, family: Family, difficulty: int, seed: int, variant: Variant) -> Task:
    source = (variant.imports + "\n\n" if variant.imports else "") + variant.reference
    reference = _exec(source, tid)[variant.entry_point]
    rng = _rng(tid, "inputs")
    examples = _distinct(variant.sample(rng) for _ in range(3))[:2]
    shown = []
    for args in examples:
        value = reference(*copy.deepcopy(args))
        call = f"{variant.entry_point}({', '.join(repr(a) for a in args)})"
        shown.append(f">>> {call}\n{value!r}")
    hidden_inputs = _distinct(
        list(variant.edge_cases)
        + examples
        + [variant.sample(rng) for _ in range(hidden_input_count(difficulty))]
    )
    doc = textwrap.fill(variant.description, 92)
    prompt = (
        (variant.imports + "\n\n\n" if variant.imports else "")
        + variant.signature
        + '\n    """'
        + textwrap.indent(doc + "\n\n" + "\n".join(shown), "    ").lstrip()
        + '\n    """\n'
    )
    hidden: dict[str, Any] = {
        "entry_point": variant.entry_point,
        "reference": source,
        "calls": [],
        "properties": {
            "inputs": [list(args) for args in hidden_inputs],
            "relation": variant.relation,
            "amplify": False,
        },
        "mode": "hidden",
    }
    return _finish_task(tid, prompt, family, difficulty, seed, hidden, variant)


def _finish_task(
    tid: str,
    prompt: str,
    family: Family,
    difficulty: int,
    seed: int,
    hidden: dict[str, Any],
    variant: Any,
) -> Task:
    """Add the variant's growth inputs for perf (if any) and build the Task."""
    if variant.growth is not None:
        growth_rng = _rng(tid, "growth")
        hidden["perf"] = {
            "sizes": list(variant.sizes),
            "calls": [list(variant.growth(n, growth_rng)) for n in variant.sizes],
        }
    meta = {"family": family.name, "topic": family.topic, "seed": seed}
    return Task(tid, prompt, "code", difficulty, family.split, hidden, meta)


def _method_sequences(
    tid: str, difficulty: int, variant: ClassVariant, use_cache: bool = True
) -> tuple[str, list[list[list[Any]]]]:
    """A class kata's operation sequences (shipped for the default sample, else generated) and the
    fingerprint of what generated them."""
    count, steps, seed = 8 + 3 * difficulty, 3 + 2 * difficulty, _int_seed(tid, "sequences")
    key = fingerprint(variant.reference, [rule.name for rule in variant.rules], count, steps, seed)
    shipped = cached_sequences(tid, key) if use_cache else None
    if shipped is not None:
        return key, shipped
    reference_class = _exec(variant.reference, tid)[variant.class_name]
    generated = operation_sequences(
        reference_class, variant.init_args, variant.rules, count=count, steps=steps, seed=seed
    )
    return key, generated


def class_sequences(task_id_text: str, use_cache: bool = True) -> tuple[str, list[list[list[Any]]]] | None:
    """(fingerprint, sequences) of a class kata by id; None for a function kata."""
    name, difficulty, seed = parse_task_id(task_id_text)
    variant = FAMILIES[name].build(_rng(name, difficulty, seed), difficulty)
    if not isinstance(variant, ClassVariant):
        return None
    return _method_sequences(task_id_text, difficulty, variant, use_cache)


def _class_task(tid: str, family: Family, difficulty: int, seed: int, variant: ClassVariant) -> Task:
    _, sequences = _method_sequences(tid, difficulty, variant)
    prompt = variant.stub.rstrip() + "\n"
    hidden: dict[str, Any] = {
        "entry_point": variant.class_name,
        "reference": variant.reference,
        "driver": driver_spec(variant.class_name),
        "calls": [],
        "properties": {"inputs": [[ops] for ops in sequences], "amplify": False},
        "mode": "hidden",
    }
    return _finish_task(tid, prompt, family, difficulty, seed, hidden, variant)


class KataPack(TaskPack):
    name = "kata"
    family = "code"
    version = "1"
    description = (
        "Procedural Python katas: 30+ families x difficulty 1-5, any seed; test split = held-out families."
    )

    def __init__(self, seeds: int = DEFAULT_SEEDS, feedback: str = "hidden") -> None:
        """`seeds`: seeds per (family, difficulty) in the default sample; `feedback="visible"` lets
        a failing verdict carry a counterexample (input, expected, actual) for multi-turn episodes."""
        super().__init__()
        if feedback not in ("hidden", "visible"):
            raise ValueError(f"feedback must be 'hidden' or 'visible', got {feedback!r}")
        self.options["feedback"] = feedback
        self.seeds = seeds
        self._built: dict[str, Task] = {}

    def default_ids(self, split: str | None = None) -> list[str]:
        return [
            task_id(name, difficulty, seed)
            for name, family in sorted(FAMILIES.items())
            if split in (None, "all") or family.split == split
            for difficulty in DIFFICULTIES
            for seed in range(self.seeds)
        ]

    def _load(self) -> Iterable[Task]:
        return [self.get(tid) for tid in self.default_ids()]

    def tasks(self, split: str | None = None) -> list[Task]:
        return [self.get(tid) for tid in self.default_ids(split)]

    def get(self, task_id: str) -> Task:
        cached = self._built.get(task_id)
        if cached is None:
            name, difficulty, seed = parse_task_id(task_id)
            cached = build_task(name, difficulty, seed)
            self._built[task_id] = cached
        return cached

    def splits(self) -> list[str]:
        return sorted({f.split for f in FAMILIES.values()})

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "family": self.family,
            "size": len(self.default_ids()),
            "splits": self.splits(),
            "version": self.version,
            "description": self.description,
            "families": {name: {"topic": f.topic, "split": f.split} for name, f in sorted(FAMILIES.items())},
        }
