"""The syntax layer against real compile() and real tree-sitter, including hostile input."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.graders.code.syntax import (
    MAX_SOURCE_CHARS,
    Comment,
    SyntaxReport,
    analyze,
    neutralize_comments,
)


def test_valid_source_reports_structure() -> None:
    source = (
        "#!/usr/bin/env python\n"
        "from __future__ import annotations\n"
        "import a.b as c, d\n"
        "from .x import y\n"
        "def f(n: int) -> int:  # noqa: E501\n"
        "    return n + 1\n"
    )
    report = analyze(source)
    assert report.ok and report.message == "ok"
    assert report.line is None and report.column is None
    assert report.imports == ["__future__", "a.b", "d", ".x"]
    assert report.comments == [Comment(1, 1, "#!/usr/bin/env python"), Comment(5, 24, "# noqa: E501")]
    assert report.suppressions == []
    assert report.complexity == 1


@pytest.mark.parametrize(
    ("source", "line", "fragment"),
    [
        ("def f(:\n    pass\n", 1, "invalid syntax"),
        ("x = (1,\n", 1, "never closed"),
        ("def f():\n    x = 1\n  y = 2\n", 3, "IndentationError"),
        ("return 1\n", 1, "'return' outside function"),  # found by compile's symbol pass, not the parser
        ("def f():\n    nonlocal q\n", 2, "nonlocal"),
    ],
)
def test_invalid_source_is_located(source: str, line: int, fragment: str) -> None:
    report = analyze(source)
    assert not report.ok
    assert fragment in report.message
    assert report.line == line
    assert report.column is not None and report.column >= 1


def test_imports_include_dynamic_literals_only() -> None:
    source = (
        "import importlib\n"
        "from importlib import import_module\n"
        "def g(name: str) -> None:\n"
        "    import json.decoder\n"
        "    __import__('os')\n"
        '    importlib.import_module("sub" "process")\n'
        "    import_module(r'socket')\n"
        "    import_module(f'x{name}')\n"
        "    __import__(name)\n"
        "    import_module(b'bytes_not_a_name')\n"
    )
    report = analyze(source)
    assert report.ok
    assert report.imports == ["importlib", "json.decoder", "os", "subprocess", "socket"]


@pytest.mark.parametrize(
    ("text", "is_suppression"),
    [
        ("# type: ignore", True),
        ("# type: ignore[assignment]", True),
        ("#type:ignore", True),
        ("# pyright: ignore", True),
        ("# pyright: ignore[reportAttributeAccessIssue]", True),
        ("# pyright: basic", True),
        ("# pyright: strict", True),
        ("# pyright: reportGeneralTypeIssues=false", True),
        ("# mypy: ignore-errors", True),
        ("# note  # type: ignore", True),
        ("# noqa", False),
        ("# noqa: E501", False),
        ("# type: int", False),
        ("# an ordinary remark about types", False),
    ],
)
def test_suppressions(text: str, is_suppression: bool) -> None:
    report = analyze(f"x = 1  {text}\n")
    assert report.ok
    assert report.comments == [Comment(1, 8, text)]
    assert report.suppressions == ([Comment(1, 8, text)] if is_suppression else [])


@pytest.mark.parametrize(
    ("source", "complexity"),
    [
        ("x = 1\n", 1),
        ("if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n", 3),
        ("for i in x:\n    pass\nwhile y:\n    pass\n", 3),
        ("try:\n    pass\nexcept ValueError:\n    pass\nexcept TypeError:\n    pass\n", 3),
        ("try:\n    pass\nexcept* ValueError:\n    pass\n", 2),
        ("with open(p) as f:\n    pass\n", 1),  # `with` is not a decision
        ("z = a and b or c\n", 3),
        ("z = 1 if a else 2\n", 2),
        ("z = [i for i in x if i]\n", 3),
        ("match v:\n    case 1:\n        pass\n    case _:\n        pass\n", 3),
        (
            "def f(a):\n    if a and not a:\n        return [j for j in a if j or a]\n    return 1 if a else 0\n",
            7,
        ),
    ],
)
def test_mccabe_complexity(source: str, complexity: int) -> None:
    report = analyze(source)
    assert report.ok, report.message
    assert report.complexity == complexity


def test_unicode_identifiers_and_columns() -> None:
    source = "def größe(ñ: int) -> int:  # café\n    return ñ\nπ = größe(1)  # ok\n"
    report = analyze(source)
    assert report.ok
    assert report.comments == [Comment(1, 28, "# café"), Comment(3, 15, "# ok")]
    neutral = neutralize_comments(source)
    assert neutral == "def größe(ñ: int) -> int:        \n    return ñ\nπ = größe(1)      \n"


def test_neutralize_keeps_strings_and_positions() -> None:
    source = (
        "# -*- coding: latin-1 -*-\n"
        "s = 'a # not a comment'  # type: ignore\n"
        't = f"{s!r} # still string"  # pyright: basic\n'
        'u = """\n# inside a docstring\n"""\n'
        "v = (1,  # pyright: ignore\n     2)\n"
    )
    neutral = neutralize_comments(source)
    assert len(neutral) == len(source)
    assert neutral.splitlines() == [
        " " * 25,
        "s = 'a # not a comment'" + " " * 16,
        't = f"{s!r} # still string"' + " " * 18,
        'u = """',
        "# inside a docstring",
        '"""',
        "v = (1," + " " * 19,
        "     2)",
    ]
    assert analyze(neutral).comments == []
    assert analyze(neutral).ok


