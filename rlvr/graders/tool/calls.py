"""Read one assistant turn of a tool-use episode: tool calls in the OpenAI function-calling shape, or a final
answer. Anything else is malformed and the episode answers with an error observation.

Accepted shapes (as JSON text, optionally in a ```json block):
- `{"role": "assistant", "content": ..., "tool_calls": [{"id": "c1", "type": "function",
  "function": {"name": "read_file", "arguments": "{\\"path\\": \\"/a\\"}"}}]}` (`arguments` a JSON string or object)
- a bare list of such tool calls, or a single one, or `{"name": ..., "arguments": {...}}`
- a final answer: `{"final_answer": "..."}` or an assistant message without `tool_calls` (its `content`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_CALLS_PER_TURN = 8
MAX_TURN_CHARS = 100_000
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


class Malformed(ValueError):
    pass


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
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "too deep or a number too long"
            raise Malformed(f"tool call {index} ({name}): arguments are not valid JSON: {reason}") from None
    if not isinstance(arguments, dict):
        raise Malformed(f"tool call {index} ({name}): arguments must be a JSON object")
    call_id = raw.get("id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) else f"call_{index}", name=name, arguments=arguments
    )


def _from_json(value: Any) -> Turn:
    if isinstance(value, list):
        raw_calls = value
    elif isinstance(value, dict) and "final_answer" in value:
        return Turn(final_answer=str(value["final_answer"]))
    elif isinstance(value, dict) and "tool_calls" in value:
        raw_calls = value["tool_calls"]
        if raw_calls in (None, []):
            return Turn(final_answer=str(value.get("content") or ""))
        if not isinstance(raw_calls, list):
            raise Malformed("`tool_calls` must be a list")
    elif isinstance(value, dict) and ("function" in value or "name" in value):
        raw_calls = [value]
    elif isinstance(value, dict) and value.get("role") == "assistant":
        return Turn(final_answer=str(value.get("content") or ""))
    else:
        raise Malformed("expected tool calls or a final answer (see the format in the task)")
    if not raw_calls:
        raise Malformed("no tool calls given")
    if len(raw_calls) > MAX_CALLS_PER_TURN:
        raise Malformed(f"at most {MAX_CALLS_PER_TURN} tool calls per turn")
    return Turn(calls=[_one_call(raw, i) for i, raw in enumerate(raw_calls)])


def parse_turn(text: str) -> Turn:
    """A Turn; malformed input gives `Turn(error=...)`, never an exception."""
    if not isinstance(text, str):
        return Turn(error="a turn must be text")
    if len(text) > MAX_TURN_CHARS:
        return Turn(error=f"turn longer than {MAX_TURN_CHARS} characters")
    fenced = _JSON_FENCE.findall(text)
    body = fenced[-1] if fenced else text.strip()
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as exc:  # ValueError also covers ints longer than Python allows
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply or number too long"
        return Turn(error=f"not valid JSON ({message}); send tool calls or a final answer as JSON")
    try:
        return _from_json(value)
    except Malformed as exc:
        return Turn(error=str(exc))
