"""What a multi-turn (agent) env offers to callers that speak function calling instead of JSON text turns.

An agent env keeps its Gymnasium API (`reset`, `step(text)`) and adds:
- `toolset(task)` → (name, schemas): the tools a task's episode offers, as OpenAI function schemas with
  JSON Schema parameters, the tool that ends the episode included. Tasks with the same name share
  the same tools.
- `tool_call_action(name, arguments)` → the `step` action text of one tool call.
- `function_calling_prompt()` → the current task's prompt for a caller that passes the schemas natively.
- `end_episode()` → (reward, info): the agent stopped without finishing; grade the state as it is.

The integrations (rlvr/integrations/session.py) drive every family through these four and `step`,
so a new multi-turn family needs no integration code.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

from rlvr.core.types import Task

UNFINISHED_FLAG = "unfinished"  # the agent stopped before calling the tool that ends the episode


@runtime_checkable
class AgentEnv(Protocol):
    def toolset(self, task: Task) -> tuple[str, list[dict[str, Any]]]: ...

    def tool_call_action(self, name: str, arguments: dict[str, Any]) -> str: ...

    def function_calling_prompt(self) -> str: ...

    def end_episode(self) -> tuple[float, dict[str, Any]]: ...


def function_schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def tool_calls_action(name: str, arguments: dict[str, Any]) -> str:
    """One assistant turn holding one tool call, in the shape every agent env's `step` reads."""
    call = {"id": "call_0", "type": "function", "function": {"name": name, "arguments": arguments}}
    return json.dumps({"role": "assistant", "content": None, "tool_calls": [call]}, ensure_ascii=False)
