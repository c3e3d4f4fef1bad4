"""Hard mutants: hand-written wrong HumanEval solutions that HumanEval's own tests miss (issue 33).

Data: `benchmarks/hard_mutants/humaneval_hard_mutants.py.txt`, blocks introduced by
`# ==== <task id> :: <name>` with a `# witness: <args>` line — an input inside the task's domain on
which the mutant answers differently from the reference (so no mutant here is equivalent). Each
mutant is checked and graded through the real CodeGrader:

  * witness: the mutant (in the sandbox) and the pack's reference (trusted side) must disagree on it,
    and the witness must meet the task's preconditions — else the row is a data bug, not counted;
  * original: `properties=False` (HumanEval's own `check` only) — a mutant it kills is not hard;
  * rlvr: the default grader (`check` + generated hidden tests).

    .venv/bin/python benchmarks/bench_hard_mutants.py [--data FILE] [--out FILE]

`humaneval_fresh_mutants.py.txt` (same folder) was written after the generator change and scored once.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

from rlvr.graders.base import make_grader
from rlvr.graders.code.agreement import ANY, agrees
from rlvr.graders.code.properties.preconditions import HUMANEVAL_PRECONDITIONS
from rlvr.sandbox import make_sandbox
from rlvr.sandbox.pool import Job
from rlvr.task_packs.registry import load_pack

FOLDER = Path(__file__).parent / "hard_mutants"
DATA = FOLDER / "humaneval_hard_mutants.py.txt"
MARKER = re.compile(r"^# ==== (\S+) :: (\S+)\s*$", re.MULTILINE)
WITNESS = re.compile(r"^# witness: (.+)$", re.MULTILINE)


def mutants(path: Path = DATA) -> list[dict[str, Any]]:
    text = path.read_text()
    marks = list(MARKER.finditer(text))
    out = []
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        body = text[mark.end() : following.start() if following else len(text)].strip("\n") + "\n"
        witness = WITNESS.search(body)
        assert witness, f"{mark.group(1)} {mark.group(2)}: no witness line"
        out.append(
            {
                "task": mark.group(1),
                "name": mark.group(2),
                "source": body,
                "witness": ast.literal_eval(witness.group(1)),
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    parser.add_argument("--data", type=Path, default=DATA, help="a mutants file (default: the hard set)")
    args = parser.parse_args()
    pack = load_pack("humaneval")
    rows = mutants(args.data)
    sandbox = make_sandbox("local", 2)
    for row in rows:
        task = pack.get(row["task"])
        namespace: dict[str, Any] = {}
        exec(task.hidden["reference"], namespace)  # the pack's trusted reference
        expected = namespace[task.hidden["entry_point"]](*row["witness"])
        job = Job(source=row["source"], entry=task.hidden["entry_point"], calls=[row["witness"]], timeout=5)
        outcome = sandbox.run(job).outcomes[0]
        row["witness_differs"] = not (
            outcome is not None and outcome.ok and agrees(ANY, expected, outcome.value)
        )
        precondition = HUMANEVAL_PRECONDITIONS.get(row["task"])
        row["witness_in_domain"] = precondition is None or bool(precondition(*row["witness"]))
    sandbox.close()
    ids = [r["task"] for r in rows]
    sources = [r["source"] for r in rows]
    with make_grader(pack, types=False, properties=False, jobs=2) as original:
        for row, verdict in zip(rows, original.grade_many(ids, sources), strict=True):
            row["killed_by_original"] = not verdict.passed
    with make_grader(pack, types=False, jobs=2) as rlvr:
        for row, verdict in zip(rows, rlvr.grade_many(ids, sources), strict=True):
            row["killed_by_rlvr"] = not verdict.passed
    valid = [r for r in rows if r["witness_differs"] and r["witness_in_domain"]]
    hard = [r for r in valid if not r["killed_by_original"]]
    summary = {
        "mutants": len(rows),
        "data_bugs": [f"{r['task']} :: {r['name']}" for r in rows if r not in valid],
        "killed_by_original (not hard)": [
            f"{r['task']} :: {r['name']}" for r in valid if r["killed_by_original"]
        ],
        "hard": len(hard),
        "hard_killed_by_rlvr": sum(r["killed_by_rlvr"] for r in hard),
        "hard_survivors": [f"{r['task']} :: {r['name']}" for r in hard if not r["killed_by_rlvr"]],
    }
    json.dump(summary, sys.stdout, indent=1)
    print()
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1, default=repr))


if __name__ == "__main__":
    main()
