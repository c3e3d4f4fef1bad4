"""Agent mode: one episode on a repository, driven by OpenAI-style tool calls.

The workspace is an in-memory copy of the task's base state, fresh per episode and dropped with it.
Reading, searching (plain text), writing, editing and patching happen on that dict in the trusted
process; anything that runs the agent's code — `run_tests`, `run_python`, and regex `search` (a
hostile pattern can only stall a sandbox child) — runs in a fresh sandbox child that gets a copy of
the files as plain data. Hidden checks run only at `submit`, never while agent code can see them.

Budgets: turns, tokens (estimated as characters / 4 of the agent's actions), sandbox seconds spent by
tools, and `run_tests` calls. A malformed turn gets an error observation and counts as a turn. When a
budget runs out the episode ends and the current state is graded, flagged `budget:<name>`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlvr.core.types import Task, Verdict
from rlvr.graders.repo.patch import PatchError, apply_unified_diff
from rlvr.graders.repo.workspace import MAX_FILE_CHARS, Workspace, WorkspaceError, check_path
from rlvr.graders.tool.calls import MAX_NESTING, ToolCall, nesting_depth, parse_turn

CHARS_PER_TOKEN = 4
TOOL_NAMES = (
    "list_files",
    "read_file",
    "search",
    "write_file",
    "edit",
    "apply_patch",
    "delete_file",
    "run_tests",
    "run_python",
    "submit",
)


@dataclass(frozen=True)
class Budgets:
    """Limits of one agent-mode episode."""

    max_turns: int = 40
    max_tokens: int = 60_000
    tool_seconds: float = 120.0
    max_test_runs: int = 15
    output_chars: int = 4_000
    max_search_hits: int = 100


def _string(arguments: dict[str, Any], name: str, default: str | None = None) -> str:
    value = arguments.get(name, default)
    if not isinstance(value, str):
        raise WorkspaceError(f"argument {name!r} must be a string")
    return value


def _integer(arguments: dict[str, Any], name: str, default: int) -> int:
    value = arguments.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise WorkspaceError(f"argument {name!r} must be an integer")
    return value


def _turn_chars(turn: Any) -> int:
    """The characters a turn is charged for: its text, or the JSON text of a turn given as data (one
    too deep to print is refused by `parse_turn` and charged what is countable without recursion)."""
    if isinstance(turn, str):
        return len(turn)
    if nesting_depth(turn) > MAX_NESTING:
        return MAX_NESTING
    try:
        return len(json.dumps(turn, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return 0


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [truncated {len(text) - limit} characters]"


@dataclass
class RepoEpisode:
    """`act(text)` takes one assistant turn and returns the observation; `done` says it is over and
    `verdict` holds the grade. `run` runs sandbox operations (see RepoGrader.run); `grade` grades a
    final state (RepoGrader.grade_state)."""

    task: Task
    run: Callable[..., Any]
    grade: Callable[[Task, dict[str, str]], Verdict]
    budgets: Budgets = field(default_factory=Budgets)
    workspace: Workspace = field(init=False)
    turns: int = 0
    tokens: int = 0
    tool_seconds: float = 0.0
    test_runs: int = 0
    done: bool = False
    verdict: Verdict | None = None
    exhausted: str | None = None

    def __post_init__(self) -> None:
        self.workspace = Workspace.fresh(self.task.hidden["base"])

    # ------------------------------------------------------------------ turns
    def act(self, text: Any) -> str:
        """One turn: its text, or the same turn as JSON data (an assistant message or a list of calls),
        which costs the tokens of its JSON text."""
        if self.done:
            return json.dumps({"error": "the episode is over"})
        self.turns += 1
        turn = parse_turn(text)
        self.tokens += (_turn_chars(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
        if turn.error is not None:
            observation = json.dumps({"error": turn.error + "; call one of: " + ", ".join(TOOL_NAMES)})
        elif turn.final_answer is not None:
            observation = json.dumps(
                {"error": "no tool call found: call `submit` to finish, or another tool"}
            )
        else:
            results = []
            for call in turn.calls:
                results.append(self._call(call))
                # budgets are spent per call: a turn of many sandboxed calls stops at the one that
                # runs out, its later calls are answered with an error, never run
                if not self.done and self.tool_seconds >= self.budgets.tool_seconds:
                    self._check_budgets()
            observation = json.dumps(results)
        if not self.done:
            self._check_budgets()
        return observation

    def _check_budgets(self) -> None:
        b = self.budgets
        for name, over in (
            ("turns", self.turns >= b.max_turns),
            ("tokens", self.tokens >= b.max_tokens),
            ("tool_seconds", self.tool_seconds >= b.tool_seconds),
        ):
            if over:
                self.exhausted = name
                self._finish()
                if self.verdict is not None:
                    self.verdict.flags = sorted({*self.verdict.flags, f"budget:{name}"})
                return

    def _finish(self) -> None:
        self.done = True
        self.verdict = self.grade(self.task, dict(self.workspace.files))

    def _call(self, call: ToolCall) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "tool", "tool_call_id": call.id, "name": call.name}
        if self.done:
            why = f"its {self.exhausted} budget ran out" if self.exhausted else "submitted"
            return message | {"content": f"error: the episode ended ({why}) before this call"}
        handler = getattr(self, "tool_" + call.name, None) if call.name in TOOL_NAMES else None
        if handler is None:
            return message | {
                "content": f"error: unknown tool {call.name[:60]!r}; tools: {', '.join(TOOL_NAMES)}"
            }
        unknown = sorted(set(call.arguments) - set(TOOL_ARGUMENTS[call.name]))
        if unknown:
            return message | {"content": _unknown_arguments(call.name, unknown)}
        try:
            content = handler(call.arguments)
        except (WorkspaceError, PatchError) as exc:
            content = f"error: {exc}"
        return message | {"content": _truncate(content, self.budgets.output_chars)}

    # ------------------------------------------------------------------ tools on the workspace
    def tool_list_files(self, arguments: dict[str, Any]) -> str:
        prefix = _string(arguments, "path", "")
        if prefix:
            prefix = check_path(prefix).rstrip("/")
        names = [
            n for n in sorted(self.workspace.files) if not prefix or n == prefix or n.startswith(prefix + "/")
        ]
        return "\n".join(names) if names else f"no files under {prefix!r}"

    def tool_read_file(self, arguments: dict[str, Any]) -> str:
        text = self.workspace.read(arguments.get("path"))
        lines = text.splitlines()
        start = max(1, _integer(arguments, "start", 1))
        end = min(len(lines), _integer(arguments, "end", len(lines)))
        if start > max(1, len(lines)):
            raise WorkspaceError(f"start {start} is past the end ({len(lines)} lines)")
        return "\n".join(f"{n:>4}| {lines[n - 1]}" for n in range(start, end + 1))

    def tool_search(self, arguments: dict[str, Any]) -> str:
        pattern = _string(arguments, "pattern")
        if not pattern or len(pattern) > 500:
            raise WorkspaceError("pattern must be 1 to 500 characters")
        prefix = _string(arguments, "path", "")
        limit = self.budgets.max_search_hits
        if arguments.get("regex") is True:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise WorkspaceError(f"invalid regex: {exc}") from None
            result = self._sandboxed("search", {"pattern": pattern, "path": prefix, "max": limit})
            if isinstance(result, str):
                return result
            if not _is_hits(result):
                return _malformed("search")
            hits = result
        else:
            hits = []
            for path in sorted(self.workspace.files):
                if not path.startswith(prefix):
                    continue
                for number, line in enumerate(self.workspace.files[path].splitlines(), start=1):
                    if pattern in line:
                        hits.append([path, number, line[:200]])
                if len(hits) >= limit:
                    break
        if not hits:
            return "no matches"
        return "\n".join(f"{path}:{number}: {line}" for path, number, line in hits[:limit])

    def tool_write_file(self, arguments: dict[str, Any]) -> str:
        name = self.workspace.write(arguments.get("path"), arguments.get("content"))
        return f"wrote {name} ({len(self.workspace.files[name].splitlines())} lines)"

    def tool_edit(self, arguments: dict[str, Any]) -> str:
        path = arguments.get("path")
        text = self.workspace.read(path)
        old, new = _string(arguments, "old"), _string(arguments, "new")
        if not old:
            raise WorkspaceError("`old` must be non-empty (use write_file to create a file)")
        count = text.count(old)
        replace_all = arguments.get("replace_all") is True
        if count == 0:
            raise WorkspaceError(
                "`old` was not found in the file (it must match exactly, whitespace included)"
            )
        if count > 1 and not replace_all:
            raise WorkspaceError(f"`old` occurs {count} times; give more context or set replace_all")
        size = len(text) + (count if replace_all else 1) * (len(new) - len(old))
        if size > MAX_FILE_CHARS:  # refused before the text is built: it could be gigabytes
            raise WorkspaceError(f"the edited file would be {size} characters; the limit is {MAX_FILE_CHARS}")
        name = self.workspace.write(
            path, text.replace(old, new) if replace_all else text.replace(old, new, 1)
        )
        return f"edited {name}: {count if replace_all else 1} replacement(s)"

    def tool_apply_patch(self, arguments: dict[str, Any]) -> str:
        touched = apply_unified_diff(self.workspace, _string(arguments, "patch"))
        return "patched " + ", ".join(touched)

    def tool_delete_file(self, arguments: dict[str, Any]) -> str:
        return "deleted " + self.workspace.delete(arguments.get("path"))

    # ------------------------------------------------------------------ tools that run code
    def _sandboxed(self, op: str, arg: dict[str, Any]) -> Any:
        """The operation's result, or an error string for the agent (timeouts, crashes)."""
        result = self.run(dict(self.workspace.files), [(op, arg)])
        self.tool_seconds += result.wall
        if result.sandbox_error:
            return f"error: the sandbox failed ({result.detail[:200]}); try again"
        outcome = result.outcomes[1] if len(result.outcomes) > 1 else None
        if result.status != "ok" or outcome is None:
            return f"error: {op} ended with {result.status} (an infinite loop, a crash or too much output?)"
        if not outcome.ok:
            return f"error: {op} failed: {outcome.exception}"
        return outcome.value

    def tool_run_tests(self, arguments: dict[str, Any]) -> str:
        if self.test_runs >= self.budgets.max_test_runs:
            raise WorkspaceError(f"run_tests budget used up ({self.budgets.max_test_runs} runs)")
        selector = arguments.get("selector")
        if selector is not None and (not isinstance(selector, str) or not 0 < len(selector) <= 500):
            raise WorkspaceError(
                "`selector` must be a test file, a directory or a test id such as tests/test_x.py::test_y"
            )
        self.test_runs += 1
        result = self._sandboxed("tests", {"selector": selector})
        if isinstance(result, str):
            return result
        if not _has_fields(result, {"passed": int, "failed": int, "lines": list}) or not all(
            isinstance(line, str) for line in result["lines"]
        ):
            return _malformed("run_tests")
        lines = [line for line in result["lines"] if "PASSED" not in line] or ["(no failures)"]
        summary = f"{result['passed']} passed, {result['failed']} failed"
        return summary + "\n" + "\n".join(lines)

    def tool_run_python(self, arguments: dict[str, Any]) -> str:
        code = _string(arguments, "code")
        if len(code) > 50_000:
            raise WorkspaceError("code longer than 50,000 characters")
        result = self._sandboxed("python", {"code": code})
        if isinstance(result, str):
            return result
        if not _has_fields(result, {"stdout": str}) or not isinstance(result.get("error"), str | None):
            return _malformed("run_python")
        return result["stdout"] + (f"\n{result['error']}" if result["error"] else "")

    def tool_submit(self, arguments: dict[str, Any]) -> str:
        self._finish()
        assert self.verdict is not None
        return "submitted"


