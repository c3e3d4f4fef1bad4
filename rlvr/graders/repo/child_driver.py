# ruff: noqa: E402
"""The sandbox side of repository tasks: run a whole repository inside one sandboxed child.

This file is never imported by the grader. Its *text* is the candidate source of a sandbox Job
(see rlvr/sandbox/zygote.py): the child executes it, then calls `repo_driver(op, arg)` once per job
call, in order, in the same process. The first call is always ("install", files) — the repository as
a dict {relative path: source} — which installs an in-memory importer so `import pkg.module` finds the
repository's modules without any file on disk. Later calls run one operation each and return plain
data: a hidden scenario ("scenario"), the visible tests ("tests"), a snippet ("python"), a regex
search ("search", here so that a hostile pattern can only stall the sandbox, never the grader), or a
perf scenario: "prepare" imports its target afresh, "measure" runs it on those modules keeping its
results as they are, "collect" returns them as plain data (in a traced job the sandbox counts the
operations of each call; only "measure"'s count is scored).

Standard library only; nothing here is trusted by the grader beyond "the result is plain data":
scenario results are compared, in the trusted process, with the same scenarios run against the
reference repository in another child.
"""

import ast
import dataclasses
import enum
import importlib.machinery
import inspect
import io
import re
import sqlite3
import sys
import types
import typing

MAX_CAPTURE_CHARS = 20_000
SCALARS = (type(None), bool, int, float, str)
MAX_PLAIN_DEPTH = 24
CALLABLE_KEY = "__rlvr_callable__"
TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")


class Capture(io.StringIO):
    """A stdout that keeps at most MAX_CAPTURE_CHARS characters."""

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")
        room = MAX_CAPTURE_CHARS - self.tell()
        if room > 0:
            super().write(text[:room])
        return len(text)


def explain(line, text, left, right):
    try:
        shown = f"{left!r} vs {right!r}"
    except Exception:  # noqa: BLE001 - repr of repository objects may raise
        shown = "(values not printable)"
    return f"line {line}: assert {text} ({shown[:300]})"


class AssertExplainer(ast.NodeTransformer):
    """`assert a == b` in a test file -> an AssertionError that says the line, the text and both values."""

    TEMPLATE = (
        "__rlvr_l = 0\n__rlvr_r = 0\nif not (__rlvr_l == __rlvr_r):\n"
        "    raise AssertionError(__rlvr_explain(0, '', __rlvr_l, __rlvr_r))\n"
    )

    def __init__(self, source):
        self.source = source

    def visit_Assert(self, node):
        text = (ast.get_source_segment(self.source, node.test) or "...")[:200]
        test = node.test
        if node.msg is None and isinstance(test, ast.Compare) and len(test.ops) == 1:
            body = typing.cast(list[typing.Any], ast.parse(self.TEMPLATE).body)
            body[0].value = test.left
            body[1].value = test.comparators[0]
            body[2].test.operand.ops = test.ops
            call = body[2].body[0].exc.args[0]
            call.args[0] = ast.Constant(node.lineno)
            call.args[1] = ast.Constant(text)
        else:
            message = node.msg or ast.Constant(f"line {node.lineno}: assert {text}")
            body = [
                ast.If(
                    test=ast.UnaryOp(ast.Not(), test),
                    body=[
                        ast.Raise(
                            exc=ast.Call(ast.Name("AssertionError", ast.Load()), [message], []), cause=None
                        )
                    ],
                    orelse=[],
                )
            ]
        for statement in body:
            ast.copy_location(statement, node)
        return [ast.fix_missing_locations(statement) for statement in body]


