"""humaneval-ts: the translation is current, skipped tasks are listed, the Python reference's outputs
pass every task once carried through JSON, independent TypeScript solutions pass, stubs fail, and the
pack goes through make_grader / rlvr grade unchanged."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from rlvr.core.types import Task
from rlvr.graders.code.oracle import CodeOracle, OracleCache, OracleError
from rlvr.graders.code.properties.suite import PropertyConfig, PropertyTests
from rlvr.graders.code.typescript.oracle import TsOracle, python_task
from rlvr.sandbox.pool import CallOutcome
from rlvr.task_packs.humaneval_ts import build_data, load_data, ts_id
from rlvr.task_packs.typescript import Unmappable, record_calls

SOLUTIONS = Path(__file__).parent / "data" / "typescript_solutions.ts.md"
INDEPENDENT = Path(__file__).resolve().parents[1] / "benchmarks" / "independent_solutions_ts"
SECTION = re.compile(r"^## (\S+)\n(```ts\n.*?```)", re.S | re.M)


def solutions() -> dict[str, str]:
    return dict(SECTION.findall(SOLUTIONS.read_text()))


def independent_solutions() -> dict[str, str]:
    """The whole independent set: the 21 above and benchmarks/independent_solutions_ts/ (no task twice)."""
    more = SECTION.findall((INDEPENDENT / "humaneval_ts_correct.md").read_text())
    written = solutions()
    assert len({task_id for task_id, _ in more}) == len(more) and not {t for t, _ in more} & set(written)
    return {**written, **dict(more)}


def test_translation_is_current_and_every_task_is_translated_or_listed(typescript_pack, humaneval_problems):
    data = load_data()
    assert build_data() == data, "run scripts/make_humaneval_ts.py"
    assert set(data["tasks"]) | set(data["skipped"]) == set(humaneval_problems)
    assert not set(data["tasks"]) & set(data["skipped"])
    assert all(reason for reason in data["skipped"].values())
    info = typescript_pack.info()
    assert info["language"] == "typescript" and info["skipped"] == data["skipped"]
    assert info["size"] == len(data["tasks"]) >= 150


def test_signatures_map_python_types(typescript_pack):
    signatures = {t.id: t.hidden["signature"] for t in typescript_pack.all_tasks()}
    assert signatures["HumanEval-TS/0"] == (
        "function has_close_elements(numbers: number[], threshold: number): boolean"
    )
    assert signatures["HumanEval-TS/8"].endswith("): [number, number]")  # Tuple[int, int]
    assert signatures["HumanEval-TS/12"].endswith("): string | null")  # Optional[str]
    prompt = typescript_pack.get("HumanEval-TS/12").prompt
    assert prompt.startswith("/**") and prompt.endswith(signatures["HumanEval-TS/12"] + " {\n")


def _through_json(value):
    """A value as a JavaScript program returns it: tuples are arrays, every number is a double."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return int(value) if float(value).is_integer() else float(value)
    if isinstance(value, list | tuple):
        return [_through_json(v) for v in value]
    return {k: _through_json(v) for k, v in value.items()}


def test_the_python_reference_outputs_pass_every_task_through_json(typescript_pack):
    """Every reference passes its hidden tests once its outputs cross the JSON boundary as a
    JavaScript program's would (int/float collapsed, tuples as arrays), generated inputs included."""
    cache = OracleCache(generate=PropertyTests(PropertyConfig()))
    failures = []
    for task in typescript_pack.all_tasks():
        oracle = TsOracle(cache.get(python_task(task)))
        outcomes: list[CallOutcome | None] = []
        for expected in oracle.python.expected:
            if expected.raises is not None:
                outcomes.append(CallOutcome(ok=False, exception="Error"))
            else:
                wire = json.loads(json.dumps(_through_json(expected.value)))
                outcomes.append(CallOutcome(ok=True, value=wire))
        verdict = oracle.judge(outcomes)
        if not verdict.passed:
            failures.append((task.id, verdict.failure))
    assert not failures


def test_independent_solutions_and_references_pass(typescript_grader, typescript_pack):
    """No false failure: every independently written correct solution passes (the whole set)."""
    written = independent_solutions()
    references = {
        t.id: t.hidden["ts_reference"] for t in typescript_pack.all_tasks() if t.hidden.get("ts_reference")
    }
    ids = list(written) + list(references)
    assert len(written) >= 140 and len(references) >= 5 and not set(written) & set(references)
    verdicts = typescript_grader.grade_many(ids, list(written.values()) + list(references.values()))
    failed = {i: (v.feedback, v.error) for i, v in zip(ids, verdicts, strict=True) if not v.passed}
    assert not failed
    for task_id, verdict in zip(ids, verdicts, strict=True):
        assert verdict.components["types"].score == 1.0, (task_id, verdict.components["types"].detail)
        if task_id in references:  # perf banded against the TypeScript reference
            assert verdict.components["perf"].max == 1.0 and verdict.components["perf"].score > 0.5
        else:
            assert verdict.components["perf"].max == 0.0  # no TS reference: no perf layer, said so


