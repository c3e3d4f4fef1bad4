"""False failures and false passes of rlvr's proof grader on independently written derivations.

Data: `benchmarks/independent_solutions_proof/derivations.jsonl` — for 4 tasks of every template of every split
of `proof-identities`, two correct derivations in different styles (plain / LaTeX, expand / factor first,
coarse / fine steps, comments, unicode relations) and two wrong-but-plausible ones, written from the task
prompts only (see `write_derivations.py` there). Each wrong derivation names its first false line and a witness.

1. The data is verified independently of rlvr's checker: each line is parsed by this script's own small
   translator (LaTeX -> plain, then sympy's `parse_expr` with implicit multiplication) and evaluated with mpmath
   at 50 digits. A correct derivation must start at the goal's left side, end at its right side, compose to a
   relation implying the goal's, and have every step hold at many random points within the assumptions; a wrong
   derivation's named step must be false at its witness (which must satisfy the assumptions). Any failure is a
   data error, reported and never counted.
2. Every derivation is graded by the real proof grader (`make_grader(load_pack('proof-identities'))`). A correct
   derivation that fails is a false failure; a wrong derivation that passes is a false pass.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_proof_fidelity.py [--strict] [--points 24]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

DATA = Path(__file__).parent / "independent_solutions_proof" / "derivations.jsonl"
DIGITS = 50
TRANSFORMS = (*standard_transformations, implicit_multiplication_application, convert_xor)
RELATION = re.compile(r"^\s*(\\leq|\\geq|\\le(?![a-z])|\\ge(?![a-z])|<=|>=|≤|≥|=|<|>)\s*(.*)$")
GOAL = re.compile(r"(<=|>=|=|<|>)")
CANON = {"\\leq": "<=", "\\le": "<=", "≤": "<=", "\\geq": ">=", "\\ge": ">=", "≥": ">="}


# ---------------------------------------------------------------- an independent reader of the lines


def _braced(text: str, start: int) -> tuple[str, int]:
    """The content of the `{...}` group opening at `start`, and the index after it."""
    assert text[start] == "{", text
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start + 1 : index], index + 1
    raise ValueError(f"unbalanced braces in {text!r}")


def delatex(text: str) -> str:
    """LaTeX math as plain math: \\frac{a}{b}, \\left( \\right), \\cdot, ^{...}, \\sqrt{...}."""
    text = text.replace("\\left", "").replace("\\right", "").replace("\\cdot", "*").replace("·", "*")
    out, index = "", 0
    while index < len(text):
        if text.startswith("\\frac", index):
            top, after = _braced(text, index + 5)
            bottom, after = _braced(text, after)
            out += f"(({delatex(top)})/({delatex(bottom)}))"
            index = after
        elif text.startswith("\\sqrt", index):
            inner, after = _braced(text, index + 5)
            out += f"sqrt({delatex(inner)})"
            index = after
        elif text[index] == "{":
            inner, after = _braced(text, index)
            out += f"({delatex(inner)})"
            index = after
        else:
            out += text[index]
            index += 1
    if "\\" in out:
        raise ValueError(f"unknown LaTeX in {text!r}")
    return out


def read(text: str, symbols: dict[str, sympy.Symbol]) -> sympy.Expr:
    plain = delatex(text.strip().strip("$")).replace("**", "^")
    return parse_expr(plain, local_dict=dict(symbols), transformations=TRANSFORMS)


def chain(text: str, symbols: dict[str, sympy.Symbol]) -> list[tuple[str, sympy.Expr]]:
    """[(relation, expression)], the first relation `start`."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = RELATION.match(line)
        relation, body = (
            (CANON.get(match.group(1), match.group(1)), match.group(2)) if match else ("start", line)
        )
        out.append((relation, read(body, symbols)))
    return out


# ---------------------------------------------------------------- numeric verification of the data


def symbols_of(row: dict[str, Any]) -> dict[str, sympy.Symbol]:
    text = "\n".join(line.split("#", 1)[0] for line in (row["goal"] + "\n" + row["text"]).splitlines())
    names = set(re.findall(r"[a-z]", re.sub(r"\\[a-z]+|sqrt", "", text)))
    return {name: sympy.Symbol(name) for name in sorted(names)}


