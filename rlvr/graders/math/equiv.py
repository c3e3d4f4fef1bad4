"""Is a candidate answer mathematically the same as the reference?

Runs inside the math worker process (rlvr/graders/math/worker.py), never in the grader itself, because
sympy on hostile input can hang or exhaust memory. The comparison is structural first:

- text answers ("Monday", "(B)") compare as normalised text, never as products of symbols;
- percents: `50%` equals `50` and `0.5`;
- collections keep their kind: `{1,2}` is a set (order-free), `(1,2)` a tuple (ordered), `[1,2)` an interval,
  a bare `1, 2` an unordered list of answers; a set never equals a tuple;
- intervals, unions and inequalities (`1 \\le x \\le 3`) compare as sets of reals;
- numbers compare exactly (a decimal is the rational it spells), with tolerance only when the task gives one,
  except a decimal correctly rounding a number that has no finite decimal (rlvr/graders/math/rounding.py);
- expressions and equations compare symbolically, then by high-precision evaluation at random points.

LaTeX and plain expressions are parsed with math-verify (latex2sympy); math-verify's own `verify` is the
fallback when the structural comparison cannot parse an answer.
"""

from __future__ import annotations

import itertools
import random
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import sympy
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from rlvr.graders.math.rounding import StatedDecimal, rounds_to, stated_decimals
from rlvr.specs.math_settings import MathSettings

MAX_ANSWER_CHARS = 1000


@dataclass(frozen=True)
class Tolerance:
    absolute: float = 0.0
    relative: float = 0.0

    @classmethod
    def from_spec(cls, spec: Any) -> Tolerance | None:
        """`0.01` (absolute), `{"abs": 0.01}`, `{"rel": 1e-3}`; None or 0 means exact comparison."""
        if spec is None or spec is False:
            return None
        if isinstance(spec, int | float):
            return cls(absolute=float(spec)) if spec > 0 else None
        if isinstance(spec, dict):
            absolute = float(spec.get("abs", spec.get("absolute", 0.0)) or 0.0)
            relative = float(spec.get("rel", spec.get("relative", 0.0)) or 0.0)
            return cls(absolute, relative) if absolute > 0 or relative > 0 else None
        raise ValueError(f"tolerance must be a number or {{'abs': x, 'rel': y}}, got {spec!r}")


@dataclass(frozen=True)
class Rules:
    """How numbers and collections compare (built from MathSettings, rlvr/specs/math_settings.py)."""

    tolerance: Tolerance | None = None
    precision: int | None = None
    significant_figures: int | None = None
    strict: bool = True
    relation: str = "auto"
    relation_as_set: bool = True
    # decimal literals the answer and the reference write (rlvr/graders/math/rounding.py), by exact value
    decimals: Mapping[Fraction, StatedDecimal] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: MathSettings | None) -> Rules:
        if settings is None:
            return cls()
        return cls(
            tolerance=Tolerance.from_spec(settings.tolerance),
            precision=settings.precision,
            significant_figures=settings.significant_figures,
            strict=settings.strict,
            relation=settings.relation,
            relation_as_set=settings.relation_as_set,
        )

    @property
    def approximate(self) -> bool:
        return (
            self.tolerance is not None or self.precision is not None or self.significant_figures is not None
        )


class Undecided(Exception):
    """The structural comparison could not parse or decide; fall back to math-verify."""


# ---------------------------------------------------------------- normalisation

_WRAPPERS = [
    (r"\\left", ""),
    (r"\\right", ""),
    (r"\\displaystyle", ""),
    (r"\\[dt]frac", r"\\frac"),
    (r"(?<!\\)\\[!,;: ]|~", " "),  # thin spaces, but not the row break `\\`
    (r"\\%", "%"),
    (r"\^\s*\{?\s*\\circ\s*\}?|°", ""),
    (r"\\le(?![a-z])|≤", r"\\leq "),
    (r"\\ge(?![a-z])|≥", r"\\geq "),
    (r"\\infinity|∞", r"\\infty "),
    (r"\s+(?:or|\\lor|\\vee)\s+", r" \\lor "),
    (r"\s+(?:and|\\land|\\wedge)\s+", r" \\land "),
    (r"\\varnothing|∅|\\\{\s*\\\}", r"\\emptyset"),
    (r"\\mathbb\s*\{?R\}?|ℝ", r"(-\\infty, \\infty)"),
    (r"\\\$|(?<=\d)\s*\\\$", ""),
    (r"\\lbrace|\\lbrack", "{"),
    (r"\\rbrace|\\rbrack", "}"),
]
# a unit after a number: `5 \\text{ cm}^2`, `10 dollars` (only when the rest is words)
_UNIT_TEXT = re.compile(r"(\d)\s*\\(?:text|mathrm|mbox)\s*\{\s*[A-Za-z][A-Za-z .]*\}(?:\^\{?\d\}?)?\s*$")
_UNIT_WORDS = re.compile(r"^(-?\d[\d.,]*)\s+[A-Za-z]{2,}(?:\s+[A-Za-z]+)*(?:\^\{?\d\}?)?$")
_REPEATING = re.compile(r"^(-?)(\d*)\.(\d*)\\overline\s*\{(\d+)\}$")
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|mathrm|mathbf|textit|mbox|operatorname)\s*\{([^{}]*)\}")
_INFINITY_WORD = re.compile(r"(?<![A-Za-z\\])(?:oo|inf|infinity|infty)(?![A-Za-z])", re.IGNORECASE)
_THOUSANDS = re.compile(r"^-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$")  # `0,111` is no thousands number
_SCIENTIFIC = re.compile(r"^(-?\d+(?:\.\d+)?)[eE]([+-]?\d+)$")
_CHOICE = re.compile(r"^\(?([A-Ea-e])\)?$")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z'\- ]*[A-Za-z]$")
_MATH_WORDS = {"pi", "infty", "sqrt", "frac", "sin", "cos", "tan", "log", "ln", "exp"}