def test_wrong_but_plausible_solutions_fail(typescript_grader):
    """No false pass: off-by-ones, wrong rounding, and results JSON could blur (int vs float, tuple vs
    array or object, null vs [] / "" / 0 / NaN / Infinity, boolean vs number, string vs number) fail."""
    wrong = SECTION.findall((INDEPENDENT / "humaneval_ts_wrong.md").read_text())
    assert len(wrong) >= 30
    verdicts = typescript_grader.grade_many([t for t, _ in wrong], [c for _, c in wrong])
    passed = [(t, c.splitlines()[1]) for (t, c), v in zip(wrong, verdicts, strict=True) if v.passed]
    assert not passed
    assert all(v.error is None and v.gates == ["tests"] for v in verdicts)


def test_fidelity_fixes_in_the_translation(typescript_pack):
    data = load_data()
    # f(3.0) != f(3): the check's own calls tell apart what JavaScript receives alike
    assert data["skipped"]["HumanEval/92"].startswith("the reference tells arguments apart")
    assert "crypto" in data["skipped"]["HumanEval/162"]  # no modules in the sandbox
    prompts = {t.id: t.prompt for t in typescript_pack.all_tasks()}
    assert "wells" in prompts["HumanEval-TS/115"]  # the docstring after `import math`
    assert 'remove_vowels("abcdef\\nghijklm")' in prompts["HumanEval-TS/51"]  # escapes kept
    assert "rounds to the even one" in prompts["HumanEval-TS/103"]


def _stub(task) -> str:
    return task.hidden["signature"] + " {\n  return undefined as never;\n}\n"


def test_return_undefined_stubs_fail(typescript_grader, typescript_pack):
    tasks = random.Random(19).sample(typescript_pack.all_tasks(), 30)
    verdicts = typescript_grader.grade_many([t.id for t in tasks], [_stub(t) for t in tasks])
    assert not any(v.passed for v in verdicts)
    assert all(v.error is None and v.gates == ["tests"] for v in verdicts)


@pytest.mark.slow
def test_return_undefined_stubs_fail_every_task(typescript_grader, typescript_pack):
    tasks = typescript_pack.all_tasks()
    verdicts = typescript_grader.grade_many([t.id for t in tasks], [_stub(t) for t in tasks])
    assert not any(v.passed for v in verdicts)


def test_rlvr_grade_accepts_the_pack(tmp_path, typescript_grader):
    from rlvr.cli import main

    written = solutions()
    lines = [{"task_id": "HumanEval-TS/3", "completion": written["HumanEval-TS/3"]}]
    lines.append({"task_id": "HumanEval-TS/3", "completion": "  return true;\n}\n"})
    source = tmp_path / "completions.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "verdicts.jsonl"
    code = main(
        ["grade", "--pack", "humaneval-ts", "--completions", str(source), "--out", str(out), "--jobs", "1"]
    )
    assert code == 0
    graded = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["passed"] for g in graded] == [True, False]


def test_ts_ids_keep_the_humaneval_number():
    assert ts_id("HumanEval/17") == "HumanEval-TS/17"