# The sandboxed tools' results come from a process that also runs the repository's code, which can
# replace what the driver returns (`sys.stdout.getvalue = lambda: 42` in run_python): their shape is
# checked here, and a malformed one is the agent's tool error, never an exception of the grader.
def _malformed(tool: str) -> str:
    return f"error: {tool} returned malformed output (the repository's code changed what the tool reports)"


def _unknown_arguments(tool: str, unknown: list[str]) -> str:
    accepted = TOOL_ARGUMENTS[tool]
    hints = [
        f"{name!r} (did you mean {close[0]!r}?)" if (close := _close(name, accepted)) else repr(name)
        for name in unknown
    ]
    takes = f"takes {', '.join(accepted)}" if accepted else "takes no arguments"
    return f"error: {tool} {takes}; unknown argument {', '.join(h[:80] for h in hints)}"


def _close(name: str, accepted: tuple[str, ...]) -> list[str]:
    for prefix, meant in (("start", "start"), ("end", "end")):
        if name.startswith(prefix) and meant in accepted:  # start_line, end_line
            return [meant]
    return difflib.get_close_matches(name, accepted, n=1, cutoff=0.5)


def _has_fields(result: Any, fields: dict[str, type]) -> bool:
    return isinstance(result, dict) and all(type(result.get(name)) is kind for name, kind in fields.items())


