"""Tool calls in a model's raw text, for adapters whose trainer hands over generated text (SkyRL,
OpenRLHF): the Hermes/Qwen `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks most
open chat templates emit. Text without such blocks goes to the env as one turn of its own JSON protocol."""

from __future__ import annotations

import json
import re
from typing import Any

from rlvr.integrations.session import Session, ToolOutput

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
MAX_BLOCKS = 8


def tool_call_blocks(text: str) -> list[tuple[str, dict[str, Any]]] | str | None:
    """The calls of the text's `<tool_call>` blocks; None without blocks; an error message for a block
    that is not `{"name": str, "arguments": object}` JSON."""
    blocks = _BLOCK.findall(text)
    if not blocks:
        return None
    if len(blocks) > MAX_BLOCKS:
        return f"error: at most {MAX_BLOCKS} tool calls per turn"
    calls = []
    for index, block in enumerate(blocks):
        try:
            value = json.loads(block)
        except (ValueError, RecursionError):
            return f"error: tool call {index} is not valid JSON"
        arguments = value.get("arguments", {}) if isinstance(value, dict) else None
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                arguments = None
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("name"), str)
            or not isinstance(arguments, dict)
        ):
            return f'error: tool call {index} must be {{"name": "...", "arguments": {{...}}}}'
        calls.append((value["name"], arguments))
    return calls


def run_text_turn(session: Session, text: str) -> ToolOutput:
    """One generated assistant turn: its tool-call blocks, one call each (stopping when the episode
    ends), or the text itself as a turn of the env's JSON protocol."""
    calls = tool_call_blocks(text)
    if calls is None:
        return session.act(text)
    if isinstance(calls, str):  # still the env's turn, so a malformed one counts against the turn budget
        output = session.act(text)
        return ToolOutput(f"{calls}\n{output.text}", output.done, output.reward)
    results: list[str] = []
    output = ToolOutput("", done=False)
    for name, arguments in calls:
        output = session.call_tool(name, arguments)
        results.append(f"<tool_response>\n{output.text}\n</tool_response>")
        if output.done:
            break
    return ToolOutput("\n".join(results), output.done, output.reward)
