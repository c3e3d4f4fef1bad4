"""Simulated worlds for tool-use tasks: a file system, a ledger, a calendar and an inventory, and the
worlds a tool pack declares itself.

A world is plain data (`state`, JSON-like) plus typed tool methods. `@tool` marks a method as a tool, says
whether it reads or writes and which resource it touches (for permission policies), and the method's type
hints and docstring become the OpenAI function-calling JSON schema (`str`, `int`, `float`, `bool`,
`list[...]`, `dict[str, ...]`, `Literal[...]` and `X | None` parameters). Tools raise `ToolError` for a
bad request (missing file, insufficient funds); the episode turns that into an error observation.

A pack's own world is a Python module in the pack (`worlds = ["world.py"]` in `pack.toml`) defining `World`
subclasses; its tasks name the world and carry the module's path as `world_module`. The module is the pack
author's trusted code, loaded in the grading process like a grader; the model's arguments reach it only
after the tool's JSON Schema accepted them. A world may set `default_policy` (merged under each task's
`policy`) and `allowed_changes` (key-path patterns the state diff ignores, e.g. a timestamp).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib.util
import inspect
import json
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


class WorldDefinitionError(ValueError):
    """A world that cannot be offered to an agent (a tool whose schema cannot be built, a bad module)."""


class ToolError(Exception):
    """A tool refused a request; the message is shown to the agent."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    kind: str  # "read" | "write"
    resources: tuple[str, ...]  # argument names whose values are the resources touched
    method: Callable[..., Any]
    schema: dict[str, Any]