# digit groups: `11,\! 111`, `14{,}916`, `16,\!386.20` are one number
_GROUP_SEPARATOR = re.compile(r"(?<=\d)(?:\{,\}|,\s*\\!\s*|\\!\s*,\s*)(?=\d{3}(?!\d))")
_RELATION_SPELLING = [
    (r">=|=>", r"\\geq "),
    (r"<=|=<", r"\\leq "),
    (r"!=|\\neq?(?![a-z])|≠", r"\\neq "),
    (r"\\lt(?![a-z])", "<"),
    (r"\\gt(?![a-z])", ">"),
]
# words after a number that change its value or meaning, so they are never dropped as a unit
_MEANINGFUL_WORDS = frozenset(
    """hundred hundreds thousand thousands million millions billion billions trillion trillions dozen dozens
    half halves third thirds quarter quarters fifth fifths tenth tenths hundredth hundredths thousandth
    more less fewer greater smaller larger bigger higher lower than or and at least most
    over under above below about approximately roughly nearly around almost plus minus times squared cubed
    to not no exactly only divided multiplied""".split()
)
_LIST_CONNECTIVE = re.compile(r"\s*,?\s*(?:\\text\{\s*(and|or)\s*\}|\b(and|or)\b)\s*,?\s*")
_HAS_INEQUALITY = re.compile(r"\\[lg]eq|[<>]|\\neq")


_PERCENT_WORD = re.compile(r"(\d)\s*(?:percent(?:age)?|pct)\b", re.IGNORECASE)


def _lists_from_connectives(text: str) -> str:
    """`19, 46, and 82` and `21, 16 or 11` are lists (`19, 46, 82`); `x > 1 and x < 3` stays a condition."""
    if not _LIST_CONNECTIVE.search(text):
        return text
    parts = _LIST_CONNECTIVE.split(text)
    items = [part for index, part in enumerate(parts) if index % 3 == 0]
    if any(_HAS_INEQUALITY.search(item) for item in items) or not all(item.strip() for item in items):
        return text
    return ", ".join(item.strip().strip(",").strip() for item in items)


def _value_words(text: str) -> set[str]:
    """Words in an answer that change its value (`thousand`, `more`, `approximately`); list connectives
    (`and`, `or`) excluded."""
    words = {word.casefold() for word in re.findall(r"(?<![\\A-Za-z])[A-Za-z]{2,}", text)}
    return (words & _MEANINGFUL_WORDS) - {"and", "or"}


def _meaningful(words: str) -> bool:
    return bool({word.casefold() for word in re.findall(r"[A-Za-z]+", words)} & _MEANINGFUL_WORDS)


def _drop_unit_words(text: str) -> str:
    """`10 dollars` -> `10`, but `25 thousand` and `25 or more` keep their words (and then do not parse)."""
    match = _UNIT_WORDS.match(text)
    if not match or _meaningful(text[match.end(1) :]):
        return text
    return match.group(1)


def normalise(answer: str) -> str:
    text = answer.strip()
    for outer in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(outer[0]) and text.endswith(outer[1]) and len(text) > len(outer[0]) * 2:
            text = text[len(outer[0]) : -len(outer[1])].strip()
    text = re.sub(r"(?<!\\)\$", " ", text)  # stray math-mode toggles: `12 $ and $ 13`
    text = _GROUP_SEPARATOR.sub("", text)
    for pattern, replacement in _RELATION_SPELLING:
        text = re.sub(pattern, replacement, text)
    unit = _UNIT_TEXT.search(text)
    if unit and not _meaningful(unit.group(0)):
        text = _UNIT_TEXT.sub(r"\1", text)
    for _ in range(3):
        text = _TEXT_COMMAND.sub(r"\1", text)
    text = _PERCENT_WORD.sub(r"\1%", text)
    text = _lists_from_connectives(text)
    for pattern, replacement in _WRAPPERS:
        text = re.sub(pattern, replacement, text)
    text = _INFINITY_WORD.sub(r"\\infty", text)
    text = re.sub(r"\s+", " ", text).strip().rstrip(".").strip()
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    scientific = _SCIENTIFIC.match(text)
    if scientific:
        text = f"{scientific.group(1)}\\times 10^{{{scientific.group(2)}}}"
    text = _drop_unit_words(text)
    repeating = _REPEATING.match(text)
    if repeating:
        text = _repeating_to_fraction(*repeating.groups())
    return text


def _repeating_to_fraction(sign: str, whole: str, fixed: str, period: str) -> str:
    """`0.1\\overline{6}` -> `\\frac{1}{6}` (exact)."""
    value = Fraction(int(whole or "0")) + Fraction(
        int(fixed + period) - int(fixed or "0"), 10 ** len(fixed) * (10 ** len(period) - 1)
    )
    value = -value if sign else value
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _is_text_answer(text: str) -> bool:
    words = re.findall(r"[A-Za-z]+", text)
    return bool(
        _WORDS.match(text)
        and all(len(w) >= 3 for w in words)
        and not any(w.lower() in _MATH_WORDS for w in words)
    )


def _text_key(text: str) -> str:
    return re.sub(r"[\s\-']+", " ", text).strip().casefold()


# ---------------------------------------------------------------- structure

_OPENERS = {"(": ")", "[": "]", "{": "}"}


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not nested inside brackets or braces."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return parts


def _encloses(text: str, opener: str, closer: str) -> bool:
    """Whether `opener ... closer` wraps the whole string as one group."""
    if not (text.startswith(opener) and text.endswith(closer)):
        return False
    depth = 0
    inner = text[len(opener) : len(text) - len(closer)]
    for char in inner:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if depth < 0:
            return False
    return depth == 0


@dataclass
class Shape:
    kind: str  # "set" | "tuple" | "interval" | "list" | "scalar"
    items: list[str]
    text: str


def shape_of(text: str) -> Shape:
    if _encloses(text, "\\{", "\\}") or _encloses(text, "{", "}"):
        inner = text[2:-2] if text.startswith("\\{") else text[1:-1]
        return Shape("set", [p for p in split_top_level(inner) if p], text)
    for opener, closer in (("(", ")"), ("[", "]"), ("(", "]"), ("[", ")")):
        if _encloses(text, opener, closer) and len(split_top_level(text[1:-1])) >= 2:
            items = split_top_level(text[1:-1])
            if opener + closer in ("[)", "(]") or (opener + closer == "[]" and len(items) == 2):
                return Shape("interval", items, text)
            return Shape("tuple" if opener == "(" else "list_ordered", items, text)
    if "\\cup" in text or re.search(r"\\[lg]eq|<|>", text):
        return Shape("interval", [], text)
    parts = split_top_level(text)
    if len(parts) >= 2 and all(parts):
        return Shape("list", parts, text)
    return Shape("scalar", [text], text)


# ---------------------------------------------------------------- parsing

_LATEX_CONFIG = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]
_NAME = r"[A-Za-z](?:_\{?\w+\}?)?"
# `x = 5`, `x \in [1, 3]`, `(x, y) = (5, 8)`: a name (or a tuple of names) and its value
_SYMBOL_EQUATION = re.compile(rf"^\s*({_NAME}|\(\s*{_NAME}(?:\s*,\s*{_NAME})+\s*\))\s*(?:=|\\in)\s*(.+)$")


