"""rlvr vs math-verify on math-verify's own published test suite (270 labelled gold/prediction pairs).

The pairs are read from benchmarks/math_equivalence/math_verify_suite/cases.jsonl, rebuilt from the public
repository (github.com/huggingface/Math-Verify, tests/) by `import_suite.py` in that folder; they are
benchmark data, never part of the package. Each pair is scored four ways:

- math-verify with its defaults: `verify(parse(gold), parse(pred))`;
- math-verify with the settings the suite's test passes (`float_rounding`, `strict`, `allow_set_relation_comp`);
- rlvr with its defaults: `rlvr.verify(gold, pred)`;
- rlvr with the suite's settings mapped to rlvr's (`precision`, `strict`, `relation_as_set`), only where the
  suite's test sets them explicitly.

`annotations.json` (same folder) lists, case by case, the pairs where the suite's label is wrong or rlvr is
stricter on purpose; "documented" counts those as agreements for rlvr (a "stricter" note only where rlvr
rejects; a note of kind "setting" explains a disagreement but is not counted). A false positive is a
pass where the label says the pair differs.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/math_equivalence_suite.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

import rlvr

FOLDER = Path(__file__).with_name("math_equivalence") / "math_verify_suite"


def load_cases() -> list[dict[str, Any]]:
    lines = (FOLDER / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def load_annotations() -> dict[str, dict[str, str]]:
    return json.loads((FOLDER / "annotations.json").read_text(encoding="utf-8"))


def math_verify_defaults(case: dict[str, Any]) -> bool:
    return bool(verify(parse(case["gold"]), parse(case["pred"])))


def math_verify_suite_settings(case: dict[str, Any]) -> bool:
    settings = case["settings"]
    if settings["match_types"] == "parse-defaults":
        config: list[Any] = [LatexExtractionConfig(), ExprExtractionConfig()]
    else:
        config = [
            LatexExtractionConfig(boxed_match_priority=0) if kind == "latex" else ExprExtractionConfig()
            for kind in settings["match_types"]
        ]
    gold, pred = parse(case["gold"], config), parse(case["pred"], config)
    return bool(
        verify(
            gold,
            pred,
            float_rounding=settings["precision"],
            strict=settings["strict"],
            allow_set_relation_comp=settings["allow_set_relation_comp"],
        )
    )


def rlvr_settings(case: dict[str, Any]) -> dict[str, Any]:
    """The suite's explicit settings in rlvr's terms."""
    settings, explicit = case["settings"], set(case["settings"].get("explicit", []))
    mapped: dict[str, Any] = {}
    if "precision" in explicit:
        mapped["precision"] = settings["precision"]
    if "strict" in explicit:
        mapped["strict"] = settings["strict"]
    if "allow_set_relation_comp" in explicit:
        mapped["relation_as_set"] = settings["allow_set_relation_comp"]
    return mapped


def _excused(note: dict[str, str] | None, verdict: bool) -> bool:
    """A documented disagreement: the label is wrong, or rlvr rejects on purpose (never a lenient pass)."""
    if note is None:
        return False
    return note["kind"] == "label wrong" or (note["kind"] == "stricter" and not verdict)


def score(
    name: str, verdicts: list[bool], cases: list[dict[str, Any]], notes: dict[str, Any]
) -> dict[str, Any]:
    expected = [case["expected"] for case in cases]
    agree = sum(v == e for v, e in zip(verdicts, expected, strict=True))
    false_positives = [c["id"] for c, v in zip(cases, verdicts, strict=True) if v and not c["expected"]]
    false_negatives = [c["id"] for c, v in zip(cases, verdicts, strict=True) if c["expected"] and not v]
    documented = agree + sum(
        1
        for c, v in zip(cases, verdicts, strict=True)
        if v != c["expected"] and _excused(notes.get(c["id"]), v)
    )
    return {
        "grader": name,
        "agree": agree,
        "agree_documented": documented if name.startswith("rlvr") else agree,
        "false_positives": false_positives,
        "false_negatives": false_negatives,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", type=Path, help="write per-case verdicts here")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    cases, notes = load_cases(), load_annotations()
    unknown = set(notes) - {c["id"] for c in cases}
    if unknown:
        raise SystemExit(f"annotations name unknown cases: {sorted(unknown)}")
    columns: dict[str, list[bool]] = {"math-verify (defaults)": [], "math-verify (suite settings)": []}
    for case in cases:
        columns["math-verify (defaults)"].append(math_verify_defaults(case))
        columns["math-verify (suite settings)"].append(math_verify_suite_settings(case))
    rlvr_verdicts: dict[str, list[Any]] = {"rlvr (defaults)": [], "rlvr (suite settings)": []}
    started = time.perf_counter()
    for index, case in enumerate(cases):
        rlvr_verdicts["rlvr (defaults)"].append(rlvr.verify(case["gold"], case["pred"]))
        rlvr_verdicts["rlvr (suite settings)"].append(
            rlvr.verify(case["gold"], case["pred"], **rlvr_settings(case))
        )
        print(f"\rrlvr: {index + 1}/{len(cases)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    elapsed = time.perf_counter() - started
    errors = sum(1 for verdicts in rlvr_verdicts.values() for v in verdicts if v.error)
    for name, verdicts in rlvr_verdicts.items():
        columns[name] = [v.passed for v in verdicts]
    rows = [score(name, verdicts, cases, notes) for name, verdicts in columns.items()]
    print(f"{len(cases)} pairs ({sum(c['expected'] for c in cases)} labelled equal)")
    print(f"{'grader':<30} {'agree':>6} {'documented':>11} {'false +':>8} {'false -':>8}")
    for row in rows:
        print(
            f"{row['grader']:<30} {row['agree']:>6} {row['agree_documented']:>11} "
            f"{len(row['false_positives']):>8} {len(row['false_negatives']):>8}"
        )
    print(
        f"rlvr: {errors} verdicts with error set; {elapsed / (2 * len(cases)) * 1000:.0f} ms per verify call"
    )
    for name, verdicts in rlvr_verdicts.items():
        print(f"{name} disagrees with the label on:")
        for case, verdict in zip(cases, verdicts, strict=True):
            if verdict.passed != case["expected"]:
                note = notes.get(case["id"], {})
                tag = f"[{note['kind']}]" if note else "[UNEXPLAINED]"
                print(
                    f"  {tag} {case['id']}: expected {case['expected']}, rlvr {verdict.passed}"
                    f" — {verdict.feedback[:160]}"
                )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "rows": rows,
                    "cases": [
                        {"id": c["id"], "expected": c["expected"], **{n: v[i] for n, v in columns.items()}}
                        for i, c in enumerate(cases)
                    ],
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
