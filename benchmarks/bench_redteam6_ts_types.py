"""Red team 6: what the TypeScript declared-signature check costs honest code and what it catches.

Honest data (never tuned on): the independently written correct TypeScript solutions
(tests/data/typescript_solutions.ts.md, benchmarks/independent_solutions_ts/humaneval_ts_correct.md)
and the pack's own TypeScript references. Attacks: each honest solution rewritten to hide a type
error behind a widened or dropped return annotation (the error: a `string` returned on a path the
tests never reach). Each program is type-checked by the grader's warm compiler twice, without and
with the check (`with_signature_check`); reported: honest programs that lose types credit (false
failures) and attacks that keep full credit (false passes).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_redteam6_ts_types.py
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from rlvr.graders.code.typescript.compiler import TsCompiler
from rlvr.graders.code.typescript.signature import declared_type, with_signature_check
from rlvr.graders.code.typescript.syntax import blank_comments
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).resolve().parents[1]
CORRECT = [
    ROOT / "tests" / "data" / "typescript_solutions.ts.md",
    ROOT / "benchmarks" / "independent_solutions_ts" / "humaneval_ts_correct.md",
]
SECTION = re.compile(r"^## (\S+)\n```ts\n(.*?)```", re.S | re.M)
KEPT = "kept"  # the declared return type kept: the honest program with the same type error
WIDENINGS = ("unknown", "{}", None)  # None: the return annotation dropped


def widened(program: str, entry: str, declared_return: str, to: str | None) -> str | None:
    """`program` with the entry's return annotation widened (or dropped) and a hidden string return."""
    head = re.search(rf"function {re.escape(entry)}\s*(<[^>]*>)?\s*\((?:[^()]|\([^()]*\))*\)\s*:\s*", program)
    if head is None or not program[head.end() :].startswith(declared_return):
        return None
    start, end = head.end(), head.end() + len(declared_return)
    brace = program.find("{", end)
    if brace < 0 or program[end:brace].strip():
        return None
    annotation_start = program.rfind(":", head.start(), start)
    kept = program[annotation_start:brace] if to == KEPT else None
    new_head = program[:annotation_start] + (kept or (f": {to} " if to else " "))
    body = program[brace:].replace("{", '{\n  if (Math.random() > 2) return "unreachable";', 1)
    return new_head + body


def main() -> None:
    pack = load_pack("humaneval-ts")
    tasks = {t.id: t for t in pack.all_tasks()}
    honest: list[tuple[str, str]] = []
    for path in CORRECT:
        honest += [(t, c) for t, c in SECTION.findall(path.read_text()) if t in tasks]
    honest += [(t.id, str(t.hidden["ts_reference"])) for t in tasks.values() if t.hidden.get("ts_reference")]
    attacks: list[tuple[str, str]] = []
    controls: list[tuple[str, str]] = []  # the same type error under the declared return type
    for task_id, program in honest:
        task = tasks[task_id]
        declared = declared_type(task.prompt, str(task.hidden["entry_point"]))
        if declared is None:
            continue
        returns = declared.rsplit("=> ", 1)[1]
        entry = str(task.hidden["entry_point"])
        control = widened(program, entry, returns, KEPT)
        if control is None:
            continue
        for to in WIDENINGS:
            attack = widened(program, entry, returns, to)
            if attack is not None:
                controls.append((task_id, control))
                attacks.append((task_id, attack))
    compiler = TsCompiler()
    started = time.perf_counter()
    try:

        def errors(items: list[tuple[str, str]], check: bool) -> list[int]:
            sources = []
            for task_id, program in items:
                text = blank_comments(program)
                if check:
                    task = tasks[task_id]
                    text = with_signature_check(text, task.prompt, str(task.hidden["entry_point"]))
                sources.append(text)
            results = compiler.check_many(sources)
            return [len(r.diagnostics) + r.unchecked_casts + (1 if r.flag else 0) for r in results]

        honest_before, honest_after = errors(honest, False), errors(honest, True)
        attack_before, attack_after = errors(attacks, False), errors(attacks, True)
        control_errors = errors(controls, True)
    finally:
        compiler.close()
    seconds = time.perf_counter() - started
    lost = [t for (t, _), b, a in zip(honest, honest_before, honest_after, strict=True) if a > b]
    clean_before = sum(1 for e in honest_before if e == 0)
    clean_after = sum(1 for e in honest_after if e == 0)
    print(
        f"honest programs: {len(honest)}; type-clean without the check {clean_before}, with it {clean_after}"
    )
    print(f"honest programs that lose types credit (false failures): {len(lost)} {lost[:10]}")
    # an attack is real where the same string return under the declared type is a type error
    real = [i for i, e in enumerate(control_errors) if e > 0]
    print(
        f"attacks (a type error hidden behind a widened/dropped return type): {len(real)} real of "
        f"{len(attacks)} built; fewer errors than the honest program with the same error: without the "
        f"check {sum(1 for i in real if attack_before[i] < control_errors[i])}, with it "
        f"{sum(1 for i in real if attack_after[i] < control_errors[i])}; full credit without "
        f"{sum(1 for i in real if attack_before[i] == 0)}, with {sum(1 for i in real if attack_after[i] == 0)}"
    )
    for i in real:
        if attack_after[i] < control_errors[i]:
            print(f"  still hidden: {attacks[i][0]}: {attacks[i][1].splitlines()[0][:100]}")
    print(f"checked in {seconds:.1f} s")


if __name__ == "__main__":
    main()
