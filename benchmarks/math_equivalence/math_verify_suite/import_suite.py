"""Rebuild `cases.jsonl` from a checkout of math-verify's public repository (github.com/huggingface/Math-Verify).

Every `pytest.mark.parametrize` case of its tests that compares a gold answer with a prediction becomes one line:
gold, prediction, expected label, the settings the test passes to `compare_strings` / `verify` (extraction
targets, float precision, strictness, set-relation comparison) and where it came from. Nothing is executed from
the checkout: the test files are read as syntax trees.

    python benchmarks/math_verify_suite/import_suite.py PATH/TO/Math-Verify [COMMIT]
"""

from __future__ import annotations

import ast
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
FILES = (
    "test_all.py",
    "test_boxed.py",
    "test_numina_cases.py",
    "test_open_thoughts.py",
    "test_strict.py",
    "test_yujianll.py",
)
DEFAULTS = {
    "match_types": ["latex", "expr"],
    "precision": 6,
    "strict": True,
    "allow_set_relation_comp": False,
}


def _value(node: ast.expr) -> Any:
    """A literal, or the one computed literal the suite uses (an f-string of math.sqrt)."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return eval(
            compile(ast.Expression(node), "<case>", "eval"), {"math": math}
        )  # trusted: fixed suite text


def _settings(function: ast.FunctionDef, names: list[str], case: dict[str, Any]) -> dict[str, Any] | None:
    """The comparison settings the test body uses, with parameters substituted."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "compare_strings":
            settings = dict(DEFAULTS)
            for keyword in node.keywords:
                if isinstance(keyword.value, ast.Name) and keyword.value.id in names:
                    settings[str(keyword.arg)] = case[keyword.value.id]
                else:
                    settings[str(keyword.arg)] = _value(keyword.value)
            settings["explicit"] = sorted(str(k.arg) for k in node.keywords if k.arg != "match_types")
            return settings
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "verify":
            return {**DEFAULTS, "match_types": "parse-defaults", "explicit": []}
    return None


def _literal_comparisons(
    function: ast.FunctionDef, file_name: str, commit: str, start: int
) -> list[dict[str, Any]]:
    """`assert compare_strings("gold", "pred", ...) == 1` written out in a test body (not parametrized)."""
    found: list[dict[str, Any]] = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)):
            continue
        call = node.left
        if getattr(call.func, "id", None) != "compare_strings" or len(call.args) != 2:
            continue
        if not all(isinstance(a, ast.Constant) for a in call.args):
            continue
        settings = dict(DEFAULTS)
        settings.update({str(k.arg): _value(k.value) for k in call.keywords})
        settings["explicit"] = sorted(str(k.arg) for k in call.keywords if k.arg != "match_types")
        found.append(
            {
                "id": f"{file_name[:-3]}::{function.name}::{start + len(found)}",
                "gold": _value(call.args[0]),
                "pred": _value(call.args[1]),
                "expected": bool(_value(node.comparators[0])),
                "settings": settings,
                "source": f"huggingface/Math-Verify@{commit}:tests/{file_name}:{node.lineno}",
            }
        )
    return found


def import_cases(checkout: Path, commit: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for file_name in FILES:
        tree = ast.parse((checkout / "tests" / file_name).read_text(encoding="utf-8"))
        for function in tree.body:
            if not isinstance(function, ast.FunctionDef):
                continue
            cases.extend(_literal_comparisons(function, file_name, commit, len(cases)))
            for decorator in function.decorator_list:
                if not (
                    isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize"
                ):
                    continue
                names = [n.strip() for n in _value(decorator.args[0]).split(",")]
                rows = decorator.args[1]
                assert isinstance(rows, ast.List)
                for row in rows.elts:
                    values = [_value(e) for e in row.elts] if isinstance(row, ast.Tuple) else [_value(row)]
                    case = dict(zip(names, values, strict=True))
                    settings = _settings(function, names, case)
                    if settings is None or "gold" not in case:
                        continue
                    expected = case.get("expected", case.get("result"))
                    cases.append(
                        {
                            "id": f"{file_name[:-3]}::{function.name}::{len(cases)}",
                            "gold": case["gold"],
                            "pred": case["pred"],
                            "expected": bool(expected),
                            "settings": settings,
                            "source": f"huggingface/Math-Verify@{commit}:tests/{file_name}:{row.lineno}",
                        }
                    )
    return cases


def main() -> int:
    checkout = Path(sys.argv[1])
    commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    cases = import_cases(checkout, commit)
    with (HERE / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for case in cases:
            handle.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {HERE / 'cases.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