def test_rlvr_bench_accepts_the_pack(tmp_path, typescript_grader):
    from rlvr.cli import main

    written = solutions()
    recorded = tmp_path / "recorded.jsonl"
    lines = [{"task_id": "HumanEval-TS/7", "completion": written["HumanEval-TS/7"]}]
    lines.append({"task_id": "HumanEval-TS/7", "completion": "  return strings;\n}\n"})
    recorded.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "bench"
    code = main(
        [
            "bench",
            "--pack",
            "humaneval-ts",
            "--policy",
            f"jsonl:{recorded}",
            "--k",
            "1",
            "--out",
            str(out),
            "--jobs",
            "1",
            "--no-progress",
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert "humaneval-ts" in json.dumps(results)
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert sorted(s["passed"] for s in samples) == [False, True]


def test_the_code_env_takes_the_pack_unchanged():
    import gymnasium as gym

    env = gym.make("rlvr/Code-v0", pack="humaneval-ts", jobs=1)
    try:
        observation, _ = env.reset(options={"task_id": "HumanEval-TS/7"})
        assert "function filter_by_substring" in str(observation)
        _, reward, terminated, _, info = env.step(solutions()["HumanEval-TS/7"])
        assert terminated and float(reward) > 0.5 and info["verdict"]["passed"]
    finally:
        env.close()


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "packs" / "code-basics-ts"


def test_a_directory_pack_declares_typescript(typescript_grader, tmp_path):
    from rlvr.graders.base import make_grader
    from rlvr.graders.code.typescript.grader import TypeScriptGrader
    from rlvr.task_packs.directory import DirectoryPack, PackValidationError

    pack = DirectoryPack(EXAMPLE)
    assert pack.language == "typescript"
    grader = make_grader(pack, jobs=1)
    try:
        assert isinstance(grader, TypeScriptGrader)
        ids = ["basics-ts/clamp", "basics-ts/word_lengths", "basics-ts/mean_pair", "basics-ts/mean_pair"]
        completions = [
            "  return Math.min(hi, Math.max(lo, x));\n}\n",
            "  const out: Record<string, number> = {};\n"
            "  for (const w of text.split(' ')) if (w) out[w] = w.length;\n  return out;\n}\n",
            "  return [xs.reduce((a, b) => a + b, 0) / xs.length, xs.length];\n}\n",
            "  return [xs.length, xs.length];\n}\n",
        ]
        verdicts = grader.grade_many(ids, completions)
    finally:
        grader.close()
    assert [v.passed for v in verdicts] == [True, True, True, False], [v.feedback for v in verdicts]
    assert verdicts[2].components["perf"].max == 1.0  # banded against the line's ts_reference
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    (renamed / "tasks.jsonl").write_text((EXAMPLE / "tasks.jsonl").read_text())
    (renamed / "pack.toml").write_text(
        (EXAMPLE / "pack.toml").read_text().replace("code-basics-ts", "code-basics")
    )
    with pytest.raises(PackValidationError, match="ends in `-ts`"):
        DirectoryPack(renamed)


KATA_SOLUTIONS = {
    "kata-ts/collatz_steps/2/0": (
        "function collatz_steps(n: number): number {\n  let steps = 0;\n"
        "  while (n !== 1) {\n    n = n % 2 === 0 ? n / 2 : 3 * n + 1;\n    steps++;\n  }\n  return steps;\n}\n"
    ),
    "kata-ts/common_prefix/2/0": (
        "function common_prefix(items: string[]): string {\n  if (items.length === 0) return '';\n"
        "  let prefix = items[0];\n  for (const s of items) {\n"
        "    while (!s.startsWith(prefix)) prefix = prefix.slice(0, -1);\n  }\n  return prefix;\n}\n"
    ),
    "kata-ts/chunk_list/2/0": (
        "function chunks(values: number[], size: number): number[][] {\n  const out: number[][] = [];\n"
        "  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));\n  return out;\n}\n"
    ),
    "kata-ts/balanced_brackets/1/0": (
        "function balanced(text: string): boolean {\n  let depth = 0;\n  for (const c of text) {\n"
        "    if (c === '(') depth++;\n    else if (c === ')' && --depth < 0) return false;\n  }\n"
        "  return depth === 0;\n}\n"
    ),
}


def test_kata_families_in_typescript(typescript_grader):
    from rlvr.graders.base import make_grader
    from rlvr.task_packs.registry import load_pack

    pack = load_pack("kata-ts")
    info = pack.info()
    assert info["language"] == "typescript" and info["size"] >= 150
    assert info["skipped"]["lru_cache"].startswith("a stateful class task")
    grader = make_grader(pack, jobs=1)
    try:
        ids = list(KATA_SOLUTIONS)
        stubs = [pack.get(i).hidden["signature"] + " {\n  return undefined as never;\n}\n" for i in ids]
        verdicts = grader.grade_many(ids + ids, list(KATA_SOLUTIONS.values()) + stubs)
    finally:
        grader.close()
    assert [v.passed for v in verdicts] == [True] * len(ids) + [False] * len(ids), [
        v.feedback for v in verdicts
    ]


def test_a_counterexample_db_records_what_caught_a_typescript_program(tmp_path, typescript_pack):
    from rlvr.graders.base import make_grader

    grader = make_grader(typescript_pack, jobs=1, types=False, counterexample_db=str(tmp_path))
    try:
        (verdict,) = grader.grade_many(["HumanEval-TS/3"], ["  return operations.length > 3;\n}\n"])
    finally:
        grader.close()
    assert not verdict.passed
    assert any(path.read_text().strip() for path in tmp_path.rglob("*") if path.is_file())


_TELLS_FLOATS = "def f(x):\n    return isinstance(x, int)\n"
_ALIKE = "def f(x):\n    return x * 2\n"


def _python_task(reference: str, check: str) -> Task:
    return Task(
        id="t/1",
        prompt="",
        family="code",
        difficulty=1,
        split="test",
        hidden={"entry_point": "f", "reference": reference, "check": check},
    )


def test_calls_javascript_receives_alike_are_not_graded_as_different():
    """f(3.0) and f(3) are one call in JavaScript: where the reference answers them differently the
    task is not gradable in TypeScript (translator: Unmappable; oracle: OracleError); where it
    answers them alike the call stays."""
    check = "def check(candidate):\n    assert candidate(3) == 6 or True\n    candidate(3.0)\n"
    with pytest.raises(Unmappable, match="JavaScript receives alike"):
        record_calls(_TELLS_FLOATS, check, "f")
    with pytest.raises(OracleError, match="JavaScript receives alike"):
        TsOracle(CodeOracle(_python_task(_TELLS_FLOATS, check)))
    assert len(record_calls(_ALIKE, check, "f")) == 2
    oracle = TsOracle(CodeOracle(_python_task(_ALIKE, check)))
    assert oracle.calls == [(3,), (3.0,)]
    tuples = "def f(x):\n    return x + (1,)\n"  # a tuple argument: JavaScript passes an array
    with pytest.raises(Unmappable, match="JavaScript receives alike"):
        record_calls(tuples, "def check(candidate):\n    candidate((2,))\n", "f")