def _is_hits(result: Any) -> bool:
    return isinstance(result, list) and all(
        isinstance(hit, list)
        and len(hit) == 3
        and isinstance(hit[0], str)
        and type(hit[1]) is int
        and isinstance(hit[2], str)
        for hit in result
    )


TOOL_SCHEMAS: list[dict[str, Any]] = [
    {"name": "list_files", "parameters": {"path": "directory prefix (optional)"}},
    {
        "name": "read_file",
        "parameters": {
            "path": "file",
            "start": "int (optional): first line, from 1",
            "end": "int (optional): last line, inclusive",
        },
    },
    {
        "name": "search",
        "parameters": {"pattern": "text", "regex": "bool (optional)", "path": "prefix (optional)"},
    },
    {"name": "write_file", "parameters": {"path": "file", "content": "full text"}},
    {
        "name": "edit",
        "parameters": {"path": "file", "old": "exact text", "new": "replacement", "replace_all": "bool"},
    },
    {"name": "apply_patch", "parameters": {"patch": "unified diff (--- a/path, +++ b/path, @@ hunks)"}},
    {"name": "delete_file", "parameters": {"path": "file"}},
    {
        "name": "run_tests",
        "parameters": {"selector": "a test file, directory or id like tests/test_x.py::test_y (optional)"},
    },
    {
        "name": "run_python",
        "parameters": {"code": "a snippet; the repository is importable, stdout is returned"},
    },
    {"name": "submit", "parameters": {}},
]
# The arguments each tool takes: anything else is an error observation naming these.
TOOL_ARGUMENTS: dict[str, tuple[str, ...]] = {t["name"]: tuple(t["parameters"]) for t in TOOL_SCHEMAS}
