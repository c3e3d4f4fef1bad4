"""A pytest plugin loaded by `rlvr packs mine` into the child that runs a project's suite.

It always reports each test's outcome (node id -> passed/failed/error/skipped) to RLVR_MINE_REPORT.
With RLVR_TRACE_PACKAGE and RLVR_TRACE_OUT set, it also records the calls the tests make *directly*
(the caller's frame is a test file) into the package's public API, before any test is collected:

- a public module-level function: its arguments, then its result or the name of the exception it
  raised; a result that is an iterator is recorded as the items a fresh call yields (at most 50, then
  StopIteration), written as an object scenario whose steps are `__next__`;
- a public class built by a test: the constructor's arguments, then each public method the test calls
  on that object, in order, with each call's result or exception (one object scenario per object).

Calls whose arguments are JSON-faithful plain data (None, bool, int, finite float, str, lists,
dicts with string keys) are recorded as they are; results are turned into plain data by the grading
sandbox's own `plain` (read from child_driver.py), so a recording and a replay in the sandbox are
comparable. Calls with other arguments (tuples, sets, bytes, ranges, functions and classes known by
the name they resolve from, `functools.partial`, a test's lambdas without free variables) are recorded
through the replay adapter (`rlvr/mining/replay.py`, shipped in the pack): the arguments encoded, the
outcome that of a fresh call made by the adapter itself (iterator results as bounded item lists), as
the sandbox will make it.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.util
import json
import math
import os
import pkgutil
import re
import signal
import sys
import types
from pathlib import Path
from typing import Any

import pytest


def _standalone(name: str, path: Path) -> types.ModuleType:
    """A standard-library-only module of rlvr loaded from its file: importing it as `rlvr.…` would
    import the `rlvr` package (gymnasium, numpy: seconds) into every suite run of the project."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


replay = _standalone("_rlvr_mining_replay", Path(__file__).resolve().parents[1] / "replay.py")
codec = _standalone("_rlvr_mining_codec", Path(__file__).resolve().parents[2] / "core" / "codec.py")
ADAPTER_TARGET = replay.ADAPTER_TARGET

REPORT = os.environ.get("RLVR_MINE_REPORT")
TRACE_OUT = os.environ.get("RLVR_TRACE_OUT")
PACKAGE = os.environ.get("RLVR_TRACE_PACKAGE")
DRIVER = os.environ.get("RLVR_MINE_DRIVER")
SELECT = os.environ.get("RLVR_MINE_SELECT")
COVER = bool(os.environ.get("RLVR_TRACE_COVER"))
TEST_TIMEOUT = float(os.environ.get("RLVR_MINE_TEST_TIMEOUT") or 0)
MAX_ARGS_CHARS = 1500
MAX_STEPS = 30
MAX_ITEMS = 50
MAX_RECORDS_PER_TEST = 300
TEST_NAME = re.compile(r"^(test_.*|.*_test|test|conftest)\.py$")
# comparisons and string forms a test uses through operators (`v == "1.2.3"`, `str(v)`, `v < "2.0"`): they
# leave the object as it was, so one with an argument that is not data (`v == other_version`) is just
# not recorded, where any other such call makes the object's plain-data steps incomplete
READ_ONLY_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__str__", "__repr__")
METHOD_DUNDERS = ("__len__", "__contains__", "__getitem__", "__bool__", *READ_ONLY_DUNDERS)

STATE: dict[str, Any] = {"test": None, "count": 0, "busy": False}
OBJECTS: dict[int, Any] = {}  # id(obj) -> Tracked
BUFFER: list[str] = []
SEEN: set[str] = set()
PLAIN: list[Any] = []


def _plain(value: Any) -> Any:
    return PLAIN[0](value)


# ------------------------------------------------------------------ lines a recorded call runs
# With RLVR_TRACE_COVER set, each recording carries the package's source lines that the calls
# deciding its outcome executed ({path in the repository: [line, ...]}): the miner injects bugs
# only where some captured scenario runs, and replays for a changed line the scenarios that run it.
PACKAGE_ROOT: list[str] = []  # the package's directory (or its one module file), absolute
ROOT = os.getcwd()
COVERING: list[set[tuple[str, int]]] = []  # the lines of the recording in progress (one at a time)
PREVIOUS_TRACER: list[Any] = [None]
PACKAGE_PATHS: dict[str, str | None] = {}  # code file -> its path in the repository (None: not the package's)
LOCAL_TRACERS: dict[str, Any] = {}


