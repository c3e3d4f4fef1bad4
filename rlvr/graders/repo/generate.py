"""Making repository tasks from reference repositories, validated in the sandbox.

Kinds (SWE-smith style): `bug` — one source-level mutation (a flipped comparison, a swapped operator,
an off-by-one constant, `and`/`or`, a dropped `not`, `min`/`max`) injected into a package module;
`bug2` — two such bugs in different modules; `feature` — a public function or method whose body is
replaced by `raise NotImplementedError`, to be written back from its docstring; `rename` — an API
migration across modules whose tests already use the new name; `migration` — a sqlite schema change
given in the spec. A candidate task is kept only if its base state is observably wrong: at least two
hidden scenarios (one for renames and migrations) differ from the reference state when both run in the
sandbox. The issue text states a symptom (one differing call: what it gave, what was expected), never
the fix.

Used by scripts/make_repo_tasks.py to write the built-in pack's tasks.jsonl.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rlvr.graders.repo.runner import run_ops, same_value
from rlvr.sandbox import WorkerPool

MAX_BUGS_PER_REPO = 28
MAX_DOUBLE_BUGS_PER_REPO = 8
SWAPS = {
    ast.Lt: "<=",
    ast.LtE: "<",
    ast.Gt: ">=",
    ast.GtE: ">",
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Add: "-",
    ast.Sub: "+",
    ast.Mult: "//",
    ast.FloorDiv: "*",
    ast.Div: "*",
    ast.Mod: "//",
}
OPERATOR_TEXT = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Div: "/",
    ast.Mod: "%",
}


@dataclass
class Mutation:
    path: str
    line: int
    start: int  # character offsets into the file's text
    end: int
    replacement: str
    description: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


@dataclass
class TaskDraft:
    id: str
    repo: str
    kind: str
    issue: str
    difficulty: int
    split: str
    scenarios: list[dict[str, Any]]
    base_edits: dict[str, str | None] = field(default_factory=dict)
    reference_edits: dict[str, str | None] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    domains: list[dict[str, Any]] = field(default_factory=list)
    perf: list[dict[str, Any]] = field(default_factory=list)

    def to_line(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"domains": self.domains} if self.domains else {}
        if self.perf:
            extra["perf"] = self.perf
        return extra | {
            "id": self.id,
            "prompt": self.issue,
            "repo": self.repo,
            "base_edits": self.base_edits,
            "reference_edits": self.reference_edits,
            "scenarios": self.scenarios,
            "protected": [],
            "difficulty": self.difficulty,
            "split": self.split,
            "meta": {"kind": self.kind},
            "notes": self.meta,
        }


def _offsets(text: str) -> list[int]:
    starts, total = [0], 0
    for line in text.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def _gap(text: str, starts: list[int], left: ast.AST, right: ast.AST, token: str) -> tuple[int, int] | None:
    """Character span of `token` between two nodes on the same line, if it is there exactly once."""
    if left.end_lineno != right.lineno or left.end_col_offset is None:  # type: ignore[attr-defined]
        return None
    line_text = text[starts[right.lineno - 1] : starts[right.lineno]]  # type: ignore[attr-defined]
    encoded = line_text.encode()
    gap = encoded[left.end_col_offset : right.col_offset].decode()  # type: ignore[attr-defined]
    if gap.count(token) != 1:
        return None
    base = starts[right.lineno - 1] + len(encoded[: left.end_col_offset].decode())  # type: ignore[attr-defined]
    position = gap.index(token)
    return base + position, base + position + len(token)


def find_mutations(path: str, text: str) -> Iterator[Mutation]:
    """Every single-site mutation of one module, in source order."""
    tree = ast.parse(text)
    starts = _offsets(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAPS:
            token = OPERATOR_TEXT[type(node.ops[0])]
            span = _gap(text, starts, node.left, node.comparators[0], token)
            if span:
                new = SWAPS[type(node.ops[0])]
                yield Mutation(path, node.lineno, *span, new, f"`{token}` -> `{new}`")
        elif isinstance(node, ast.BinOp) and type(node.op) in SWAPS:
            token = OPERATOR_TEXT[type(node.op)]
            span = _gap(text, starts, node.left, node.right, token)
            if span:
                new = SWAPS[type(node.op)]
                yield Mutation(path, node.lineno, *span, new, f"`{token}` -> `{new}`")
        elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
            token = "and" if isinstance(node.op, ast.And) else "or"
            span = _gap(text, starts, node.values[0], node.values[1], token)
            if span:
                new = "or" if token == "and" else "and"
                yield Mutation(path, node.lineno, *span, new, f"`{token}` -> `{new}`")
        elif (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.Not)
            and node.lineno == node.operand.lineno
        ):
            start = starts[node.lineno - 1] + node.col_offset
            end = starts[node.operand.lineno - 1] + node.operand.col_offset
            if text[start:end].strip() == "not":
                yield Mutation(path, node.lineno, start, end, "", "dropped `not`")
        elif (
            isinstance(node, ast.Constant)
            and type(node.value) is int
            and id(node) not in docstrings
            and node.end_lineno == node.lineno
        ):
            start = starts[node.lineno - 1] + node.col_offset
            end = starts[node.lineno - 1] + (node.end_col_offset or node.col_offset)
            if text[start:end] == str(node.value):
                yield Mutation(
                    path, node.lineno, start, end, str(node.value + 1), f"{node.value} -> {node.value + 1}"
                )
        elif isinstance(node, ast.Name) and node.id in ("min", "max") and isinstance(node.ctx, ast.Load):
            start = starts[node.lineno - 1] + node.col_offset
            new = "max" if node.id == "min" else "min"
            yield Mutation(path, node.lineno, start, start + 3, new, f"`{node.id}` -> `{new}`")


def package_modules(files: dict[str, str], package: str) -> list[str]:
    return sorted(
        p
        for p in files
        if p.startswith(package + "/") and p.endswith(".py") and not p.endswith("__init__.py")
    )


# ---------------------------------------------------------------------------------- symptoms
def _call_text(target: str, args: list[Any]) -> str:
    module, _, name = target.partition(":")
    shown = ", ".join(repr(a) for a in args)
    if len(shown) > 160:
        shown = shown[:157] + "..."
    return f"`{module}.{name}({shown})`"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 240 else text[:237] + "..."


def symptom(scenario: dict[str, Any], got: Any, want: Any) -> str:
    """One sentence saying what a call did and what was expected (the issue's reproduction)."""
    kind = scenario["kind"]
    if kind == "call":
        return (
            f"Calling {_call_text(scenario['target'], scenario.get('args', []))} gives {_describe(got)}; "
            f"expected {_describe(want)}."
        )
    if kind == "cli":
        return (
            f"Running the command line `{scenario['target']}` with arguments {scenario['argv']!r} "
            f"prints {_shown(got.get('stdout'))} and exits with {got.get('exit')!r}; expected output "
            f"{_shown(want.get('stdout'))} and exit status {want.get('exit')!r}."
        )
    if kind == "object":
        steps = scenario.get("steps", [])
        got_steps, want_steps = got.get("steps", []), want.get("steps", [])
        if "init" in got or "init" in want:
            return (
                f"Creating {_call_text(scenario['target'], scenario.get('args', []))} gives "
                f"{_describe(got.get('init', 'an object'))}; expected {_describe(want.get('init', 'an object'))}."
            )
        for index, (step, mine, theirs) in enumerate(zip(steps, got_steps, want_steps, strict=False)):
            if not same_value(theirs, mine):
                calls = "; ".join(
                    f"{m}({', '.join(repr(a) for a in args)})" for m, args in steps[: index + 1]
                )
                return (
                    f"On {_call_text(scenario['target'], scenario.get('args', []))}, the sequence `{calls}` "
                    f"ends with {step[0]} giving {_describe(mine)}; expected {_describe(theirs)}."
                )
    if kind == "sqlite":
        return (
            f"After `{scenario['target']}` runs on a database, the schema/rows differ from what the "
            f"migration should produce: got {_shown(got)}, expected {_shown(want)}."
        )
    return f"{kind} check on {scenario.get('target')} misbehaves."


def _describe(outcome: Any) -> str:
    if isinstance(outcome, dict) and "raises" in outcome:
        name = str(outcome["raises"])
        return f"{'an' if name[:1] in 'AEIOU' else 'a'} {name} exception"
    if isinstance(outcome, dict) and "value" in outcome:
        return f"`{_shown(outcome['value'])}`"
    return f"`{_shown(outcome)}`"


# ---------------------------------------------------------------------------------- validation
class Validator:
    """Runs scenarios in the sandbox and says which differ from the reference repository's."""

    def __init__(self, sandbox: WorkerPool, files: dict[str, str], scenarios: list[dict[str, Any]]) -> None:
        self.sandbox, self.files, self.scenarios = sandbox, files, scenarios
        self.reference = self.outcomes(files, scenarios)
        if any(value is None for value in self.reference):
            raise RuntimeError("a scenario fails on the reference repository itself")

    def outcomes(self, files: dict[str, str], scenarios: list[dict[str, Any]]) -> list[Any]:
        result = run_ops(self.sandbox, files, [("scenario", s) for s in scenarios], timeout=10.0)
        return [o.value if o is not None and o.ok else None for o in result.outcomes[1:]]

    def differing(
        self,
        base: dict[str, str],
        scenarios: list[dict[str, Any]] | None = None,
        reference: list[Any] | None = None,
    ) -> list[tuple[int, Any, Any]]:
        scenarios = scenarios if scenarios is not None else self.scenarios
        expected = reference if reference is not None else self.reference
        got = self.outcomes(base, scenarios)
        return [
            (i, g, w)
            for i, (g, w) in enumerate(zip(got, expected, strict=True))
            if g is None or not same_value(w, g)
        ]


def _bug_issue(scenario: dict[str, Any], got: Any, want: Any) -> str:
    reproduction = symptom(scenario, got if got is not None else {"raises": "a timeout or crash"}, want)
    return (
        "Bug report: something is wrong in this repository.\n\n"
        f"Reproduction: {reproduction}\n\n"
        "Find the cause and fix it in the package. Do not edit the tests."
    )


def bug_tasks(
    name: str, spec: dict[str, Any], files: dict[str, str], validator: Validator
) -> list[TaskDraft]:
    rng = random.Random(f"bugs:{name}")
    candidates = [
        m for path in package_modules(files, spec["package"]) for m in find_mutations(path, files[path])
    ]
    rng.shuffle(candidates)
    kept: list[tuple[Mutation, list[tuple[int, Any, Any]]]] = []
    for mutation in candidates:
        if len(kept) >= MAX_BUGS_PER_REPO:
            break
        mutated = mutation.apply(files[mutation.path])
        try:
            compile(mutated, mutation.path, "exec")
        except SyntaxError:
            continue
        differing = validator.differing({**files, mutation.path: mutated})
        if len(differing) >= 2:
            kept.append((mutation, differing))
    drafts: list[TaskDraft] = []
    for number, (mutation, differing) in enumerate(kept, start=1):
        index, got, want = differing[0]
        scenario = validator.scenarios[index]
        target_module = str(scenario["target"]).partition(":")[0].replace(".", "/") + ".py"
        drafts.append(
            TaskDraft(
                id=f"{name}-bug-{number:03d}",
                repo=name,
                kind="bug",
                issue=_bug_issue(scenario, got, want),
                difficulty=1 if target_module == mutation.path else 2,
                split=spec["split"],
                scenarios=validator.scenarios,
                base_edits={mutation.path: mutation.apply(files[mutation.path])},
                meta={
                    "injected": f"{mutation.path}:{mutation.line}: {mutation.description}",
                    "observable_by": len(differing),
                },
            )
        )
    pairs = [(a, b) for i, (a, _) in enumerate(kept) for (b, _) in kept[i + 1 :] if a.path != b.path]
    rng.shuffle(pairs)
    number = 0
    for first, second in pairs:
        if number >= MAX_DOUBLE_BUGS_PER_REPO:
            break
        base = {
            **files,
            first.path: first.apply(files[first.path]),
            second.path: second.apply(files[second.path]),
        }
        differing = validator.differing(base)
        alone = {i for i, _, _ in validator.differing({**files, first.path: first.apply(files[first.path])})}
        rest = [d for d in differing if d[0] not in alone]
        if len(differing) < 3 or not rest:
            continue
        number += 1
        one, two = differing[0], rest[0]
        issue = (
            "Bug report: two problems were reported against this repository.\n\n"
            f"1. {symptom(validator.scenarios[one[0]], one[1] if one[1] is not None else {'raises': 'a timeout'}, one[2])}\n"
            f"2. {symptom(validator.scenarios[two[0]], two[1] if two[1] is not None else {'raises': 'a timeout'}, two[2])}\n\n"
            "Find the causes and fix them in the package. Do not edit the tests."
        )
        drafts.append(
            TaskDraft(
                id=f"{name}-bug2-{number:03d}",
                repo=name,
                kind="bug2",
                issue=issue,
                difficulty=4,
                split=spec["split"],
                scenarios=validator.scenarios,
                base_edits={first.path: base[first.path], second.path: base[second.path]},
                meta={
                    "injected": [f"{m.path}:{m.line}: {m.description}" for m in (first, second)],
                    "observable_by": len(differing),
                },
            )
        )
    return drafts


def _stub_body(text: str, function: ast.FunctionDef) -> str | None:
    """`text` with the function's body (after its docstring) replaced by raise NotImplementedError."""
    body = function.body
    if (
        not body
        or not isinstance(body[0], ast.Expr)
        or not isinstance(getattr(body[0], "value", None), ast.Constant)
    ):
        return None
    if len(body) < 2:
        return None
    lines = text.splitlines(keepends=True)
    first, last = body[1].lineno, body[-1].end_lineno or body[-1].lineno
    indent = " " * body[1].col_offset
    stub = f'{indent}raise NotImplementedError("{function.name} is not implemented yet")\n'
    return "".join(lines[: first - 1]) + stub + "".join(lines[last:])


def feature_tasks(
    name: str, spec: dict[str, Any], files: dict[str, str], validator: Validator
) -> list[TaskDraft]:
    drafts: list[TaskDraft] = []
    for path in package_modules(files, spec["package"]):
        tree = ast.parse(files[path])
        owners: list[tuple[str, ast.FunctionDef]] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                owners.append((node.name, node))
            elif isinstance(node, ast.ClassDef):
                owners += [
                    (f"{node.name}.{item.name}", item)
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
                ]
        for qualified, function in owners:
            stubbed = _stub_body(files[path], function)
            if stubbed is None:
                continue
            differing = validator.differing({**files, path: stubbed})
            if len(differing) < 2:
                continue
            module = path[:-3].replace("/", ".")
            docstring = ast.get_docstring(function) or ""
            issue = (
                f"Feature request: `{module}.{qualified}` was stubbed out during a refactor and now raises "
                f"NotImplementedError. Implement it again so that it does what its docstring says:\n\n"
                f"    {docstring}\n\n"
                "Keep its signature; other modules rely on it. Do not edit the tests."
            )
            drafts.append(
                TaskDraft(
                    id=f"{name}-feature-{qualified.lower().replace('.', '-')}",
                    repo=name,
                    kind="feature",
                    issue=issue,
                    difficulty=3,
                    split=spec["split"],
                    scenarios=validator.scenarios,
                    base_edits={path: stubbed},
                    meta={"removed": f"{path}: {qualified}", "observable_by": len(differing)},
                )
            )
    return drafts


def _renamed_scenario(scenario: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    out = json.loads(json.dumps(scenario))
    module, _, attribute = out["target"].partition(":")
    out["target"] = module + ":" + re.sub(rf"\b{re.escape(old)}\b", new, attribute)
    if out.get("steps"):
        out["steps"] = [[new if method == old else method, args] for method, args in out["steps"]]
    return out


def task_domains(spec: dict[str, Any], draft: TaskDraft) -> list[dict[str, Any]]:
    """The spec's declared input domains for one task (a rename task's targets use the new name)."""
    domains = json.loads(json.dumps(spec.get("domains") or []))
    if draft.kind == "rename":
        old, new = draft.meta["rename"]
        for domain in domains:
            module, _, attribute = domain["target"].partition(":")
            domain["target"] = module + ":" + re.sub(rf"\b{re.escape(old)}\b", new, attribute)
    return domains


def task_perf(spec: dict[str, Any], draft: TaskDraft) -> list[dict[str, Any]]:
    """The spec's perf scenarios declared for this task (`"perf": [{"tasks": [id, ...], "scenario":
    {...}}]`; the scenario in its compact `$repeat` form, see rlvr/specs/repo_perf.py)."""
    return [
        json.loads(json.dumps(entry["scenario"]))
        for entry in spec.get("perf") or []
        if draft.id in entry.get("tasks", [])
    ]


def rename_tasks(
    name: str, spec: dict[str, Any], files: dict[str, str], validator: Validator
) -> list[TaskDraft]:
    drafts: list[TaskDraft] = []
    for rename in spec.get("renames", []):
        old, new = rename["old"], rename["new"]
        word = re.compile(rf"\b{re.escape(old)}\b")
        renamed = {
            path: word.sub(new, text)
            for path, text in files.items()
            if path.endswith(".py") and word.search(text)
        }
        tests = {path: text for path, text in renamed.items() if path.startswith("tests/")}
        reference = {**files, **renamed}
        scenarios = [_renamed_scenario(s, old, new) for s in validator.scenarios]
        expected = validator.outcomes(reference, scenarios)
        if any(value is None for value in expected):
            raise RuntimeError(f"rename {old}->{new} in {name} breaks the reference")
        differing = validator.differing({**files, **tests}, scenarios, expected)
        if not differing:
            continue
        modules = sorted(p for p in renamed if not p.startswith("tests/"))
        issue = (
            f"API migration: {rename['why']}. Rename it everywhere in the package — its definition, every "
            f"module that uses it, and the package's public API — with no alias left under the old name. "
            "The tests were already migrated to the new name. Do not edit the tests."
        )
        drafts.append(
            TaskDraft(
                id=f"{name}-rename-{old}",
                repo=name,
                kind="rename",
                issue=issue,
                difficulty=2 if len(modules) <= 2 else 3,
                split=spec["split"],
                scenarios=scenarios,
                base_edits=dict(tests),
                reference_edits=dict(renamed),
                meta={"rename": [old, new], "modules": len(modules)},
            )
        )
    return drafts


def migration_tasks(
    name: str, spec: dict[str, Any], files: dict[str, str], validator: Validator
) -> list[TaskDraft]:
    drafts: list[TaskDraft] = []
    for migration in spec.get("migrations", []):
        edits: dict[str, str | None] = {}
        for path, edit in migration["edits"].items():
            old, new = edit["replace"]
            if files[path].count(old) != 1:
                raise RuntimeError(
                    f"migration {migration['id']}: the text to replace is not unique in {path}"
                )
            edits[path] = files[path].replace(old, new)
        reference = {**files, **{p: t for p, t in edits.items() if t is not None}}
        scenarios = migration["scenarios"]
        expected = validator.outcomes(reference, scenarios)
        if any(value is None for value in expected):
            raise RuntimeError(f"migration {migration['id']} fails its own scenarios")
        if not validator.differing(files, scenarios, expected):
            raise RuntimeError(f"migration {migration['id']} is not observable")
        drafts.append(
            TaskDraft(
                id=migration["id"],
                repo=name,
                kind="migration",
                issue=migration["issue"] + " Do not edit the tests.",
                difficulty=int(migration.get("difficulty", 3)),
                split=spec["split"],
                scenarios=scenarios,
                reference_edits=edits,
            )
        )
    return drafts
