"""Answer-equivalence accuracy: rlvr's math grader vs math-verify alone, on benchmarks/math_equivalence/pairs.jsonl.

Each pair (reference, candidate, equivalent?, optional tolerance) becomes a task of a temporary directory math
pack; the candidate is submitted as `\\boxed{candidate}` and as a bare answer line, graded end to end with
`rlvr grade --pack DIR`. math-verify alone parses the same boxed completion and the reference and calls
`verify` with its defaults (it has no notion of a per-task tolerance).

    .venv/bin/python benchmarks/math_equivalence.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from math_verify import parse, verify

PAIRS = Path(__file__).with_name("math_equivalence") / "pairs.jsonl"


def load_pairs() -> list[dict]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_pack(root: Path, pairs: list[dict]) -> None:
    (root / "pack.toml").write_text(
        'name = "equivalence-pairs"\nfamily = "math"\nversion = "1"\n', encoding="utf-8"
    )
    with (root / "tasks.jsonl").open("w", encoding="utf-8") as handle:
        for index, pair in enumerate(pairs):
            line = {"id": f"pair/{index}", "prompt": "(equivalence pair)", "answer": pair["reference"]}
            if "tolerance" in pair:
                line["tolerance"] = pair["tolerance"]
            handle.write(json.dumps(line) + "\n")


def rlvr_grade(root: Path, completions: list[str]) -> list[dict]:
    infile, outfile = root / "completions.jsonl", root / "out.jsonl"
    infile.write_text(
        "".join(
            json.dumps({"task_id": f"pair/{i}", "completion": c}) + "\n" for i, c in enumerate(completions)
        ),
        encoding="utf-8",
    )
    command = [
        sys.executable,
        "-m",
        "rlvr",
        "grade",
        "--pack",
        str(root),
        "--completions",
        str(infile),
        "--out",
        str(outfile),
    ]
    subprocess.run(command, check=True)
    return [json.loads(line) for line in outfile.read_text(encoding="utf-8").splitlines()]


def math_verify_alone(pair: dict) -> bool:
    gold = parse(f"${pair['reference']}$")
    answer = parse(f"\\boxed{{{pair['candidate']}}}")
    return bool(gold and answer and verify(gold, answer))


def timing_ratio(root: Path, pairs: list[dict], repeats: int = 3) -> tuple[float, float]:
    """ms per pair: rlvr's grader (warm worker, verdict cache bypassed by distinct text) vs math-verify alone."""
    from rlvr.graders.base import make_grader
    from rlvr.task_packs.registry import load_pack

    pack = load_pack(str(root))
    with make_grader(pack) as grader:
        grader.grade("pair/0", "\\boxed{0}")  # start the worker outside the clock
        started = time.perf_counter()
        for repeat in range(repeats):
            grader.grade_many(
                [f"pair/{i}" for i in range(len(pairs))],
                [f"{'.' * repeat}\n\\boxed{{{p['candidate']}}}" for p in pairs],
            )
        ours = (time.perf_counter() - started) / (repeats * len(pairs))
    started = time.perf_counter()
    for _ in range(repeats):
        for pair in pairs:
            math_verify_alone(pair)
    alone = (time.perf_counter() - started) / (repeats * len(pairs))
    return ours * 1000, alone * 1000


def main() -> int:
    pairs = load_pairs()
    expected = [p["equivalent"] for p in pairs]
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_pack(root, pairs)
        boxed = rlvr_grade(root, [f"Reasoning...\n\\boxed{{{p['candidate']}}}" for p in pairs])
        bare = rlvr_grade(root, [p["candidate"] for p in pairs])
        ours_ms, alone_ms = timing_ratio(root, pairs)
    rows = {
        "rlvr (boxed)": [v["passed"] for v in boxed],
        "rlvr (bare line)": [v["passed"] for v in bare],
        "math-verify alone": [math_verify_alone(p) for p in pairs],
    }
    positives = sum(expected)
    print(f"{len(pairs)} pairs ({positives} equivalent, {len(pairs) - positives} not)")
    print(f"{'grader':<20} {'right':>6} {'false +':>8} {'false -':>8}")
    for name, verdicts in rows.items():
        right = sum(v == e for v, e in zip(verdicts, expected, strict=True))
        false_pos = sum(v and not e for v, e in zip(verdicts, expected, strict=True))
        false_neg = sum(e and not v for v, e in zip(verdicts, expected, strict=True))
        print(f"{name:<20} {right:>6} {false_pos:>8} {false_neg:>8}")
    print(
        f"time per pair: rlvr {ours_ms:.1f} ms, math-verify alone {alone_ms:.1f} ms ({ours_ms / alone_ms:.2f}x)"
    )
    for index, (pair, ours, alone) in enumerate(
        zip(pairs, rows["rlvr (boxed)"], rows["math-verify alone"], strict=True)
    ):
        if ours != pair["equivalent"] or alone != pair["equivalent"]:
            who = "rlvr" if ours != pair["equivalent"] else "math-verify"
            print(f"  wrong ({who}): #{index} {pair['note']}: {pair['reference']!r} vs {pair['candidate']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
