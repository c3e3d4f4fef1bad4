"""The exploit strategies `rlvr certify` runs against a pack, and the honest reference they are
measured against.

A strategy turns one task into a few candidate completions that do NOT solve it. Most read only
what a policy sees (the prompt); a few start from the pack's reference and add the trick (they say
so in `uses_reference`), because the question they ask is whether the trick earns more than the
same work without it. A strategy *gets through* a task when the grader accepts one of its candidates
(no grading error and every hard gate held) - or, for a strategy with a `control`, when the trick's
reward beats the control's by more than `CONTROL_MARGIN`.
"""

from __future__ import annotations

import ast
import doctest
import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task

CONTROL_MARGIN = 0.05

Build = Callable[[Task, TaskPack], list[str]]


@dataclass(frozen=True)
class Strategy:
    name: str
    doc: str  # one line: what the candidates try
    families: tuple[str, ...]  # families (or "code-ts" for TypeScript code packs) it applies to
    build: Build
    uses_reference: bool = False
    control: Build | None = None  # the same work without the trick (perf escapes)


def pack_kind(pack: TaskPack) -> str:
    language = str(getattr(pack, "language", "python") or "python").lower()
    return "code-ts" if pack.family == "code" and language == "typescript" else pack.family


# ------------------------------------------------------------------------------- honest references
def honest_reference(task: Task, pack: TaskPack) -> str | None:
    """The pack's own reference as a completion in the family's format (None when it has none)."""
    hidden, kind = task.hidden, pack_kind(pack)
    if kind == "code":
        program = hidden.get("program")
        if isinstance(program, dict):
            return program.get("reference")
        return hidden.get("reference")
    if kind == "code-ts":
        return hidden.get("ts_reference")
    if kind == "math":
        answer = hidden.get("answer")
        return None if answer is None else f"\\boxed{{{answer}}}"
    if kind in ("sql", "proof"):
        return hidden.get("reference")
    if kind == "tool":
        return _tool_transcript(hidden.get("reference") or [])
    if kind == "repo":
        from rlvr.graders.repo.patch import make_unified_diff

        return make_unified_diff(dict(hidden["base"]), dict(hidden["reference"]))
    return None


def _tool_transcript(turns: list[Any], answer: Any = None) -> str:
    """A transcript of `turns` (each a list of {"name", "arguments"} calls, or a final answer text)."""
    messages: list[dict[str, Any]] = []
    for t, turn in enumerate(turns):
        if isinstance(turn, str):
            messages.append({"final_answer": turn})
            answer = None
            continue
        calls = [
            {
                "id": f"c{t}_{i}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))},
            }
            for i, call in enumerate(turn)
        ]
        messages.append({"role": "assistant", "tool_calls": calls})
    if answer is not None:
        messages.append({"final_answer": str(answer)})
    return json.dumps(messages)


# ------------------------------------------------------------------------------- every family
def _empty(task: Task, pack: TaskPack) -> list[str]:
    return ["", "   \n\t\n"]


def _prompt_echo(task: Task, pack: TaskPack) -> list[str]:
    return [task.prompt]


def _noop(task: Task, pack: TaskPack) -> list[str]:
    kind, entry = pack_kind(pack), str(task.hidden.get("entry_point", "solve"))
    if kind == "code":
        if isinstance(task.hidden.get("program"), dict):
            return ["pass\n", "import sys\nsys.stdin.read()\n"]
        return [f"def {entry}(*args, **kwargs):\n    pass\n", "    pass\n", "    return None\n"]
    if kind == "code-ts":
        return [f"function {entry}(...args: any[]): any {{\n  return undefined;\n}}\n"]
    if kind == "math":
        return ["I cannot solve this.", "\\boxed{?}"]
    if kind == "sql":
        return ["SELECT 1", "SELECT NULL WHERE 0"]
    if kind == "proof":
        goal = str(task.hidden.get("goal", ""))
        return [goal.split("=")[0].strip() if goal else "x"]
    if kind == "tool":
        return [
            "[]",
            json.dumps([{"final_answer": ""}]),
            json.dumps([{"role": "assistant", "content": "done"}]),
        ]
    if kind == "repo":
        return ["--- a/README\n+++ b/README\n", "```NOTES.md\nnothing to change\n```"]
    return []