def sample(kind: str, rng: random.Random) -> Any:
    if kind in ("positive", "nonnegative"):
        return mpmath.mpf(10) ** mpmath.mpf(rng.uniform(-2, 2))
    return mpmath.mpf(rng.uniform(-30, 30)) if rng.random() < 0.7 else mpmath.mpf(rng.randint(-12, 12))


def holds(relation: str, left: Any, right: Any) -> bool:
    tolerance = mpmath.mpf(10) ** (-(DIGITS - 10)) * max(1, abs(left), abs(right))
    if relation == "=":
        return abs(left - right) <= tolerance
    if relation in ("<=", "<"):
        left, right, relation = right, left, {"<=": ">=", "<": ">"}[relation]
    return left - right >= -tolerance if relation == ">=" else left - right > tolerance


def composed(relations: list[str]) -> str | None:
    # written apart from rlvr.graders.proof.check.compose on purpose: this is the judge of that code
    directions = {r[0] for r in relations if r != "="}
    if not directions:
        return "="
    if len(directions) > 1:
        return None
    direction = directions.pop()
    return direction if any(r in ("<", ">") for r in relations) else direction + "="


def verify(row: dict[str, Any], points: int, rng: random.Random) -> list[str]:
    """Data errors of one derivation (empty when the row is what it claims to be)."""
    symbols = symbols_of(row)
    assumptions = row["assumptions"]
    kinds = {name: assumptions.get(name, assumptions.get("*", "real")) for name in symbols}
    names = list(symbols)
    lines = chain(row["text"], symbols)
    goal_parts = GOAL.split(row["goal"].replace("\\geq", ">=").replace("\\leq", "<="))
    goal_left, goal_relation, goal_right = (
        read(goal_parts[0], symbols),
        goal_parts[1],
        read(goal_parts[2], symbols),
    )
    functions = [sympy.lambdify(names, expr, "mpmath") for _r, expr in lines]
    ends = [sympy.lambdify(names, expr, "mpmath") for expr in (goal_left, goal_right)]
    problems: list[str] = []
    with mpmath.workdps(DIGITS):
        if row["kind"] == "correct":
            if lines[0][0] != "start" or any(r == "start" for r, _e in lines[1:]):
                problems.append("not in the documented format (first line an expression, then relations)")
            chain_relation = composed([r for r, _e in lines[1:]])
            wanted = {"=": {"="}, ">=": {"=", ">=", ">"}, "<=": {"=", "<=", "<"}, ">": {">"}, "<": {"<"}}
            if chain_relation not in wanted[goal_relation]:
                problems.append(f"the chain composes to {chain_relation}, the goal is {goal_relation}")
            for _ in range(points):
                values = [sample(kinds[n], rng) for n in names]
                numbers = [f(*values) for f in functions]
                if not holds("=", numbers[0], ends[0](*values)):
                    problems.append("does not start at the goal's left side")
                if not holds("=", numbers[-1], ends[1](*values)):
                    problems.append("does not end at the goal's right side")
                for index in range(1, len(lines)):
                    if not holds(lines[index][0], numbers[index - 1], numbers[index]):
                        at = ", ".join(f"{n}={mpmath.nstr(v, 8)}" for n, v in zip(names, values, strict=True))
                        problems.append(f"line {index + 1} ({lines[index][0]}) is false at {at}")
                if problems:
                    break
        else:
            witness = {name: Fraction(value) for name, value in row["witness"].items()}
            for name in names:
                if name not in witness:
                    witness[name] = Fraction(1)
                kind, value = kinds[name], witness[name]
                if (kind == "positive" and value <= 0) or (kind == "nonnegative" and value < 0):
                    problems.append(f"witness {name}={value} violates the assumption {kind}")
            values = [mpmath.mpf(witness[n].numerator) / witness[n].denominator for n in names]
            index = row["false_line"] - 1
            if not 1 <= index < len(lines):
                problems.append(f"false_line {row['false_line']} is not a step")
            else:
                relation = lines[index][0]
                left, right = functions[index - 1](*values), functions[index](*values)
                if holds(relation, left, right):
                    problems.append(
                        f"the named step (line {row['false_line']}, {relation}) holds at the witness"
                    )
    return sorted(set(problems))


# ---------------------------------------------------------------- grading


