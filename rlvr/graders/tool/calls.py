"""Read one assistant turn of a tool-use episode: tool calls in the OpenAI function-calling shape, or a final
answer. Anything else is malformed and the episode answers with an error observation.

Accepted shapes (as JSON text, optionally in a ```json block):
- `{"role": "assistant", "content": ..., "tool_calls": [{"id": "c1", "type": "function",
  "function": {"name": "read_file", "arguments": "{\\"path\\": \\"/a\\"}"}}]}` (`arguments` a JSON string or object)
- a bare list of such tool calls, or a single one, or `{"name": ..., "arguments": {...}}`
- a final answer: `{"final_answer": "..."}` or an assistant message without `tool_calls` (its `content`).

A whole transcript (what `rlvr grade` receives) is split into turns by `split_transcript`; the messages of
other roles a chat log holds (`tool` results, `user`, `system`) are not the agent's turns and are dropped (the
replay computes the tool results itself). JSON nested
deeper than `MAX_NESTING` is refused (with `Turn.limit` naming the limit) before anything walks it. A
string that JSON decodes to an unpaired surrogate (a lone `\\ud800` escape) is malformed: it would reach
the observation, the world and the verdict as text no UTF-8 writer or tokenizer accepts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_CALLS_PER_TURN = 8
MAX_TURN_CHARS = 100_000
MAX_NESTING = 32  # deeper JSON is refused before any schema check or copy walks it
_JSON_FENCE = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.DOTALL)


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Turn:
    calls: list[ToolCall] = field(default_factory=list)
    final_answer: str | None = None
    error: str | None = None
    limit: str | None = None  # the size limit a malformed turn broke, if that was the reason


class Malformed(ValueError):
    def __init__(self, message: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """How deeply lists/dicts nest in `value`, counted without recursion; stops once past `limit`."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((child, depth) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def is_unicode(value: Any) -> bool:
    """Whether every string in `value` (dict keys included) is encodable as UTF-8: no unpaired surrogate."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_SURROGATE = "an unpaired surrogate (a lone \\ud800-\\udfff escape) is not text"


def _one_call(raw: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise Malformed(f"tool call {index} must be an object")
    function = raw.get("function", raw)
    if not isinstance(function, dict):
        raise Malformed(f"tool call {index}: `function` must be an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise Malformed(f"tool call {index}: missing function name")
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            if isinstance(exc, json.JSONDecodeError):
                raise Malformed(
                    f"tool call {index} ({name}): arguments are not valid JSON: {exc.msg}"
                ) from None
            raise Malformed(
                f"tool call {index} ({name}): arguments nested too deeply or hold a number too long",
                limit="json_size",
            ) from None
    if not isinstance(arguments, dict):
        raise Malformed(f"tool call {index} ({name}): arguments must be a JSON object")
    if nesting_depth(arguments) > MAX_NESTING:
        raise Malformed(
            f"tool call {index} ({name}): arguments nested deeper than {MAX_NESTING} levels", limit="nesting"
        )
    if not is_unicode(arguments):
        raise Malformed(f"tool call {index} ({name}): arguments: {_SURROGATE}")
    call_id = raw.get("id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) else f"call_{index}", name=name, arguments=arguments
    )


def message_text(content: Any) -> str:
    """An assistant message's `content` as text: a string, or the OpenAI list of content parts (the text of
    its `{"type": "text", "text": ...}` parts, joined), or empty."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type", "text") == "text"
            and isinstance(part.get("text"), str)
        )
    return str(content)