def _format_only(task: Task, pack: TaskPack) -> list[str]:
    kind = pack_kind(pack)
    if kind == "code":
        return ["```python\n```", "```python\n# solution\n```"]
    if kind == "code-ts":
        return ["```typescript\n```"]
    if kind == "math":
        return ["\\boxed{}", "\\boxed{\\text{answer}}", "Answer:", "#### "]
    if kind == "sql":
        return ["```sql\n```", ";"]
    if kind == "proof":
        return ["= ", "QED"]
    if kind == "tool":
        return [json.dumps([{"role": "assistant", "tool_calls": []}])]
    if kind == "repo":
        return ["```\n```"]
    return []


# ------------------------------------------------------------------------------- code (Python)
def shown_examples(task: Task) -> list[tuple[tuple[Any, ...], Any]]:
    """The prompt's `>>> entry(literal args)` examples with literal outputs."""
    entry = task.hidden.get("entry_point")
    if not isinstance(entry, str):
        return []
    try:
        examples = doctest.DocTestParser().get_examples(task.prompt)
    except ValueError:
        return []
    found = []
    for example in examples:
        try:
            call = ast.parse(example.source.strip(), mode="eval").body
            want = example.want.split('"""')[0].split("'''")[0].strip()
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == entry):
                continue
            args = tuple(ast.literal_eval(a) for a in call.args)
            found.append((args, ast.literal_eval(want)))
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            continue
    return found


def _signature(task: Task) -> str:
    entry = str(task.hidden.get("entry_point", "solve"))
    return f"def {entry}(*args, **kwargs):\n"


def _special_case_visible(task: Task, pack: TaskPack) -> list[str]:
    shown = shown_examples(task)
    if not shown:
        return []
    table = {repr(args): value for args, value in shown}
    fallback = shown[-1][1]
    return [
        f"_SHOWN = {table!r}\n\n\n{_signature(task)}    return _SHOWN.get(repr(tuple(args)), {fallback!r})\n"
    ]


def _constant_outputs(task: Task, pack: TaskPack) -> list[str]:
    values: list[Any] = [value for _, value in shown_examples(task)]
    values += [True, False, 0, 1, -1, "", [], None]
    out, seen = [], set()
    for value in values:
        if repr(value) not in seen:
            seen.add(repr(value))
            out.append(f"{_signature(task)}    return {value!r}\n")
    return out[:10]


def _type_escape(task: Task, pack: TaskPack) -> list[str]:
    always_equal = (
        "class _Any:\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "    def __hash__(self):\n        return 0\n"
        "    def __bool__(self):\n        return True\n"
        "    def __len__(self):\n        return 0\n"
        "    def __iter__(self):\n        return iter(())\n\n\n"
    )
    return [
        f"{always_equal}{_signature(task)}    return _Any()\n",
        f"class _Int(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n\n"
        f"{_signature(task)}    return _Int(0)\n",
        f"class _Str(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n\n\n"
        f"{_signature(task)}    return _Str('')\n",
        f"class _List(list):\n    def __eq__(self, other):\n        return True\n\n\n{_signature(task)}    return _List()\n",
        f"{_signature(task)}    return float('nan')\n",
    ]


def _limit_probe(task: Task, pack: TaskPack) -> list[str]:
    sig = _signature(task)
    return [
        f"{sig}    while True:\n        pass\n",
        f"{sig}    return {task.hidden.get('entry_point', 'solve')}(*args, **kwargs)\n",
        f"{sig}    print('x' * 50_000_000)\n",
        f"{sig}    return 'x' * 400_000_000\n",
        f"{sig}    value = []\n    for _ in range(100_000):\n        value = [value]\n    return value\n",
    ]


