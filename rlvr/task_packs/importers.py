"""Turn the code datasets RLVR users train on into rlvr packs (no hub needed: local files).

    rlvr packs import --format apps|codecontests|livecodebench|jsonl FILE --out DIR

Layouts (one JSON object per line, a JSON list, or Parquet through the `datasets` library):
  * apps (also TACO): `question`, `input_output` ({"inputs", "outputs", optional "fn_name"}, as an
    object or a JSON string), optional `solutions` (JSON list of Python programs), `starter_code`,
    `difficulty` (introductory | interview | competition), `problem_id`.
  * codecontests: `name`, `description`, `public_tests`/`private_tests`/`generated_tests`
    ({"input": [...], "output": [...]}), `solutions` ({"language": [...], "solution": [...]}; 3 is
    Python 3), `difficulty`, `time_limit` ({"seconds", "nanos"}), `memory_limit_bytes`.
  * livecodebench: `question_id`, `question_title`, `question_content`, `public_test_cases` and
    `private_test_cases` (JSON lists of {"input", "output", "testtype": "stdin" | "functional"};
    private ones may be base64(zlib(pickle(json))) — unpickled with no classes allowed), `metadata`
    ({"func_name"} for functional tests), `starter_code`, `difficulty` (easy | medium | hard).
  * jsonl: rlvr's own program-task lines: `id`, `prompt`, `program` (see `rlvr.specs.programs`).
Any layout may add `checker` (Python source defining `judge(input, expected, output) -> bool`) for a
special judge. Every row becomes a task whose public prompt holds the statement only; tests and
solutions go to the hidden spec. A malformed row is reported with file, row and field, and the
other rows are still imported.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlvr.core.jsonl import JsonProblem, decode_json, json_lines
from rlvr.core.pack import Problem
from rlvr.specs.programs import ProgramSpecError, parse_spec

FORMATS = ("apps", "codecontests", "livecodebench", "jsonl")
PYTHON3 = 3  # CodeContests' language id for Python 3
DIFFICULTY = {"introductory": 1, "easy": 1, "interview": 2, "medium": 3, "competition": 4, "hard": 4}
STDIN_NOTE = "Read the input from standard input and write the answer to standard output."


class RowError(ValueError):
    """A row that cannot become a task; `field` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def read_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(row number from 1, decoded row or a RowError) for each row of a JSONL, JSON or Parquet file."""
    if path.suffix == ".parquet":
        try:
            import datasets  # type: ignore[import-not-found]
        except ImportError as exc:
            raise SystemExit(
                f"reading Parquet needs the `datasets` package: pip install datasets ({exc})"
            ) from exc
        yield from enumerate(datasets.Dataset.from_parquet(str(path)), start=1)
        return
    if path.suffix == ".json" or _starts_with_bracket(path):
        try:
            rows = decode_json(path.read_bytes())
        except JsonProblem as exc:
            yield 1, RowError("(file)", f"not valid JSON: {exc}")
            return
        if not isinstance(rows, list):
            raise SystemExit(f"{path}: a .json file must hold a list of rows")
        yield from enumerate(rows, start=1)
        return
    for entry in json_lines(path, objects=False):
        yield entry.number, RowError("(line)", entry.problem.message) if entry.problem else entry.value


def _starts_with_bracket(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4096).lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"["


def _json_field(row: dict[str, Any], name: str, default: Any = None) -> Any:
    value = row.get(name, default)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return decode_json(value)
        except JsonProblem as exc:
            raise RowError(name, f"not valid JSON: {exc}") from exc
    return value


def _text(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise RowError(name, "missing or not a non-empty string")
    return value


class _NoClasses(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: only plain data is accepted")


def _decode_lcb_tests(value: Any, field: str) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise RowError(field, "must be a JSON list or its compressed string")
    try:
        return decode_json(value)
    except JsonProblem:
        pass
    try:
        raw = zlib.decompress(base64.b64decode(value, validate=True))
        decoded = _NoClasses(io.BytesIO(raw)).load()
        return json.loads(decoded) if isinstance(decoded, str) else decoded
    except Exception as exc:
        raise RowError(
            field, f"neither JSON nor base64(zlib(pickle(json))): {type(exc).__name__}: {exc}"
        ) from exc


def _program(
    tests: list[dict[str, Any]], *, call: str | None, reference: str | None, row: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    program: dict[str, Any] = {"tests": tests, **extra}
    if call:
        program["call"] = call
    if reference:
        program["reference"] = reference
    checker = row.get("checker")
    if checker is not None:
        if not isinstance(checker, str):
            raise RowError("checker", "must be Python source defining judge(input, expected, output)")
        program["compare"] = "judge"
        program["judge"] = checker
    return program


def _prompt(statement: str, call: str | None, starter: Any) -> str:
    if call:
        stub = (
            f"\n\n```python\n{starter.rstrip()}\n```" if isinstance(starter, str) and starter.strip() else ""
        )
        return f"{statement.rstrip()}\n\nImplement the function `{call}`.{stub}"
    return f"{statement.rstrip()}\n\n{STDIN_NOTE}"


# --------------------------------------------------------------------------------------- layouts
def from_apps(row: dict[str, Any], number: int) -> dict[str, Any]:
    statement = _text(row, "question")
    io_spec = _json_field(row, "input_output")
    if not isinstance(io_spec, dict):
        raise RowError("input_output", 'must be {"inputs": [...], "outputs": [...]}')
    inputs, outputs, call = io_spec.get("inputs"), io_spec.get("outputs"), io_spec.get("fn_name")
    if (
        not isinstance(inputs, list)
        or not isinstance(outputs, list)
        or len(inputs) != len(outputs)
        or not inputs
    ):
        raise RowError("input_output", "`inputs` and `outputs` must be non-empty lists of equal length")
    if call:
        tests = [
            {"args": a if isinstance(a, list) else [a], "output": o}
            for a, o in zip(inputs, outputs, strict=True)
        ]
    else:
        tests = [{"input": _joined(i), "output": _joined(o)} for i, o in zip(inputs, outputs, strict=True)]
    solutions = _json_field(row, "solutions", [])
    reference = (
        solutions[0] if isinstance(solutions, list) and solutions and isinstance(solutions[0], str) else None
    )
    return {
        "id": f"apps/{row.get('problem_id', number)}",
        "prompt": _prompt(statement, call, row.get("starter_code")),
        "difficulty": DIFFICULTY.get(str(row.get("difficulty", "")).lower(), 2),
        "program": _program(tests, call=call, reference=reference, row=row),
    }


def _joined(value: Any) -> str:
    """APPS sometimes stores an input or output as a list of lines."""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value) + "\n"
    if not isinstance(value, str):
        raise RowError("input_output", f"stdin tests need text, got {type(value).__name__}")
    return value


def from_codecontests(row: dict[str, Any], number: int) -> dict[str, Any]:
    statement = _text(row, "description")
    tests: list[dict[str, Any]] = []
    for name in ("public_tests", "private_tests", "generated_tests"):
        group = _json_field(row, name, {}) or {}
        if not isinstance(group, dict):
            raise RowError(name, 'must be {"input": [...], "output": [...]}')
        inputs, outputs = group.get("input") or [], group.get("output") or []
        if len(inputs) != len(outputs):
            raise RowError(name, "`input` and `output` differ in length")
        tests += [{"input": i, "output": o} for i, o in zip(inputs, outputs, strict=True)]
    if not tests:
        raise RowError("public_tests", "no tests in public_tests, private_tests or generated_tests")
    solutions = _json_field(row, "solutions", {}) or {}
    reference = None
    if isinstance(solutions, dict):
        for language, source in zip(
            solutions.get("language") or [], solutions.get("solution") or [], strict=False
        ):
            if language == PYTHON3:
                reference = source
                break
    extra: dict[str, Any] = {}
    limit = row.get("time_limit")
    if isinstance(limit, dict) and isinstance(limit.get("seconds"), int | float):
        extra["time_limit"] = min(
            30.0, max(0.5, float(limit["seconds"]) + float(limit.get("nanos") or 0) / 1e9)
        )
    memory = row.get("memory_limit_bytes")
    if isinstance(memory, int) and memory > 0:
        extra["memory_mb"] = max(16, min(8192, memory >> 20))
    return {
        "id": f"codecontests/{row.get('name', number)}",
        "prompt": _prompt(statement, None, None),
        "difficulty": max(1, min(5, int(row.get("difficulty") or 2) // 3 + 1)),
        "program": _program(tests, call=None, reference=reference, row=row, **extra),
    }


def from_livecodebench(row: dict[str, Any], number: int) -> dict[str, Any]:
    statement = _text(row, "question_content")
    tests_raw = _decode_lcb_tests(row.get("public_test_cases", "[]"), "public_test_cases")
    tests_raw += _decode_lcb_tests(row.get("private_test_cases", "[]"), "private_test_cases")
    if not tests_raw:
        raise RowError("public_test_cases", "no test cases")
    metadata = _json_field(row, "metadata", {}) or {}
    functional = any(t.get("testtype") == "functional" for t in tests_raw if isinstance(t, dict))
    call = metadata.get("func_name") if functional and isinstance(metadata, dict) else None
    if functional and not call:
        raise RowError("metadata", 'functional tests need {"func_name": ...} in metadata')
    tests: list[dict[str, Any]] = []
    for position, test in enumerate(tests_raw):
        if (
            not isinstance(test, dict)
            or not isinstance(test.get("input"), str)
            or not isinstance(test.get("output"), str)
        ):
            raise RowError("test_cases", f"test {position}: needs text `input` and `output`")
        if call:  # functional: one JSON value per line of input, the output a JSON value
            try:
                args = [decode_json(line) for line in test["input"].splitlines() if line.strip()]
                expected = decode_json(test["output"])
            except JsonProblem as exc:
                raise RowError(
                    "test_cases", f"test {position}: functional values must be JSON ({exc})"
                ) from exc
            tests.append({"args": args, "output": expected})
        else:
            tests.append({"input": test["input"], "output": test["output"]})
    return {
        "id": f"livecodebench/{row.get('question_id', number)}",
        "prompt": _prompt(statement, call, row.get("starter_code")),
        "difficulty": DIFFICULTY.get(str(row.get("difficulty", "")).lower(), 2),
        "program": _program(tests, call=call, reference=None, row=row),
    }


def from_jsonl(row: dict[str, Any], number: int) -> dict[str, Any]:
    _text(row, "id")
    _text(row, "prompt")
    if not isinstance(row.get("program"), dict):
        raise RowError("program", "missing: an object with `tests` (see rlvr.specs.programs)")
    return {k: row[k] for k in ("id", "prompt", "difficulty", "split", "meta", "program") if k in row}


CONVERTERS = {
    "apps": from_apps,
    "codecontests": from_codecontests,
    "livecodebench": from_livecodebench,
    "jsonl": from_jsonl,
}


def import_dataset(
    source: str | Path, layout: str, out: str | Path, *, name: str | None = None, split: str = "train"
) -> tuple[int, list[Problem]]:
    """Write a directory pack (`pack.toml` + `tasks.jsonl`) from a dataset file. Returns the number
    of tasks written and the rows that could not be imported (file, row, field, message)."""
    if layout not in CONVERTERS:
        raise ValueError(f"unknown format {layout!r}; choose one of {', '.join(FORMATS)}")
    source, out = Path(source), Path(out)
    convert = CONVERTERS[layout]
    problems: list[Problem] = []
    lines: list[str] = []
    seen: set[str] = set()
    for number, row in read_rows(source):
        try:
            if isinstance(row, RowError):
                raise row
            if not isinstance(row, dict):
                raise RowError("(row)", "expected a JSON object")
            task = convert(row, number)
            task.setdefault("split", split)
            parse_spec({"program": task["program"]})
            if task["id"] in seen:
                raise RowError("id", f"duplicate task id {task['id']!r}")
        except RowError as exc:
            problems.append(Problem(str(source), number, exc.field, str(exc)))
            continue
        except ProgramSpecError as exc:
            problems.append(Problem(str(source), number, "tests", str(exc)))
            continue
        seen.add(task["id"])
        lines.append(json.dumps(task, ensure_ascii=False))
    out.mkdir(parents=True, exist_ok=True)
    pack_name = name or out.name
    (out / "pack.toml").write_text(
        f'name = {json.dumps(pack_name)}\nfamily = "code"\nversion = "1"\n'
        f"description = {json.dumps(f'imported from {source.name} ({layout} layout)')}\n",
        encoding="utf-8",
    )
    (out / "tasks.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines), problems