def parse_expression(text: str) -> Any:
    """A sympy object for one answer, or raise Undecided."""
    if not text or len(text) > MAX_ANSWER_CHARS:
        raise Undecided("empty or too long")
    for connective, combine in (("\\lor", sympy.Or), ("\\land", sympy.And)):
        if connective in text:
            return combine(*(parse_expression(part.strip()) for part in text.split(connective)))
    results = parse(f"${text}$", extraction_config=_LATEX_CONFIG, parsing_timeout=None)  # type: ignore[arg-type]
    if not results:
        results = parse(text, extraction_config=[ExprExtractionConfig()], parsing_timeout=None)  # type: ignore[arg-type]
    if not results or isinstance(results[0], str):
        raise Undecided(f"cannot parse {text!r}")
    return results[0]


def exact(expr: Any) -> Any:
    """Decimals become the rationals they spell (0.5 -> 1/2, 0.333 -> 333/1000)."""
    if isinstance(expr, sympy.Basic) and expr.has(sympy.Float):
        return expr.xreplace({f: sympy.Rational(str(f)) for f in expr.atoms(sympy.Float)})
    return expr


# ---------------------------------------------------------------- comparison


def _rounded(value: Any, places: int) -> Decimal:
    return Decimal(str(sympy.N(value, 60))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)


def _significant(value: Any, figures: int) -> Decimal:
    number = Decimal(str(sympy.N(value, 60)))
    if number == 0:
        return number
    return number.quantize(Decimal(1).scaleb(number.adjusted() - figures + 1), rounding=ROUND_HALF_EVEN)


def _real_number(value: Any) -> bool:
    return bool(getattr(value, "is_number", False) and value.is_real is not False and value.is_finite)


def _numbers_close(a: Any, b: Any, rules: Rules) -> bool:
    """Numbers within the task's tolerance, or equal at its decimal places / significant figures."""
    if rules.tolerance is not None:
        try:
            x, y = complex(sympy.N(a, 30)), complex(sympy.N(b, 30))
        except (TypeError, ValueError):
            return False
        if abs(x - y) <= rules.tolerance.absolute + rules.tolerance.relative * abs(y):
            return True
    if not (_real_number(a) and _real_number(b)):
        return False
    try:
        if rules.precision is not None and _rounded(a, rules.precision) == _rounded(b, rules.precision):
            return True
        if rules.significant_figures is not None:
            figures = rules.significant_figures
            return _significant(a, figures) == _significant(b, figures)
    except (InvalidOperation, TypeError, ValueError):
        return False
    return False


def _random_points_agree(a: Any, b: Any, symbols: set[Any]) -> bool:
    """Evaluate a - b at random points with 40 digits; every finite sample must vanish."""
    return _random_points_verdict(a, b, symbols) is True


# The sample points must not be predictable: with fixed points an answer can add a term that vanishes exactly
# at them (`+ (x - p_1)...(x - p_8)`), or `\\sin(97! \\pi x)`, which vanishes at every rational whose
# denominator divides 97!. So each worker process draws its own seed, and each point's denominator is a prime
# above any factor an answer within the size limits can spell (`9999!` is the largest product allowed).
_SAMPLE_SEED = secrets.randbits(64)
_SAMPLE_PRIMES = (10**6, 10**7)


def _sample_point(rng: random.Random) -> Any:
    """A rational of size up to ~40 whose denominator is a prime in _SAMPLE_PRIMES."""
    denominator = sympy.nextprime(rng.randint(*_SAMPLE_PRIMES))
    return sympy.Rational(rng.randint(-40 * denominator, 40 * denominator), denominator)


def _random_points_verdict(a: Any, b: Any, symbols: set[Any]) -> bool | None:
    """True: a - b vanishes at >= 4 random points; False: it does not at one; None: too few finite samples."""
    rng = random.Random(f"{_SAMPLE_SEED}:{a}:{b}")  # unpredictable, yet one verdict per pair in a process
    ordered = sorted(symbols, key=str)
    finite = 0
    for _ in range(8):
        point = {s: _sample_point(rng) for s in ordered}
        try:
            value = complex(sympy.N((a - b).subs(point), 40))
        except (TypeError, ValueError, ZeroDivisionError):
            continue
        if value != value or abs(value) == float("inf"):
            continue
        finite += 1
        if abs(value) > 1e-25:
            return False
    return True if finite >= 4 else None


def expressions_equal(a: Any, b: Any, rules: Rules) -> bool:
    if isinstance(a, sympy.Eq) or isinstance(b, sympy.Eq):
        return _equations_equal(a, b, rules)
    if isinstance(a, sympy.MatrixBase) or isinstance(b, sympy.MatrixBase):
        if not (isinstance(a, sympy.MatrixBase) and isinstance(b, sympy.MatrixBase)) or a.shape != b.shape:
            return False
        return all(expressions_equal(x, y, rules) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, sympy.Set) or isinstance(b, sympy.Set):
        return sets_equal(a, b, rules)
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        raise Undecided(f"cannot compare {type(a).__name__} with {type(b).__name__}")
    if _undefined(a) or _undefined(b):
        return False  # 1/0, 0/0: undefined never equals anything, itself included
    if rules.approximate and not a.free_symbols and not b.free_symbols:
        if _numbers_close(a, b, rules):
            return True
    a, b = exact(a), exact(b)
    if a == b or _rebuilt(a) == _rebuilt(b):
        return True
    if not rules.approximate and (rounds_to(a, b, rules.decimals) or rounds_to(b, a, rules.decimals)):
        return True  # `0.3333` for 1/3: a decimal correctly rounding a number no finite decimal can write
    if not a.free_symbols and not b.free_symbols and _clearly_different(a, b):
        return False  # numbers that differ at 30 digits: no need for simplify (slow on nested radicals)
    symbols = a.free_symbols | b.free_symbols
    if symbols:
        # random points first: a quick "no" for most wrong answers, and a "yes" simplify would only confirm
        sampled = _random_points_verdict(a, b, symbols)
        if sampled is not None:
            return sampled or (not rules.strict and _equal_up_to_renaming(a, b))
    difference = sympy.simplify(a - b)
    if difference == 0:
        return True
    if not symbols:
        return bool(difference.equals(0))
    return not rules.strict and _equal_up_to_renaming(a, b)


def _rebuilt(expr: Any) -> Any:
    """The expression with its unevaluated parts evaluated (`15 + 2\\sqrt{33}` and `2\\sqrt{33} + 15` agree)."""
    try:
        return expr.doit()
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return expr