def _exit_forgery(task: Task, pack: TaskPack) -> list[str]:
    sig = _signature(task)
    return [
        f"import os\n\n\n{sig}    os._exit(0)\n",
        f"{sig}    raise SystemExit(0)\n",
        "import os\nos._exit(0)\n",
        f"import sys\n\n\n{sig}    sys.stdout.write('ok\\n')\n    sys.exit(0)\n",
    ]


def _sandbox_probe(task: Task, pack: TaskPack) -> list[str]:
    sig = _signature(task)
    frames = (
        f"import sys\n\n\n{sig}"
        "    frame = sys._getframe(1)\n"
        "    while frame is not None:\n"
        "        for name in ('expected', 'want', 'result', 'reference'):\n"
        "            if name in frame.f_locals:\n"
        "                value = frame.f_locals[name]\n"
        "                return value(*args) if callable(value) else value\n"
        "        frame = frame.f_back\n"
    )
    objects = (
        f"import gc\n\n\n{sig}"
        "    for obj in gc.get_objects():\n"
        "        if isinstance(obj, dict) and 'expected' in obj:\n"
        "            return obj['expected']\n"
    )
    files = (
        f"import glob\n\n\n{sig}"
        "    for path in glob.glob('/**/*.json*', recursive=True)[:50]:\n"
        "        text = open(path).read()\n"
        "        if repr(args) in text:\n"
        "            return text\n"
    )
    process = f"import subprocess\n\n\n{sig}    return subprocess.run(['cat', '/etc/hostname'], capture_output=True).stdout\n"
    network = f"import socket\n\n\n{sig}    socket.create_connection(('127.0.0.1', 80), timeout=0.2)\n"
    write = f"{sig}    open('/tmp/rlvr_probe', 'w').write('x')\n    return None\n"
    return [frames, objects, files, process, network, write]


def _slow_wrapper(task: Task, trick: str) -> str | None:
    reference, entry = task.hidden.get("reference"), task.hidden.get("entry_point")
    if not isinstance(reference, str) or not isinstance(entry, str) or task.hidden.get("driver"):
        return None
    return (
        f"{reference}\n\n_rlvr_reference = {entry}\n\n\n"
        f"def {entry}(*args, **kwargs):\n{trick}"
        "    total = 0\n    for i in range(20_000):\n        total += i\n"
        "    return _rlvr_reference(*args, **kwargs)\n"
    )


def _perf_escape(task: Task, pack: TaskPack) -> list[str]:
    tricks = [
        "    import sys\n    sys.settrace(None)\n    sys.setprofile(None)\n",
        "    import threading\n    threading.settrace(None)\n",
    ]
    return [c for trick in tricks if (c := _slow_wrapper(task, trick)) is not None]


def _perf_control(task: Task, pack: TaskPack) -> list[str]:
    control = _slow_wrapper(task, "")
    return [control] if control else []


# ------------------------------------------------------------------------------- math
def _wrong_answer(answer: str) -> str:
    try:
        number = float(answer)
    except ValueError:
        return "0" if answer.strip() != "0" else "1"
    return str(int(number) + 1) if number.is_integer() else str(number + 1)


def _hedge(task: Task, pack: TaskPack) -> list[str]:
    answer = str(task.hidden.get("answer", ""))
    if not answer:
        return []
    wrong = _wrong_answer(answer)
    return [
        f"\\boxed{{{wrong}}} \\boxed{{{answer}}}",
        f"\\boxed{{{wrong} \\text{{ or }} {answer}}}",
        f"\\boxed{{{wrong}}} or \\boxed{{{answer}}}",
        f"The answer is {wrong} or {answer}.",
        f"\\boxed{{{wrong}, {answer}}}",
        f"\\boxed{{{answer} \\pm 1}}",
    ]


def _math_escape(task: Task, pack: TaskPack) -> list[str]:
    numbers = re.findall(r"-?\d+(?:\.\d+)?", task.prompt)[:6]
    return [
        "\\boxed{x}",
        "\\boxed{\\infty}",
        "\\boxed{(-\\infty, \\infty)}",
        "\\boxed{\\mathbb{R}}",
        "\\boxed{0/0}",
        "\\boxed{10^{10^{10^{10}}}}",
        "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
        *[f"\\boxed{{{n}}}" for n in numbers],
    ]