def _package_path(filename: str) -> str | None:
    if filename in PACKAGE_PATHS:
        return PACKAGE_PATHS[filename]
    found = None
    absolute = os.path.abspath(filename)
    root = PACKAGE_ROOT[0] if PACKAGE_ROOT else None
    if root is not None and (absolute == root or absolute.startswith(root + os.sep)):
        found = os.path.relpath(absolute, ROOT).replace(os.sep, "/")
    PACKAGE_PATHS[filename] = found
    return found


def _local_tracer(path: str) -> Any:
    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and COVERING:
            COVERING[-1].add((path, frame.f_lineno))
        return local

    return local


def _global_tracer(frame: Any, event: str, arg: Any) -> Any:
    path = _package_path(frame.f_code.co_filename)
    if path is None or not COVERING:
        return None
    local = LOCAL_TRACERS.get(path)
    if local is None:
        local = LOCAL_TRACERS[path] = _local_tracer(path)
    return local


def _begin_cover() -> bool:
    """Start collecting the package lines run from here (False: off, or a recording already collects)."""
    if not COVER or COVERING:
        return False
    COVERING.append(set())
    PREVIOUS_TRACER[0] = sys.gettrace()
    sys.settrace(_global_tracer)
    return True


def _end_cover(started: bool) -> set[tuple[str, int]]:
    if not started:
        return set()
    sys.settrace(PREVIOUS_TRACER[0])
    return COVERING.pop()


