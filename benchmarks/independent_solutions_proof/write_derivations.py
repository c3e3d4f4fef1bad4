"""How `derivations.jsonl` was written: derivations authored from the task PROMPTS only (goal + documented format).

The author wrote, for each template of the `proof-identities` pack, several correct derivation styles and several
wrong-but-plausible ones, in terms of the task's numbers (read off the goal in the prompt); this script
instantiates them for a sample of tasks of every template of every split, rotating styles and mistakes so that
tasks of one template do not all get the same pair. It never reads a task's reference derivation. Each wrong
derivation names its first false line (`false_line`, numbered like the checker numbers lines: the first
expression is line 1) and a witness: values of the symbols (within the task's assumptions) where that line's
relation to the previous line is false. `benchmarks/bench_proof_fidelity.py` checks all of this numerically.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/independent_solutions_proof/write_derivations.py
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from math import isqrt
from pathlib import Path
from typing import Any

from rlvr.task_packs.registry import load_pack

OUT = Path(__file__).parent / "derivations.jsonl"
PER_TEMPLATE = 4


def c(coef: int, body: str) -> str:
    """`coef` times `body` as a model writes it: `x`, `-x`, `12x` (the first term of a sum)."""
    if coef == 1:
        return body
    if coef == -1:
        return f"-{body}"
    return f"{coef}{body}"


def poly(terms: list[tuple[int, str]]) -> str:
    """A sum written the usual way: `x^2 - 7x - 60` from [(1, 'x^2'), (-7, 'x'), (-60, '')]."""
    out = ""
    for coef, body in terms:
        if coef == 0:
            continue
        text = str(abs(coef)) if body == "" else c(abs(coef), body)
        if not out:
            out = ("-" if coef < 0 else "") + text
        else:
            out += (" - " if coef < 0 else " + ") + text
    return out or "0"


def lin(v: str, k: int) -> str:
    """`x + 5` / `x - 5`."""
    return f"{v} + {k}" if k >= 0 else f"{v} - {-k}"


def D(style: str, lines: list[str]) -> dict[str, Any]:
    return {"kind": "correct", "style": style, "text": "\n".join(lines)}


def W(style: str, lines: list[str], false_line: int, witness: dict[str, str], why: str) -> dict[str, Any]:
    return {
        "kind": "wrong",
        "style": style,
        "text": "\n".join(lines),
        "false_line": false_line,
        "witness": witness,
        "why": why,
    }


# ---------------------------------------------------------------- train templates


def square_difference(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"\((\w)\+(\d+)\)\^2-\(\w-\d+\)\^2=(\d+)\w", goal)
    assert m, goal
    v, a = m.group(1), int(m.group(2))
    K, A2 = 4 * a, a * a
    lhs = f"({v} + {a})^2 - ({v} - {a})^2"
    correct = [
        D(
            "expand both squares",
            [
                lhs,
                f"= ({v}^2 + {2 * a}{v} + {A2}) - ({v}^2 - {2 * a}{v} + {A2})  # expand each square",
                f"= {v}^2 + {2 * a}{v} + {A2} - {v}^2 + {2 * a}{v} - {A2}",
                f"= {K}{v}",
            ],
        ),
        D(
            "latex difference of squares",
            [
                f"\\left({v}+{a}\\right)^{{2}}-\\left({v}-{a}\\right)^{{2}}",
                f"= \\left(({v}+{a})-({v}-{a})\\right)\\left(({v}+{a})+({v}-{a})\\right)  # A^2-B^2=(A-B)(A+B)",
                f"= {2 * a} \\cdot 2{v}",
                f"= {K}{v}",
            ],
        ),
        D(
            "products written out",
            [
                lhs,
                f"= ({v} + {a})({v} + {a}) - ({v} - {a})({v} - {a})",
                f"= {v}^2 + {2 * a}{v} + {A2} - ({v}^2 - {2 * a}{v} + {A2})",
                f"= {K}{v}",
            ],
        ),
    ]
    wrong = [
        W(
            "sign slip in the second square, fudged to the goal",
            [
                lhs,
                f"= ({v}^2 + {2 * a}{v} + {A2}) - ({v}^2 - {2 * a}{v} - {A2})",
                f"= {K}{v}",
            ],
            2,
            {v: "0"},
            f"(x-a)^2 expanded with -{A2}: at {v}=0 the left is 0, the right {2 * A2}",
        ),
        W(
            "(a+b)^2 = a^2 + b^2 then a fudged end",
            [
                lhs,
                f"= ({v}^2 + {A2}) - ({v}^2 + {A2})  # square each term",
                f"= {K}{v}",
            ],
            2,
            {v: "1"},
            f"squares of sums taken termwise: at {v}=1 the left is {K}, the right 0",
        ),
        W(
            "minus not distributed",
            [
                lhs,
                f"= {v}^2 + {2 * a}{v} + {A2} - ({v}^2 - {2 * a}{v} + {A2})",
                f"= {v}^2 + {2 * a}{v} + {A2} - {v}^2 - {2 * a}{v} + {A2}",
                f"= {2 * A2}",
            ],
            3,
            {v: "0"},
            "the minus sign reaches only the first term of the bracket: at 0 the sides differ",
        ),
    ]
    return correct + wrong


def cube_expansion(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"\((\w)([+-])(\d+)\)\^3=.*", goal)
    assert m, goal
    v, s, a = m.group(1), 1 if m.group(2) == "+" else -1, int(m.group(3))
    b = s * a
    lhs = f"({lin(v, b)})^3"
    rhs = poly([(1, f"{v}^3"), (3 * b, f"{v}^2"), (3 * b * b, v), (b**3, "")])
    sq = poly([(1, f"{v}^2"), (2 * b, v), (b * b, "")])
    correct = [
        D(
            "square first, then multiply",
            [
                lhs,
                f"= ({lin(v, b)})({lin(v, b)})^2",
                f"= ({lin(v, b)})({sq})",
                f"= {v}({sq}) {'+' if b > 0 else '-'} {a}({sq})",
                "= "
                + poly(
                    [(1, f"{v}^3"), (2 * b, f"{v}^2"), (b * b, v), (b, f"{v}^2"), (2 * b * b, v), (b**3, "")]
                ),
                f"= {rhs}",
            ],
        ),
        D(
            "binomial theorem, latex",
            [
                f"\\left({v}{'+' if b > 0 else '-'}{a}\\right)^{{3}}",
                f"= {v}^{{3}} + 3 \\cdot {v}^{{2}} \\cdot ({b}) + 3 \\cdot {v} \\cdot ({b})^{{2}} + ({b})^{{3}}"
                "  # binomial theorem",
                f"= {rhs}",
            ],
        ),
        D(
            "distribute the square into the cube",
            [
                lhs,
                f"= ({sq})({lin(v, b)})  # (x+b)^3 = (x+b)^2 (x+b)",
                "= "
                + poly(
                    [(1, f"{v}^3"), (b, f"{v}^2"), (2 * b, f"{v}^2"), (2 * b * b, v), (b * b, v), (b**3, "")]
                ),
                f"= {rhs}",
            ],
        ),
    ]
    wrong_rhs = poly([(1, f"{v}^3"), (b, f"{v}^2"), (b * b, v), (b**3, "")])
    wrong = [
        W(
            "cube of a sum taken termwise",
            [
                lhs,
                f"= {v}^3 {'+' if b > 0 else '-'} {a**3}  # cube each term",
                f"= {rhs}",
            ],
            2,
            {v: "1"},
            "(x+b)^3 = x^3 + b^3 is false: x=1 gives different sides",
        ),
        W(
            "missing binomial coefficients",
            [
                lhs,
                f"= {wrong_rhs}",
                f"= {rhs}",
            ],
            2,
            {v: "1"},
            "coefficients 3 dropped; at 1 the two lines differ",
        ),
        W(
            "sign slip on the linear term",
            [
                lhs,
                f"= ({lin(v, b)})({sq})",
                "= " + poly([(1, f"{v}^3"), (3 * b, f"{v}^2"), (-3 * b * b, v), (b**3, "")]),
            ],
            3,
            {v: "1"},
            "the middle coefficient has the wrong sign; the chain ends off the goal too",
        ),
    ]
    return correct + wrong


def two_squares(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"(\d*)(\w)\^2\+(\d*)(\w)\^2>=(\d+)\w\w", goal)
    assert m, goal
    P = int(m.group(1) or 1)
    a = m.group(2)
    Q = int(m.group(3) or 1)
    b = m.group(4)
    R = int(m.group(5))
    p, q = isqrt(P), isqrt(Q)
    assert p * p == P and q * q == Q and 2 * p * q == R, goal
    left_written = goal.split(">=")[0].replace("+", " + ")
    pa, qb = c(p, a), c(q, b)
    correct = [
        D(
            "add and subtract, complete the square",
            [
                left_written,
                f"= {c(P, a + '^2')} - {R}{a}{b} + {c(Q, b + '^2')} + {R}{a}{b}",
                f"= ({pa} - {qb})^2 + {R}{a}{b}  # perfect square",
                f"≥ {R}{a}{b}  # a square is non-negative",
            ],
        ),
        D(
            "latex, factor the square",
            [
                f"{c(P, a + '^{2}')} + {c(Q, b + '^{2}')}",
                f"= \\left({pa}-{qb}\\right)^{{2}} + {R}{a}{b}",
                f"\\geq {R}{a}{b}",
            ],
        ),
        D(
            "fine steps with >= 0 + ...",
            [
                left_written,
                f"= ({c(P, a + '^2')} - {R}{a}{b} + {c(Q, b + '^2')}) + {R}{a}{b}",
                f"= ({pa} - {qb})^2 + {R}{a}{b}",
                f">= 0 + {R}{a}{b}",
                f"= {R}{a}{b}",
            ],
        ),
    ]
    wrong = [
        W(
            "AM-GM with sqrt(a^2 b^2) = ab",
            [
                left_written,
                f">= 2 sqrt({P * Q}{a}^2 {b}^2)  # AM-GM",
                f"= {R}{a}{b}",
            ],
            3,
            {a: "1", b: "-1"},
            "sqrt(a^2 b^2) = |ab|, not ab: at a=1, b=-1 the left is positive, the right negative",
        ),
        W(
            "strict where equality is possible",
            [
                left_written,
                f"= ({pa} - {qb})^2 + {R}{a}{b}",
                f"> {R}{a}{b}",
            ],
            3,
            {a: str(q), b: str(p)},
            "the square can be 0 (p*a = q*b), so > is false there",
        ),
        W(
            "wrong sign in the square",
            [
                left_written,
                f"= ({pa} + {qb})^2 + {R}{a}{b}",
                f">= {R}{a}{b}",
            ],
            2,
            {a: "1", b: "1"},
            "(pa+qb)^2 + Rab = P a^2 + Q b^2 + 2Rab, not the left side",
        ),
        W(
            "direction error",
            [
                left_written,
                f"= ({pa} - {qb})^2 + {R}{a}{b}",
                f"<= {R}{a}{b}",
            ],
            3,
            {a: "1", b: "0"},
            "a square plus Rab is at least Rab, not at most",
        ),
    ]
    extra = W(
        "sqrt of each square taken as the letter (sqrt(x^2) = x)",
        [
            left_written,
            f">= 2·sqrt({c(P, a + '^2')})·sqrt({c(Q, b + '^2')})  # AM-GM",
            f"= 2·{pa}·{qb}",
            f"= {R}{a}{b}",
        ],
        3,
        {a: "-1", b: "1"},
        "sqrt(p^2 a^2) = |p a|, not p a: at a=-1, b=1 the left is positive, the right negative",
    )
    return correct + [wrong[k % 4], wrong[(k + 1) % 4], extra]


def shifted_square(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"(\w)\^2([+-]\d*)\w([+-]\d+)(>=|>)(\d+)", goal)
    assert m, goal
    v = m.group(1)
    B = int(m.group(2)) if m.group(2) not in "+-" else int(m.group(2) + "1")
    C, rel, M = int(m.group(3)), m.group(4), int(m.group(5))
    assert B % 2 == 0 and C - B * B // 4 == M, goal
    h = B // 2
    lhs = poly([(1, f"{v}^2"), (B, v), (C, "")])
    sym = "≥" if rel == ">=" else ">"
    correct = [
        D(
            "split the constant, complete the square",
            [
                lhs,
                "= " + poly([(1, f"{v}^2"), (B, v), (h * h, "")]) + f" + {M}",
                f"= ({lin(v, h)})^2 + {M}",
                f"{sym} {M}  # drop the square",
            ],
        ),
        D(
            "bracketed square then 0 + M",
            [
                lhs,
                "= (" + poly([(1, f"{v}^2"), (B, v), (h * h, "")]) + f") + {M}",
                f"= ({lin(v, h)})^2 + {M}",
                f"{rel} 0 + {M}",
                f"= {M}",
            ],
        ),
        D(
            "latex",
            [
                f"{v}^{{2}} {'+' if B > 0 else '-'} {abs(B)}{v} + {C}",
                f"= \\left({v}{'+' if h > 0 else '-'}{abs(h)}\\right)^{{2}} + {M}",
                f"\\geq {M}",
            ],
        ),
    ]
    wrong = [
        W(
            "wrong completing constant",
            [
                lhs,
                f"= ({lin(v, h)})^2 + {M + 1}",
                f"{sym} {M}",
            ],
            2,
            {v: "0"},
            "the constant after completing the square is off by one",
        ),
        W(
            "strict step where the square can vanish",
            [
                lhs,
                f"= ({lin(v, h)})^2 + {M}",
                f"> {M}",
            ],
            3,
            {v: str(-h)},
            f"at {v}={-h} the square is 0 and both sides are {M}",
        ),
        W(
            "halved linear coefficient forgotten",
            [
                lhs,
                f"= ({lin(v, B)})^2 + {M}",
                f"≥ {M}",
            ],
            2,
            {v: "0"},
            "(x+B)^2 instead of (x+B/2)^2",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


def partial_fractions(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"1/(\w)-1/\(\w\+(\d+)\)=(\d+)/\(\w\(\w\+\d+\)\)", goal)
    assert m, goal
    v, a = m.group(1), int(m.group(2))
    lhs = f"1/{v} - 1/({v} + {a})"
    den = f"{v}({v} + {a})"
    correct = [
        D(
            "common denominator, term by term",
            [
                lhs,
                f"= ({v} + {a})/({den}) - {v}/({den})",
                f"= (({v} + {a}) - {v})/({den})",
                f"= {a}/({den})",
            ],
        ),
        D(
            "latex frac",
            [
                f"\\frac{{1}}{{{v}}} - \\frac{{1}}{{{v}+{a}}}",
                f"= \\frac{{({v}+{a}) - {v}}}{{{v}({v}+{a})}}",
                f"= \\frac{{{a}}}{{{v}({v}+{a})}}",
            ],
        ),
        D(
            "cross multiply in one line",
            [
                lhs,
                f"= (1·({v} + {a}) - 1·{v})/({v}·({v} + {a}))  # common denominator",
                f"= {a}/({den})",
            ],
        ),
    ]
    wrong = [
        W(
            "subtracting denominators",
            [
                lhs,
                f"= 1/({v} - ({v} + {a}))",
                f"= -1/{a}",
            ],
            2,
            {v: "1"},
            "1/x - 1/y is not 1/(x-y)",
        ),
        W(
            "numerator sign slip",
            [
                lhs,
                f"= ({v} - ({v} + {a}))/({den})",
                f"= {a}/({den})",
            ],
            2,
            {v: "1"},
            "the numerator is reversed: it is -a over the denominator",
        ),
        W(
            "dropped factor in the denominator",
            [
                lhs,
                f"= (({v} + {a}) - {v})/({den})",
                f"= {a}/({v} + {a})",
            ],
            3,
            {v: "2"},
            "the factor x of the denominator is lost",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


def product_expand(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"\((\w)([+-]\d+)\)\(\w([+-]\d+)\)=.*", goal)
    assert m, goal
    v, p, q = m.group(1), int(m.group(2)), int(m.group(3))
    lhs = f"({lin(v, p)})({lin(v, q)})"
    rhs = poly([(1, f"{v}^2"), (p + q, v), (p * q, "")])
    correct = [
        D(
            "distribute the first factor",
            [
                lhs,
                f"= {v}({lin(v, q)}) {'+' if p > 0 else '-'} {abs(p)}({lin(v, q)})",
                "= " + poly([(1, f"{v}^2"), (q, v), (p, v), (p * q, "")]),
                f"= {rhs}",
            ],
        ),
        D(
            "FOIL with explicit products",
            [
                lhs,
                f"= {v}·{v} + {v}·({q}) + ({p})·{v} + ({p})·({q})  # FOIL",
                f"= {rhs}",
            ],
        ),
        D(
            "latex cdot",
            [
                f"\\left({lin(v, p).replace(' ', '')}\\right)\\left({lin(v, q).replace(' ', '')}\\right)",
                "= " + poly([(1, f"{v}^{{2}}"), (q, v), (p, v), (p * q, "")]),
                f"= {rhs}",
            ],
        ),
    ]
    wrong = [
        W(
            "constant sign slip",
            [
                lhs,
                "= " + poly([(1, f"{v}^2"), (q, v), (p, v), (-p * q, "")]),
                f"= {rhs}",
            ],
            2,
            {v: "0"},
            "the product of the constants has the wrong sign",
        ),
        W(
            "outer product only",
            [
                lhs,
                f"= {v}^2 {'+' if p * q > 0 else '-'} {abs(p * q)}  # first times first, last times last",
                f"= {rhs}",
            ],
            2,
            {v: "1"},
            "the cross terms are dropped",
        ),
        W(
            "cross terms added wrong",
            [
                lhs,
                "= " + poly([(1, f"{v}^2"), (p - q if p != q else p + q + 1, v), (p * q, "")]),
            ],
            2,
            {v: "1"},
            "the linear coefficient is p-q, not p+q; the chain also ends off the goal",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


def square_sum(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"\((\w)([+-]\d+)\)\^2\+\(\w([+-]\d+)\)\^2=.*", goal)
    assert m, goal
    v, p, q = m.group(1), int(m.group(2)), int(m.group(3))
    lhs = f"({lin(v, p)})^2 + ({lin(v, q)})^2"
    sp = poly([(1, f"{v}^2"), (2 * p, v), (p * p, "")])
    sq = poly([(1, f"{v}^2"), (2 * q, v), (q * q, "")])
    rhs = poly([(2, f"{v}^2"), (2 * (p + q), v), (p * p + q * q, "")])
    correct = [
        D("expand both, collect", [lhs, f"= {sp} + {sq}", f"= {rhs}"]),
        D(
            "one square at a time",
            [
                lhs,
                f"= ({sp}) + ({lin(v, q)})^2",
                f"= ({sp}) + ({sq})",
                f"= {rhs}",
            ],
        ),
        D(
            "latex",
            [
                f"\\left({lin(v, p)}\\right)^{{2}}+\\left({lin(v, q)}\\right)^{{2}}",
                f"= {v}^{{2}} {'+' if p > 0 else '-'} {abs(2 * p)}{v} + {p * p} + {v}^{{2}} "
                f"{'+' if q > 0 else '-'} {abs(2 * q)}{v} + {q * q}",
                f"= {rhs}",
            ],
        ),
    ]
    wrong = [
        W(
            "squares taken termwise",
            [lhs, f"= {v}^2 + {p * p} + {v}^2 + {q * q}", f"= {rhs}"],
            2,
            {v: "1"},
            "(x+p)^2 = x^2 + p^2 drops the cross term",
        ),
        W(
            "cross term not doubled",
            [
                lhs,
                "= " + poly([(1, f"{v}^2"), (p, v), (p * p, ""), (1, f"{v}^2"), (q, v), (q * q, "")]),
                f"= {rhs}",
            ],
            2,
            {v: "1"},
            "(x+p)^2 = x^2 + px + p^2",
        ),
        W(
            "constant miscollected",
            [
                lhs,
                f"= {sp} + {sq}",
                "= " + poly([(2, f"{v}^2"), (2 * (p + q), v), (p * p + q * q + 1, "")]),
            ],
            3,
            {v: "0"},
            "the constants add to p^2+q^2, not one more; the chain ends off the goal",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


def fraction_sum(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"1/\((\w)\+(\d+)\)\+1/\(\w\+(\d+)\)=.*", goal)
    assert m, goal
    v, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    lhs = f"1/({v} + {a}) + 1/({v} + {b})"
    den = f"({v} + {a})({v} + {b})"
    rhs = f"(2{v} + {a + b})/({den})"
    correct = [
        D("one common denominator", [lhs, f"= (({v} + {b}) + ({v} + {a}))/({den})", f"= {rhs}"]),
        D(
            "expand each fraction first",
            [
                lhs,
                f"= ({v} + {b})/({den}) + ({v} + {a})/({den})",
                f"= ({v} + {b} + {v} + {a})/({den})",
                f"= {rhs}",
            ],
        ),
        D(
            "latex",
            [
                f"\\frac{{1}}{{{v}+{a}}}+\\frac{{1}}{{{v}+{b}}}",
                f"= \\frac{{({v}+{b})+({v}+{a})}}{{({v}+{a})({v}+{b})}}",
                f"= \\frac{{2{v}+{a + b}}}{{({v}+{a})({v}+{b})}}",
            ],
        ),
    ]
    wrong = [
        W(
            "adding denominators",
            [lhs, f"= 2/(2{v} + {a + b})", f"= {rhs}"],
            2,
            {v: "1"},
            "1/x + 1/y is not 2/(x+y)",
        ),
        W(
            "numerator miscounted",
            [lhs, f"= (2{v} + {a + b + 1})/({den})"],
            2,
            {v: "1"},
            "the numerator constant is off by one; the chain ends off the goal",
        ),
        W(
            "denominator as a sum",
            [
                lhs,
                f"= (({v} + {b}) + ({v} + {a}))/({v} + {a} + {v} + {b})",
                f"= {rhs}",
            ],
            2,
            {v: "1"},
            "the common denominator is the product, not the sum",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


# ---------------------------------------------------------------- test templates


def difference_of_squares(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"(\w)\^2-(\d+)=\(\w-(\d+)\)\(\w\+\d+\)", goal)
    assert m, goal
    v, N, a = m.group(1), int(m.group(2)), int(m.group(3))
    assert a * a == N
    lhs = f"{v}^2 - {N}"
    correct = [
        D(
            "a^2 - b^2 pattern",
            [lhs, f"= {v}^2 - {a}^2", f"= ({v} - {a})({v} + {a})  # a^2 - b^2 = (a-b)(a+b)"],
        ),
        D(
            "insert the cross terms and group",
            [
                lhs,
                f"= {v}^2 + {a}{v} - {a}{v} - {N}",
                f"= {v}({v} + {a}) - {a}({v} + {a})",
                f"= ({v} - {a})({v} + {a})",
            ],
        ),
        D(
            "latex",
            [
                f"{v}^{{2}} - {N}",
                f"= \\left({v}-{a}\\right)\\left({v}+{a}\\right)",
            ],
        ),
    ]
    wrong = [
        W(
            "wrong factor signs",
            [lhs, f"= ({v} - {a})({v} - {a})", f"= ({v} - {a})({v} + {a})"],
            2,
            {v: "0"},
            "(x-a)^2 is not x^2 - a^2",
        ),
        W(
            "halved root",
            [lhs, f"= ({v} - {N // 2})({v} + {N // 2})", f"= ({v} - {a})({v} + {a})"],
            2,
            {v: "0"},
            "the square root of N is not N/2",
        ),
        W(
            "completing with a forgotten constant",
            [lhs, f"= ({v} - {a})^2 + {2 * a}{v}", f"= ({v} - {a})({v} + {a})"],
            2,
            {v: "0"},
            "(x-a)^2 + 2ax is x^2 + a^2, not x^2 - a^2",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


def strictly_positive(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"(\w)\^2([+-]\d*)\w([+-]\d+)>0", goal)
    assert m, goal
    v = m.group(1)
    B = int(m.group(2)) if m.group(2) not in "+-" else int(m.group(2) + "1")
    C = int(m.group(3))
    assert B % 2 == 0
    h = B // 2
    M = C - h * h
    assert M > 0, goal
    lhs = poly([(1, f"{v}^2"), (B, v), (C, "")])
    correct = [
        D(
            "complete the square, positive at once",
            [
                lhs,
                "= " + poly([(1, f"{v}^2"), (B, v), (h * h, "")]) + f" + {M}",
                f"= ({lin(v, h)})^2 + {M}",
                "> 0  # a square plus a positive number",
            ],
        ),
        D(
            "through the minimum value",
            [
                lhs,
                f"= ({lin(v, h)})^2 + {M}",
                f"≥ {M}  # the square is non-negative",
                "> 0",
            ],
        ),
        D(
            "latex",
            [
                f"{v}^{{2}} {'+' if B > 0 else '-'} {abs(B)}{v} + {C}",
                f"= \\left({v}{'+' if h > 0 else '-'}{abs(h)}\\right)^{{2}} + {M}",
                "> 0",
            ],
        ),
    ]
    wrong = [
        W(
            "square of the wrong shift",
            [lhs, f"= ({lin(v, -h)})^2 + {M}", "> 0"],
            2,
            {v: "1"},
            "the sign inside the square is flipped",
        ),
        W(
            "strict chain with a wrong constant, ends at 0",
            [
                lhs,
                f"= ({lin(v, h)})^2 - {M}",
                f"≥ -{M}",
                "> 0",
            ],
            2,
            {v: "0"},
            "the completed constant has the wrong sign",
        ),
        W(
            "square dropped with the wrong direction",
            [
                lhs,
                f"= ({lin(v, h)})^2 + {M}",
                f"< {M + 1}",
                "> 0",
            ],
            3,
            {v: str(-h + 5)},
            "the square is not below 1",
        ),
    ]
    extra = W(
        "drops the linear term as if it were non-negative",
        [
            lhs,
            f"≥ {v}^2 + {C}  # drop {c(B, v)}",
            "> 0",
        ],
        2,
        {v: "-1" if B > 0 else "1"},
        "the dropped term Bx is negative for some real x",
    )
    return correct + [wrong[k % 3], wrong[(k + 1) % 3], extra]


def reciprocal_sum(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"(\w)\+(\d+)/\w>=(\d+)", goal)
    assert m, goal
    v, N, M = m.group(1), int(m.group(2)), int(m.group(3))
    r = isqrt(N)
    assert r * r == N and 2 * r == M, goal
    lhs = f"{v} + {N}/{v}"
    correct = [
        D(
            "one fraction, then complete the square",
            [
                lhs,
                f"= ({v}^2 + {N})/{v}",
                f"= ({v}^2 - {M}{v} + {N} + {M}{v})/{v}",
                f"= (({v} - {r})^2 + {M}{v})/{v}",
                f"= ({v} - {r})^2/{v} + {M}{v}/{v}",
                f"= ({v} - {r})^2/{v} + {M}",
                f">= {M}  # {v} > 0, so the first term is non-negative",
            ],
        ),
        D(
            "square roots",
            [
                lhs,
                f"= (sqrt({v}))^2 + ({r}/sqrt({v}))^2",
                f"= (sqrt({v}) - {r}/sqrt({v}))^2 + 2·sqrt({v})·{r}/sqrt({v})",
                f"= (sqrt({v}) - {r}/sqrt({v}))^2 + {M}",
                f"≥ {M}",
            ],
        ),
        D(
            "latex, subtract and add",
            [
                f"{v} + \\frac{{{N}}}{{{v}}}",
                f"= {v} - {M} + \\frac{{{N}}}{{{v}}} + {M}",
                f"= \\frac{{{v}^{{2}} - {M}{v} + {N}}}{{{v}}} + {M}",
                f"= \\frac{{({v}-{r})^{{2}}}}{{{v}}} + {M}",
                f"\\geq {M}",
            ],
        ),
    ]
    wrong = [
        W(
            "denominator dropped",
            [
                lhs,
                f"= ({v} - {r})^2/{v} + {M}",
                f"≥ ({v} - {r})^2 + {M}",
                f"≥ {M}",
            ],
            3,
            {v: str(r + 2)},
            "(x-r)^2/x >= (x-r)^2 fails for every x > 1 with x != r",
        ),
        W(
            "wrong constant",
            [lhs, f"= ({v} - {r})^2/{v} + {M + 1}", f"≥ {M}"],
            2,
            {v: "1"},
            "the constant after completing the square is M, not M+1",
        ),
        W(
            "strict where equality holds",
            [lhs, f"= ({v} - {r})^2/{v} + {M}", f"> {M}"],
            3,
            {v: str(r)},
            f"at {v}={r} both sides are {M}",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


def conjugate_product(goal: str, k: int) -> list[dict[str, Any]]:
    m = re.fullmatch(r"\((\w)\+(\d+)\)\(\w-\d+\)\+(\d+)=\w\^2", goal)
    assert m, goal
    v, a, N = m.group(1), int(m.group(2)), int(m.group(3))
    assert a * a == N
    lhs = f"({v} + {a})({v} - {a}) + {N}"
    correct = [
        D("difference of squares", [lhs, f"= ({v}^2 - {N}) + {N}", f"= {v}^2"]),
        D("FOIL", [lhs, f"= {v}^2 - {c(a, v)} + {c(a, v)} - {N} + {N}", f"= {v}^2"]),
        D(
            "latex",
            [
                f"\\left({v}+{a}\\right)\\left({v}-{a}\\right)+{N}",
                f"= {v}^{{2}} - {N} + {N}",
                f"= {v}^{{2}}",
            ],
        ),
    ]
    wrong = [
        W(
            "product as a sum of squares",
            [lhs, f"= {v}^2 + {N} + {N}", f"= {v}^2"],
            2,
            {v: "0"},
            "(x+a)(x-a) is x^2 - a^2, not x^2 + a^2",
        ),
        W(
            "constant not squared",
            [lhs, f"= {v}^2 - {a if a > 1 else 2} + {N}", f"= {v}^2"],
            2,
            {v: "0"},
            "a times a is a^2, not a (for a = 1: not 2)",
        ),
        W(
            "cross terms kept",
            [lhs, f"= {v}^2 - {2 * a}{v} - {N} + {N}", f"= {v}^2 - {2 * a}{v}"],
            2,
            {v: "1"},
            "the cross terms cancel; they do not add; the chain ends off the goal",
        ),
    ]
    return correct + [wrong[k % 3], wrong[(k + 1) % 3]]


AUTHORS: dict[str, Callable[[str, int], list[dict[str, Any]]]] = {
    f.__name__: f
    for f in (
        square_difference,
        cube_expansion,
        two_squares,
        shifted_square,
        partial_fractions,
        product_expand,
        square_sum,
        fraction_sum,
        difference_of_squares,
        strictly_positive,
        reciprocal_sum,
        conjugate_product,
    )
}


def pick(items: list[Any], k: int) -> list[Any]:
    """Two correct styles (rotating), the wrong ones as the author chose them."""
    correct = [d for d in items if d["kind"] == "correct"]
    wrong = [d for d in items if d["kind"] == "wrong"]
    styles = [correct[k % len(correct)], correct[(k + 1) % len(correct)]]
    if len(wrong) > 3:  # two rotating mistakes, and a third one where the author wrote one for every task
        wrong = [wrong[k % 3], wrong[(k + 1) % 3]] + wrong[3:]
    elif len(wrong) == 3 and not any("sqrt" in w["style"] or "drops" in w["style"] for w in wrong):
        wrong = [wrong[k % len(wrong)], wrong[(k + 1) % len(wrong)]]
    return styles + wrong


def main() -> None:
    pack = load_pack("proof-identities")
    rows = []
    for split in ("train", "test"):
        by_template: dict[str, list[Any]] = defaultdict(list)
        for task in pack.tasks(split):
            by_template[task.meta["template"]].append(task)
        for template, tasks in sorted(by_template.items()):
            step = max(1, len(tasks) // PER_TEMPLATE)
            chosen = tasks[::step][:PER_TEMPLATE]
            for k, task in enumerate(chosen):
                goal = task.hidden["goal"]
                derivations = pick(AUTHORS[template](goal.replace(" ", ""), k), k)
                for index, derivation in enumerate(derivations):
                    rows.append(
                        {
                            "task_id": task.id,
                            "split": split,
                            "template": template,
                            "goal": goal,
                            "assumptions": task.hidden.get("assumptions") or {},
                            "variant": f"{derivation['kind']}-{index}",
                            **derivation,
                        }
                    )
    with OUT.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} derivations, {len({r['task_id'] for r in rows})} tasks -> {OUT}")


if __name__ == "__main__":
    main()