class RepoImporter:
    """A meta-path finder/loader serving modules from the in-memory repository."""

    def __init__(self, files):
        self.files = files
        self.modules = {}
        self.codes = {}  # path -> code object: each file is compiled once per job, however often imported
        for path in files:
            if not path.endswith(".py"):
                continue
            parts = path[:-3].split("/")
            if not all(part.isidentifier() for part in parts):
                continue
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            for depth in range(1, len(parts)):
                self.modules.setdefault(".".join(parts[:depth]), (None, True))
            if parts:
                self.modules[".".join(parts)] = (path, is_package)

    def find_spec(self, name, path=None, target=None):
        entry = self.modules.get(name)
        if entry is None:
            return None
        spec = importlib.machinery.ModuleSpec(
            name, typing.cast(typing.Any, self), origin=entry[0], is_package=entry[1]
        )
        if entry[1]:
            spec.submodule_search_locations = []
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        path = self.modules[module.__name__][0]
        if path is None:
            return
        code = self.codes.get(path)
        if code is None:
            source = self.files[path]
            if TEST_FILE.search(path):
                tree = AssertExplainer(source).visit(ast.parse(source, path))
                code = compile(tree, path, "exec", dont_inherit=True)
            else:
                code = compile(source, path, "exec", dont_inherit=True)
            self.codes[path] = code
        if TEST_FILE.search(path):
            module.__dict__["__rlvr_explain"] = explain
        module.__file__ = path
        exec(code, module.__dict__)

    def forget(self):
        """Drop the repository's modules so the next operation imports them afresh."""
        for name in list(sys.modules):
            if name in self.modules:
                del sys.modules[name]


STATE = {}
OPENED = []  # the sqlite connections the repository opened during the call being run, when tracked
TRACKING = [False]
MAX_DB_ROWS = 200  # per table
_CONNECT = sqlite3.connect


def tracked_connect(*args, **kwargs):
    """`sqlite3.connect` as the repository sees it: the connection is kept while a call is tracked,
    so what the call leaves in a database it opens itself (`run_script` on a fresh store) is read."""
    connection = _CONNECT(*args, **kwargs)
    if TRACKING[0] and len(OPENED) < 8:
        OPENED.append(connection)
    return connection


sqlite3.connect = tracked_connect