def _clearly_different(a: Any, b: Any) -> bool:
    try:
        x, y = complex(sympy.N(a, 30)), complex(sympy.N(b, 30))
    except (TypeError, ValueError):
        return False
    if not all(map(_finite_complex, (x, y))):
        return False
    return abs(x - y) > 1e-20 * max(1.0, abs(x), abs(y))


def _finite_complex(value: complex) -> bool:
    return value == value and abs(value) != float("inf")


def _undefined(expr: Any) -> bool:
    """1/0, 0/0, and forms left unevaluated as written that are undefined once evaluated (`3 + 0 \\cdot \\infty`
    would otherwise lose its `0 \\cdot \\infty` term in `a - b` and equal 3)."""
    if not isinstance(expr, sympy.Basic):
        return False
    return bool(expr.has(sympy.zoo, sympy.nan)) or bool(_rebuilt(expr).has(sympy.zoo, sympy.nan))


def _equal_up_to_renaming(a: Any, b: Any) -> bool:
    """strict=False: `f(y)` equals `f(x)` — the candidate's variables may be renamed to the reference's."""
    mine, theirs = sorted(a.free_symbols, key=str), sorted(b.free_symbols, key=str)
    if len(mine) != len(theirs) or not 0 < len(mine) <= 3:
        return False
    for order in itertools.permutations(theirs):
        renamed = a.xreplace(dict(zip(mine, order, strict=True)))
        if renamed == b or _random_points_agree(renamed, b, set(theirs)):
            return True
    return False


def _equations_equal(a: Any, b: Any, rules: Rules) -> bool:
    if isinstance(a, sympy.Eq) and isinstance(b, sympy.Eq):
        a_sides: tuple[Any, Any] = (a.lhs, a.rhs)
        b_sides: tuple[Any, Any] = (b.lhs, b.rhs)
        left, right = exact(a_sides[0] - a_sides[1]), exact(b_sides[0] - b_sides[1])
        if right == 0:
            return left == 0
        if _rebuilt(left) == _rebuilt(right) or _rebuilt(left) == -_rebuilt(right):
            return True
        ratio = sympy.simplify(left / right)
        return bool(ratio.is_number and ratio != 0 and ratio.is_finite)
    equation, value = (a, b) if isinstance(a, sympy.Eq) else (b, a)
    if isinstance(equation.lhs, sympy.Symbol) and not isinstance(value, sympy.Eq):
        return expressions_equal(equation.rhs, value, rules)
    return False


def _as_real_set(expr: Any) -> Any:
    if isinstance(expr, sympy.Eq) and isinstance(expr.rhs, sympy.Set):  # x \in [1, 3]
        return expr.rhs
    if isinstance(expr, sympy.Set):
        return expr
    if isinstance(expr, sympy.logic.boolalg.Boolean) and not isinstance(expr, sympy.Eq):
        symbols = expr.free_symbols
        if len(symbols) == 1:
            return expr.as_set()
    raise Undecided(f"not a set of reals: {expr}")


def sets_equal(a: Any, b: Any, rules: Rules) -> bool:
    a, b = _as_real_set(exact(a)), _as_real_set(exact(b))
    if isinstance(a, sympy.FiniteSet) and isinstance(b, sympy.FiniteSet):
        return multisets_equal(list(a.args), list(b.args), rules)
    if a == b:
        return True
    if (
        isinstance(a, sympy.Interval)
        and isinstance(b, sympy.Interval)
        and (a.left_open, a.right_open) == (b.left_open, b.right_open)
        and all(expressions_equal(x, y, rules) for x, y in ((a.start, b.start), (a.end, b.end)))
    ):  # endpoint by endpoint: a numeric setting, or a rounded decimal endpoint (`(0.6, 2.6667]`)
        return True
    symmetric = sympy.Union(sympy.Complement(a, b), sympy.Complement(b, a))
    return symmetric is sympy.S.EmptySet or bool(symmetric.is_empty)


def multisets_equal(xs: list[Any], ys: list[Any], rules: Rules) -> bool:
    if len(xs) != len(ys):
        return False
    remaining = list(ys)
    for x in xs:
        for index, y in enumerate(remaining):
            if expressions_equal(x, y, rules):
                del remaining[index]
                break
        else:
            return False
    return True


def _percent_value(text: str) -> tuple[str, bool]:
    stripped = text.strip()
    if stripped.endswith("%"):
        return stripped[:-1].strip(), True
    return stripped, False


def scalars_equal(candidate: str, reference: str, rules: Rules) -> bool:
    candidate_body, candidate_percent = _percent_value(candidate)
    reference_body, reference_percent = _percent_value(reference)
    a, b = parse_expression(candidate_body), parse_expression(reference_body)
    if candidate_percent == reference_percent:
        return expressions_equal(a, b, rules)
    # one side is a percent: 50% equals both 50 and 1/2
    hundred = sympy.Integer(100)
    if candidate_percent:
        return expressions_equal(a, b, rules) or expressions_equal(a / hundred, b, rules)
    return expressions_equal(a, b, rules) or expressions_equal(a, b / hundred, rules)


def _strip_symbol_equation(candidate: str, reference: str) -> tuple[str, str]:
    """`x = 5` against `5`: compare the right-hand side."""
    c, r = _SYMBOL_EQUATION.match(candidate), _SYMBOL_EQUATION.match(reference)
    c, r = (m if m and not re.search(r"=|\\lor|\\land", m.group(2)) else None for m in (c, r))
    if c and not r and "=" not in reference:
        return c.group(2), reference
    if r and not c and "=" not in candidate:
        return candidate, r.group(2)
    return candidate, reference


_INEQUALITY = re.compile(r"\\[lg]eq|[<>]")


def _as_relation_setting(shape: Shape, rules: Rules) -> Shape:
    """The `relation` setting: "set" compares every collection order-free, "tuple" every bare list in order;
    strict=False lets a set equal a tuple of the same items."""
    if rules.relation == "set" and shape.kind in ("tuple", "list_ordered"):
        return Shape("list", shape.items, shape.text)
    if rules.relation == "tuple" and shape.kind == "list":
        return Shape("list_ordered", shape.items, shape.text)
    if not rules.strict and shape.kind == "set":
        return Shape("list", shape.items, shape.text)
    return shape


