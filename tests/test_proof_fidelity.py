"""Regressions found by benchmarks/bench_proof_fidelity.py (independently written derivations), and a check that
the bench's own numeric data verification can fail."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

from rlvr.graders.proof.check import check_proof

BENCH = Path(__file__).parents[1] / "benchmarks" / "bench_proof_fidelity.py"


def test_a_first_line_opening_with_left_bracket_is_an_expression_not_le() -> None:
    # `\left(` starts with `\le`: it was read as the relation <= followed by `ft(...)`
    derivation = "\\left(x+6\\right)\\left(x-6\\right)+36\n= x^{2} - 36 + 36\n= x^{2}"
    report = check_proof("(x + 6)(x - 6) + 36 = x^2", derivation)
    assert report["proved"], report
    assert report["steps"][0]["relation"] == "start"
    assert check_proof("\\left(x+1\\right)^{2} \\ge 0", "(x+1)^2\n\\ge 0")["proved"]
