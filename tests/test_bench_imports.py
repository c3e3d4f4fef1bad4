"""Hallucinated-import detection: a module resolves only if a stdlib-only interpreter could import it,
and checking never executes the module."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlvr.bench.imports import hallucinated_imports, resolves


@pytest.mark.parametrize(
    "module",
    ["os", "os.path", "collections.abc", "xml.etree.ElementTree", "email.mime.text", "sys", "__future__"],
)
def test_stdlib_modules_resolve(module: str) -> None:
    assert resolves(module)


@pytest.mark.parametrize(
    "module",
    ["numpy", "requests", "json.nope", "os.nope", "collections.abcd", ".relative", "", "a..b", "rlvr"],
)
def test_missing_or_third_party_modules_do_not_resolve(module: str) -> None:
    assert not resolves(module)


def test_checking_never_executes_a_module() -> None:
    # `antigravity` opens a web browser and `this` prints when imported: resolution must not import them
    code = (
        "import sys\nfrom rlvr.bench.imports import resolves\n"
        "print(resolves('antigravity'), resolves('antigravity.sub'), resolves('this'))\n"
        "print('antigravity' in sys.modules, 'this' in sys.modules, 'webbrowser' in sys.modules)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert output.stdout.split() == ["True", "False", "True", "False", "False", "False"]


def test_hallucinated_imports_of_a_program() -> None:
    source = (
        "import os, numpy as np\nfrom typing import List\nfrom sklearn.linear_model import Ridge\n"
        "import collections.abc\nmod = __import__('torch')\n"
    )
    assert hallucinated_imports(source) == ["numpy", "sklearn.linear_model", "torch"]
    assert hallucinated_imports("def f(x):\n    return x\n") == []
