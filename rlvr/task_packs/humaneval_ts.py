"""The `humaneval-ts` pack: HumanEval in TypeScript, translated by the project's own translator.

Each task keeps its Python task as hidden data (`hidden["source"]`): the TypeScript grader judges
candidates with that task's oracle, so the reference *outputs* are the Python reference's on the same
hidden inputs, the task's own `check` is replayed, and the generated property inputs are the Python
pack's (read through JSON; see rlvr/graders/typescript/oracle.py for the int/float rule).

The translator (`translate`, run by scripts/make_humaneval_ts.py into humaneval_ts.json, which the pack
reads; tests/test_typescript_pack.py checks the file is current) writes, per task, a TypeScript
signature and a JSDoc comment from the docstring. A parameter's or the result's type comes from the
Python annotation where it maps (int/float -> number, bool -> boolean, str -> string, None -> null,
list[T] -> T[], tuple[A, B] -> [A, B], tuple[T, ...] -> T[], dict[str, V] -> Record<string, V>,
Optional[T] -> T | null, unions -> unions), else from the values the task's own `check` passes and the
reference returns. Tasks whose types do not map (sets, dicts with non-string keys, integers beyond
2**53, values of no consistent type, prompts that rely on a Python helper function) are skipped and
listed with the reason in humaneval_ts.json (`rlvr packs show humaneval-ts` prints them).

Five tasks carry a hand-written TypeScript reference (`TS_REFERENCES`); their perf layer is banded
against it. The others have no perf layer (the Python reference's counted operations are not
comparable with JavaScript statements), which their verdicts say.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task

DATA = Path(__file__).with_name("humaneval_ts.json")
MAX_SAFE_INTEGER = 2**53 - 1
_CHECK_SEED = 1729

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


class Unmappable(Exception):
    """The task's types have no TypeScript translation here; the message says why."""


# ---------------------------------------------------------------- types from annotations
_SIMPLE = {"int": "number", "float": "number", "bool": "boolean", "str": "string", "None": "null"}


def _wrap(inner: str) -> str:
    return f"({inner})" if "|" in inner else inner


def annotation_type(node: ast.expr | None) -> str:
    if node is None:
        raise Unmappable("no annotation")
    if isinstance(node, ast.Constant) and node.value is None:
        return "null"
    if isinstance(node, ast.Name):
        if node.id in _SIMPLE:
            return _SIMPLE[node.id]
        raise Unmappable(f"type {node.id} does not map")
    if isinstance(node, ast.Attribute):
        raise Unmappable(f"type {ast.unparse(node)} does not map")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return f"{annotation_type(node.left)} | {annotation_type(node.right)}"
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        name = node.value.id
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if name in ("List", "list", "Sequence", "Iterable") and len(args) == 1:
            return _wrap(annotation_type(args[0])) + "[]"
        if name in ("Tuple", "tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return _wrap(annotation_type(args[0])) + "[]"
            return "[" + ", ".join(annotation_type(a) for a in args) + "]"
        if name in ("Dict", "dict") and len(args) == 2:
            if annotation_type(args[0]) != "string":
                raise Unmappable("dict keys that are not strings")
            return f"Record<string, {annotation_type(args[1])}>"
        if name == "Optional" and len(args) == 1:
            return f"{annotation_type(args[0])} | null"
        if name == "Union":
            return " | ".join(annotation_type(a) for a in args)
    raise Unmappable(f"type {ast.unparse(node)} does not map")


# ---------------------------------------------------------------- types from values
def value_type(values: list[Any]) -> str:
    """The TypeScript type of a set of example values (raises Unmappable)."""
    if not values:
        raise Unmappable("no example value shows the type (e.g. only empty lists)")
    nullable = any(v is None for v in values)
    present = [v for v in values if v is not None]
    if not present:
        return "null"
    kinds = {_kind(v) for v in present}
    containers = kinds - {"boolean", "number", "string"}
    if kinds <= {"boolean", "number", "string"}:
        base = " | ".join(sorted(kinds))
    elif len(containers) == 1 and len(kinds) > 1:  # e.g. `string[] | number`
        groups = [[v for v in present if _kind(v) == kind] for kind in sorted(kinds)]
        base = " | ".join(value_type(group) for group in groups)
    elif kinds == {"array"}:
        items = [x for v in present for x in v]
        base = _wrap(value_type(items)) + "[]"
    elif kinds == {"tuple"}:
        lengths = {len(v) for v in present}
        if len(lengths) == 1:
            (length,) = lengths
            base = "[" + ", ".join(value_type([v[i] for v in present]) for i in range(length)) + "]"
        else:
            base = _wrap(value_type([x for v in present for x in v])) + "[]"
    elif kinds == {"record"}:
        base = f"Record<string, {value_type([x for v in present for x in v.values()])}>"
    else:
        raise Unmappable(f"values of no single type ({', '.join(sorted(kinds))})")
    return f"{base} | null" if nullable else base


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise Unmappable("integers beyond 2**53")
        return "number"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise Unmappable("non-finite floats")
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, tuple):
        return "tuple"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise Unmappable("dict keys that are not strings")
        return "record"
    raise Unmappable(f"values of type {type(value).__name__}")


