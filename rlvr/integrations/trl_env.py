"""rlvr agent episodes as TRL environments (`GRPOTrainer(environment_factory=...)`, TRL >= 1.16).

    from rlvr.integrations import trl as rlvr_trl
    trainer = GRPOTrainer(
        model=...,
        environment_factory=rlvr_trl.environment_factory("tool-worlds", split="train"),
        train_dataset=rlvr_trl.dataset("tool-worlds", "train"),
        args=GRPOConfig(...),
    )

TRL builds one environment per rollout; its public methods are the episode's tools (typed signatures
and docstrings generated from the env's own JSON schemas, so TRL renders the same schemas), `reset(**row)`
starts the row's task and returns the task text TRL appends to the prompt, and `get_reward()` returns
the trusted verdict's reward (None, logged by TRL as NaN, when grading itself failed). Every call goes
through one rlvr session (rlvr/integrations/session.py): the real env, its sandbox and budgets.

Tasks whose episodes offer different tools (Tool-v0's worlds) get one environment class each:
`environment_factory` then returns `{toolset: factory}` and `dataset` adds the `environment` column TRL
routes on. Each tool call is one turn of the episode's turn budget.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import operator
import re
from collections.abc import Callable
from typing import Any, Literal, Optional

from rlvr.core.pack import TaskPack
from rlvr.integrations.session import EpisodeResult, Session, Sessions

RESERVED = frozenset({"reset", "get_reward"})
_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
}


def _hint(schema: dict[str, Any]) -> Any:
    """The Python type TRL (transformers' get_json_schema) turns back into this JSON Schema."""
    if "enum" in schema and all(isinstance(v, str | int | float | bool) for v in schema["enum"]):
        return Literal[tuple(schema["enum"])]  # type: ignore[misc]
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        hints = [_hint({**schema, "type": k}) for k in kind if k != "null"]
        union = functools.reduce(operator.or_, hints)
        return Optional[union] if "null" in kind else union  # noqa: UP045 (a runtime typing object)
    if kind == "array":
        return list[_hint(schema.get("items") or {"type": "string"})]
    return _JSON_TYPES.get(kind, str)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _tool_method(schema: dict[str, Any]) -> Callable[..., str]:
    function = schema["function"]
    name = str(function["name"])
    parameters = function.get("parameters") or {}
    properties: dict[str, dict[str, Any]] = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    signature = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = [_one_line(str(function.get("description") or name)), "", "Args:"]
    for argument, spec in properties.items():
        if not argument.isidentifier() or keyword.iskeyword(argument):
            raise ValueError(f"tool {name!r} has an argument {argument!r} that is not a Python name")
        hint = _hint(spec)
        default: Any = inspect.Parameter.empty
        if argument not in required:
            hint, default = Optional[hint], None  # noqa: UP045
        annotations[argument] = hint
        signature.append(
            inspect.Parameter(argument, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint)
        )
        description = _one_line(str(spec.get("description") or f"the {argument.replace('_', ' ')}"))
        lines.append(f"    {argument}: {description}")
    if not properties:
        lines = lines[:1]
    lines += ["", "Returns:", "    The tool's result."]

    def tool(self: RlvrEnvironment, **arguments: Any) -> str:
        return self._call(name, {k: v for k, v in arguments.items() if v is not None})

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = "\n".join(lines)
    tool.__annotations__ = {**annotations, "return": str}
    tool.__signature__ = inspect.Signature(signature, return_annotation=str)  # type: ignore[attr-defined]
    return tool


class RlvrEnvironment:
    """One rollout's environment: an rlvr session; subclasses add the toolset's methods."""

    toolset = ""

    def __init__(self, sessions: Sessions) -> None:
        self._session: Session = sessions.open()
        self.last_result: EpisodeResult | None = None

    def reset(self, **row: Any) -> str:
        task_id = row.get("task_id")
        if not isinstance(task_id, str):
            raise ValueError(f"the dataset row needs a 'task_id' string column; it has {sorted(row)}")
        self.last_result = None
        start = self._session.start(task_id)
        if start.toolset != self.toolset:
            raise ValueError(
                f"task {task_id} offers the {start.toolset!r} tools, not {self.toolset!r}: build the dataset "
                "with rlvr.integrations.trl.dataset (its 'environment' column routes each task)"
            )
        return start.prompt

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        return self._session.call_tool(name, arguments).text

    def get_reward(self) -> float | None:
        self.last_result = self._session.finish()
        return None if self.last_result.disrupted else self.last_result.reward

    def _close(self) -> None:  # private: TRL takes every public method for a tool
        self._session.close()


def environment_class(toolset: str, tools: list[dict[str, Any]]) -> type[RlvrEnvironment]:
    """A `RlvrEnvironment` subclass whose methods are `tools`."""
    methods: dict[str, Any] = {"toolset": toolset}
    for schema in tools:
        name = str(schema["function"]["name"])
        if name in RESERVED or name.startswith("_") or not name.isidentifier():
            raise ValueError(f"tool {name!r} cannot be a TRL environment method")
        methods[name] = _tool_method(schema)
    words = re.split(r"[^0-9A-Za-z]+", toolset)
    return type(f"Rlvr{''.join(w.capitalize() for w in words)}Environment", (RlvrEnvironment,), methods)


class EnvironmentFactory:
    """What `GRPOTrainer(environment_factory=...)` calls: a new environment per call."""

    def __init__(self, sessions: Sessions, environment: type[RlvrEnvironment]) -> None:
        self.sessions = sessions
        self.environment = environment
        self.created: list[RlvrEnvironment] = []

    def __call__(self) -> RlvrEnvironment:
        instance = self.environment(self.sessions)
        self.created.append(instance)
        return instance

    def close(self) -> None:
        for instance in self.created:
            instance._close()
        self.created.clear()


def environment_factory(
    pack: str | TaskPack, *, split: str | None = None, **options: Any
) -> EnvironmentFactory | dict[str, EnvironmentFactory]:
    """TRL environments for `pack`'s agent episodes. `options`: the env's (`max_turns`, Repo-v0's
    budgets) and the grader's (`weights`, `jobs`, ...), all checked here. One shared grader serves
    every environment; `factory.sessions.close()` releases it."""
    sessions = Sessions(pack, split=split, **options)
    toolsets = sessions.toolsets()
    factories = {
        name: EnvironmentFactory(sessions, environment_class(name, tools)) for name, tools in toolsets.items()
    }
    if len(factories) == 1:
        return next(iter(factories.values()))
    return factories


def dataset(pack: str | TaskPack, split: str | None = None) -> Any:
    """A `datasets.Dataset` for `environment_factory(pack, split=split)`: one row per task with an (empty)
    conversational `prompt` that `reset` fills with the task, the `task_id`, and, when the tasks use
    several toolsets, the `environment` TRL routes on."""
    from datasets import Dataset

    with Sessions(pack, split=split) as sessions:
        names = [sessions.toolset(task)[0] for task in sessions.tasks]
        rows: dict[str, list[Any]] = {
            "prompt": [[{"role": "user", "content": ""}] for _ in sessions.tasks],
            "task_id": [task.id for task in sessions.tasks],
        }
        if len(set(names)) > 1:
            rows["environment"] = names
    return Dataset.from_dict(rows)