def structurally_equal(candidate: str, reference: str, rules: Rules) -> bool:
    if not rules.relation_as_set and _INEQUALITY.search(candidate) and not _INEQUALITY.search(reference):
        return False  # relation_as_set=False: a reference set is not matched by an inequality
    candidate, reference = _strip_symbol_equation(candidate, reference)
    cs, rs = shape_of(candidate), shape_of(reference)
    cs, rs = _as_relation_setting(cs, rules), _as_relation_setting(rs, rules)
    if not rules.strict and {cs.kind, rs.kind} == {"list", "tuple"}:
        cs, rs = (Shape("list", shape.items, shape.text) for shape in (cs, rs))
    ordered = {"tuple", "list_ordered"}
    if rs.kind == "interval" or cs.kind == "interval":
        if {cs.kind, rs.kind} <= {"interval", "tuple", "scalar"} and not (
            cs.kind == "tuple" and rs.kind == "tuple"
        ):
            return sets_equal(parse_expression(candidate), parse_expression(reference), rules)
        return False
    if cs.kind == "scalar" and rs.kind == "scalar":
        return scalars_equal(candidate, reference, rules)
    if cs.kind == "scalar" or rs.kind == "scalar":
        # a single value against a one-element collection
        single, collection = (cs, rs) if cs.kind == "scalar" else (rs, cs)
        if len(collection.items) == 1 and collection.kind != "tuple":
            return scalars_equal(single.text, collection.items[0], rules)
        expanded = parse_expression(single.text)  # `\pm 2` is the set {-2, 2}
        if isinstance(expanded, sympy.Or):  # `x = -1 or x = 4` is the solution set {-1, 4}
            expanded = _as_real_set(expanded)
        if isinstance(expanded, sympy.FiniteSet) and collection.kind in ("set", "list"):
            items = [parse_expression(item) for item in collection.items]
            return multisets_equal(list(expanded.args), items, rules)
        return False
    cs = _without_repeated_solutions(cs, rs, rules)
    if len(cs.items) != len(rs.items):
        return False
    if cs.kind in ordered or rs.kind in ordered:
        if "set" in (cs.kind, rs.kind):
            return False  # a set is never a tuple
        return all(structurally_equal(c, r, rules) for c, r in zip(cs.items, rs.items, strict=True))
    remaining = list(rs.items)
    for item in cs.items:
        for index, other in enumerate(remaining):
            try:
                same = structurally_equal(item, other, rules)
            except Undecided:
                same = False
            if same:
                del remaining[index]
                break
        else:
            return False
    return True


MAX_SOLUTIONS_DEDUPLICATED = 100


def _without_repeated_solutions(candidate: Shape, reference: Shape, rules: Rules) -> Shape:
    """A list or set of tuple solutions (`(3, 17, 3, 7), (17, 3, 3, 7), ...`) that writes one solution twice
    names the same solutions: the repeat is dropped, only when every item on both sides is a tuple, the
    repeat is written the same way (spaces aside), and the reference's own solutions are distinct. A tuple is
    a solution of a system, where a repeat adds no claim; scalar lists keep every item (`1, 2, 2` lists a
    double root, and is not `1, 2`), and nothing else changes: every remaining item must still match one of
    the reference's, and none may be missing (`(1, 2), (1, 2), (3, 4)` is not `(1, 2), (5, 6)`)."""
    if rules.relation == "tuple" or not (
        candidate.kind in ("list", "set")
        and reference.kind in ("list", "set")
        and len(reference.items) < len(candidate.items) <= MAX_SOLUTIONS_DEDUPLICATED
        and all(shape_of(item).kind == "tuple" for item in candidate.items + reference.items)
    ):
        return candidate
    if len({_spaceless(item) for item in reference.items}) < len(reference.items):
        return candidate
    kept: dict[str, str] = {}
    for item in candidate.items:
        kept.setdefault(_spaceless(item), item)
    return Shape(candidate.kind, list(kept.values()), candidate.text)


def _spaceless(text: str) -> str:
    return re.sub(r"\s+", "", text)


_DECIMAL = re.compile(r"\d\.\d|\\overline")


_TIME = re.compile(r"^(\d{1,2}):([0-5]\d)(?::([0-5]\d))?\s*(a\.?m\.?|p\.?m\.?)?$", re.IGNORECASE)
_RATIO = re.compile(r"^[^:=<>]+(?::[^:=<>]+)+$")
# relations between two values: an answer that keeps one side must not pass as that side (inequalities and
# `\in` are not here: they describe sets, compared as such)
_RELATION = re.compile(r"\\(?:sim|approx|simeq|cong|equiv|propto)(?![A-Za-z])|(?<![<>!\\])=|≈")
_LABEL = re.compile(r"^[A-Za-z\\{}_^(),:/ ]+$")


def _time_of_day(text: str) -> tuple[int, int, int] | None:
    match = _TIME.match(text.replace(" ", "") if ":" in text else text)
    if not match:
        return None
    hours, minutes, seconds, half = match.groups()
    hours = int(hours)
    if half:
        if not 1 <= hours <= 12:
            return None
        hours = hours % 12 + (12 if half.lower().startswith("p") else 0)
    if hours > 24:
        return None
    return hours, int(minutes), int(seconds or 0)


def _compare_times(candidate: str, reference: str) -> tuple[bool, str] | None:
    """`1:00` is a clock time, not the ratio 1/0: times compare as (hours, minutes, seconds)."""
    reference_time = _time_of_day(reference)
    if reference_time is None:
        return None
    return _time_of_day(candidate) == reference_time, "time"


def _compare_ratios(candidate: str, reference: str) -> tuple[bool, str] | None:
    """`7:32` is a ratio: the same number of parts, proportional (`14:64` = `7:32`)."""
    if not _RATIO.match(reference) or "\\" in reference.replace("\\frac", "").replace("\\sqrt", ""):
        return None
    if not _RATIO.match(candidate):
        return False, "ratio"
    ours, theirs = candidate.split(":"), reference.split(":")
    if len(ours) != len(theirs):
        return False, "ratio"
    try:
        a = [parse_expression(part.strip()) for part in ours]
        b = [parse_expression(part.strip()) for part in theirs]
        if any(x == 0 for x in b) or not all(isinstance(x, sympy.Expr) for x in a + b):
            return None
        scale = sympy.simplify(a[0] / b[0])
        return bool(
            scale != 0 and all(sympy.simplify(x - scale * y) == 0 for x, y in zip(a, b, strict=True))
        ), "ratio"
    except (Undecided, TypeError, ValueError, AttributeError):
        return None