def _check_values(value: Any) -> None:
    """Every value the task passes or returns must cross JSON unchanged (raises Unmappable)."""
    if value is None:
        return
    kind = _kind(value)
    if kind in ("array", "tuple"):
        for item in value:
            _check_values(item)
    elif kind == "record":
        for item in value.values():
            _check_values(item)


# ---------------------------------------------------------------- recording the task's own calls
def record_calls(reference: str, check: str, entry: str) -> list[tuple[tuple[Any, ...], Any, bool]]:
    """(args, result, raised) of every call the task's `check` makes on the (trusted) reference."""
    namespace: dict[str, Any] = {"__name__": "rlvr_translate"}
    exec(compile(reference, "<reference>", "exec"), namespace)  # trusted task code
    function = namespace[entry]
    calls: list[tuple[tuple[Any, ...], Any, bool]] = []

    def recorder(*args: Any) -> Any:
        try:
            value = function(*args)
        except Exception:
            calls.append((args, None, True))
            raise
        calls.append((args, value, False))
        return value

    exec(compile(check, "<check>", "exec"), namespace)
    state = random.getstate()
    random.seed(_CHECK_SEED)
    try:
        namespace["check"](recorder)
    finally:
        random.setstate(state)
    return calls


# ---------------------------------------------------------------- the prompt
def jsdoc(docstring: str) -> str:
    lines = []
    for line in docstring.strip("\n").splitlines():
        text = line.strip()
        if text.startswith(">>>"):
            text = re.sub(r"\bTrue\b", "true", text)
            text = re.sub(r"\bFalse\b", "false", text)
            text = re.sub(r"\bNone\b", "null", text)
        lines.append(text.replace("*/", "* /"))
    while lines and not lines[-1]:
        lines.pop()
    return "/**\n" + "".join(f" * {line}".rstrip() + "\n" for line in lines) + " */\n"


def translate(task_id: str, prompt: str, reference: str, check: str, entry: str) -> dict[str, str]:
    """{"prompt", "signature"} of the TypeScript task (raises Unmappable)."""
    module = ast.parse(prompt)
    functions = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if [f.name for f in functions] != [entry]:
        raise Unmappable("the prompt relies on a Python helper function")
    function = functions[0]
    if function.args.vararg or function.args.kwarg or function.args.kwonlyargs or function.args.defaults:
        raise Unmappable("variadic, keyword-only or default parameters")
    calls = record_calls(reference, check, entry)
    if not calls:
        raise Unmappable("the task's check makes no calls")
    for args, value, raised in calls:
        _check_values(list(args))
        if not raised:
            _check_values(value)
    parameters = []
    for position, arg in enumerate(function.args.args):
        values = [args[position] for args, _, _ in calls if position < len(args)]
        try:
            kind = annotation_type(arg.annotation)
        except Unmappable:
            kind = value_type(values)
        parameters.append(f"{arg.arg}: {kind}")
    try:
        result = annotation_type(function.returns)
    except Unmappable:
        result = value_type([value for _, value, raised in calls if not raised])
    signature = f"function {entry}({', '.join(parameters)}): {result}"
    docstring = ast.get_docstring(function, clean=True) or ""
    return {"signature": signature, "prompt": jsdoc(docstring) + signature + " {\n"}


def build_data() -> dict[str, Any]:
    """Translate every HumanEval task (what scripts/make_humaneval_ts.py writes to humaneval_ts.json)."""
    from rlvr.task_packs.humaneval import HumanEvalPack

    tasks: dict[str, dict[str, str]] = {}
    skipped: dict[str, str] = {}
    for task in HumanEvalPack().all_tasks():
        hidden = task.hidden
        try:
            tasks[task.id] = translate(
                task.id, task.prompt, hidden["reference"], hidden["check"], hidden["entry_point"]
            )
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
