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
import functools
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

from rlvr.mining import replay
from rlvr.mining.replay import ADAPTER_TARGET

REPORT = os.environ.get("RLVR_MINE_REPORT")
TRACE_OUT = os.environ.get("RLVR_TRACE_OUT")
PACKAGE = os.environ.get("RLVR_TRACE_PACKAGE")
DRIVER = os.environ.get("RLVR_MINE_DRIVER")
SELECT = os.environ.get("RLVR_MINE_SELECT")
TEST_TIMEOUT = float(os.environ.get("RLVR_MINE_TEST_TIMEOUT") or 0)
MAX_ARGS_CHARS = 1500
MAX_STEPS = 30
MAX_ITEMS = 50
MAX_RECORDS_PER_TEST = 300
TEST_NAME = re.compile(r"^(test_.*|.*_test|test|conftest)\.py$")
METHOD_DUNDERS = ("__len__", "__contains__", "__getitem__", "__bool__")

STATE: dict[str, Any] = {"test": None, "count": 0, "busy": False}
OBJECTS: dict[int, list[Any]] = {}  # id(obj) -> [obj, scenario, steps, outcomes, ok]
BUFFER: list[str] = []
SEEN: set[str] = set()
PLAIN: list[Any] = []


def _plain(value: Any) -> Any:
    return PLAIN[0](value)


TEST_FILES: dict[str, bool] = {}


def _is_test_frame(depth: int) -> bool:
    try:
        filename = sys._getframe(depth + 1).f_code.co_filename
    except ValueError:
        return False
    known = TEST_FILES.get(filename)
    if known is None:
        known = TEST_FILES[filename] = bool(TEST_NAME.match(Path(filename).name))
    return known


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


def _adapter_outcome(spec: dict[str, Any]) -> dict[str, Any]:
    """What the sandbox's driver will record for `call(spec)`: a fresh call made by the adapter."""
    STATE["busy"] = True
    try:
        return {"value": _plain(replay.call(spec))}
    except BaseException as exc:  # noqa: BLE001 - the project's code may raise anything
        return {"raises": type(exc).__name__}
    finally:
        STATE["busy"] = False


def _adapter_scenario(spec: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "call", "target": ADAPTER_TARGET, "args": [spec]}


def _outcome_value(result: Any) -> dict[str, Any]:
    return {"value": _plain(result)}


def _emit(scenario: dict[str, Any], outcome: dict[str, Any]) -> None:
    if STATE["count"] >= MAX_RECORDS_PER_TEST:
        return
    from rlvr.core.codec import CodecError, to_wire

    try:
        line = json.dumps(
            {"test": STATE["test"], "scenario": scenario, "outcome": to_wire(outcome)}, sort_keys=True
        )
    except (CodecError, TypeError, ValueError, RecursionError):
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


def wrap_function(function: Any, target: str) -> Any:
    @functools.wraps(function)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if STATE["busy"] or not _is_test_frame(1):
            return function(*args, **kwargs)
        frozen = _frozen(args, kwargs)
        if frozen is None:
            spec = _spec(target, args, kwargs)
            if spec is not None:
                try:
                    return function(*args, **kwargs)
                finally:
                    _emit(_adapter_scenario(spec), _adapter_outcome(spec))
        STATE["busy"] = True
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            if frozen is not None:
                call_args, call_kwargs = json.loads(frozen)
                scenario = {"kind": "call", "target": target, "args": call_args}
                _emit(
                    scenario | ({"kwargs": call_kwargs} if call_kwargs else {}),
                    {"raises": type(exc).__name__},
                )
            raise
        finally:
            STATE["busy"] = False
        if frozen is not None:
            call_args, call_kwargs = json.loads(frozen)
            extra = {"kwargs": call_kwargs} if call_kwargs else {}
            if hasattr(result, "__next__") and iter(result) is result:
                STATE["busy"] = True
                try:
                    outcome = _iterated(function, frozen)
                except BaseException:  # noqa: BLE001 - a fresh call that fails is simply not recorded
                    outcome = None
                finally:
                    STATE["busy"] = False
                if outcome is not None:
                    steps = [["__next__", []] for _ in outcome["steps"]]
                    _emit(
                        {"kind": "object", "target": target, "args": call_args, **extra, "steps": steps},
                        outcome,
                    )
            else:
                _emit({"kind": "call", "target": target, "args": call_args, **extra}, _outcome_value(result))
        return result

    traced.__dict__["__rlvr_traced__"] = True
    return traced


def wrap_class(cls: type, target: str) -> None:
    init = cls.__init__
    if init is object.__init__ or not isinstance(init, types.FunctionType):
        return

    @functools.wraps(init)
    def traced_init(self: Any, *args: Any, **kwargs: Any) -> None:
        record = type(self) is cls and not STATE["busy"] and _is_test_frame(1)
        frozen = _frozen(args, kwargs) if record else None
        spec = _spec(target, args, kwargs) if record and frozen is None else None
        if spec is not None:
            init(self, *args, **kwargs)
            OBJECTS[id(self)] = [self, None, [], [], True, spec]
            return
        try:
            init(self, *args, **kwargs)
        except BaseException as exc:
            if frozen is not None:
                call_args, call_kwargs = json.loads(frozen)
                extra = {"kwargs": call_kwargs} if call_kwargs else {}
                scenario = {"kind": "object", "target": target, "args": call_args, **extra, "steps": []}
                _emit(scenario, {"init": {"raises": type(exc).__name__}})
            raise
        if frozen is not None:
            call_args, call_kwargs = json.loads(frozen)
            extra = {"kwargs": call_kwargs} if call_kwargs else {}
            scenario = {"kind": "object", "target": target, "args": call_args, **extra, "steps": []}
            OBJECTS[id(self)] = [self, scenario, [], [], True, _spec(target, args, kwargs)]

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
        if entry is None or entry[0] is not self or STATE["busy"] or not _is_test_frame(1):
            return method(self, *args, **kwargs)
        spec = entry[5]
        if spec is not None:  # the adapter's steps, kept beside the plain-data ones
            step = _spec(name, args, kwargs) if len(spec.setdefault("steps", [])) < MAX_STEPS else None
            if step is None:
                entry[5] = None
            else:
                spec["steps"].append([name, step["args"], step.get("kwargs", {})])
        frozen = _frozen(args, {}) if not kwargs and len(entry[2]) < MAX_STEPS else None
        if frozen is None or entry[1] is None:
            entry[4] = False
            return method(self, *args, **kwargs)
        step_args = json.loads(frozen)[0]
        STATE["busy"] = True
        try:
            result = method(self, *args)
        except BaseException as exc:
            entry[2].append([name, step_args])
            entry[3].append({"raises": type(exc).__name__})
            raise
        finally:
            STATE["busy"] = False
        entry[2].append([name, step_args])
        entry[3].append(_outcome_value(result))
        return result

    return traced


def _flush_objects() -> None:
    """Each object the tests built: as plain-data steps where every call was plain data, else through
    the replay adapter (replayed afresh here for its outcome)."""
    for _, scenario, steps, outcomes, ok, spec in list(OBJECTS.values()):
        if ok and steps:
            _emit(scenario | {"steps": steps}, {"steps": outcomes})
        elif spec is not None and spec.get("steps"):
            _emit(_adapter_scenario(spec), _adapter_outcome(spec))
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
    package = __import__(package_name)
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), package_name + "."):
        parts = info.name.split(".")
        if any(part in ("tests", "test", "testing") or part.startswith("test_") for part in parts):
            continue
        try:
            __import__(info.name)
        except BaseException:  # noqa: BLE001, S112 - a module that does not import here is not traced
            continue
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
