"""TypeScript grading cost (issue 19): rlvr's four layers per sample vs a naive `tsc` + `node` per
candidate, and the type layer amortised per candidate at a batch of 1,000.

Samples: the independent TypeScript solutions in tests/data/typescript_solutions.ts.md and the pack's
TypeScript references (all correct), each made unique with a trailing `const __sample_<k> = <k>;`.

  rlvr   make_grader(humaneval-ts, jobs=2).grade_many over --copies x the samples in one batch: syntax,
         strict types (warm compiler, batched), build with counters, sandboxed node runs on every hidden
         call (generated property inputs included), perf. Warm-up batch first.
  naive  per candidate: one `tsc --strict` process (checks and emits), then one `node` process that loads
         the emitted JS and runs the same hidden calls, comparing against the reference outputs inside
         node (the exit code decides; no sandbox, no isolation); --naive-samples candidates, sequential.
  types  TsCompiler.check_many on 1,000 distinct candidates (one warm process; the first batch, which
         parses the standard library, is reported separately).

Usage: .venv/bin/python benchmarks/bench_typescript.py [--copies 4] [--naive-samples 8]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
import time
from pathlib import Path

from rlvr.graders.base import make_grader
from rlvr.graders.code.typescript.compiler import TsCompiler
from rlvr.graders.code.typescript.extract import extract_program
from rlvr.graders.code.typescript.grader import TypeScriptGrader
from rlvr.graders.code.typescript.syntax import blank_comments
from rlvr.graders.code.typescript.toolchain import check_toolchain
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "tests" / "data" / "typescript_solutions.ts.md"


def samples(pack) -> list[tuple[str, str]]:
    written = re.findall(r"^## (\S+)\n(```ts\n.*?```)", SOLUTIONS.read_text(), re.S | re.M)
    out = [(task_id, text) for task_id, text in written]
    out += [(t.id, t.hidden["ts_reference"]) for t in pack.all_tasks() if t.hidden.get("ts_reference")]
    return out


def unique(text: str, k: int) -> str:
    body = text.replace("```ts\n", "").replace("```", "")
    return body + f"\nconst __sample_{k} = {k};\n"


def naive_one(node: str, modules: Path, task, program: str, calls, expected) -> bool:
    entry = task.hidden["entry_point"]
    with tempfile.TemporaryDirectory(prefix="rlvr-naive-ts-") as tmp:
        source = Path(tmp) / "main.ts"
        source.write_text(program + f"\nmodule.exports = {entry};\n")
        (Path(tmp) / "globals.d.ts").write_text("declare var module: any;\n")
        tsc = [node, str(modules / "typescript" / "bin" / "tsc"), "--strict", "--target", "es2022"]
        checked = subprocess.run(
            [*tsc, "--outDir", tmp, str(source), str(Path(tmp) / "globals.d.ts")], capture_output=True
        )
        harness = Path(tmp) / "run.js"
        harness.write_text(
            "const f = require('./main.js');\n"
            f"const calls = {json.dumps(calls)};\nconst expected = {json.dumps(expected)};\n"
            "let ok = true;\nfor (let i = 0; i < calls.length; i++) {\n"
            "  let got; try { got = JSON.stringify(f(...calls[i])); } catch (e) { got = 'raised'; }\n"
            "  if (got !== JSON.stringify(expected[i])) ok = false;\n}\nprocess.exit(ok ? 0 : 1);\n"
        )
        ran = subprocess.run([node, str(harness)], capture_output=True)
        return checked.returncode == 0 and ran.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--naive-samples", type=int, default=8)
    parser.add_argument("--types-batch", type=int, default=1000)
    args = parser.parse_args()
    pack = load_pack("humaneval-ts")
    base = samples(pack)
    grader = make_grader(pack, jobs=2)
    assert isinstance(grader, TypeScriptGrader)
    grader.grade_many([t for t, _ in base], [unique(s, 0) for _, s in base])  # warm-up: oracles, references
    items = [(t, unique(s, k + 1)) for k in range(args.copies) for t, s in base]
    started = time.perf_counter()
    verdicts = grader.grade_many([t for t, _ in items], [s for _, s in items])
    rlvr_ms = (time.perf_counter() - started) * 1000 / len(items)
    passed = sum(v.passed for v in verdicts)

    node, modules = check_toolchain()
    naive_items = items[: args.naive_samples]
    started = time.perf_counter()
    naive_passed = 0
    for task_id, text in naive_items:
        task = pack.get(task_id)
        oracle = grader.oracle(task)  # the same hidden calls and reference outputs
        calls = [list(c) for c in oracle.calls]
        expected = [e.value for e in oracle.python.expected]
        program = extract_program(task.prompt, text, task.hidden["entry_point"]).program
        naive_passed += naive_one(node, modules, task, program, calls, expected)
    naive_ms = (time.perf_counter() - started) * 1000 / len(naive_items)
    grader.close()

    compiler = TsCompiler()
    sources = [blank_comments(unique(base[k % len(base)][1], 10_000 + k)) for k in range(args.types_batch)]
    started = time.perf_counter()
    compiler.check_many(sources[:8])
    first_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    compiler.check_many(sources)
    types_ms = (time.perf_counter() - started) * 1000 / len(sources)
    compiler.close()

    print(f"| rlvr, four layers ({len(items)} samples, {passed} passed) | {rlvr_ms:.1f} ms/sample |")
    print(
        f"| naive tsc + node per candidate ({len(naive_items)} samples, {naive_passed} passed by exit code) | {naive_ms:.1f} ms/sample |"
    )
    print(f"| speed-up | {naive_ms / rlvr_ms:.1f}x |")
    print(
        f"| type layer amortised, batch {len(sources)} | {types_ms:.2f} ms/candidate (first batch of 8: {first_ms:.0f} ms) |"
    )


if __name__ == "__main__":
    main()