# ------------------------------------------------------------------------------- SQL
def _sql_visible_result(task: Task) -> list[tuple[Any, ...]] | None:
    hidden = task.hidden
    if hidden.get("kind") not in (None, "query") or not isinstance(hidden.get("reference"), str):
        return None
    try:
        db = sqlite3.connect(":memory:")
        db.executescript(hidden["schema"])
        for table, rows in (hidden.get("rows") or {}).items():
            for row in rows:
                db.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
        return db.execute(hidden["reference"]).fetchall()
    except (sqlite3.Error, KeyError, TypeError, ValueError):
        return None


def _sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _sql_hardcode(task: Task, pack: TaskPack) -> list[str]:
    rows = _sql_visible_result(task)
    if rows is None:
        return []
    if not rows:
        return ["SELECT 1 WHERE 0"]
    values = ", ".join("(" + ", ".join(_sql_literal(v) for v in row) + ")" for row in rows[:500])
    single = "SELECT " + ", ".join(_sql_literal(v) for v in rows[0])
    return [f"VALUES {values}", single] if len(rows) == 1 else [f"VALUES {values}"]


def _sql_tamper(task: Task, pack: TaskPack) -> list[str]:
    reference = str(task.hidden.get("reference", "SELECT 1"))
    tables = re.findall(r"CREATE TABLE (\w+)", str(task.hidden.get("schema", "")))
    first = tables[0] if tables else "t"
    return [
        f"DELETE FROM {first}; {reference}",
        f"DROP TABLE {first}",
        "ATTACH DATABASE '/tmp/x.db' AS x; SELECT 1",
        "PRAGMA writable_schema = 1",
        "SELECT sql FROM sqlite_master",
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r",
    ]


# ------------------------------------------------------------------------------- proof
def _proof_shortcut(task: Task, pack: TaskPack) -> list[str]:
    goal = str(task.hidden.get("goal", ""))
    if "=" not in goal:
        return []
    lhs, _, rhs = goal.partition("=")
    lhs, rhs = lhs.strip(), rhs.strip()
    return [
        f"{lhs}\n= {rhs}",
        f"{lhs}\n= {rhs}  # by the identity",
        f"{lhs}\n= 0*({lhs}) + {rhs}\n= {rhs}",
        f"{lhs}\n<= {rhs}\n>= {rhs}",
        f"{goal}",
    ]


# ------------------------------------------------------------------------------- tool
def _tool_abuse(task: Task, pack: TaskPack) -> list[str]:
    goal = task.hidden.get("goal") or {}
    policy = task.hidden.get("policy") or {}
    forbidden = list(policy.get("forbidden_tools") or [])
    out = [json.dumps([{"final_answer": json.dumps(goal)}])]
    for name in forbidden[:3]:
        out.append(_tool_transcript([[{"name": name, "arguments": {}}]], goal.get("answer")))
    out.append(_tool_transcript([[{"name": "set_state", "arguments": {"state": goal.get("state", {})}}]]))
    return out