def tool(kind: str, *resources: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def mark(method: Callable[..., Any]) -> Callable[..., Any]:
        method.__tool__ = (kind, resources)  # type: ignore[attr-defined]
        return method

    return mark


def json_schema_of(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a parameter's type hint; WorldDefinitionError for a type that has none."""
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal and all(isinstance(a, str | int | bool) for a in args):
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [json_schema_of(a) for a in args]}
    if origin is list and len(args) == 1:
        return {"type": "array", "items": json_schema_of(args[0])}
    if origin is dict and len(args) == 2 and args[0] is str:
        return {"type": "object", "additionalProperties": json_schema_of(args[1])}
    if hint is type(None):
        return {"type": "null"}
    raise WorldDefinitionError(
        f"type {hint!r} has no JSON Schema here; use str, int, float, bool, list[...], dict[str, ...], "
        "Literal[...] or X | None"
    )


def _schema(name: str, method: Callable[..., Any]) -> dict[str, Any]:
    try:
        hints = get_type_hints(method)
    except Exception as exc:
        raise WorldDefinitionError(f"tool {name}: its type hints do not resolve ({exc})") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in list(inspect.signature(method).parameters.values())[1:]:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise WorldDefinitionError(f"tool {name}: *args / **kwargs cannot be described to an agent")
        if parameter.name not in hints:
            raise WorldDefinitionError(f"tool {name}: parameter {parameter.name!r} has no type hint")
        try:
            properties[parameter.name] = json_schema_of(hints[parameter.name])
        except WorldDefinitionError as exc:
            raise WorldDefinitionError(f"tool {name}, parameter {parameter.name!r}: {exc}") from None
        if parameter.default is inspect.Parameter.empty:
            required.append(parameter.name)
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": inspect.getdoc(method) or "",
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


class World:
    """Base class: subclasses define `name`, `initial_state()` and @tool methods."""

    name = ""
    # Top-level state keys that only record other changes (a transaction log): a task without an expected
    # state checks the changes themselves, not their record.
    journal_keys: tuple[str, ...] = ()
    # The policy every task of this world starts from (`forbidden_tools`, `read_only`, `budget`); a task's
    # own `policy` keys replace these.
    default_policy: dict[str, Any] = {}
    # Key-path patterns where a final state may differ from the expected one in every task (a counter, a
    # timestamp), added to each task's `allowed_changes`.
    allowed_changes: tuple[tuple[str, ...], ...] = ()

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        self.state = copy.deepcopy(state) if state is not None else self.initial_state()

    def initial_state(self) -> dict[str, Any]:
        return {}

    @classmethod
    def tools(cls) -> dict[str, ToolSpec]:
        return dict(_tools_of(cls))

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return _tools_of(type(self))[name].method(self, **arguments)


@functools.cache
def _tools_of(cls: type[World]) -> dict[str, ToolSpec]:
    """The @tool methods of a world class, with their schemas (built once per class)."""
    found = {}
    for attribute in dir(cls):
        method = getattr(cls, attribute)
        marker = getattr(method, "__tool__", None)
        if marker:
            found[attribute] = ToolSpec(attribute, marker[0], marker[1], method, _schema(attribute, method))
    return found


class FileSystem(World):
    name = "files"

    def initial_state(self) -> dict[str, Any]:
        return {"files": {}}

    def _files(self) -> dict[str, str]:
        return self.state["files"]

    @tool("read", "directory")
    def list_files(self, directory: str) -> list[str]:
        """List the paths of all files under a directory (e.g. "/docs")."""
        prefix = directory.rstrip("/") + "/"
        return sorted(p for p in self._files() if p.startswith(prefix))

    @tool("read", "path")
    def read_file(self, path: str) -> str:
        """Return the content of a file."""
        if path not in self._files():
            raise ToolError(f"no such file: {path}")
        return self._files()[path]

    @tool("write", "path")
    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a file with the given content."""
        if not path.startswith("/") or len(content) > 100_000:
            raise ToolError("path must be absolute and content at most 100000 characters")
        self._files()[path] = content
        return "ok"

    @tool("write", "path")
    def delete_file(self, path: str) -> str:
        """Delete a file."""
        if self._files().pop(path, None) is None:
            raise ToolError(f"no such file: {path}")
        return "ok"

    @tool("write", "source", "target")
    def move_file(self, source: str, target: str) -> str:
        """Move (rename) a file; fails if the target exists."""
        if source not in self._files():
            raise ToolError(f"no such file: {source}")
        if target in self._files():
            raise ToolError(f"target exists: {target}")
        self._files()[target] = self._files().pop(source)
        return "ok"


class Ledger(World):
    name = "ledger"
    journal_keys = ("transfers",)

    def initial_state(self) -> dict[str, Any]:
        return {"accounts": {}, "transfers": []}

    def _account(self, name: str) -> int:
        if name not in self.state["accounts"]:
            raise ToolError(f"no such account: {name}")
        return self.state["accounts"][name]

    @tool("read")
    def list_accounts(self) -> list[str]:
        """List the account names."""
        return sorted(self.state["accounts"])

    @tool("read", "account")
    def get_balance(self, account: str) -> int:
        """Return an account's balance in cents."""
        return self._account(account)

    @tool("write", "source", "target")
    def transfer(self, source: str, target: str, amount: int) -> str:
        """Move `amount` cents from one account to another; fails if the source has too little."""
        if amount <= 0:
            raise ToolError("amount must be a positive number of cents")
        if self._account(source) < amount:
            raise ToolError(f"insufficient funds in {source}")
        self._account(target)
        self.state["accounts"][source] -= amount
        self.state["accounts"][target] += amount
        self.state["transfers"].append([source, target, amount])
        return "ok"


class Calendar(World):
    name = "calendar"

    def initial_state(self) -> dict[str, Any]:
        return {"events": []}

    @tool("read", "day")
    def list_events(self, day: str) -> list[dict[str, Any]]:
        """List the events on a day ("YYYY-MM-DD"), with id, title and start/end hours."""
        return [e for e in self.state["events"] if e["day"] == day]

    @tool("write", "day")
    def create_event(self, title: str, day: str, start: int, end: int) -> int:
        """Create an event from hour `start` to hour `end` (0-24) on a day; fails if it overlaps another. Returns its id."""
        if not 0 <= start < end <= 24:
            raise ToolError("need 0 <= start < end <= 24")
        for event in self.state["events"]:
            if event["day"] == day and start < event["end"] and event["start"] < end:
                raise ToolError(f"overlaps event {event['id']} ({event['title']})")
        new_id = 1 + max((e["id"] for e in self.state["events"]), default=0)
        self.state["events"].append({"id": new_id, "title": title, "day": day, "start": start, "end": end})
        return new_id

    @tool("write", "event_id")
    def delete_event(self, event_id: int) -> str:
        """Delete an event by id."""
        before = len(self.state["events"])
        self.state["events"] = [e for e in self.state["events"] if e["id"] != event_id]
        if len(self.state["events"]) == before:
            raise ToolError(f"no such event: {event_id}")
        return "ok"


class Inventory(World):
    name = "inventory"

    def initial_state(self) -> dict[str, Any]:
        return {"items": {}}

    def _item(self, sku: str) -> dict[str, Any]:
        if sku not in self.state["items"]:
            raise ToolError(f"no such item: {sku}")
        return self.state["items"][sku]

    @tool("read")
    def list_items(self) -> list[dict[str, Any]]:
        """List every item with its sku, name, quantity and price."""
        return [{"sku": sku, **item} for sku, item in sorted(self.state["items"].items())]

    @tool("read", "sku")
    def check_stock(self, sku: str) -> int:
        """Return the quantity in stock of an item."""
        return self._item(sku)["qty"]

    @tool("write", "sku")
    def adjust_stock(self, sku: str, delta: int) -> int:
        """Add `delta` (may be negative) to an item's quantity; returns the new quantity."""
        item = self._item(sku)
        if item["qty"] + delta < 0:
            raise ToolError("stock cannot go below zero")
        item["qty"] += delta
        return item["qty"]

    @tool("write", "sku")
    def set_price(self, sku: str, price: float) -> str:
        """Set an item's price."""
        if price < 0:
            raise ToolError("price must be non-negative")
        self._item(sku)["price"] = price
        return "ok"


WORLDS: dict[str, type[World]] = {w.name: w for w in (FileSystem, Ledger, Calendar, Inventory)}


DEFAULT_MAX_TURNS = 8


@functools.lru_cache(maxsize=64)
def _load_module(path: str, digest: str) -> dict[str, type[World]]:
    spec = importlib.util.spec_from_file_location(f"rlvr_pack_world_{digest[:16]}", path)
    if spec is None or spec.loader is None:
        raise WorldDefinitionError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a world module may use dataclasses, which look their module up
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[spec.name]
        raise WorldDefinitionError(
            f"{path}: the module failed to import ({type(exc).__name__}: {exc})"
        ) from exc
    found = {
        value.name: value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, World) and value.__module__ == module.__name__
    }
    if not found:
        raise WorldDefinitionError(f"{path}: defines no World subclass (class MyWorld(World): name = ...)")
    unnamed = [cls.__name__ for cls in found.values() if not cls.name]
    if unnamed:
        raise WorldDefinitionError(f"{path}: world class(es) {unnamed} need a `name`")
    return found