_LEADING_RELATION = re.compile(
    r"^\s*(?:\\(?:neq?|not\s*=|leq?|geq?|leqq|geqq|leqslant|geqslant|lt|gt|ll|gg|lll|ggg|lesssim|gtrsim"
    r"|nless|ngtr|nleq|ngeq|approx|sim|simeq|cong|equiv|propto|prec|succ|preceq|succeq|mid|nmid|in|notin"
    r"|ni|subset|subseteq|supset|supseteq|to|rightarrow|implies|iff)(?![A-Za-z])"
    r"|<=?|>=?|!=|=<|=>|≠|≤|≥|≪|≫|≈|∼|≃|≅|≡|∝|∈|∉|≲|≳|→|⇒)"
)
_ALTERNATIVE = re.compile(r"\\(?:mid|nmid)(?![A-Za-z])|∣")
_BAR = re.compile(r"\\[lr]?vert(?![A-Za-z])|(?<!\\)\|")


def _not_a_value(candidate: str, reference: str) -> str | None:
    """Why a candidate is not the value the reference is, before any parsing: a leading relation with
    no left-hand side (`\\neq 25`, `< 25`, `≠ 25`, `\\ll 25`: a claim about 25, not 25) or alternatives
    (`25|26`, `25 \\mid 26`: two answers, or a divisibility statement), unless the
    reference is written the same way."""
    lead_c, lead_r = _LEADING_RELATION.match(candidate), _LEADING_RELATION.match(reference)
    if lead_c and not (lead_r and lead_r.group(0).strip() == lead_c.group(0).strip()):
        return "a leading relation is not a value"
    if _ALTERNATIVE.search(candidate) and not _ALTERNATIVE.search(reference):
        return "alternatives are not one value"
    bars = len(_BAR.findall(candidate))
    if bars % 2 and not _BAR.search(reference):
        return "alternatives are not one value"
    return None


def _compare_relations(candidate: str, reference: str) -> tuple[bool, str] | None:
    """An answer stated as a relation the reference does not have (`26 \\sim 25`, `x \\approx 3`) fails:
    only `name = value` is read as its value."""
    if _RELATION.search(reference) or not _RELATION.search(candidate):
        return None
    for item in split_top_level(candidate):
        if not _RELATION.search(item):
            continue
        equation = _SYMBOL_EQUATION.match(item)  # `x = 5`, `x \in [1, 3]`, `(x, y) = (5, 8)`
        if not equation or _RELATION.search(equation.group(2)):
            return False, "relation (only one side matches)"
    return None


MAX_CHAIN_SIDES = 4


def _equal_value_chain(candidate: str, reference: str, rules: Rules) -> tuple[bool, str] | None:
    """`\\frac{20}{18} = \\frac{10}{9}` (work, then the result) against the bare value 10/9: an equation
    between values passes when every side equals the reference. A chain is never read as its last side
    alone: `\\frac{1}{2} = \\frac{10}{9}` (a false equation) and `24 = 25` fail, so no side can carry a second
    guess. `x = 5` (a name and its value) and sides holding another relation are left to the other rules."""
    if _RELATION.search(reference) or "=" not in candidate or _SYMBOL_EQUATION.match(candidate):
        return None
    sides = [side.strip() for side in re.split(r"(?<![<>!\\])=", candidate)]
    if not 2 <= len(sides) <= MAX_CHAIN_SIDES or not all(sides) or len(split_top_level(candidate)) > 1:
        return None
    if any(_RELATION.search(side) or _HAS_INEQUALITY.search(side) for side in sides):
        return None
    try:
        if all(structurally_equal(side, reference, rules) for side in sides):
            return True, "equation between values (every side is the value)"
    except (Undecided, TypeError, ValueError, AttributeError, NotImplementedError, RecursionError):
        return None
    return False, "relation (only one side matches)"


_ASSIGNMENT = re.compile(rf"^\s*{_NAME}\s*=\s*([^=;]+?)\s*$")


def _reference_groups(reference: str) -> str:
    """`p=5,q=2;p=7,q=2` (solutions separated by `;`, each naming its values) -> `(5, 2), (7, 2)`."""
    groups = [group.strip() for group in reference.split(";")]
    if len(groups) < 2:
        return reference
    tuples = []
    for group in groups:
        values = [_ASSIGNMENT.match(part) for part in split_top_level(group)]
        if not all(values):
            return reference
        found = [match.group(1) for match in values if match]
        tuples.append(found[0] if len(found) == 1 else "(" + ", ".join(found) + ")")
    return ", ".join(tuples)


def _reference_value(reference: str, candidate: str) -> str:
    """A labelled reference (`S_{MBCN}:S = 7:32`, `\\frac{NO}{BO} = \\frac{1}{\\sqrt{6}}`) against an unlabelled
    answer: the value on the right. The label is letters only (a trusted name, never `x + 1 = 3`)."""
    if ";" in reference and "=" not in candidate:
        return _reference_groups(reference)
    if "=" in candidate or reference.count("=") != 1 or re.search(r"\\[lg]eq|[<>]", reference):
        return reference
    label, value = (part.strip() for part in reference.split("="))
    if value and _LABEL.match(label) and not re.search(r"\d", label):
        return value
    return reference


_DECIMAL_COMMA = re.compile(r"^-?\d+,\d+$")


def _decimal_comma(candidate: str, reference: str) -> str:
    """`1000,99` against the reference `1000.99`: a decimal comma, read only when the reference is a decimal
    with exactly those digits (a comma otherwise separates list items or thousands)."""
    if _DECIMAL_COMMA.match(candidate) and candidate.replace(",", ".") == reference:
        return reference
    return candidate


_UNIT_COMMAND = re.compile(
    r"[\d}]\s*(?:\\[,;:! ]\s*)*\\(?:text|mathrm|mbox)\s*\{\s*([A-Za-z][A-Za-z .]*?)\s*\}\s*(\^\s*\{?\s*\d\s*\}?)?[\s.$]*$"
)
_UNIT_PLAIN = re.compile(
    r"^[\s$]*-?\d[\d.,]*\s+([A-Za-z]+(?:\s+[A-Za-z]+)?)\s*(\^\s*\{?\s*\d\s*\}?)?[\s.$]*$"
)


_UNIT_NAMES = {
    "m": "meter metre",
    "cm": "centimeter centimetre",
    "mm": "millimeter millimetre",
    "km": "kilometer kilometre",
    "in": "inch inches",
    "ft": "foot feet",
    "yd": "yard",
    "mi": "mile",
    "s": "sec second",
    "min": "minute",
    "h": "hr hour",
    "g": "gram gramme",
    "kg": "kilogram kilo",
    "l": "liter litre",
    "ml": "milliliter millilitre",
    "dollar": "usd",
    "degree": "deg",
    "year": "yr",
}
_UNIT_ALIASES = {alias: short for short, names in _UNIT_NAMES.items() for alias in names.split()}
_UNIT_POWER_WORDS = {"square": "2", "sq": "2", "cubic": "3", "cu": "3"}


