"""The `humaneval-ts` pack: HumanEval in TypeScript, translated by the project's own translator.

Each task keeps its Python task as hidden data (`hidden["source"]`): the TypeScript grader judges
candidates with that task's oracle, so the reference *outputs* are the Python reference's on the same
hidden inputs, the task's own `check` is replayed, and the generated property inputs are the Python
pack's (read through JSON; see rlvr/graders/code/typescript/oracle.py for the int/float rule).

The translator (rlvr/task_packs/typescript.py, run by scripts/make_humaneval_ts.py into
humaneval_ts.json, which the pack reads; tests/test_typescript_pack.py checks the file is current) writes,
per task, a TypeScript signature and a JSDoc comment from the docstring, reading the types from the
Python annotations, else from the values the task's own `check` passes and the reference returns.
Tasks whose types do not map are skipped and listed with the reason in humaneval_ts.json
(`rlvr packs show humaneval-ts` prints them).

Five tasks carry a hand-written TypeScript reference (`TS_REFERENCES`); their perf layer is banded
against it. The others have no perf layer (the Python reference's counted operations are not
comparable with JavaScript statements), which their verdicts say.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.task_packs.typescript import Unmappable, record_calls, translate

DATA = Path(__file__).with_name("humaneval_ts.json")

TS_REFERENCES: dict[str, str] = {
    "HumanEval/0": (
        "function has_close_elements(numbers: number[], threshold: number): boolean {\n"
        "  for (let i = 0; i < numbers.length; i++) {\n"
        "    for (let j = 0; j < numbers.length; j++) {\n"
        "      if (i !== j && Math.abs(numbers[i] - numbers[j]) < threshold) return true;\n"
        "    }\n"
        "  }\n"
        "  return false;\n"
        "}\n"
    ),
    "HumanEval/13": (
        "function greatest_common_divisor(a: number, b: number): number {\n"
        "  while (b) {\n"
        "    [a, b] = [b, a % b];\n"
        "  }\n"
        "  return a;\n"
        "}\n"
    ),
    "HumanEval/23": "function strlen(string: string): number {\n  return string.length;\n}\n",
    "HumanEval/35": (
        "function max_element(l: number[]): number {\n"
        "  let m = l[0];\n"
        "  for (const e of l) {\n"
        "    if (e > m) m = e;\n"
        "  }\n"
        "  return m;\n"
        "}\n"
    ),
    "HumanEval/52": (
        "function below_threshold(l: number[], t: number): boolean {\n"
        "  for (const e of l) {\n"
        "    if (e >= t) return false;\n"
        "  }\n"
        "  return true;\n"
        "}\n"
    ),
}


# What the Python task leaves to Python's semantics and a TypeScript reader cannot know: added to the
# translated JSDoc. (HumanEval/103: Python's `round` takes ties to the even integer, Math.round up.)
PROMPT_NOTES: dict[str, str] = {
    "HumanEval/103": "Note: an average halfway between two integers rounds to the even one (2.5 -> 2, 3.5 -> 4).",
}


# Tasks the translator maps but TypeScript cannot be graded on fairly, with the reason.
NOT_FAIR_IN_TYPESCRIPT: dict[str, str] = {
    "HumanEval/162": (
        "needs MD5, which TypeScript has only through node's `crypto` module, and the sandbox "
        "gives a program no modules"
    ),
}


def with_note(prompt: str, note: str) -> str:
    """The translated prompt with `note` as the last line of its JSDoc comment."""
    head, close, tail = prompt.partition(" */\n")
    return f"{head} *\n * {note}\n{close}{tail}"


def build_data() -> dict[str, Any]:
    """Translate every HumanEval task (what scripts/make_humaneval_ts.py writes to humaneval_ts.json)."""
    from rlvr.task_packs.humaneval import HumanEvalPack

    tasks: dict[str, dict[str, str]] = {}
    skipped: dict[str, str] = {}
    for task in HumanEvalPack().all_tasks():
        hidden = task.hidden
        if task.id in NOT_FAIR_IN_TYPESCRIPT:
            skipped[task.id] = NOT_FAIR_IN_TYPESCRIPT[task.id]
            continue
        try:
            entry = hidden["entry_point"]
            calls = record_calls(hidden["reference"], hidden["check"], entry)
            translated = translate(task.prompt, entry, calls)
            if task.id in PROMPT_NOTES:
                translated["prompt"] = with_note(translated["prompt"], PROMPT_NOTES[task.id])
            tasks[task.id] = translated
        except Unmappable as exc:
            skipped[task.id] = str(exc)
    return {"tasks": tasks, "skipped": skipped}


def load_data() -> dict[str, Any]:
    return json.loads(DATA.read_text())


def ts_id(task_id: str) -> str:
    return task_id.replace("HumanEval/", "HumanEval-TS/")


class HumanEvalTsPack(TaskPack):
    name = "humaneval-ts"
    family = "code"
    language = "typescript"
    version = "1"
    description = (
        "HumanEval translated to TypeScript by rlvr's translator (signatures from the Python types, "
        "JSDoc from the docstrings); graded against the Python reference's outputs; untranslatable "
        "tasks skipped and listed."
    )

    def _load(self) -> Iterable[Task]:
        from rlvr.task_packs.humaneval import HumanEvalPack

        data = load_data()
        for task in HumanEvalPack().all_tasks():
            translated = data["tasks"].get(task.id)
            if translated is None:
                continue
            hidden: dict[str, Any] = {
                "entry_point": task.hidden["entry_point"],
                "language": "typescript",
                "signature": translated["signature"],
                "forbid_any": True,
                "source": {"id": task.id, "prompt": task.prompt, "hidden": task.hidden},
            }
            if task.id in TS_REFERENCES:
                hidden["ts_reference"] = TS_REFERENCES[task.id]
            yield Task(
                id=ts_id(task.id),
                prompt=translated["prompt"],
                family="code",
                difficulty=task.difficulty,
                split=task.split,
                hidden=hidden,
                meta={"source_task": task.id},
            )

    def info(self) -> dict[str, Any]:
        info = super().info()
        info["language"] = self.language
        info["skipped"] = dict(sorted(load_data()["skipped"].items()))  # task id -> why it does not map
        return info
