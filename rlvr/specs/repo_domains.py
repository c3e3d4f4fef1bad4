"""Declared input domains of a repository task's public API, expanded into hidden call scenarios by
hypothesis (in the trusted process, deterministically: the same domain gives the same calls anywhere).

A task line may carry `"domains": [{"target": "pkg.module:function", "args": [STRATEGY, ...],
"examples": 20, "seed": 0}]`. A STRATEGY is plain JSON:

    {"int": [lo, hi]}            an integer in [lo, hi]
    {"float": [lo, hi]}          a finite float in [lo, hi]
    {"bool": true}               True or False
    {"text": {"alphabet": "ab ", "min_size": 0, "max_size": 10}}
    {"one_of": [value, ...]}     one of the listed plain values
    {"just": value}              always this value
    {"list": {"of": STRATEGY, "min_size": 0, "max_size": 5}}
    {"concat": [STRATEGY, ...]}  the lists the strategies give, one after the other (e.g. a fixed setup
                                 prefix, then a random body: realistic command scripts)

Each generated example becomes a `call` scenario; the grader runs it on the candidate and on the
reference state like every other scenario and compares the two plain-data outcomes (a raised exception
is an outcome too, so a domain may include invalid inputs on purpose).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from rlvr.specs.generation import ALL_HEALTH_CHECKS, isolated_generation

MAX_EXAMPLES = 200
MAX_SIZE = 50
STRATEGY_KINDS = ("int", "float", "bool", "text", "one_of", "just", "list", "concat")


def check_strategy(spec: object, depth: int = 0) -> str | None:
    """Why `spec` is not a valid strategy, or None."""
    if depth > 4:
        return "strategies nest at most 4 deep"
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in STRATEGY_KINDS:
        return f"a strategy is an object with one key of {', '.join(STRATEGY_KINDS)}"
    kind, value = next(iter(spec.items()))
    if kind in ("int", "float"):
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
            or (kind == "int" and not all(isinstance(v, int) for v in value))
            or not all(math.isfinite(v) for v in value)
            or value[0] > value[1]
        ):
            return f'"{kind}" takes [lo, hi] with lo <= hi' + (" (integers)" if kind == "int" else "")
    elif kind == "bool":
        if value is not True:
            return '"bool" takes true'
    elif kind == "concat":
        if not isinstance(value, list) or not value:
            return '"concat" takes a non-empty list of strategies that give lists'
        for part in value:
            problem = check_strategy(part, depth + 1)
            if problem:
                return problem
            part_kind, part_value = next(iter(part.items()))
            if part_kind not in ("list", "concat") and not (
                part_kind == "just" and isinstance(part_value, list)
            ):
                return '"concat" parts must give lists ("list", "concat" or "just" of a list)'
    elif kind == "one_of":
        if not isinstance(value, list) or not value:
            return '"one_of" takes a non-empty list of values'
    elif kind == "text" or kind == "list":
        if not isinstance(value, dict):
            return f'"{kind}" takes an object'
        low, high = value.get("min_size", 0), value.get("max_size", 10)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) or not (
            0 <= low <= high <= MAX_SIZE
        ):
            return f'"{kind}" sizes must satisfy 0 <= min_size <= max_size <= {MAX_SIZE}'
        if kind == "text":
            alphabet = value.get("alphabet")
            if not isinstance(alphabet, str) or not alphabet:
                return '"text" needs a non-empty "alphabet" string'
        else:
            return check_strategy(value.get("of"), depth + 1)
    return None


def check_domain(domain: object) -> str | None:
    """Why a declared domain is malformed, or None (the target's format is checked by the caller)."""
    if not isinstance(domain, dict):
        return "a domain must be an object"
    unknown = set(domain) - {"target", "args", "examples", "seed"}
    if unknown:
        return f"unknown domain key(s): {', '.join(sorted(unknown))}"
    args = domain.get("args")
    if not isinstance(args, list):
        return "args must be a list of strategies"
    for index, spec in enumerate(args):
        problem = check_strategy(spec)
        if problem:
            return f"args[{index}]: {problem}"
    examples = domain.get("examples", 20)
    if not isinstance(examples, int) or isinstance(examples, bool) or not 1 <= examples <= MAX_EXAMPLES:
        return f"examples must be an integer from 1 to {MAX_EXAMPLES}"
    if not isinstance(domain.get("seed", 0), int) or isinstance(domain.get("seed", 0), bool):
        return "seed must be an integer"
    return None


def strategy(spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind, value = next(iter(spec.items()))
    if kind == "int":
        return st.integers(value[0], value[1])
    if kind == "float":
        return st.floats(value[0], value[1], allow_nan=False, allow_infinity=False)
    if kind == "bool":
        return st.booleans()
    if kind == "one_of":
        return st.sampled_from(list(value))
    if kind == "just":
        return st.just(value)
    if kind == "text":
        return st.text(
            alphabet=value["alphabet"], min_size=value.get("min_size", 0), max_size=value.get("max_size", 10)
        )
    if kind == "concat":
        return st.tuples(*(strategy(part) for part in value)).map(
            lambda parts: [x for part in parts for x in part]
        )
    return st.lists(
        strategy(value["of"]), min_size=value.get("min_size", 0), max_size=value.get("max_size", 10)
    )


def domain_scenarios(domains: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The call scenarios the declared domains generate, in order, without duplicates."""
    out: list[dict[str, Any]] = []
    for domain in domains:
        out += [json.loads(text) for text in _expand(json.dumps(domain, sort_keys=True))]
    return out


@lru_cache(maxsize=256)
def _expand(domain_json: str) -> tuple[str, ...]:
    domain = json.loads(domain_json)
    problem = check_domain(domain)
    if problem:
        raise ValueError(f"invalid domain for {domain.get('target')!r}: {problem}")
    found: list[list[Any]] = []

    @settings(
        max_examples=int(domain.get("examples", 20)),
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=ALL_HEALTH_CHECKS,
    )
    @given(st.tuples(*(strategy(spec) for spec in domain["args"])))
    def collect(args: tuple[Any, ...]) -> None:
        found.append(list(args))

    with isolated_generation():
        hypothesis_seed(int(domain.get("seed", 0)))(collect)()
    unique: dict[str, None] = {}
    for args in found:
        scenario = {"kind": "call", "target": domain["target"], "args": args, "generated": True}
        unique.setdefault(json.dumps(scenario, sort_keys=True), None)
    return tuple(unique)