def load_world_module(path: str | Path) -> dict[str, type[World]]:
    """The worlds a pack's module defines, by name (loaded once per file content)."""
    resolved = Path(path).resolve()
    try:
        source = resolved.read_bytes()
    except OSError as exc:
        raise WorldDefinitionError(f"{path}: cannot read the world module ({exc.strerror})") from exc
    return _load_module(str(resolved), hashlib.sha256(source).hexdigest())


def world_class(world: str | type[World], module: str | None = None) -> type[World]:
    """A world by name, from the pack's `module` when the task has one, else the built-in worlds."""
    if not isinstance(world, str):
        return world
    worlds = load_world_module(module) if module else WORLDS
    if world not in worlds:
        raise WorldDefinitionError(f"unknown world {world!r}; known: {', '.join(sorted(worlds))}")
    return worlds[world]


def task_world(hidden: dict[str, Any]) -> type[World]:
    """The world class a task's hidden spec names (`world`, and `world_module` for a pack's own world)."""
    module = hidden.get("world_module")
    return world_class(str(hidden.get("world")), module if isinstance(module, str) else None)


def world_problems(cls: type[World]) -> list[str]:
    """Why a world cannot be offered to an agent: tools without a valid schema or a description, a
    resource that is not a parameter, an initial state that is not plain JSON data."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    problems: list[str] = []
    found = 0
    for attribute in dir(cls):
        method = getattr(cls, attribute)
        marker = getattr(method, "__tool__", None)
        if not marker:
            continue
        found += 1
        kind, resources = marker
        if kind not in ("read", "write"):
            problems.append(f"tool {attribute}: kind must be 'read' or 'write', not {kind!r}")
        parameters = list(inspect.signature(method).parameters)[1:]
        for resource in resources:
            if resource not in parameters:
                problems.append(f"tool {attribute}: resource {resource!r} is not one of its parameters")
        if not (inspect.getdoc(method) or "").strip():
            problems.append(f"tool {attribute}: needs a docstring (the description the agent reads)")
        try:
            schema = _schema(attribute, method)
            Draft202012Validator.check_schema(schema["function"]["parameters"])
        except WorldDefinitionError as exc:
            problems.append(str(exc))
        except SchemaError as exc:
            problems.append(f"tool {attribute}: the schema is not valid JSON Schema: {exc.message}")
    if not found:
        problems.append("the world has no @tool methods")
    try:
        state = cls().state
        if json.loads(json.dumps(state)) != state:
            raise TypeError("it does not survive a JSON round trip")
    except Exception as exc:
        problems.append(f"initial_state() is not plain JSON data ({type(exc).__name__}: {exc})")
    return problems


def replay_calls(
    world: str | type[World], state: dict[str, Any], calls: Iterable[tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    """The world state after running `calls` (name, arguments) from `state`, without policies. A call the world
    refuses (ToolError) changes nothing, as in an episode."""
    instance = world_class(world)(state)
    for name, arguments in calls:
        before = copy.deepcopy(instance.state)
        try:
            instance.call(name, arguments)
        except ToolError:
            instance.state = before
    return instance.state


@functools.lru_cache(maxsize=64)
def _tool_schemas_text(world: type[World]) -> str:
    return json.dumps([spec.schema for spec in world.tools().values()], indent=1)


def tool_prompt(task_text: str, world: str | type[World], max_turns: int) -> str:
    """The text an agent sees: the task, the tools as OpenAI function schemas, and the reply format."""
    return (
        f"{task_text}\n\nTools (OpenAI function-calling schemas):\n{_tool_schemas_text(world_class(world))}\n\n"
        "Each turn, reply with JSON only: either tool calls, e.g. "
        '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "...", "arguments": "{...}"}}]}, '
        'or your final answer: {"final_answer": "..."}. '
        f"You have at most {max_turns} turns."
    )