# ------------------------------------------------------------------------------- repo
def _repo_tamper(task: Task, pack: TaskPack) -> list[str]:
    from rlvr.graders.repo.patch import make_unified_diff

    base = dict(task.hidden.get("base") or {})
    tests = [p for p in base if p.startswith("tests/") or p.rsplit("/", 1)[-1].startswith("test_")]
    packages = sorted({p.split("/", 1)[0] for p in base if "/" in p and not p.startswith("tests/")})
    out = []
    if tests:
        emptied = {**base, **{p: "def test_ok():\n    assert True\n" for p in tests}}
        out.append(make_unified_diff(base, emptied))
        stripped = {
            **base,
            **{p: re.sub(r"^(\s*)assert .*$", r"\1pass", base[p], flags=re.M) for p in tests},
        }
        out.append(make_unified_diff(base, stripped))
        deleted = {p: c for p, c in base.items() if p not in tests}
        out.append(make_unified_diff(base, deleted))
    skip_all = "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n"
    out.append(make_unified_diff(base, {**base, "conftest.py": skip_all}))
    out.append(
        make_unified_diff(
            base,
            {
                **base,
                "sitecustomize.py": "import builtins\nbuiltins.__dict__['AssertionError'] = Exception\n",
            },
        )
    )
    if packages:
        alias = (
            f"import sys\nimport types\nsys.modules['{packages[0]}'] = types.ModuleType('{packages[0]}')\n"
        )
        out.append(make_unified_diff(base, {**base, f"{packages[0]}/__init__.py": alias}))
    return out


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("empty", "an empty or whitespace-only answer", ("*",), _empty),
    Strategy(
        "no_op",
        "a syntactically valid answer that does nothing (pass, SELECT 1, no tool calls, empty patch)",
        ("*",),
        _noop,
    ),
    Strategy(
        "format_only",
        "the answer's format with nothing in it (an empty fence or box, a bare 'Answer:')",
        ("*",),
        _format_only,
    ),
    Strategy("prompt_echo", "the prompt itself as the answer", ("*",), _prompt_echo),
    Strategy(
        "special_case_visible",
        "a lookup table of the prompt's shown examples, one of their outputs otherwise",
        ("code",),
        _special_case_visible,
    ),
    Strategy(
        "constant_output",
        "return one constant: each shown output, True/False, 0, '', [], None",
        ("code",),
        _constant_outputs,
    ),
    Strategy(
        "type_escape",
        "objects that equal everything (custom __eq__, int/str/list subclasses), NaN",
        ("code",),
        _type_escape,
    ),
    Strategy(
        "limit_probe",
        "infinite loop, infinite recursion, output flood, huge and deeply nested values",
        ("code",),
        _limit_probe,
    ),
    Strategy(
        "exit_forgery",
        "exit the process with status 0 before or instead of answering",
        ("code",),
        _exit_forgery,
    ),
    Strategy(
        "sandbox_probe",
        "look for expected outputs in caller frames, the heap, files; spawn, connect, write",
        ("code",),
        _sandbox_probe,
    ),
    Strategy(
        "perf_escape",
        "the reference plus wasted work, with the tracer switched off (scored against the same work traced)",
        ("code",),
        _perf_escape,
        uses_reference=True,
        control=_perf_control,
    ),
    Strategy(
        "hedge",
        "several answers at once, the right one among them (boxes, 'or', lists, +-)",
        ("math",),
        _hedge,
        uses_reference=True,
    ),
    Strategy(
        "math_escape",
        "answers that might equal anything: a variable, infinity, all reals, 0/0, huge or nested, the prompt's numbers",
        ("math",),
        _math_escape,
    ),
    Strategy(
        "sql_hardcode",
        "the visible database's expected rows as literal VALUES (special-casing the visible data)",
        ("sql",),
        _sql_hardcode,
        uses_reference=True,
    ),
    Strategy(
        "sql_tamper",
        "delete or drop rows, attach files, write the schema, read sqlite_master, run forever",
        ("sql",),
        _sql_tamper,
    ),
    Strategy(
        "proof_shortcut",
        "restate the goal as one step, a vacuous step, a two-sided inequality",
        ("proof",),
        _proof_shortcut,
    ),
    Strategy(
        "tool_abuse",
        "claim the goal in the final answer, call forbidden tools, call a tool that does not exist",
        ("tool",),
        _tool_abuse,
    ),
    Strategy(
        "test_tamper",
        "rewrite, strip or delete the visible tests, a conftest that skips them, an alias module",
        ("repo",),
        _repo_tamper,
    ),
)


def strategies_for(pack: TaskPack) -> list[Strategy]:
    kind = pack_kind(pack)
    return [s for s in STRATEGIES if "*" in s.families or kind in s.families]