def grade(rows: list[dict[str, Any]]) -> list[Any]:
    from rlvr.graders.base import make_grader
    from rlvr.task_packs.registry import load_pack

    grader = make_grader(load_pack("proof-identities"))
    try:
        return grader.grade_many([r["task_id"] for r in rows], [r["text"] for r in rows])
    finally:
        grader.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 on any false verdict or data error")
    parser.add_argument("--points", type=int, default=24, help="random points per correct derivation")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(20261201)
    data_errors = {}
    for row in rows:
        try:
            problems = verify(row, args.points, rng)
        except Exception as exc:  # a line this reader cannot read is a data error too
            problems = [f"unreadable: {type(exc).__name__}: {exc}"]
        if problems:
            data_errors[(row["task_id"], row["variant"])] = problems
    verified = time.perf_counter() - started
    verdicts = grade(rows)
    graded = time.perf_counter() - started - verified

    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    false_failures, false_passes = [], []
    for row, verdict in zip(rows, verdicts, strict=True):
        template = f"{row['split']}/{row['template']}"
        cell = table[template]
        if (row["task_id"], row["variant"]) in data_errors:
            cell["data_errors"] += 1
            continue
        cell[row["kind"]] += 1
        if verdict.error:
            cell["errors"] += 1
        if row["kind"] == "correct" and not verdict.passed:
            cell["false_failures"] += 1
            cell["ff_outcome" if "outcome" in verdict.gates else "ff_process"] += 1
            cell["ff_restates"] += "restates the goal" in verdict.feedback
            false_failures.append((row, verdict))
        if row["kind"] == "wrong" and verdict.passed:
            cell["false_passes"] += 1
            false_passes.append((row, verdict))

    print(
        f"proof grader fidelity: {len(rows)} derivations, {len({r['task_id'] for r in rows})} tasks, "
        f"{len(table)} templates"
    )
    print(
        f"data errors (independent numeric check, {DIGITS} digits, {args.points} points): {len(data_errors)}"
    )
    for (task_id, variant), problems in sorted(data_errors.items()):
        print(f"  DATA {task_id} {variant}: {'; '.join(problems)}")
    print(f"\nfalse failures (correct derivations failing): {len(false_failures)}")
    for row, verdict in false_failures:
        print(
            f"  FF {row['task_id']} {row['variant']} [{row['style']}] gates={verdict.gates} "
            f"flags={verdict.flags} error={verdict.error}\n     feedback: {verdict.feedback}"
        )
        for line in row["text"].splitlines():
            print(f"       | {line}")
    print(f"\nfalse passes (wrong derivations passing): {len(false_passes)}")
    for row, verdict in false_passes:
        print(
            f"  FP {row['task_id']} {row['variant']} [{row['style']}] false line {row['false_line']}: "
            f"{row['why']}\n     feedback: {verdict.feedback}"
        )
        for line in row["text"].splitlines():
            print(f"       | {line}")
    columns = (
        "correct",
        "false_failures",
        "ff_outcome",
        "ff_process",
        "ff_restates",
        "wrong",
        "false_passes",
        "data_errors",
        "errors",
    )
    heads = ("correct", "FF", "FF outc", "FF proc", "restate", "wrong", "FP", "data err", "errors")
    print("\nFF outc: a correct derivation failing the outcome gate (a step sympy could not prove or parse);")
    print(
        "FF proc: failing only the process gate (a step not one small rewrite); restate: of the FF, those whose"
    )
    print(
        "first failing step the gate calls a restatement of the goal (the prompt: restating does not count)"
    )
    print(f"{'template':34}" + "".join(f"{h:>9}" for h in heads))
    totals: dict[str, int] = defaultdict(int)
    for template in sorted(table):
        cell = table[template]
        for name in columns:
            totals[name] += cell[name]
        print(f"{template:34}" + "".join(f"{cell[name]:>9}" for name in columns))
    print(f"{'TOTAL':34}" + "".join(f"{totals[name]:>9}" for name in columns))
    print(
        f"\nwall time: {time.perf_counter() - started:.1f}s (data check {verified:.1f}s, grading {graded:.1f}s)"
    )
    bad = false_failures or false_passes or data_errors
    return 1 if args.strict and bad else 0


if __name__ == "__main__":
    sys.exit(main())