def test_comments_end_where_python_ends_lines() -> None:
    source = "x = 1  # note\ry: int = 'a'  # pyright: basic\r\nz = 2  # é\r\n"
    blank = " " * len("  # note"), " " * len("  # pyright: basic"), " " * len("  # é")
    assert neutralize_comments(source) == f"x = 1{blank[0]}\ry: int = 'a'{blank[1]}\r\nz = 2{blank[2]}\r\n"
    report = analyze(source)
    assert report.ok
    assert [(c.line, c.column, c.text) for c in report.comments] == [
        (1, 8, "# note"),
        (2, 15, "# pyright: basic"),
        (3, 8, "# é"),
    ]


def test_neutralize_is_idempotent_and_total() -> None:
    source = "x = 1  # a\n\ny = '\ud800'  # b\n"  # lone surrogate must not raise
    once = neutralize_comments(source)
    assert once == "x = 1     \n\ny = '\ud800'     \n"
    assert neutralize_comments(once) == once


def test_huge_source_is_refused() -> None:
    source = "x = 1\n" * (1_000_000 // 6)
    report = analyze(source)
    assert not report.ok
    assert str(MAX_SOURCE_CHARS) in report.message


def test_nul_byte() -> None:
    report = analyze("x = 1\ny = 2\0\n")
    assert not report.ok
    assert "NUL" in report.message
    assert (report.line, report.column) == (2, 6)


def test_lone_surrogate() -> None:
    report = analyze("x = 1\ns = '\ud800'\n")
    assert not report.ok
    assert "surrogate" in report.message
    assert (report.line, report.column) == (2, 6)


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "(" * 10_000 + "1" + ")" * 10_000,
        "x = " + "[" * 10_000 + "]" * 10_000,
        "x = " + "+".join(["1"] * 60_000),
        "x = " + "-" * 60_000 + "1",
        "x = " + "not " * 40_000 + "1",
        "x = " + "lambda: " * 20_000 + "1",
        "x = 1" + " if 1 else 1" * 15_000,
        "".join(" " * i + "if x:\n" for i in range(150)) + " " * 150 + "pass\n",
    ],
    ids=["parens", "brackets", "plus-chain", "unary-chain", "not-chain", "lambdas", "ternaries", "indent"],
)
def test_pathological_nesting_is_refused_not_raised(source: str) -> None:
    report = analyze(source)
    assert not report.ok
    assert report.message


def test_moderately_deep_valid_code_passes_and_deeper_hits_guard() -> None:
    assert analyze("x = " + "+".join(["1"] * 500)).ok
    deep = analyze("x = " + "+".join(["1"] * 2000))
    assert not deep.ok and "nest" in deep.message


def test_syntax_warnings_do_not_turn_into_errors() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # like `python -W error`
        report = analyze('x = 1\nx is 1\ny = "\\d"\n')
    assert report.ok


def test_non_string_input() -> None:
    report = analyze(b"x = 1")  # type: ignore[arg-type]
    assert not report.ok
    assert "str" in report.message


PYTHONISH = st.text(alphabet="x=1#'\"\n\r ():\\ifelsdrb{}", max_size=60)


@settings(max_examples=300, deadline=None)
@given(PYTHONISH)
def test_analyze_is_total_and_neutralize_only_blanks_comments(source: str) -> None:
    report = analyze(source)
    assert isinstance(report, SyntaxReport)
    neutral = neutralize_comments(source)
    assert len(neutral) == len(source)
    changed = [i for i, (a, b) in enumerate(zip(source, neutral, strict=True)) if a != b]
    assert all(neutral[i] == " " and source[i] not in "\r\n" for i in changed)
    if report.ok:
        after = analyze(neutral)
        assert after.ok and after.comments == []
