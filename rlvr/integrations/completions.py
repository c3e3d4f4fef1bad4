"""Turn what a trainer hands over as a "completion" into the text rlvr grades.

Trainers pass either plain strings or chat messages (`[{"role": "assistant", "content": ...}]`,
where `content` may itself be a list of `{"type": "text", "text": ...}` parts). The assistant
turns are joined in order, so a fenced code block in the last turn is still the last block.
"""

from __future__ import annotations

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