def _from_json(value: Any) -> Turn:
    if isinstance(value, list):
        raw_calls = value
    elif isinstance(value, dict) and "final_answer" in value:
        return Turn(final_answer=str(value["final_answer"]))
    elif isinstance(value, dict) and "tool_calls" in value:
        raw_calls = value["tool_calls"]
        if raw_calls in (None, []):
            return Turn(final_answer=message_text(value.get("content")))
        if not isinstance(raw_calls, list):
            raise Malformed("`tool_calls` must be a list")
    elif isinstance(value, dict) and ("function" in value or "name" in value):
        raw_calls = [value]
    elif isinstance(value, dict) and value.get("role") == "assistant":
        return Turn(final_answer=message_text(value.get("content")))
    else:
        raise Malformed("expected tool calls or a final answer (see the format in the task)")
    if not raw_calls:
        raise Malformed("no tool calls given")
    if len(raw_calls) > MAX_CALLS_PER_TURN:
        raise Malformed(f"at most {MAX_CALLS_PER_TURN} tool calls per turn")
    return Turn(calls=[_one_call(raw, i) for i, raw in enumerate(raw_calls)])


def parse_turn(text: Any) -> Turn:
    """A Turn; malformed input gives `Turn(error=...)`, never an exception. `text` is the turn's text, or
    the same turn as JSON data (an assistant message or a list of calls, as a trainer may hand it over);
    data is checked for depth before anything walks or prints it."""
    if isinstance(text, dict | list):
        if nesting_depth(text) > MAX_NESTING:
            return Turn(error=f"JSON nested deeper than {MAX_NESTING} levels", limit="nesting")
        try:
            text = json.dumps(text, allow_nan=False)
        except (TypeError, ValueError):
            return Turn(error="a turn given as data must be JSON data (objects, arrays, strings, numbers)")
    if not isinstance(text, str):
        return Turn(error="a turn must be text or a JSON object")
    if len(text) > MAX_TURN_CHARS:
        return Turn(error=f"turn longer than {MAX_TURN_CHARS} characters", limit="turn_size")
    fenced = _JSON_FENCE.findall(text)
    body = fenced[-1] if fenced else text.strip()
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as exc:  # ValueError also covers ints longer than Python allows
        if isinstance(exc, json.JSONDecodeError):
            return Turn(error=f"not valid JSON ({exc.msg}); send tool calls or a final answer as JSON")
        return Turn(error="JSON nested too deeply or a number too long", limit="json_size")
    if nesting_depth(value) > MAX_NESTING:
        return Turn(error=f"JSON nested deeper than {MAX_NESTING} levels", limit="nesting")
    if not is_unicode(value):
        return Turn(error=f"{_SURROGATE}; send tool calls or a final answer as JSON")
    try:
        return _from_json(value)
    except Malformed as exc:
        return Turn(error=str(exc), limit=exc.limit)


_TURN_KEYS = ("role", "final_answer", "tool_calls")


def _is_turn(value: Any) -> bool:
    return isinstance(value, dict) and any(key in value for key in _TURN_KEYS) and "function" not in value


_CONTEXT_ROLES = frozenset({"tool", "user", "system", "developer"})


def _is_context(value: Any) -> bool:
    """A chat-log message that is not an agent turn (a tool result, the user's or system's words)."""
    return isinstance(value, dict) and value.get("role") in _CONTEXT_ROLES


def split_transcript(completion: str) -> list[str]:
    """The agent's turns, each as the text the env would have received."""
    try:
        whole = json.loads(completion)
    except (ValueError, RecursionError):
        whole = None
    if nesting_depth(whole, MAX_NESTING + 1) > MAX_NESTING + 1:
        return [completion]  # too deep to be a transcript: one turn, which the episode refuses as malformed
    if isinstance(whole, list) and whole and all(_is_turn(item) for item in whole):
        return [json.dumps(item) for item in whole if not _is_context(item)]
    lines = [line for line in completion.splitlines() if line.strip()]
    if len(lines) > 1:
        try:
            parsed = [json.loads(line) for line in lines]
        except (ValueError, RecursionError):
            parsed = []
        if parsed and all(_is_turn(item) for item in parsed):
            return [line for line, item in zip(lines, parsed, strict=True) if not _is_context(item)]
    return [completion]