def _stated_unit(text: str) -> str | None:
    """The unit written after a number at the end of an answer (`5 \\text{ cm}^2`, `10 dollars`), as a key:
    case, a plural `s` and common names aside (`Dollars` = `dollar`, `centimeters` = `cm`,
    `square cm` = `cm^2`), the power kept (`cm^2` is not `cm`)."""
    match = _UNIT_COMMAND.search(text) or _UNIT_PLAIN.match(text)
    if not match or _meaningful(match.group(1)):
        return None
    words = match.group(1).replace(".", " ").casefold().split()
    power = re.sub(r"\D", "", match.group(2) or "")
    if len(words) == 2 and words[0] in _UNIT_POWER_WORDS and not power:
        power, words = _UNIT_POWER_WORDS[words[0]], words[1:]
    word = "".join(words)
    if word not in _UNIT_ALIASES and len(word) > 3 and word.endswith("s"):
        word = word[:-1]
    word = _UNIT_ALIASES.get(word, word)
    return f"{word}^{power}" if power else word


def _units_differ(candidate: str, reference: str) -> bool:
    """Units are dropped when comparing (`15 \\text{ cm}^2` is 15), but a unit the answer states must be the
    reference's when the reference states one: `5 \\text{ m}` is not `5 \\text{ cm}`, nor `10 cents` 10
    dollars. An answer without a unit, or a reference without one, compares the numbers alone."""
    ours, theirs = _stated_unit(candidate), _stated_unit(reference)
    return ours is not None and theirs is not None and ours != theirs


_PLAIN_DECIMAL = re.compile(r"^-?\d+\.\d+$")


def _reference_decimal_comma(candidate: str, reference: str) -> bool:
    """The reference `1,22` or `0,111` (one comma, no space, not a thousands group) is written the way a
    decimal comma is; read that way, it equals the answer `1.22` / `0.111` with exactly that value. The list
    reading stays (`1, 22` still passes): the reference is trusted text, and a spelling that fits only one
    of its two readings is no hedge. An answer's own comma is never read as a decimal point here, and a list,
    a spaced `1, 22`, or a thousands group (`1,222`) in the reference is not ambiguous, so none is read so."""
    if not (_DECIMAL_COMMA.match(reference) and _PLAIN_DECIMAL.match(candidate)):
        return False
    try:
        return Decimal(reference.replace(",", ".")) == Decimal(candidate)
    except InvalidOperation:
        return False


_APPROX = r"(?:\\approx(?![A-Za-z])|≈)"
_NAME_APPROX = re.compile(rf"^\s*({_NAME})\s*{_APPROX}\s*(.+?)\s*$")
_NAME_EXACT_APPROX = re.compile(rf"^\s*({_NAME})\s*=\s*(.+?)\s*{_APPROX}\s*(.+?)\s*$")
_ANY_RELATION = re.compile(
    r"\\(?:sim|approx|simeq|cong|equiv|propto|[lg]eq|neq|in|mid|pm|mp|lor|land|vee|wedge)(?![A-Za-z])|[=<>≈|±∓]"
)


def _approximation_as_value(candidate: str, reference: str) -> str:
    """Against a reference that is a bare value (no relation of its own):

    - `x \\approx 11` is read as `x = 11`: the unknown's value, stated as approximate. The value is then
      compared like any other (exactly, or as a rounded decimal under rlvr/graders/math/rounding.py), so
      `x \\approx 10` is not 11 and `x \\approx 0.33` is not 1/3;
    - `x = \\frac{1}{3} \\approx 0.33` is read as `x = \\frac{1}{3}`: the exact value is the answer, what follows
      `\\approx` is a gloss (a slip in the gloss does not fail an exact answer, and the gloss never counts:
      `x = 26 \\approx 25` is 26, not 25).

    Either way one position decides, so a text passes for one reference value at most: no hedge. The left
    side must be a name (as in `x = 5`): `26 \\approx 25`, `\\approx 25` and `11 \\approx x` stay relations,
    and a value side holding another relation (`x \\approx 11 \\approx 12`, `x \\approx 11 = 12`) is not read."""
    if _ANY_RELATION.search(reference):
        return candidate
    exact_first = _NAME_EXACT_APPROX.match(candidate)
    if exact_first and not any(_ANY_RELATION.search(part) for part in exact_first.group(2, 3)):
        return f"{exact_first.group(1)} = {exact_first.group(2)}"
    approximate = _NAME_APPROX.match(candidate)
    if approximate and not _ANY_RELATION.search(approximate.group(2)):
        return f"{approximate.group(1)} = {approximate.group(2)}"
    return candidate


_MATH_DELIMITERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))


def _tex_group_as_list(text: str) -> str:
    """`${1,3}$`: in math mode an unescaped `{...}` is a TeX group, which typesets as `1,3` (a set is written
    `\\{1,3\\}`), so it is read as the bare list `1, 3` — order kept against a tuple, as for any bare list
    (`${3,1}$` is not `(1,3)`). Only inside explicit math delimiters: a plain-text `{1, 3}` is a set."""
    inner = text.strip()
    for opener, closer in _MATH_DELIMITERS:
        if inner.startswith(opener) and inner.endswith(closer) and len(inner) > 2 * len(opener):
            body = inner[len(opener) : -len(closer)].strip()
            if _encloses(body, "{", "}") and "," in body:
                return body[1:-1]
            return text
    return text


def _math_verify_may_override(candidate: str, reference: str, rules: Rules) -> bool:
    """Whether math-verify may turn a structural "not equal" into "equal". Not where its known false positives
    live: decimals (it rounds to 6 places, exactness is the rule without a numeric setting), sets against
    ordered collections (it reads `(1, 2)` as an interval that may equal `{1, 2}`), lists of different
    lengths (it collapses `1, 2, 2` into `{1, 2}`), undefined values, and wherever a setting asks for more
    than its defaults give (ordered lists, no inequality for a set)."""
    if _DECIMAL.search(candidate) or _DECIMAL.search(reference):
        return False
    shapes = shape_of(candidate), shape_of(reference)
    kinds = {shape.kind for shape in shapes}
    if (rules.relation == "tuple" and kinds & {"list", "list_ordered"}) or not rules.relation_as_set:
        return False
    if re.search(r"\\frac\s*\{[^{}]*\}\s*\{\s*0\s*\}|/\s*0(?![\d.])", candidate):
        return False  # a division by zero is undefined, never equal to anything
    if re.search(r"\\(?:boxed|fbox)(?![A-Za-z])", candidate):
        return False  # it would grade only a box inside the answer: `\\boxed{3}, 4` is not 3
    if _distinct_numbers(candidate, reference):
        return False  # it compares numbers to 15 digits and chops tiny ones: 10^{-21} would equal 10^{-20}
    if "set" in kinds and kinds & {"tuple", "list_ordered", "interval"}:
        return False
    collections = [shape for shape in shapes if shape.kind in ("set", "list")]
    return not (len(collections) == 2 and len(collections[0].items) != len(collections[1].items))