def database_state(connection):
    """{table: its rows, sorted} of a connection's tables (sqlite's own aside); None once closed."""
    try:
        tables = [
            str(row[0])
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        state = {}
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            rows = connection.execute(f"SELECT * FROM {quoted}").fetchmany(MAX_DB_ROWS)
            state[table] = sorted((plain(list(row)) for row in rows), key=repr)
        return state
    except BaseException:  # noqa: BLE001 - closed, or a hostile connection
        return None


def no_signature(*args, **kwargs):
    raise ValueError("signatures are not available in the sandbox")


def allow_undocumented_dataclasses():
    """A dataclass without a docstring gets one from `inspect.signature`, which reads `__code__`, which
    the sandbox refuses; give `dataclasses` an `inspect` whose `signature` raises ValueError (which it
    handles by leaving the signature out of the generated docstring)."""
    shim = types.ModuleType("inspect")
    shim.__dict__.update(vars(inspect))
    shim.__dict__["signature"] = no_signature
    dataclasses.__dict__["inspect"] = shim


def plain(value, depth=0):
    """Plain data for a repository value, as `==` sees it (the repository's own tests compare with `==`):
    named tuples and other tuple/list/dict subclasses as their base container, enums that are ints or
    strings by value (an `IntEnum` equals its int), other enums by name, dataclasses as {"__type__",
    fields `==` compares}, the standard library's value types by value, other objects as their
    public fields (`object_value`)."""
    if depth == 0:
        OBJECT_ITEMS[0] = 0
    elif OBJECT_PATH:  # inside an object's fields: everything converted counts against one budget
        OBJECT_ITEMS[0] += 1
        if OBJECT_ITEMS[0] > MAX_OBJECT_ITEMS:
            return "<too big>"
    if depth > MAX_PLAIN_DEPTH:
        return "<too deep>"
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if isinstance(value, enum.Enum):
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            return plain(value.value, depth + 1)
        return kind.__name__ + "." + str(value.name)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, (int, float, str)):
        return (int if isinstance(value, int) else float if isinstance(value, float) else str)(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [plain(item, depth + 1) for item in value]
        if isinstance(value, list):
            return items
        if isinstance(value, tuple):
            return tuple(items)
        return sorted(items, key=repr)
    if isinstance(value, dict):
        return {hashable(plain(k, depth + 1)): plain(v, depth + 1) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, typing.Any] = {"__type__": kind.__name__}
        for item in dataclasses.fields(value):
            if item.compare:
                out[item.name] = plain(getattr(value, item.name), depth + 1)
        return out
    if isinstance(value, bytes):
        return {"__bytes__": value.hex()}
    known = standard_value(value, depth)
    if known is not None:
        return known
    return object_value(value, depth)


OBJECT_PATH = []  # ids of the objects being converted, outermost first: an object inside itself is a cycle
OBJECT_ITEMS = [0]  # values converted inside objects' fields so far, for the current top-level value
MAX_OBJECT_ITEMS = 100_000  # a record holding a registry, a logger, a whole graph stays cheap


def object_value(value, depth):
    """An ordinary object of the repository (a record a function returns, `Entry(level, text)`) as
    {"__type__", its public non-callable fields}: a caller reads them (`entry.text`), so a wrong field
    differs. A class as its qualified name; modules, functions and objects with no public data as
    their type name. A reference back to an object being converted is "<cycle>"; past
    MAX_OBJECT_ITEMS values inside fields, in one value, the rest are "<too big>"."""
    kind = type(value)
    out: dict[str, typing.Any] = {"__type__": kind.__name__}
    if isinstance(value, type):
        return {**out, "name": str(type.__dict__["__qualname__"].__get__(value))}
    if isinstance(
        value, types.ModuleType | types.FunctionType | types.MethodType | types.BuiltinFunctionType
    ):
        return out
    if id(value) in OBJECT_PATH:
        return "<cycle>"
    OBJECT_PATH.append(id(value))
    try:
        for name, item in public_fields(value)[:24]:
            if isinstance(item, Unreadable):
                out[name] = {"raises": item.name}
            elif not callable(item):
                out[name] = plain(item, depth + 1)
    finally:
        OBJECT_PATH.pop()
    return out


def _loaded(module, name):
    """A class of a standard-library module, if that module is loaded (a value of a class no module
    loaded cannot exist), else None: nothing is imported for the check."""
    found = sys.modules.get(module)
    kind = getattr(found, name, None) if found is not None else None
    return kind if isinstance(kind, type) else None


def _decimal_digits(value):
    """A finite Decimal as its exact value written one way ("105e-1" for 10.50 and 10.5: `==` says
    equal), without arithmetic, so an exponent of any size costs nothing."""
    sign, digits, exponent = value.as_tuple()
    kept = list(digits)
    while len(kept) > 1 and kept[-1] == 0:
        kept.pop()
        exponent += 1
    if kept == [0] or not kept:
        return "0"
    return ("-" if sign else "") + "".join(map(str, kept)) + "e" + str(exponent)


def standard_value(value, depth):
    """Plain data for the standard library's value types that `==` compares by value (a Decimal, a
    date, a deque, ...), tagged with the type; None for any other value. Before, each showed as its
    type name alone, so any Decimal equalled any other."""
    tagged = {}
    decimal_type = _loaded("decimal", "Decimal")
    fraction_type = _loaded("fractions", "Fraction")
    deque_type = _loaded("collections", "deque")
    datetime_module = sys.modules.get("datetime")
    if decimal_type is not None and isinstance(value, decimal_type):
        tagged = {"Decimal": _decimal_digits(value) if value.is_finite() else str(value)}
    elif fraction_type is not None and isinstance(value, fraction_type):
        tagged = {"Fraction": [int(value.numerator), int(value.denominator)]}
    elif isinstance(value, complex):
        tagged = {"complex": [float(value.real), float(value.imag)]}
    elif isinstance(value, bytearray | memoryview):
        return {"__bytes__": bytes(value).hex()}  # equal to bytes of the same content, as `==` says
    elif isinstance(value, range):
        tagged = {"range": [value[0], value[-1], value.step if len(value) > 1 else 1] if value else []}
    elif deque_type is not None and isinstance(value, deque_type):
        tagged = {"deque": [plain(item, depth + 1) for item in list(value)[:10_000]]}
    elif datetime_module is not None and isinstance(value, datetime_module.timedelta):
        tagged = {"timedelta": [value.days, value.seconds, value.microseconds]}
    elif datetime_module is not None and isinstance(value, datetime_module.datetime | datetime_module.time):
        moment = value
        if isinstance(value, datetime_module.datetime) and value.utcoffset() is not None:
            moment = value.astimezone(datetime_module.timezone.utc)  # aware: equal at the same instant
        tagged = {"datetime" if isinstance(value, datetime_module.datetime) else "time": moment.isoformat()}
    elif datetime_module is not None and isinstance(value, datetime_module.date):
        tagged = {"date": value.isoformat()}
    else:
        for module, name in (("uuid", "UUID"), ("pathlib", "PurePath"), ("ipaddress", "_BaseAddress")):
            kind = _loaded(module, name)
            if kind is not None and isinstance(value, kind):
                tagged = {name.strip("_"): str(value)}
                break
    if not tagged:
        return None
    ((name, data),) = tagged.items()
    return {"__type__": name, "value": data}


def hashable(key):
    """A converted dict key that is a list or a dict (a dataclass key, `{Point(1, 2): 3}`) as a tuple:
    lists item by item, dicts as their (key, value) items in a fixed order. Without this, any value
    keyed by such an object failed to convert on both sides alike, whatever it held."""
    if isinstance(key, list | tuple):
        return tuple(hashable(item) for item in key)
    if isinstance(key, dict):
        return tuple(sorted(((hashable(k), hashable(v)) for k, v in key.items()), key=repr))
    return key


MISSING_ATTRIBUTE = "<no such attribute>"
MAX_STATE_DEPTH = 3


def public_state(value, depth=0):
    """A value as plain data, where `plain` would keep only its type name (an ordinary object of
    the repository, a stats record): its public non-callable attributes, recursively."""
    converted: typing.Any = plain(value)
    if depth >= MAX_STATE_DEPTH or converted != {"__type__": type(value).__name__}:
        return converted
    out: dict[str, typing.Any] = dict(converted)
    for name, item in public_fields(value)[:24]:
        if isinstance(item, Unreadable):
            out[name] = {"raises": item.name}
        elif not callable(item):
            out[name] = public_state(item, depth + 1)
    return out


class Unreadable:
    """A public field whose read raised (a property that raises): shown as {"raises": name}."""

    def __init__(self, name):
        self.name = name


def public_fields(value):
    """[(name, value)] of an object's public data, by name: its `__dict__` entries, the members its
    classes declare in `__slots__` and properties with a setter (an attribute kept behind accessors),
    wherever a record keeps what a caller reads (`stats.evictions`). A field not set is left out."""
    names = set()
    try:
        names.update(k for k in vars(value) if isinstance(k, str) and type(k) is str)
    except BaseException:  # noqa: BLE001 - no `__dict__`, or a hostile one
        pass
    try:
        for cls in type(value).__mro__:
            members = type.__dict__["__dict__"].__get__(cls)
            slots = members.get("__slots__", ())
            for name in [slots] if type(slots) is str else list(slots)[:64]:
                if type(name) is str and type(members.get(name)) is types.MemberDescriptorType:
                    names.add(name)
            for name, member in members.items():
                if type(name) is str and type(member) is property and member.fset is not None:
                    names.add(name)
    except BaseException:  # noqa: BLE001 - a hostile class
        pass
    fields = []
    for name in sorted(n for n in names if not n.startswith("_")):
        try:
            fields.append((name, getattr(value, name)))
        except AttributeError:  # a slot never set
            continue
        except BaseException as exc:  # noqa: BLE001 - a property that raises
            fields.append((name, Unreadable(type(exc).__name__)))
    return fields


def observed_state(instance, names):
    """{name: the attribute as plain data} for each observed public attribute of an object."""
    state: dict[str, typing.Any] = {}
    for name in names:
        try:
            state[name] = public_state(getattr(instance, name, MISSING_ATTRIBUTE))
        except BaseException as exc:  # noqa: BLE001 - a property that raises
            state[name] = {"raises": type(exc).__name__}
    return state


def resolve(target):
    module_name, _, attribute = str(target).partition(":")
    value = __import__(module_name, fromlist=["_"])
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def as_is(value, depth=0):
    return value


CONVERT = [plain]  # how outcomes are turned into data: `plain`, or `as_is` while a perf scenario runs


def snapshot(args, kwargs):
    try:
        return plain([list(args), dict(kwargs)])
    except BaseException:  # noqa: BLE001 - a hostile argument object
        return None


def outcome(function, args=(), kwargs=None):
    """{"value": ...} or {"raises": name}, plus {"mutated": arguments after the call} when the call
    changed its arguments in place (an effect the caller sees, compared like the value; a call that
    mutates then raises shows both, so validating after mutating differs from validating first) and
    {"stdout": text} when it printed, {"detail": ...} with the public attributes of an exception it
    raised, and {"db": [tables and rows]} for each sqlite database it opened itself (tracked calls)."""
    kwargs = kwargs or {}
    if CONVERT[0] is as_is:  # a perf scenario's measured run counts its own work only
        try:
            return {"value": function(*args, **kwargs)}
        except BaseException as exc:  # noqa: BLE001
            return {"raises": type(exc).__name__}
    mutable = any(not isinstance(a, SCALARS) for a in args) or any(
        not isinstance(v, SCALARS) for v in kwargs.values()
    )
    before = snapshot(args, kwargs) if mutable else None
    result: dict[str, typing.Any]
    captured, saved = Capture(), sys.stdout
    sys.stdout = captured
    del OPENED[:]
    try:
        value = function(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - repository code may raise anything
        result = {"raises": type(exc).__name__}
        detail = exception_detail(exc)
        if detail:
            result["detail"] = detail
    else:
        try:  # a value that cannot be turned into data is not the call raising
            if isinstance(value, Typed):
                result = {"value": CONVERT[0](value.value), "type": exact_type_name(value.value)}
            else:
                result = {"value": CONVERT[0](value)}
        except BaseException as exc:  # noqa: BLE001 - a hostile value
            result = {"value": {"__unconvertible__": type(exc).__name__}}
    finally:
        sys.stdout = saved
    if OPENED:  # databases the call opened itself: the rows it left there are an effect too
        result["db"] = [database_state(connection) for connection in OPENED]
        del OPENED[:]
    printed = captured.getvalue()
    if printed:  # what the call printed, in order: steps printing their effects show their order
        result["stdout"] = printed
    if mutable:  # scalars cannot be changed in place
        after = snapshot(args, kwargs)
        if after != before:
            result["mutated"] = after
    return result


def exact_type_name(value):
    """The name of a value's class where that class is the one its module holds under that name
    (`geo.Point`); a class made elsewhere under the same name (`type("Point", (tuple,), {})`) is not
    the type a caller imports, and its name says so."""
    kind = type(value)
    name = str(type.__dict__["__name__"].__get__(kind))
    try:
        found = sys.modules.get(str(kind.__module__))
        for part in str(type.__dict__["__qualname__"].__get__(kind)).split("."):
            found = getattr(found, part)
        if found is kind:
            return name
    except BaseException:  # noqa: BLE001 - a local class, or a hostile module
        pass
    return name + " (not the class its module holds by that name)"


def exception_detail(exc):
    """The public attributes an exception carries beyond its message (`ConfigError.line`), as plain
    scalars: what a caller reads from it (`exc.line == 1` in a test) is behaviour too."""
    try:
        found = {
            str(name): value
            for name, value in vars(exc).items()
            if isinstance(name, str) and not name.startswith("_") and type(value) in SCALARS
        }
    except BaseException:  # noqa: BLE001 - a hostile exception object
        return {}
    return dict(sorted(found.items())[:8])


class CallableFailure(Exception):
    """What a callable of the grader's raises (a handler or callback the repository calls)."""


def grader_callable(spec):
    """A callable standing for one a user supplies (a route handler, a callback): it ignores its
    arguments and returns `spec["value"]`, or raises CallableFailure when `spec["does"]` is "raise"."""
    if spec.get("does") == "raise":

        def failing(*args, **kwargs):
            raise CallableFailure("a callable supplied by the caller raised")

        return failing
    value = spec.get("value")

    def returning(*args, **kwargs):
        return value

    return returning


def resolves(target):
    """None if `target` names an attribute of an importable module, else why not."""
    module_name, _, attribute = str(target).partition(":")
    try:
        value = __import__(module_name, fromlist=["_"])
    except BaseException as exc:  # noqa: BLE001
        return f"module {module_name} does not import ({type(exc).__name__}: {str(exc)[:200]})"
    for part in attribute.split("."):
        try:
            value = getattr(value, part) if hasattr(value, part) else _instance_attribute(value, part)
        except BaseException:  # noqa: BLE001 - a hostile `__getattr__`: the name does not resolve
            return f"{module_name} has no attribute {attribute}"
    return None


def _instance_attribute(value, part):
    """`part` on an instance of class `value` made without running its `__init__` (a class
    `__getattr__` serves instances only); AttributeError if it is not there either."""
    if not isinstance(value, type):
        raise AttributeError(part)
    make = getattr(value, "__new__")  # noqa: B009 - looked up through the MRO, untyped for the checker
    return getattr(make(value), part)


class Typed:
    """A call's value with its exact type name kept beside it (see `outcome`)."""

    def __init__(self, value):
        self.value = value


def copy_args(value) -> typing.Any:
    """A fresh copy of a scenario's JSON arguments, so a call that mutates them cannot change the next
    (not while a perf scenario is measured: it runs once, and the copy is not its work)."""
    if CONVERT[0] is as_is:
        return value
    if isinstance(value, list):
        return [copy_args(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {CALLABLE_KEY} and isinstance(value[CALLABLE_KEY], dict):
            return grader_callable(value[CALLABLE_KEY])  # {"__rlvr_callable__": {...}}: a callable
        return {key: copy_args(item) for key, item in value.items()}
    return value


def run_scenario(scenario):
    kind = scenario.get("kind")
    if kind == "call":
        # `repeat` 2: the same call twice in one process (state one call leaves must not change the next)
        exact = bool(scenario.get("exact_type"))  # the reference's annotation fixes the value's type

        # `feed`: the first argument is what another function of the repository returns for its own
        # arguments (a function taking built objects, called on what the repository builds)
        feed = scenario.get("feed")

        def call(*args, **kwargs):
            if feed:
                args = (resolve(feed["target"])(*copy_args(feed.get("args", []))), *args)
            value = resolve(scenario["target"])(*args, **kwargs)
            return Typed(value) if exact else value

        TRACKING[0] = True
        try:
            calls = [
                outcome(
                    call,
                    copy_args(scenario.get("args", [])),
                    copy_args(scenario.get("kwargs", {})),
                )
                for _ in range(max(1, min(int(scenario.get("repeat", 1)), 3)))
            ]
        finally:
            TRACKING[0] = False
            del OPENED[:]
        return {**calls[0], "again": calls[1:]} if len(calls) > 1 else calls[0]
    if kind == "absent":
        # an API-surface constraint: the name must not resolve (removed, renamed without an alias)
        return {"present": resolves(scenario["target"]) is None}
    if kind == "exports":
        # what `from module import *` binds: the module's `__all__`, and which of its names do not resolve
        def exports():
            module = __import__(scenario["target"], fromlist=["_"])
            names = getattr(module, "__all__", None)
            if names is None:
                return None
            names = [str(name) for name in names]
            return {"all": sorted(names), "unresolved": sorted(n for n in names if not hasattr(module, n))}

        return outcome(exports)
    if kind == "object":
        try:
            instance = resolve(scenario["target"])(*scenario.get("args", []), **scenario.get("kwargs", {}))
        except BaseException as exc:  # noqa: BLE001
            return {"init": {"raises": type(exc).__name__}}
        # `observe`: public attributes of the object read after each step (a counter such as
        # `stats.evictions` is state a caller reads, compared like the step's value)
        observe = [str(name) for name in scenario.get("observe") or []]
        steps = []
        for method, args in scenario.get("steps", []):
            step: dict[str, typing.Any] = outcome(
                lambda *a, m=method: getattr(instance, m)(*a), copy_args(args)
            )
            if observe:
                step["state"] = observed_state(instance, observe)
            steps.append(step)
        if scenario.get("fresh"):  # `fresh`: a second call of the factory must not return this object
            again = outcome(lambda: resolve(scenario["target"])(*scenario.get("args", [])) is not instance)
            return {"steps": steps, "fresh": again}
        return {"steps": steps}
    if kind == "cli":
        return run_cli(scenario)
    if kind == "sqlite":
        connection = sqlite3.connect(":memory:")
        for statement in scenario.get("seed_sql", []):
            connection.execute(statement)
        # `trace`: the statements the migration executes, in order (the trusted process cuts the
        # reference's trace at each `PRAGMA user_version` into a database at every earlier version)
        trace = []
        if scenario.get("trace"):
            connection.set_trace_callback(trace.append)
        # `repeat` 2: the migration runs twice on the same database (a migration must be idempotent)
        repeat = max(1, min(int(scenario.get("repeat", 1)), 3))
        calls = [
            outcome(lambda: resolve(scenario["target"])(connection, *copy_args(scenario.get("args", []))))
            for _ in range(repeat)
        ]
        connection.set_trace_callback(None)
        if scenario.get("trace"):
            return {"call": calls[0], "trace": trace}
        rows = []
        for query in scenario.get("queries", []):
            rows.append(outcome(lambda q=query: [list(row) for row in connection.execute(q).fetchall()]))
        if repeat > 1:
            return {"call": calls[0], "again": calls[1:], "rows": rows}
        return {"call": calls[0], "rows": rows}
    raise ValueError("unknown scenario kind")


def run_cli(scenario):
    captured = Capture()
    saved, saved_error = sys.stdout, sys.stderr
    sys.stdout = captured
    sys.stderr = Capture()  # usage lines and argparse errors: kept from the file, never compared
    try:
        status = resolve(scenario["target"])(list(scenario.get("argv", [])))
        status = status if isinstance(status, int) else 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001
        status = "raises " + type(exc).__name__
    finally:
        sys.stdout, sys.stderr = saved, saved_error
    return {"stdout": captured.getvalue(), "exit": status}


def _may_select(path, selector):
    """Whether some test of file `path` may match `selector` (a file, a directory or a test id)."""
    if not selector:
        return True
    where = selector.split("::", 1)[0].rstrip("/")
    return path == where or path.startswith(where + "/")


def _selects(selector, path, case_name):
    if "::" not in selector:
        return _may_select(path, selector)
    node = path + "::" + case_name
    return node == selector or node.startswith(selector + "::")


SKIPPED = object()  # what a unittest case that skipped itself returns


class UnittestFailure(AssertionError):
    """A unittest case's failure or error, as its report's last line."""


def _unittest_cases(name, cls, unit):
    """(id, callable) of each test method of a unittest.TestCase class, as unittest runs it: a fresh
    instance per method, setUp/tearDown around it; setUpClass before the first, tearDownClass after
    the last (a failing setUpClass fails every method)."""
    methods = unit.TestLoader().getTestCaseNames(cls)
    state = {"ready": None, "left": len(methods)}

    class Result(unit.TestResult):
        def _exc_info_to_string(self, err, test):  # no traceback: frames are refused here
            return f"{getattr(err[0], '__name__', 'Exception')}: {str(err[1])[:400]}"

    def make(method):
        def run():
            try:
                if state["ready"] is None:
                    try:
                        cls.setUpClass()
                        state["ready"] = True
                    except BaseException as exc:  # noqa: BLE001
                        state["ready"] = exc
                if state["ready"] is not True:
                    raise state["ready"]
                result = Result()
                cls(method).run(result)
                problems = result.errors + result.failures
                if problems:
                    raise UnittestFailure(problems[0][1].strip().splitlines()[-1][:400])
                if result.unexpectedSuccesses:
                    raise UnittestFailure("unexpected success of a test marked as an expected failure")
                return SKIPPED if result.skipped else None
            finally:
                state["left"] -= 1
                if state["left"] == 0 and state["ready"] is True:
                    cls.tearDownClass()

        return run

    return [(name + "::" + method, make(method)) for method in methods]


def run_tests(arg):
    importer = STATE["importer"]
    selector = arg.get("selector") or ""
    paths = arg.get("paths")  # a list: only these test files (the grader's affected ones)
    chosen = set(paths) if isinstance(paths, list) else None
    lines, passed, failed = [], 0, 0
    for path in sorted(importer.files):
        if not TEST_FILE.search(path) or not _may_select(path, selector):
            continue
        if chosen is not None and path not in chosen:
            continue
        module_name = path[:-3].replace("/", ".")
        if module_name not in importer.modules:
            continue
        try:
            module = __import__(module_name, fromlist=["_"])
        except BaseException as exc:  # noqa: BLE001
            failed += 1
            lines.append(f"{path} ERROR at import: {type(exc).__name__}: {str(exc)[:300]}")
            continue
        for name, function in list(vars(module).items()):
            cases = []
            unit = sys.modules.get("unittest")  # imported by the test module itself, if it uses it
            if name.startswith("test") and callable(function) and not isinstance(function, type):
                cases = [(name, function)]
            elif (
                name.startswith("Test")
                and isinstance(function, type)
                and unit is not None
                and issubclass(function, unit.TestCase)
            ):
                cases = _unittest_cases(name, function, unit)
            elif name.startswith("Test") and isinstance(function, type):
                try:
                    instance = function()
                    cases = [
                        (name + "::" + m, getattr(instance, m)) for m in dir(function) if m.startswith("test")
                    ]
                except BaseException as exc:  # noqa: BLE001
                    failed += 1
                    lines.append(f"{path}::{name} ERROR: {type(exc).__name__}")
            for case_name, case in cases:
                if not _selects(selector, path, case_name):
                    continue
                try:
                    if case() is SKIPPED:
                        lines.append(f"{path}::{case_name} SKIPPED")
                        continue
                    passed += 1
                    lines.append(f"{path}::{case_name} PASSED")
                except BaseException as exc:  # noqa: BLE001
                    failed += 1
                    lines.append(f"{path}::{case_name} FAILED: {type(exc).__name__}: {str(exc)[:400]}")
    return {"passed": passed, "failed": failed, "lines": lines}


def run_imports():
    """[module, error] for every module of the repository (tests aside) that does not import."""
    failures = []
    for name, (path, _) in sorted(STATE["importer"].modules.items()):
        if path is None or TEST_FILE.search(path) or path.startswith("tests/"):
            continue
        try:
            __import__(name, fromlist=["_"])
        except BaseException as exc:  # noqa: BLE001
            failures.append([name, f"{type(exc).__name__}: {str(exc)[:200]}"])
    return failures


def run_python(arg):
    captured = Capture()
    saved = sys.stdout
    sys.stdout = captured
    error = None
    try:
        exec(compile(arg["code"], "<run_python>", "exec"), {"__name__": "__main__"})
    except BaseException as exc:  # noqa: BLE001
        error = f"{type(exc).__name__}: {str(exc)[:500]}"
    finally:
        sys.stdout = saved
    return {"stdout": captured.getvalue(), "error": error}


def run_search(arg):
    pattern = re.compile(arg["pattern"])
    prefix, limit, hits = arg.get("path") or "", int(arg.get("max", 100)), []
    for path in sorted(STATE["importer"].files):
        if not path.startswith(prefix):
            continue
        for number, line in enumerate(STATE["importer"].files[path].splitlines(), start=1):
            if pattern.search(line):
                hits.append([path, number, line[:200]])
                if len(hits) >= limit:
                    return hits
    return hits


def repo_driver(op, arg):
    if op == "install":
        allow_undocumented_dataclasses()
        importer = RepoImporter(dict(arg))
        sys.meta_path.insert(0, importer)
        STATE["importer"] = importer
        return sorted(importer.modules)
    if op == "measure":
        # a perf scenario, run with the modules `prepare` imported and its results kept as they are:
        # the counted operations of this call are the scenario's own work, not the repository's
        # import nor the conversion of its results to plain data (that is "collect", counted apart)
        CONVERT[0] = as_is
        try:
            STATE["measured"] = run_scenario(arg)
        finally:
            CONVERT[0] = plain
        return None
    if op == "collect":
        return plain(STATE.pop("measured", None))
    # Derived checks (calls the grader makes up around the listed ones) share one fresh import of the
    # repository, the first of them starting afresh; every other operation starts from a fresh import.
    shared = op == "scenario" and isinstance(arg, dict) and bool(arg.get("derived"))
    if not (shared and STATE.get("shared")):
        STATE["importer"].forget()
    STATE["shared"] = shared
    if op == "prepare":
        resolve(arg["target"])
        return None
    if op == "scenario":
        return run_scenario(arg)
    if op == "tests":
        return run_tests(arg)
    if op == "python":
        return run_python(arg)
    if op == "search":
        return run_search(arg)
    if op == "resolve":
        return [resolves(target) for target in arg]
    if op == "imports":
        return run_imports()
    raise ValueError("unknown operation")