def _lines_field(lines: set[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for path, line in lines:
        out.setdefault(path, []).append(line)
    return {path: sorted(numbers) for path, numbers in sorted(out.items())}


TEST_FILES: dict[str, bool] = {}


def _is_test_frame(depth: int) -> bool:
    try:
        filename = sys._getframe(depth + 1).f_code.co_filename
    except ValueError:
        return False
    known = TEST_FILES.get(filename)
    if known is None:
        known = TEST_FILES[filename] = _is_test_file(filename)
    return known


TEST_DIRECTORIES = ("tests", "test", "testing")


def _is_test_file(filename: str) -> bool:
    """A test file (`test_*.py`, `conftest.py`), or a helper module beside the tests (`tests/common.py`,
    `tests/utils.py`): a call it makes into the package is one the test suite makes."""
    if TEST_NAME.match(Path(filename).name):
        return True
    absolute = os.path.abspath(filename)
    if not absolute.startswith(ROOT + os.sep) or _package_path(filename) is not None:
        return False
    parts = Path(os.path.relpath(absolute, ROOT)).parts[:-1]
    return any(part in TEST_DIRECTORIES for part in parts)


def faithful(value: Any, depth: int = 0) -> bool:
    """Does `value` survive a JSON round trip unchanged (type included)?"""
    if depth > 20:
        return False
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return True
    if kind is int:
        return abs(value) < 2**53
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(faithful(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(k) is str and faithful(v, depth + 1) for k, v in value.items())
    return False


def _frozen(args: Any, kwargs: dict[str, Any]) -> str | None:
    try:
        if not faithful(list(args)) or not faithful(kwargs):
            return None
        text = json.dumps([list(args), kwargs], sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None
    return text if len(text) <= MAX_ARGS_CHARS else None


class NotEncodable(Exception):
    """A value the replay adapter cannot rebuild."""


def _name_of(value: Any) -> str | None:
    """ "module:qualified" that resolves (among the modules already imported) to `value` itself."""
    qualified = getattr(value, "__qualname__", None)
    module = getattr(value, "__module__", None)
    if module is None and hasattr(value, "__objclass__"):  # str.upper, dict.get
        module = getattr(value.__objclass__, "__module__", None)
    if type(qualified) is not str or type(module) is not str or "<" in qualified:
        return None
    found: Any = sys.modules.get(module)
    if found is None:
        return None
    try:
        for part in qualified.split("."):
            found = getattr(found, part)
    except Exception:  # noqa: BLE001 - a hostile __getattr__
        return None
    return f"{module}:{qualified}" if found is value else None


SOURCES: dict[str, Any] = {}


def _lambda_source(function: types.FunctionType) -> str | None:
    """The text of a lambda in a test file, when exactly one lambda with its arguments starts on its line."""
    code = function.__code__
    filename = code.co_filename
    if filename not in SOURCES:
        try:
            text = Path(filename).read_text(encoding="utf-8")
            SOURCES[filename] = (text, ast.parse(text))
        except (OSError, SyntaxError, ValueError):
            SOURCES[filename] = None
    if SOURCES[filename] is None:
        return None
    text, tree = SOURCES[filename]
    names = list(code.co_varnames[: code.co_argcount])
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Lambda)
        and node.lineno == code.co_firstlineno
        and [a.arg for a in node.args.args] == names
    ]
    if len(found) != 1:
        return None
    return ast.get_source_segment(text, found[0])


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def encode(value: Any, depth: int = 0) -> Any:
    """`value` as the replay adapter's JSON encoding (see rlvr/mining/replay.py); NotEncodable if it
    cannot be rebuilt faithfully."""
    if depth > 20:
        raise NotEncodable
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        if abs(value) >= 2**53:
            raise NotEncodable
        return value
    if kind is float:
        if not math.isfinite(value):
            raise NotEncodable
        return value
    if kind is list:
        return [encode(item, depth + 1) for item in value]
    if kind is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: encode(v, depth + 1) for k, v in value.items()}
        return {"$dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if kind is tuple:
        return {"$tuple": [encode(item, depth + 1) for item in value]}
    if kind is set or kind is frozenset:
        items = sorted(
            (encode(item, depth + 1) for item in value), key=lambda e: json.dumps(e, sort_keys=True)
        )
        return {"$set" if kind is set else "$frozenset": items}
    if kind is bytes:
        return {"$bytes": value.hex()}
    if kind is range:
        return {"$range": [value.start, value.stop, value.step]}
    if kind is functools.partial:
        return {
            "$partial": [
                encode(value.func, depth + 1),
                encode(list(value.args), depth + 1),
                encode(dict(value.keywords), depth + 1),
            ]
        }
    if kind is types.FunctionType and value.__name__ == "<lambda>":
        if value.__closure__ or value.__defaults__ or value.__kwdefaults__:
            raise NotEncodable
        source = _lambda_source(value)
        if source is None:
            raise NotEncodable
        names = {}
        for name in sorted(_global_names(value.__code__)):
            if name in value.__globals__:
                bound = value.__globals__[name]
                names[name] = (
                    {"$module": bound.__name__}
                    if isinstance(bound, types.ModuleType)
                    else encode(bound, depth + 1)
                )
        return {"$lambda": [source, names]}
    if callable(value):
        name = _name_of(value)
        if name is not None:
            return {"$ref": name}
    raise NotEncodable


def _spec(target: str, args: Any, kwargs: dict[str, Any]) -> dict[str, Any] | None:
    try:
        spec = {"target": target, "args": encode(list(args))}
        if kwargs:
            spec["kwargs"] = encode(dict(kwargs))
        text = json.dumps(spec, sort_keys=True)
    except (NotEncodable, TypeError, ValueError, RecursionError):
        return None
    return spec if len(text) <= MAX_ARGS_CHARS else None


def _adapter_outcome(spec: dict[str, Any]) -> tuple[dict[str, Any], set[tuple[str, int]]]:
    """What the sandbox's driver will record for `call(spec)`: a fresh call made by the adapter, and
    the package lines it ran."""
    STATE["busy"] = True
    started = _begin_cover()
    try:
        outcome: dict[str, Any] = {"value": _plain(replay.call(spec))}
    except BaseException as exc:  # noqa: BLE001 - the project's code may raise anything
        outcome = {"raises": type(exc).__name__}
    finally:
        lines = _end_cover(started)
        STATE["busy"] = False
    return outcome, lines


def _adapter_scenario(spec: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "call", "target": ADAPTER_TARGET, "args": [spec]}


def _outcome_value(result: Any) -> dict[str, Any]:
    return {"value": _plain(result)}


def _emit(
    scenario: dict[str, Any], outcome: dict[str, Any], lines: set[tuple[str, int]] | None = None
) -> None:
    if STATE["count"] >= MAX_RECORDS_PER_TEST:
        return
    entry = {"test": STATE["test"], "scenario": scenario, "outcome": codec.to_wire(outcome)}
    if lines:
        entry["lines"] = _lines_field(lines)
    try:
        line = json.dumps(entry, sort_keys=True)
    except (codec.CodecError, TypeError, ValueError, RecursionError):
        return
    if line in SEEN:
        return
    SEEN.add(line)
    STATE["count"] += 1
    BUFFER.append(line)


def _iterated(function: Any, frozen: str) -> dict[str, Any]:
    """A fresh call's items, as the outcomes of successive `__next__` steps."""
    args, kwargs = json.loads(frozen)
    steps: list[dict[str, Any]] = []
    iterator = function(*args, **kwargs)
    for _ in range(MAX_ITEMS):
        try:
            steps.append(_outcome_value(next(iterator)))
        except StopIteration:
            steps.append({"raises": "StopIteration"})
            break
        except BaseException as exc:  # noqa: BLE001 - the project's code may raise anything
            steps.append({"raises": type(exc).__name__})
            break
    return {"steps": steps}


@dataclasses.dataclass
class Tracked:
    """An object of the package a test holds: built by the test (a constructor) or returned to it by
    a recorded call (a factory: `Version.parse("1.2.3")`, `parse_version_info(...)`), with the public
    methods the test then calls on it."""

    obj: Any
    scenario: dict[str, Any] | None  # the plain-data object scenario (None: only through the adapter)
    spec: dict[str, Any] | None  # the replay adapter's spec (None: not encodable)
    steps: list[list[Any]] = dataclasses.field(default_factory=list)
    outcomes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    plain: bool = True  # every step so far was plain data
    lines: set[tuple[str, int]] = dataclasses.field(default_factory=set)


TRACED_CLASSES: set[type] = set()  # the package's classes whose public methods are traced


def _track_result(
    result: Any,
    target: str,
    args: Any,
    kwargs: dict[str, Any],
    frozen: str | None,
    lines: set[tuple[str, int]],
) -> None:
    """A recorded call that returned an object of a traced class starts an object scenario: the call
    is its constructor, the methods the test calls on it its steps."""
    if type(result) not in TRACED_CLASSES or id(result) in OBJECTS:
        return
    scenario = None
    if frozen is not None:
        call_args, call_kwargs = json.loads(frozen)
        extra = {"kwargs": call_kwargs} if call_kwargs else {}
        scenario = {"kind": "object", "target": target, "args": call_args, **extra, "steps": []}
    OBJECTS[id(result)] = Tracked(result, scenario, _spec(target, args, kwargs), lines=set(lines))


def _record_call(function: Any, target: str, args: Any, kwargs: dict[str, Any]) -> Any:
    """`function(*args, **kwargs)`, a call a test made, recorded as a scenario of `target`."""
    frozen = _frozen(args, kwargs)
    if frozen is None:
        spec = _spec(target, args, kwargs)
        if spec is None:
            return function(*args, **kwargs)
        result = None
        try:
            result = function(*args, **kwargs)
            _track_result(result, target, args, kwargs, None, set())
            return result
        finally:
            _emit(_adapter_scenario(spec), *_adapter_outcome(spec))
    call_args, call_kwargs = json.loads(frozen)
    extra = {"kwargs": call_kwargs} if call_kwargs else {}
    STATE["busy"] = True
    started = _begin_cover()
    try:
        result = function(*args, **kwargs)
    except BaseException as exc:
        STATE["busy"] = False
        scenario = {"kind": "call", "target": target, "args": call_args, **extra}
        _emit(scenario, {"raises": type(exc).__name__}, _end_cover(started))
        raise
    lines = _end_cover(started)
    STATE["busy"] = False
    if hasattr(result, "__next__") and iter(result) is result:
        STATE["busy"] = True
        started = _begin_cover()
        try:
            outcome = _iterated(function, frozen)
        except BaseException:  # noqa: BLE001 - a fresh call that fails is simply not recorded
            outcome = None
        finally:
            lines = _end_cover(started)
            STATE["busy"] = False
        if outcome is not None:
            steps = [["__next__", []] for _ in outcome["steps"]]
            _emit(
                {"kind": "object", "target": target, "args": call_args, **extra, "steps": steps},
                outcome,
                lines,
            )
    else:
        _emit({"kind": "call", "target": target, "args": call_args, **extra}, _outcome_value(result), lines)
        _track_result(result, target, args, kwargs, frozen, lines)
    return result


def wrap_function(function: Any, target: str) -> Any:
    @functools.wraps(function)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if STATE["busy"] or not _is_test_frame(1):
            return function(*args, **kwargs)
        return _record_call(function, target, args, kwargs)

    traced.__dict__["__rlvr_traced__"] = True
    return traced


def wrap_classmethod(function: Any, target: str, owner: type) -> Any:
    """A public classmethod of `owner`, recorded as the call `target` ("module:Class.name") when a
    test calls it on `owner` itself (on a subclass the target would name another function)."""

    @functools.wraps(function)
    def traced(klass: Any, *args: Any, **kwargs: Any) -> Any:
        if klass is not owner or STATE["busy"] or not _is_test_frame(1):
            return function(klass, *args, **kwargs)
        return _record_call(functools.partial(function, klass), target, args, kwargs)

    return traced


def wrap_class(cls: type, target: str) -> None:
    for name, member in list(vars(cls).items()):
        if name.startswith("_"):
            continue
        if isinstance(member, classmethod) and isinstance(member.__func__, types.FunctionType):
            setattr(cls, name, classmethod(wrap_classmethod(member.__func__, f"{target}.{name}", cls)))
        elif isinstance(member, staticmethod) and isinstance(member.__func__, types.FunctionType):
            setattr(cls, name, staticmethod(wrap_function(member.__func__, f"{target}.{name}")))
    init = cls.__init__
    if init is object.__init__ or not isinstance(init, types.FunctionType):
        return
    TRACED_CLASSES.add(cls)

    @functools.wraps(init)
    def traced_init(self: Any, *args: Any, **kwargs: Any) -> None:
        record = type(self) is cls and not STATE["busy"] and _is_test_frame(1)
        frozen = _frozen(args, kwargs) if record else None
        spec = _spec(target, args, kwargs) if record and frozen is None else None
        if spec is not None:
            init(self, *args, **kwargs)
            OBJECTS[id(self)] = Tracked(self, None, spec)
            return
        started = _begin_cover() if frozen is not None else False
        try:
            init(self, *args, **kwargs)
        except BaseException as exc:
            lines = _end_cover(started)
            if frozen is not None:
                call_args, call_kwargs = json.loads(frozen)
                extra = {"kwargs": call_kwargs} if call_kwargs else {}
                scenario = {"kind": "object", "target": target, "args": call_args, **extra, "steps": []}
                _emit(scenario, {"init": {"raises": type(exc).__name__}}, lines)
            raise
        lines = _end_cover(started)
        if frozen is not None:
            call_args, call_kwargs = json.loads(frozen)
            extra = {"kwargs": call_kwargs} if call_kwargs else {}
            scenario = {"kind": "object", "target": target, "args": call_args, **extra, "steps": []}
            OBJECTS[id(self)] = Tracked(self, scenario, _spec(target, args, kwargs), lines=lines)

    setattr(cls, "__init__", traced_init)  # noqa: B010 - assigning __init__ directly upsets type checkers
    for name, member in list(vars(cls).items()):
        if not isinstance(member, types.FunctionType) or name == "__init__":
            continue
        if name.startswith("_") and name not in METHOD_DUNDERS:
            continue
        setattr(cls, name, wrap_method(member, name))


def wrap_method(method: Any, name: str) -> Any:
    @functools.wraps(method)
    def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        entry = OBJECTS.get(id(self))
        if entry is None or entry.obj is not self or STATE["busy"] or not _is_test_frame(1):
            return method(self, *args, **kwargs)
        if name in READ_ONLY_DUNDERS and not (_frozen(args, kwargs) and entry.scenario is not None):
            return method(self, *args, **kwargs)
        if entry.spec is not None:  # the adapter's steps, kept beside the plain-data ones
            step = _spec(name, args, kwargs) if len(entry.spec.setdefault("steps", [])) < MAX_STEPS else None
            if step is None:
                entry.spec = None
            else:
                entry.spec["steps"].append([name, step["args"], step.get("kwargs", {})])
        frozen = _frozen(args, {}) if not kwargs and len(entry.steps) < MAX_STEPS else None
        if frozen is None or entry.scenario is None:
            entry.plain = False
            return method(self, *args, **kwargs)
        step_args = json.loads(frozen)[0]
        STATE["busy"] = True
        started = _begin_cover()
        try:
            result = method(self, *args)
        except BaseException as exc:
            entry.steps.append([name, step_args])
            entry.outcomes.append({"raises": type(exc).__name__})
            raise
        finally:
            entry.lines |= _end_cover(started)
            STATE["busy"] = False
        entry.steps.append([name, step_args])
        entry.outcomes.append(_outcome_value(result))
        return result

    return traced


def _flush_objects() -> None:
    """Each object the tests built: as plain-data steps where every call was plain data, else through
    the replay adapter (replayed afresh here for its outcome)."""
    for entry in list(OBJECTS.values()):
        if entry.plain and entry.steps and entry.scenario is not None:
            _emit(entry.scenario | {"steps": entry.steps}, {"steps": entry.outcomes}, entry.lines)
        elif entry.spec is not None and entry.spec.get("steps"):
            _emit(_adapter_scenario(entry.spec), *_adapter_outcome(entry.spec))
    OBJECTS.clear()


def _flush() -> None:
    if TRACE_OUT and BUFFER:
        with open(TRACE_OUT, "a", encoding="utf-8") as handle:
            handle.write("\n".join(BUFFER) + "\n")
        BUFFER.clear()


def install(package_name: str) -> None:
    namespace: dict[str, Any] = {"__name__": "rlvr_child_driver"}
    driver = Path(DRIVER or "")
    exec(compile(driver.read_text(encoding="utf-8"), str(driver), "exec"), namespace)
    PLAIN.append(namespace["plain"])
    spec = importlib.util.find_spec(package_name)
    location = None
    if spec is not None:
        location = next(iter(spec.submodule_search_locations or []), None) or spec.origin
    if location:
        PACKAGE_ROOT.append(os.path.abspath(location))
    # the lines the package runs as it is imported (tables and rules built by calling its own
    # functions at import): a bug there changes what every scenario sees
    started = _begin_cover()
    try:
        package = __import__(package_name)
        for info in pkgutil.walk_packages(getattr(package, "__path__", []), package_name + "."):
            parts = info.name.split(".")
            if any(part in ("tests", "test", "testing") or part.startswith("test_") for part in parts):
                continue
            try:
                __import__(info.name)
            except BaseException:  # noqa: BLE001, S112 - a module that does not import here is not traced
                continue
    finally:
        at_import = _end_cover(started)
    if at_import:
        BUFFER.append(json.dumps({"import_lines": _lines_field(at_import)}, sort_keys=True))
    modules = [
        m for n, m in list(sys.modules.items()) if n == package_name or n.startswith(package_name + ".")
    ]
    originals: dict[int, Any] = {}
    for module in modules:
        for name, value in list(vars(module).items()):
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            target = f"{module.__name__}:{name}"
            if isinstance(value, types.FunctionType) and getattr(value, "__name__", None) == name:
                originals[id(value)] = (value, wrap_function(value, target))
            elif isinstance(value, type) and value.__name__ == name:
                wrap_class(value, target)
    for module in modules:
        for name, value in list(vars(module).items()):
            pair = originals.get(id(value))
            if pair is not None and pair[0] is value:
                setattr(module, name, pair[1])


def pytest_configure(config: Any) -> None:
    if PACKAGE and TRACE_OUT:
        install(PACKAGE)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """With RLVR_MINE_SELECT (a JSON list of node ids), run only the collected tests it names."""
    if not SELECT:
        return
    wanted = set(json.loads(Path(SELECT).read_text(encoding="utf-8")))
    kept = [item for item in items if item.nodeid in wanted]
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
    items[:] = kept


class TestTimeout(BaseException):
    """A test ran past RLVR_MINE_TEST_TIMEOUT seconds (it fails; the suite goes on)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise TestTimeout(f"the test ran past {TEST_TIMEOUT}s")


def pytest_runtest_setup(item: Any) -> None:
    STATE["test"] = item.nodeid
    STATE["count"] = 0
    if TEST_TIMEOUT > 0:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, TEST_TIMEOUT)


def pytest_runtest_teardown(item: Any) -> None:
    if TEST_TIMEOUT > 0:
        signal.setitimer(signal.ITIMER_REAL, 0)


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "teardown":
        _flush_objects()
        _flush()
    if not REPORT or not (report.when == "call" or report.outcome != "passed"):
        return
    outcome = report.outcome
    if report.when != "call" and outcome == "failed":
        outcome = "error"
    with open(REPORT, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"nodeid": report.nodeid, "outcome": outcome}) + "\n")


def pytest_collectreport(report: Any) -> None:
    """A test file (or class) that fails to collect is reported as an error under its node id."""
    if REPORT and report.failed:
        with open(REPORT, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"nodeid": report.nodeid, "outcome": "error"}) + "\n")


def pytest_sessionfinish(session: Any) -> None:
    _flush_objects()
    _flush()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: Any) -> None:
    # a test may leave a non-daemon thread behind (a server, a queue worker); the interpreter would
    # wait for it forever at exit. Everything is reported by now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