def _distinct_numbers(candidate: str, reference: str) -> bool:
    """Both answers are finite numbers (no variables) that differ at 50 significant digits, or the answer is
    undefined. Exactness is the rule without a numeric setting, however small the numbers are."""
    try:
        a, b = parse_expression(candidate), parse_expression(reference)
        if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)) or a.free_symbols or b.free_symbols:
            return False
        if _undefined(a):
            return True
        x, y, difference = (sympy.N(_rebuilt(e), 60) for e in (a, b, exact(a) - exact(b)))
        if not all(v.is_number and v.is_finite for v in (x, y, difference)):
            return False
        return bool(abs(difference) > max(abs(x), abs(y)) * sympy.Float("1e-50", 60))
    except (
        Undecided,
        TypeError,
        ValueError,
        ArithmeticError,
        AttributeError,
        NotImplementedError,
        RecursionError,
    ):
        return False


def math_verify_equal(candidate: str, reference: str) -> bool:
    gold = parse(f"${reference}$", parsing_timeout=None)  # type: ignore[arg-type]
    answer = parse(f"${candidate}$", parsing_timeout=None)  # type: ignore[arg-type]
    # numeric_precision: its default (15 digits, tiny differences chopped) equates 10^{-21} with 10^{-20}
    return bool(gold and answer and verify(gold, answer, numeric_precision=50, timeout_seconds=None))


def equivalent(
    candidate: str, reference: str, settings: MathSettings | Tolerance | None = None
) -> tuple[bool, str]:
    """(equal?, the rule that decided)."""
    rules = Rules(tolerance=settings) if isinstance(settings, Tolerance) else Rules.from_settings(settings)
    if len(candidate) > MAX_ANSWER_CHARS:
        return False, "answer too long"
    if _units_differ(candidate, reference):
        return False, "a different unit"
    c, r = normalise(_tex_group_as_list(candidate)), normalise(_tex_group_as_list(reference))
    if c.replace(" ", "") == r.replace(" ", ""):
        return True, "identical"
    if _value_words(candidate) - _value_words(reference):
        return False, "words that change the value (" + ", ".join(sorted(_value_words(candidate))) + ")"
    why_not = _not_a_value(c, r) or _not_a_value(candidate.strip(), reference.strip())
    if why_not is not None:
        return False, why_not
    r = _reference_value(r, c)
    c = _decimal_comma(c, r)
    if _reference_decimal_comma(c, r):
        return True, "decimal comma"
    c = _approximation_as_value(c, r)
    rules = replace(rules, decimals=stated_decimals(c, r))
    chain = _equal_value_chain(c, r, rules)
    if chain is not None:
        return chain
    for rule in (_compare_times, _compare_ratios, _compare_relations):
        decided = rule(c, r)
        if decided is not None:
            return decided
    if _is_text_answer(r) or _CHOICE.match(r):
        choice_c, choice_r = _CHOICE.match(c), _CHOICE.match(r)
        if choice_c and choice_r:
            return choice_c.group(1).upper() == choice_r.group(1).upper(), "choice"
        return _text_key(c) == _text_key(r), "text"
    try:
        if structurally_equal(c, r, rules):
            return True, "structural"
        decided = True
    except (Undecided, TypeError, ValueError, AttributeError, NotImplementedError, RecursionError):
        decided = False
    if rules.approximate:
        return False, "structural" if decided else "unparsed (a numeric setting needs numbers)"
    if decided and not _math_verify_may_override(c, r, rules):
        return False, "structural"
    # a notation the structural parser may have misread: math-verify gets a second look
    return math_verify_equal(c, r), "math-verify"


_SEARCH_CONFIG = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]


def of_answer_kind(candidate: str, reference: str) -> bool:
    """Whether `candidate` is an answer of the reference's kind, which format credit needs: any text for a
    text or multiple-choice reference, anything but plain words for a mathematical one (`hello world`
    parses as a product of letters, but it states no math)."""
    c, r = normalise(candidate), normalise(reference)
    if _is_text_answer(r) or _CHOICE.match(r):
        return bool(c)
    return bool(c) and not _is_text_answer(c)


def extract_stated_answer(text: str) -> str | None:
    """The answer a prose completion states without marking it (`... so the total is $120$.`), found by
    math-verify's extraction (the last math span or number, with "final answer is" phrases first).
    Runs in the math worker: extraction parses the text with sympy."""
    results = parse(text, extraction_config=_SEARCH_CONFIG, parsing_timeout=None)  # type: ignore[arg-type]
    if len(results) < 2 or not isinstance(results[1], str) or not results[1].strip():
        return None
    return _with_the_relation_before(text, results[1].strip())


# a relation written just before the stated answer, outside math mode: `≈ 11`, `so x ≪ 11.`
_RELATION_BEFORE = re.compile(
    r"(?:(?<![A-Za-z\\])([A-Za-z])\s*)?(\\(?:approx|sim|simeq|cong|neq?|leq?|geq?|ll|gg|lesssim|gtrsim)(?![A-Za-z])"
    r"|[<>≈∼≃≅≡∝≪≫≤≥≠≲≳])[\s$]*$"
)


def _with_the_relation_before(text: str, answer: str) -> str:
    """math-verify's extraction keeps the number of `≈ 11` (a relation outside `$...$`) and drops the
    relation. A relation right before the extracted answer stays with it: with a name on its left it is
    `x ≈ 11`, otherwise the leading relation `≈ 11` (not a value)."""
    at = text.rfind(answer)
    if at <= 0:
        return answer
    relation = _RELATION_BEFORE.search(text[:at])
    if relation is None:
        return answer
    name, symbol = relation.group(1), relation.group(2)
    return f"{name} {symbol} {answer}" if name else f"{symbol} {answer}"
