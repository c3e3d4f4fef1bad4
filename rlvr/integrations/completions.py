"""Turn what a trainer hands over as a "completion" into the text rlvr grades.

Trainers pass either plain strings or chat messages (`[{"role": "assistant", "content": ...}]`,
where `content` may itself be a list of `{"type": "text", "text": ...}` parts). The assistant
turns are joined in order, so a fenced code block in the last turn is still the last block.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


class CompletionFormatError(TypeError):
    """A completion that is neither text nor a list of chat messages."""


def _message_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, Sequence):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text":
                text = part.get("text", "")
                if not isinstance(text, str):
                    raise CompletionFormatError(
                        f"{where}: a text part's 'text' is {type(text).__name__}, not str"
                    )
                parts.append(text)
        return "".join(parts)
    raise CompletionFormatError(
        f"{where}: message content is {type(content).__name__}, not str or list of parts"
    )


def completion_text(completion: Any) -> str:
    """The text to grade: the string itself, or the assistant turns of a chat completion."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):  # a single message
        completion = [completion]
    if isinstance(completion, Sequence) and not isinstance(completion, bytes | bytearray):
        texts: list[str] = []
        for index, message in enumerate(completion):
            if not isinstance(message, Mapping):
                raise CompletionFormatError(
                    f"chat completion item {index} is {type(message).__name__}, not a message dict"
                )
            if message.get("role", "assistant") == "assistant":
                texts.append(_message_text(message.get("content"), f"chat completion item {index}"))
        return "\n".join(texts)
    raise CompletionFormatError(
        f"completion is {type(completion).__name__}; expected str or a list of chat messages"
    )


def has_tool_calls(completion: Any) -> bool:
    """Whether a chat completion holds an assistant message with tool calls (an agent episode)."""
    if isinstance(completion, Mapping):
        completion = [completion]
    if isinstance(completion, str) or not isinstance(completion, Sequence):
        return False
    return any(
        isinstance(message, Mapping)
        and message.get("role", "assistant") == "assistant"
        and message.get("tool_calls")
        for message in completion
    )


def tool_transcript(completion: Any, final_answer_tool: str = "final_answer") -> str:
    """A chat completion with tool calls as the tool grader's transcript: the assistant turns in order
    (tool results and other roles dropped: the replay computes them), a call of `final_answer_tool` as
    the episode's final answer."""
    messages = [completion] if isinstance(completion, Mapping) else list(completion)
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise CompletionFormatError(
                f"chat completion item {index} is {type(message).__name__}, not a message dict"
            )
        if message.get("role", "assistant") != "assistant":
            continue
        calls = list(message.get("tool_calls") or [])
        if not calls:
            turns.append(
                {"final_answer": _message_text(message.get("content"), f"chat completion item {index}")}
            )
            continue
        answer = [call for call in calls if _call_name(call) == final_answer_tool]
        others = [call for call in calls if _call_name(call) != final_answer_tool]
        if others:
            turns.append(
                {"role": "assistant", "content": None, "tool_calls": [_encodable(c) for c in others]}
            )
        if answer:
            turns.append({"final_answer": _answer(answer[0])})
    return json.dumps(turns, ensure_ascii=False, default=str)


# what a call whose arguments JSON cannot carry (a 5,000-digit int, nesting past the recursion limit) becomes:
# arguments that are not JSON, so the replay scores that turn malformed instead of the reward function raising
UNENCODABLE_ARGUMENTS = "<the arguments of this call are not JSON data>"


def _encodable(call: Any) -> Any:
    try:
        json.dumps(call, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return {
            "type": "function",
            "function": {"name": _call_name(call), "arguments": UNENCODABLE_ARGUMENTS},
        }
    return call


def _call_name(call: Any) -> Any:
    function = call.get("function", call) if isinstance(call, Mapping) else None
    return function.get("name") if isinstance(function, Mapping) else None


def _answer(call: Mapping[str, Any]) -> str:
    arguments = call.get("function", call).get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments
    if isinstance(arguments, Mapping):
        value = arguments.get("answer", "")
        if isinstance(value, str):
            return value
        try:
            return json.dumps(value)
        except (ValueError, RecursionError):
            return UNENCODABLE_ARGUMENTS
    return str(arguments)
