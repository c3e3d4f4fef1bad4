# ruff: noqa: E402, I001
"""The sandbox zygote: a warm worker that forks one fresh child per candidate.

This file is never imported by the grader. The pool runs its *text* in a fresh interpreter
(`python -I -S -c ...`): standard library only, no site-packages, no grader state, no hidden data.
It must therefore be self-contained.

Protocol (stdin/stdout of the zygote; a frame is a 4-byte big-endian length + that many bytes):
  request   frame {"op": "run", "timeout", "wall", "max_output", "size"}, then `size` raw bytes: the job, JSON
            {"source", "entry", "calls": [wire args], "trace", "memory", "mem_mb", "read_code"}; or frame {"op": "ping"}.
            A node job's header also has "runtime": "node", "node", "argv", "process_filter",
            "address_space_mb" (see rlvr/sandbox/node.py); its job goes to the child on a pipe.
  response  frame {"status": null|"timeout"|"output_limit"|"sandbox_error", "exit": int|null,
            "wall": float, "token": str, "detail": str}, then a frame holding the child's raw output
  forked calls  a job with "fork_calls": true (and "call_timeout", "call_wall", "call_output",
            "budget", "stop_on_failure") makes the child the round's parent: it loads the module
            once, then forks one child per call from that state and relays each call's raw output
            after a [token, "call", [index, status, exit, wall, call_token, size]] message (the
            header's limits are then the parent's own; see `serve_forked`, and protocol.py)

The zygote never decodes a job or a child's output: it reads the job into one buffer, forks, and
wipes the buffer; it collects the child's output into one buffer, forwards it, and wipes that. Only
the forked child parses the job; only the trusted side parses the output. So the zygote holds no
source, no arguments and no results (a reference solution's outputs are hidden data) when it forks
the next candidate.

`timeout` is the child's CPU budget (read from its CPU clock; the kernel's RLIMIT_CPU backs it up);
`wall` is a larger wall-clock limit for a child that sleeps or blocks. A busy machine slows an
honest child down without failing it.

Every candidate starts from the same state. The launcher installed the sandbox's syscall filter
before exec'ing this zygote (see syscall_filter.py): no process under it can write to the file
system or address another process, so a candidate cannot leave a file, FIFO or node for the next one,
nor renice, pin, limit or signal this zygote whose state every fork inherits. After each candidate
the zygote also checks that its scratch directory (the sandbox's /tmp, or the degraded mode's
private directory) is still empty, and exits after answering if it is not (the pool starts a fresh
one). The zygote never imports ctypes: a candidate could reach it through object.__subclasses__() (only
the forked child of a node job imports it, to add its process filter, and execs node right after).
Counted operations (`trace`) cover every frame run on the candidate's behalf, whatever its globals.

The child's messages are JSON lists [token, kind, payload] (kinds: loaded, load, result, denied,
done; "denied" names an operation the sandbox refused, once per name, as soon as it is refused), each
framed; the token is random per run and unknown to the candidate, so forged messages are recognised.
Results are {"ok": <wire value>} or {"exc": "TypeName"} (see rlvr/core/codec.py). Exit codes decide nothing.
"""

import builtins
import _json
import json
import math
import os
import resource
import select
import signal
import struct
import sys
import time

# Warm the modules candidates commonly use, so a child does not import them from disk.
import bisect  # noqa: F401
import collections  # noqa: F401
import copy  # noqa: F401
import fractions  # noqa: F401
import functools  # noqa: F401
import hashlib  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import operator  # noqa: F401
import random  # noqa: F401
import re  # noqa: F401
import statistics  # noqa: F401
import string  # noqa: F401
import typing  # noqa: F401

# ...and what repository tasks import on every run (rlvr/graders/repo/child_driver.py and typical repos).
import ast, csv, dataclasses, enum, inspect, io, sqlite3  # noqa: E401, F401

# ...and the rest of the computational standard library: library code is recognised by identity (see
# `library_code`), so a module first imported by the child would count its module body as the
# candidate's load-time work.
import array, base64, binascii, calendar, cmath, contextlib, datetime, decimal, difflib  # noqa: E401, F401
import fnmatch, graphlib, html, ipaddress, keyword, numbers, pprint, queue, reprlib, secrets  # noqa: E401, F401
import shlex, textwrap, tokenize, traceback, types, unicodedata, urllib.parse, weakref, zlib  # noqa: E401, F401

# `logging` reads a function's `__code__` while it loads, which the child refuses (frame and code
# access is how a candidate would reach the sandbox's counters), so honest code that imports it would
# fail to load. Imported here, before any candidate exists; see `quiet_caller_lookup` for its use.
import logging

CANDIDATE_FILE = "<candidate>"
PARENT_RESERVE = 4096
"""Bytes of a forked-calls parent's budget kept for its own messages (loaded, denied, stopped, done)."""
SCRATCH = ["/tmp"]  # the scratch directory (main() sets it from argv): a forked-calls parent checks it
MAX_DEPTH = 64
MAX_INT_BITS = 14_000  # ~4,200 decimal digits: below Python's int/str conversion limit (4,300)
RESULT_TOO_DEEP, RESULT_TOO_LARGE, RESULT_NOT_PLAIN = "ResultTooDeep", "ResultTooLarge", "ResultNotPlainData"
STDLIB_DIR = os.path.dirname(os.path.realpath(os.__file__))
BLOCKED_MODULES = frozenset(
    {
        "ctypes",
        "_ctypes",
        "_posixsubprocess",
        "subprocess",
        "multiprocessing",
        "_multiprocessing",
        "socket",
        "_socket",
        "ssl",
        "_ssl",
        "_testcapi",
        "_testinternalcapi",
        "_xxsubinterpreters",
        "_posixshmem",
        "mmap",
        "pty",
        "gc",
        "faulthandler",
        "tracemalloc",
        "_tracemalloc",
        "fcntl",
        "termios",
        "_sqlite3",  # these three write files from C, out of the audit hook's sight
        "_dbm",
        "_gdbm",
        "readline",
    }
)
# builtin modules whose re-import would restore the functions removed from them below
NO_REIMPORT = frozenset({"posix", "_signal"})
BLOCKED_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.spawn",
        "os.posix_spawn",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "subprocess.Popen",
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "sys.settrace",
        "sys.setprofile",
        "sys._getframe",
        "sys._current_frames",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.cdata",
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.utime",
        "os.chdir",
        "os.setxattr",
        "os.removexattr",
        "shutil.rmtree",
        "shutil.copyfile",
        "shutil.move",
        "pty.spawn",
        "sys.addaudithook",
        "signal.pthread_kill",
        "resource.setrlimit",
        "resource.prlimit",
        "os.putenv",
        "os.unsetenv",
        "code.__new__",
        "_thread.start_new_thread",
        "pickle.find_class",
    }
)
PARENT_EVENTS = frozenset({"os.fork", "os.kill", "resource.setrlimit"})
"""What a forked-calls parent does under the audit hook (see `install_audit_hook`'s `trusted`)."""
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "__code__"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
POSIX_REMOVED = (
    "write",
    "writev",
    "pwrite",
    "pwritev",
    "sendfile",
    "splice",
    "copy_file_range",
    "dup",
    "dup2",
    "fdopen",
    "openpty",
    "pipe",
    "pipe2",
    "memfd_create",
    "eventfd",
    "eventfd_write",  # writes 8 bytes to any descriptor (the result channel included)
    "eventfd_read",
    "tee",
    "mkfifo",  # no audit event exists for these: they are removed (and the kernel filter denies them)
    "mknod",
    "posix_fallocate",
    "setpriority",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "pidfd_open",
    "setpgid",
)
SIGNAL_REMOVED = ("pidfd_send_signal", "set_wakeup_fd")  # set_wakeup_fd: a byte per signal to any fd

# Which operation a refusal stands for: the child reports it (kind "denied") so the grader can flag
# `sandbox:denied:<op>`. The names are rlvr/core/flags.py's DENIED_OPS (a test keeps them in step).
EVENT_OPS = {
    "os.system": "subprocess",
    "os.exec": "subprocess",
    "os.spawn": "subprocess",
    "os.posix_spawn": "subprocess",
    "os.fork": "subprocess",
    "os.forkpty": "subprocess",
    "subprocess.Popen": "subprocess",
    "pty.spawn": "subprocess",
    "os.kill": "signal",
    "os.killpg": "signal",
    "signal.pthread_kill": "signal",
    "socket.__new__": "socket",
    "socket.connect": "socket",
    "socket.bind": "socket",
    "sys.settrace": "introspection",
    "sys.setprofile": "introspection",
    "sys._getframe": "introspection",
    "sys._current_frames": "introspection",
    "gc.get_objects": "introspection",
    "gc.get_referrers": "introspection",
    "gc.get_referents": "introspection",
    "code.__new__": "introspection",
    "ctypes.dlopen": "ctypes",
    "ctypes.dlsym": "ctypes",
    "ctypes.cdata": "ctypes",
    "os.remove": "file_write",
    "os.rename": "file_write",
    "os.rmdir": "file_write",
    "os.mkdir": "file_write",
    "os.chmod": "file_write",
    "os.chown": "file_write",
    "os.link": "file_write",
    "os.symlink": "file_write",
    "os.truncate": "file_write",
    "os.utime": "file_write",
    "os.setxattr": "file_write",
    "os.removexattr": "file_write",
    "shutil.rmtree": "file_write",
    "shutil.copyfile": "file_write",
    "shutil.move": "file_write",
    "os.chdir": "process_control",
    "sys.addaudithook": "process_control",
    "resource.setrlimit": "process_control",
    "resource.prlimit": "process_control",
    "os.putenv": "process_control",
    "os.unsetenv": "process_control",
    "_thread.start_new_thread": "thread",
    "pickle.find_class": "unpickle",
}
MODULE_OPS = {
    "ctypes": "ctypes",
    "_ctypes": "ctypes",
    "_posixsubprocess": "subprocess",
    "subprocess": "subprocess",
    "multiprocessing": "subprocess",
    "_multiprocessing": "subprocess",
    "pty": "subprocess",
    "socket": "socket",
    "_socket": "socket",
    "ssl": "socket",
    "_ssl": "socket",
    "gc": "introspection",
    "faulthandler": "introspection",
    "tracemalloc": "introspection",
    "_tracemalloc": "introspection",
    "_signal": "signal",
}  # every other blocked module: "import"
REMOVED_OPS = {
    "write": "file_write",
    "writev": "file_write",
    "pwrite": "file_write",
    "pwritev": "file_write",
    "sendfile": "file_write",
    "splice": "file_write",
    "copy_file_range": "file_write",
    "posix_fallocate": "file_write",
    "mkfifo": "file_write",
    "mknod": "file_write",
    "memfd_create": "file_write",
    "dup": "descriptor",
    "dup2": "descriptor",
    "fdopen": "descriptor",
    "openpty": "descriptor",
    "pipe": "descriptor",
    "pipe2": "descriptor",
    "eventfd": "descriptor",
    "eventfd_write": "file_write",
    "eventfd_read": "descriptor",
    "set_wakeup_fd": "descriptor",
    "tee": "descriptor",
    "setpriority": "process_control",
    "sched_setaffinity": "process_control",
    "sched_setscheduler": "process_control",
    "sched_setparam": "process_control",
    "setpgid": "process_control",
    "pidfd_open": "signal",
    "pidfd_send_signal": "signal",
    "settrace": "introspection",  # removed from sys
    "gettrace": "introspection",
    "setprofile": "introspection",
    "getprofile": "introspection",
    "_getframe": "introspection",
    "_current_frames": "introspection",
}
DENIED_OPS = frozenset(
    {*EVENT_OPS.values(), *MODULE_OPS.values(), *REMOVED_OPS.values(), "file_read", "import", "syscall"}
)


class Refused(PermissionError):
    pass


# ---------------------------------------------------------------- plain-data codec (as rlvr/core/codec.py)
def to_wire(value, depth=0):
    """The encoder a child uses (see make_wire_encoder); kept under this name for the codec tests."""
    return make_wire_encoder()[0](value, depth)


def from_wire(doc, depth=0):
    if depth > MAX_DEPTH:
        raise ValueError("document nested too deeply")
    kind = type(doc)
    if doc is None or kind in (bool, int, str, float):
        return doc
    if kind is list:
        return [from_wire(v, depth + 1) for v in doc]
    if kind is dict and len(doc) == 1:
        ((tag, body),) = doc.items()
        if tag == "f":
            return float(body)
        if tag == "t":
            return tuple(from_wire(v, depth + 1) for v in body)
        if tag == "s":
            return {from_wire(v, depth + 1) for v in body}
        if tag == "fs":
            return frozenset(from_wire(v, depth + 1) for v in body)
        if tag == "d":
            return {from_wire(k, depth + 1): from_wire(v, depth + 1) for k, v in body}
    raise ValueError("malformed document")


# ---------------------------------------------------------------- framing
def read_exact(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(fd):
    (size,) = struct.unpack(">I", read_exact(fd, 4))
    return json.loads(read_exact(fd, size))


def write_message(fd, obj):
    data = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
    os.write(fd, struct.pack(">I", len(data)) + data)


# ---------------------------------------------------------------- the child: runs one candidate
def lock_down(mem_mb, cpu_seconds, keep_fd, processes=0):
    # fd 2 is /dev/null opened for writing by the launcher; the syscall filter denies opening any
    # file for writing, so stdout reuses it and stdin is /dev/null read-only. `processes`: the
    # RLIMIT_NPROC left (0, no fork, for every process that runs candidate code; a forked-calls
    # parent keeps the zygote's, and each call's child sets 0 before the candidate runs)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 65536)
    limits = [
        (resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds)),
        (resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20)),
        (resource.RLIMIT_FSIZE, (0, 0)),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_NOFILE, (32, 32)),
    ]
    if processes == 0:
        limits.append((resource.RLIMIT_NPROC, (0, 0)))
    for which, value in limits:
        try:
            resource.setrlimit(which, value)
        except (ValueError, OSError):
            pass
    os.environ.clear()


def resolve_path(
    path,
    lstat=os.lstat,
    readlink=os.readlink,
    getcwd=os.getcwd,
    OSError=OSError,
    file_kind=0o170000,
    symlink_kind=0o120000,
    max_links=40,
):
    """`os.path.realpath` (non-strict) of the str `path`, built only from functions bound before candidate
    code exists: `posixpath.realpath` looks its helpers up in the `posixpath` module on every call, so a
    candidate who patched them would decide what a path resolves to. None for a path with a link loop."""
    if not path.startswith("/"):
        path = getcwd() + "/" + path
    pending = [part for part in path.split("/")[::-1] if part and part != "."]  # a stack: next part last
    resolved = []
    links = 0
    while pending:
        part = pending.pop()
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        where = "/" + "/".join([*resolved, part])
        try:
            mode = lstat(where).st_mode
        except OSError:
            mode = 0
        if mode & file_kind != symlink_kind:
            resolved.append(part)
            continue
        links += 1
        if links > max_links:
            return None
        target = readlink(where)
        if target.startswith("/"):
            resolved = []
        pending += [piece for piece in target.split("/")[::-1] if piece and piece != "."]
    return "/" + "/".join(resolved)


def install_audit_hook(
    report=None,
    blocked_events=BLOCKED_EVENTS,
    blocked_modules=BLOCKED_MODULES,
    no_reimport=NO_REIMPORT,
    frame_attributes=FRAME_ATTRIBUTES,
    stdlib_prefix=STDLIB_DIR + os.sep,
    realpath=resolve_path,
    refused=Refused,
    write_flags=WRITE_FLAGS,
    event_ops=EVENT_OPS,
    module_ops=MODULE_OPS,
    denied_ops=DENIED_OPS,
    in_memory=(":memory:", ""),
    memory_uri="file::memory:",
    len=len,
    type=type,
    str=str,
    bytes=bytes,
    int=int,
    any=any,
    collection=None,
    function_type=types.FunctionType,
    id=id,
    trusted=None,
    trusted_events=PARENT_EVENTS,
):
    """Everything the hook uses is bound here, before candidate code exists, so patching this module,
    `os.path` or builtins later cannot loosen it. `report(op)` is called once per refused operation
    name, before the refusal is raised (a candidate that catches the exception is still reported);
    the returned `note(op)` reports an operation refused elsewhere (a removed function, the kernel
    filter), once. Hooks run untraced (the interpreter turns tracing off for them): the hook never
    runs a candidate's code (an argument's `partition`, `__hash__` or `__eq__`), and `collection`
    (gc's isenabled, disable, enable) pauses garbage collection, whose finalizers would run here,
    while it runs.

    A function's `__code__` is refused where it would show the sandbox's own code (its counters know
    that code by identity, and its constants and closures are the sandbox's state); with
    `CODE_READS[0]` set to the ids of that code when the hook is installed (a repository job: packages
    call `inspect.signature` and `functools` helpers at import), reading the `__code__` of any other
    function (the repository's, the standard library's) is allowed. The set is read here, once: a
    candidate that changes `CODE_READS` later changes nothing.

    `trusted` (a forked-calls parent, see `run_candidate`): while `trusted[0]` is set, the events of
    `PARENT_EVENTS` pass — the parent's own fork of a call's child, that child's limits, the kill
    that ends it. The flag is set only around those lines of the sandbox's code (no candidate code
    runs in the parent, and a child clears it before it runs any); nothing else can reach it."""
    reported = set()
    sandbox_code = CODE_READS[0]
    reading = [False]

    def shows_sandbox_code(function):
        # the `__code__` read below raises this same event again: let that one through
        reading[0] = True
        try:
            return id(function.__code__) in sandbox_code
        finally:
            reading[0] = False

    def code_read_refused(function):
        if sandbox_code is None or type(function) is not function_type:
            return True
        return shows_sandbox_code(function)

    def note(op):
        if op not in reported:
            reported.add(op)
            if report is not None:
                report(op)

    def deny(op, what):
        note(op)
        raise refused(what)

    def is_readable_stdlib(path):
        if type(path) is bytes:
            path = path.decode(errors="replace")
        if type(path) is not str:
            return False
        real = realpath(path)
        return type(real) is str and real.startswith(stdlib_prefix) and "site-packages" not in real

    def check(event, args):
        if trusted is not None and trusted[0] and event in trusted_events:
            return
        if event == "rlvr.denied":  # a removed function was reached for (see report_missing)
            if len(args) == 1 and type(args[0]) is str and args[0] in denied_ops:
                note(args[0])
            return
        if event in blocked_events:
            deny(event_ops.get(event, "process_control"), event)
        if event == "import" and type(args[0]) is str:
            top = args[0].partition(".")[0]
            if top in blocked_modules or args[0] in no_reimport:
                deny(module_ops.get(top, "import"), "import " + args[0])
        if event == "sqlite3.connect":  # SQLite opens its files from C, with no "open" event
            database = args[0] if len(args) == 1 else None
            if not (type(database) is str and (database in in_memory or database.startswith(memory_uri))):
                deny("file_read", "sqlite3.connect")
        if event == "object.__getattr__" and type(args[1]) is str and args[1] in frame_attributes:
            if args[1] == "__code__" and (reading[0] or not code_read_refused(args[0])):
                return
            deny("introspection", "frame access")
        if event == "open":
            path, mode, flags = args
            writing = (type(mode) is str and any(c in mode for c in "wax+")) or (
                type(flags) is int and flags & write_flags
            )
            if writing:
                deny("file_write", "open")
            if not is_readable_stdlib(path):
                deny("file_read", "open")

    if collection is None:
        hook = check
    else:
        collection_on, pause_collection, resume_collection = collection

        def hook(event, args):
            if event == "builtins.id":  # the trace function's own, on every call: an int, nothing to check
                return
            on = collection_on()
            pause_collection()
            try:
                check(event, args)
            finally:
                if on:
                    resume_collection()

    sys.addaudithook(hook)
    return note


# A module-level __getattr__ (PEP 562) for os / posix / signal: reaching for a function the child
# removed (`os.pipe`, `getattr(os, "setpriority", None)`) reports it even if the candidate then
# catches the AttributeError. Built in an empty namespace, so its globals and closure hold nothing
# but the public sys.audit and operation names; the audit hook turns the event into a report (a
# candidate raising the event itself can only add a flag to its own verdict). Not installed on sys:
# the standard library probes sys._getframe in ordinary code (typing, namedtuple, enum).
MISSING_SOURCE = """
def make(module_name, pairs, audit):
    def __getattr__(name):
        for removed, op in pairs:
            if type(name) is str and name == removed:
                audit("rlvr.denied", op)
        raise AttributeError("module " + repr(module_name) + " has no attribute " + repr(name))
    return __getattr__


def sealed(function, prepare):
    # `function`, called with what `prepare(args, kwargs)` returns. It lives only in the suspended
    # frame of `calls` (opening it, gi_frame, is refused), not in a closure cell or default anyone can
    # read: the original stays out of reach
    def calls(function, prepare):
        outcome = None
        while True:
            args, kwargs = yield outcome
            try:
                args, kwargs = prepare(args, kwargs)
                outcome = (True, function(*args, **kwargs))
            except BaseException as exc:
                outcome = (False, exc)

    runner = calls(function, prepare)
    next(runner)
    send = runner.send

    def wrapper(*args, **kwargs):
        ok, value = send((args, kwargs))
        if ok:
            return value
        raise value
    return wrapper


def reporting(function, op, audit):
    def report(args, kwargs):
        audit("rlvr.denied", op)
        return args, kwargs
    return sealed(function, report)


def refusing_handlers(install, audit, refused, callable, len):
    # a signal handler is called with the frame the signal interrupted (f_back and f_locals lead to the
    # sandbox's own frames: its op counter, its result channel), wherever the interpreter next checks,
    # inside the trace function and the audit hook too, where nothing is traced. The dispositions
    # (SIG_IGN, SIG_DFL) stay free to set.
    def prepare(args, kwargs):
        if len(args) == 2 and callable(args[1]):
            audit("rlvr.denied", "signal")
            raise refused("signal handler")
        return args, kwargs

    return sealed(install, prepare)
"""
MISSING_CODE = compile(MISSING_SOURCE, "<sandbox>", "exec")  # compiled once, run in each child


def report_missing(module_name, names):
    namespace: dict[str, typing.Any] = {
        "__builtins__": {"type": type, "str": str, "repr": repr, "AttributeError": AttributeError}
    }
    exec(MISSING_CODE, namespace)
    pairs = tuple((name, REMOVED_OPS[name]) for name in names)
    return namespace["make"](module_name, pairs, sys.audit)


def report_threads():
    """Starting a thread fails under RLIMIT_NPROC 0 with no audit event before Python 3.12: wrap the
    one primitive every thread goes through. `threading` binds it when imported; it is warmed here
    (by `logging`), so its bindings are replaced too."""
    namespace: dict[str, typing.Any] = {"__builtins__": {"next": next, "BaseException": BaseException}}
    exec(MISSING_CODE, namespace)
    thread = sys.modules.get("_thread") or __import__("_thread")
    threading_globals = vars(sys.modules["threading"]) if "threading" in sys.modules else {}
    for name in ("start_new_thread", "start_new", "start_joinable_thread"):
        original = thread.__dict__.get(name)
        if original is not None:
            wrapped = namespace["reporting"](original, "thread", sys.audit)
            thread.__dict__[name] = wrapped
            for bound in [key for key, value in threading_globals.items() if value is original]:
                threading_globals[bound] = wrapped


def refuse_signal_handlers():
    """Python signal handlers are refused (see `refusing_handlers`): wrap the one primitive that
    installs them (`signal.signal` calls it, and names the original as its `__wrapped__`)."""
    namespace: dict[str, typing.Any] = {"__builtins__": {"next": next, "BaseException": BaseException}}
    exec(MISSING_CODE, namespace)
    module = sys.modules["_signal"]
    install = namespace["refusing_handlers"](module.signal, sys.audit, Refused, callable, len)
    module.__dict__["signal"] = install
    if "__wrapped__" in vars(signal.signal):
        vars(signal.signal)["__wrapped__"] = install


def denied_op(
    exc,
    removed_from,
    removed_ops=REMOVED_OPS,
    eperm=1,
    refused=Refused,
    oserror=OSError,
    attribute_error=AttributeError,
    runtime_error=RuntimeError,
    no_thread="can't start new thread",
    tuple=tuple,
    len=len,
    type=type,
    getattr=getattr,
    isinstance=isinstance,
    str=str,
    int=int,
):
    """The operation behind an exception the hook did not raise: a function removed from os / posix
    / signal / sys (AttributeError naming it), a thread the process limit refused, or a system call
    the kernel filter refused (EPERM). Builtins
    are bound before candidate code runs; a candidate-made exception can at most name an operation."""
    if type(exc) is attribute_error:
        name = getattr(exc, "name", None)
        obj = getattr(exc, "obj", None)
        if type(name) is str and any_is(obj, removed_from) and name in removed_ops:
            return removed_ops[name]
        return None
    if type(exc) is runtime_error:  # RLIMIT_NPROC 0: the thread's clone fails (no audit event before 3.12)
        args = exc.args
        if type(args) is tuple and len(args) == 1 and type(args[0]) is str and args[0] == no_thread:
            return "thread"
        return None
    if isinstance(exc, oserror) and not isinstance(exc, refused):
        errno = getattr(exc, "errno", None)
        if type(errno) is int and errno == eperm:
            return "syscall"
    return None


def any_is(value, options):
    for option in options:
        if value is option:
            return True
    return False


def make_wire_encoder(
    c_make_encoder=_json.make_encoder,
    encode_string=_json.encode_basestring_ascii,
    type=type,
    isnan=math.isnan,
    isinf=math.isinf,
    len=len,
    list=list,
    tuple=tuple,
    dict=dict,
    set=set,
    frozenset=frozenset,
    bool=bool,
    int=int,
    float=float,
    str=str,
    TypeError=TypeError,
    ValueError=ValueError,
    OverflowError=OverflowError,
):
    """`to_wire` + JSON encoding made only of references bound before candidate code runs: the C
    encoder (no json-module lookups) and builtins captured as defaults, so a candidate patching json,
    builtins or this module cannot forge what is reported."""

    def refuse(value):  # never reached: `wire` only produces JSON-native values
        raise TypeError("not plain data")

    json_chunks = c_make_encoder(None, refuse, encode_string, None, ":", ",", False, False, False)

    def wire(value, depth):
        if depth > MAX_DEPTH:
            raise ValueError("value nested too deeply")
        kind = type(value)
        if kind is int and value.bit_length() > MAX_INT_BITS:
            raise OverflowError("int too large to report")
        if value is None or kind is bool or kind is int or kind is str:
            return value
        if kind is float:
            if isnan(value):
                return {"f": "nan"}
            if isinf(value):
                return {"f": "inf" if value > 0 else "-inf"}
            return value
        if kind is list:
            return [wire(v, depth + 1) for v in value]
        if kind is tuple:
            return {"t": [wire(v, depth + 1) for v in value]}
        if kind is dict:
            return {"d": [[wire(k, depth + 1), wire(v, depth + 1)] for k, v in value.items()]}
        if kind is set:
            return {"s": [wire(v, depth + 1) for v in value]}
        if kind is frozenset:
            return {"fs": [wire(v, depth + 1) for v in value]}
        raise TypeError("not plain data")

    def encode(message):
        return "".join(json_chunks(message, 0)).encode()

    return wire, encode


def code_ids(*codes):
    """ids of these code objects and of every code object nested in them (comprehensions, ...)."""
    found = set()
    stack = list(codes)
    while stack:
        code = stack.pop()
        found.add(id(code))
        stack.extend(c for c in code.co_consts if type(c) is type(code))
    return frozenset(found)


# (ids, the code objects) of the code compiled from this file: filled by main(), see sandbox_code.
SANDBOX_CODE: list[typing.Any] = [frozenset(), ()]
# what the next audit hook lets a candidate read `__code__` of (see install_audit_hook): None, no
# function; a set of code ids, every function whose code is not among them. Set per job by run_candidate.
CODE_READS: list[typing.Any] = [None]

# (ids, the code objects): filled by main(), see library_code. The objects are held so that no id in
# the set can ever be reused by a code object a candidate creates.
LIBRARY_CODE: list[typing.Any] = [frozenset(), ()]


def is_library_module(module):
    """Frozen (the import machinery, io, abc, codecs, os) or loaded from the standard library's directory."""
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    if origin == "frozen":
        return True
    if type(origin) is not str:
        return False
    real = os.path.realpath(origin)
    return real.startswith(STDLIB_DIR + os.sep) and "site-packages" not in real


def library_code():
    """The code objects of the standard-library modules this zygote has loaded (the warmed ones above,
    and what they import), with every code object nested in them. Library code is known by identity,
    never by file name: a candidate can compile its own code under "<frozen ...>" or a path inside
    the standard library's directory."""
    code_type = type(library_code.__code__)
    codes, seen = [], set()

    def visit(value):
        if id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, type):
            for member in list(vars(value).values()):
                visit(member)
            return
        value = getattr(value, "__func__", value)  # staticmethod, classmethod, bound methods
        for function in (
            value,
            getattr(value, "fget", None),
            getattr(value, "fset", None),
            getattr(value, "fdel", None),
        ):
            code = getattr(function, "__code__", None)
            if type(code) is code_type:
                codes.append(code)

    for module in list(sys.modules.values()):
        if is_library_module(module):
            for value in list(vars(module).values()):
                visit(value)
    # holding the outer code objects holds the nested ones too: each is a constant of its parent
    return code_ids(*codes), tuple(codes)


def sandbox_code(namespace):
    """The code objects of this file (its functions, its classes' methods, and every function nested in
    them: the trace functions, the result encoder, the audit hook), from the zygote's own namespace
    before any candidate exists. A candidate's code compiled under the same names is other objects."""
    code_type = type(sandbox_code.__code__)
    codes = []
    for value in list(namespace.values()):
        members = list(vars(value).values()) if isinstance(value, type) else [value]
        for member in members:
            member = getattr(member, "__func__", member)
            code = getattr(member, "__code__", None)
            if type(code) is code_type:
                codes.append(code)
    return code_ids(*codes), tuple(codes)


def quiet_caller_lookup():
    """`logging` finds the file and line of each record's caller by walking frames (`f_back`), which
    the child refuses; with no source file to look for, it skips that walk and records `(unknown file)`,
    as it does where frames are unavailable. Everything else about logging works (levels, handlers,
    formatting to a stream); `exc_info` and `stack_info` still need frames and stay refused. A record
    that fails to format is dropped quietly, as in production (`raiseExceptions` off): reporting it
    prints a traceback, walking frames, to a stderr that is /dev/null here, and would flag an honest
    program's bad log call as introspection."""
    logging._srcfile = None
    logging.raiseExceptions = False


def run_candidate(request, token, wfd):
    """In the forked child. Never returns: ends with os._exit.

    A job with `fork_calls` makes this child the round's parent instead: it loads the module once
    (the job's module body must be the grader's own code, a driver holding the candidate as data:
    every call inherits what it leaves), then forks one child per call from that loaded state (see
    `serve_forked`): each call's child has its own CPU and wall limit, its own output limit counted
    here (outside its process), and nothing it changes reaches the next call."""
    write, exit_now, pack, length = os.write, os._exit, struct.pack, len
    wire, encode = make_wire_encoder()
    base_exception, type_of, str_of = BaseException, type, str
    value_error, overflow_error = ValueError, OverflowError
    channel = [wfd, token]  # a call's child replaces both with its own pipe and token

    def send(kind, payload):
        data = encode([channel[1], kind, payload])
        write(channel[0], pack(">I", length(data)) + data)

    fork_calls = bool(request.get("fork_calls"))
    cpu_limit = int(math.ceil(request["timeout"])) + 1
    lock_down(int(request.get("mem_mb", 1024)), cpu_limit, wfd, processes=-1 if fork_calls else 0)
    quiet_caller_lookup()
    calls = typing.cast(list, [from_wire(args) for args in request["calls"]])
    counter = [0]
    namespace = {"__name__": "__candidate__", "__builtins__": builtins}
    # a forked-calls parent's own tools, bound before any job code exists
    trusted = [False]  # a forked-calls parent's pass for its own fork, kill and a child's limits
    function: typing.Any = None  # the entry point, once the module has loaded
    make_pipe, fork, close, urandom, listdir = os.pipe, os.fork, os.close, os.urandom, os.listdir
    setrlimit, cpu_rlimit, process_rlimit = resource.setrlimit, resource.RLIMIT_CPU, resource.RLIMIT_NPROC
    watch, scratch, memory_view = watch_call, SCRATCH[0], memoryview
    call_timeout = float(request.get("call_timeout") or request["timeout"])
    call_wall = float(request.get("call_wall") or call_timeout)
    budget = int(request.get("budget") or 1 << 20)
    call_output = max(0, min(int(request.get("call_output") or budget), budget - PARENT_RESERVE))
    stop_on_failure = bool(request.get("stop_on_failure"))

    def run_call(index, args):
        # one call, its result sent on the channel (the sandbox's own frame: never counted)
        counter[0] = 0
        peak = baseline = None
        if memory is not None:
            memory.reset_peak()
            baseline = memory.get_traced_memory()[0]
        try:
            resume_collection()
            value = function(*args)
            pause_collection()
            if memory is not None and baseline is not None:
                peak = max(0, memory.get_traced_memory()[1] - baseline)
        except base_exception as exc:  # noqa: BLE001
            pause_collection()
            op = explain(exc, removed_from)
            if op is not None:
                note(op)
            result = {"exc": str_of(type_of(exc).__name__)[:80]}
        else:
            # the value cannot be reported: a named outcome, so the grader can say (and flag) why
            try:
                result = {"ok": wire(value, 0)}
            except value_error:
                result = {"exc": RESULT_TOO_DEEP}
            except overflow_error:
                result = {"exc": RESULT_TOO_LARGE}
            except base_exception:  # noqa: BLE001 - not plain data (or a recursion limit set low)
                result = {"exc": RESULT_NOT_PLAIN}
        send("result", [index, result, counter[0] if trace else None, peak])

    def serve_forked():
        """The round's parent: for each call, a child forked from this loaded state runs it (limits
        first, then the call), while this process collects its output (counted here, up to
        `call_output` bytes) and relays it as one `call` message followed by those raw bytes. It
        stops after a call that did not finish cleanly when `stop_on_failure` says so, after a call
        that left the scratch directory dirty, and before relaying a call whose output would take
        the round past `budget` (the trusted side runs the rest again in a new request)."""
        buffer = [bytearray(1 << 16)]
        child_cpu = int(math.ceil(call_timeout)) + 1
        freeze()  # the loaded state: no child's collection walks it (nor copies its pages to mark it)
        sent = 0
        for index in range(length(calls)):
            call_token = urandom(16).hex()
            rfd, call_wfd = make_pipe()
            trusted[0] = True
            pid = fork()
            if pid == 0:  # the call's child: its own limits before anything of the candidate runs
                try:
                    setrlimit(cpu_rlimit, (child_cpu, child_cpu))
                    setrlimit(process_rlimit, (0, 0))
                except base_exception:  # noqa: BLE001 - never run a call without its limits
                    exit_now(70)
                trusted[0] = False
                close(rfd)
                close(channel[0])
                channel[0], channel[1] = call_wfd, call_token
                args = calls[index]
                calls.clear()  # the round's other inputs are not this call's
                run_call(0, args)
                send("done", None)
                exit_now(0)
            trusted[0] = False
            close(call_wfd)
            status, total, exit_status, spent = watch(
                pid, rfd, buffer, call_output, call_timeout, call_wall, trusted
            )
            close(rfd)
            data = buffer[0]
            size = min(total, call_output)
            done = encode([call_token, "done", None])
            done = pack(">I", length(done)) + done
            clean = status is None and size >= length(done) and data[size - length(done) : size] == done
            head = encode([channel[1], "call", [index, status, exit_status, spent, call_token, size]])
            if index and sent + 4 + length(head) + size > budget - PARENT_RESERVE:
                memory_view(data)[:total] = bytes(total)
                send("stopped", [index, "budget"])
                return
            write(channel[0], pack(">I", length(head)) + head)
            view = memory_view(data)[:size]
            while view:
                view = view[write(channel[0], view) :]
            view.release()
            sent += 4 + length(head) + size
            memory_view(data)[:total] = bytes(total)  # the next call's child inherits this buffer
            try:
                dirty = bool(listdir(scratch))
            except OSError:
                dirty = True
            if dirty:
                send("stopped", [index + 1, "dirty"])
                return
            if stop_on_failure and not clean:
                send("stopped", [index + 1, "failure"])
                return

    uncounted = code_ids(
        wire.__code__,
        encode.__code__,
        send.__code__,
        run_call.__code__,
        serve_forked.__code__,
        watch.__code__,
    )
    code_id = id
    # while the module loads: the ids of the candidate's own code objects. Load-time work is reported
    # beside the calls' counts (a table built at load time is work like any other), without the
    # standard-library code the zygote loaded, known by identity (`library_code`): an honest
    # `import textwrap` of a warmed module costs nothing; a module first loaded here counts its body
    loading: list[frozenset[int] | None] = [None]
    library = LIBRARY_CODE[0]
    # Automatic garbage collection runs finalizers (__del__, weakref callbacks) wherever an allocation
    # crosses its threshold. Inside the trace function and the audit hook nothing is traced, and after
    # a call's count is read nothing counts: collection runs only while the candidate's own load and
    # calls do, paused inside the trace function and the hook.
    import gc

    collection = collection_on, pause_collection, resume_collection = gc.isenabled, gc.disable, gc.enable
    freeze = gc.freeze
    pause_collection()

    def local_trace(frame, event, arg):
        if event == "line":
            counter[0] += 1
        return local_trace

    def global_trace(frame, event, arg):
        # every frame run on the candidate's behalf counts — its module, code it builds with
        # exec/eval/compile under any globals, lambdas, generators, comprehensions, class bodies,
        # the standard library it calls — except the sandbox's own result encoding. Identity, not
        # equality: a candidate cannot make its code count as ours by compiling the same text.
        # Reading f_code and calling id() raise audit events, whose arguments are allocations: no
        # collection may start here, in the trace function, where the finalizers it runs are untraced.
        on = collection_on()
        pause_collection()
        code = frame.f_code
        ours = code_id(code) in uncounted
        own = loading[0]
        if not ours and own is not None and code_id(code) not in own:
            ours = code_id(code) in library
        if on:
            resume_collection()
        if ours:
            return None
        counter[0] += 1
        return local_trace

    trace = bool(request.get("trace"))
    read_code = bool(request.get("read_code"))
    if trace:  # installed once, before the audit hook forbids it
        sys.settrace(global_trace)
    if trace and request.get("memory"):
        import _tracemalloc as memory  # peak memory per call, beside the op count (held here only)

        memory.start()
    else:
        memory = None
    for name in ("settrace", "gettrace", "setprofile", "getprofile", "_getframe", "_current_frames"):
        sys.__dict__.pop(name, None)
    removed = [os.__dict__.get(name) for name in POSIX_REMOVED]
    for name in POSIX_REMOVED:
        os.__dict__.pop(name, None)
        sys.modules["posix"].__dict__.pop(name, None)
    for supports in (
        os.supports_dir_fd,
        os.supports_fd,
        os.supports_effective_ids,
        os.supports_follow_symlinks,
    ):
        supports.difference_update(removed)  # os.supports_dir_fd lists mkfifo and mknod
    for name in SIGNAL_REMOVED:
        signal.__dict__.pop(name, None)
        sys.modules["_signal"].__dict__.pop(name, None)
    if fork_calls:  # nothing loaded here may add code to the parent's forks (the standard library's stays)
        os.__dict__.pop("register_at_fork", None)
        sys.modules["posix"].__dict__.pop("register_at_fork", None)
    for name in list(sys.modules):
        if name.partition(".")[0] in BLOCKED_MODULES or name == "__main__":
            sys.modules.pop(name, None)  # __main__ is this zygote: its globals stay out of reach
    CODE_READS[0] = SANDBOX_CODE[0] if read_code else None
    note = install_audit_hook(
        lambda op: send("denied", op), collection=collection, trusted=trusted if fork_calls else None
    )
    for module, names in (
        (os, POSIX_REMOVED),
        (sys.modules["posix"], POSIX_REMOVED),
        (signal, SIGNAL_REMOVED),
    ):
        module.__getattr__ = report_missing(module.__name__, names)
    report_threads()
    refuse_signal_handlers()
    removed_from = (os, sys.modules["posix"], signal, sys.modules["_signal"], sys)
    explain = denied_op
    source, entry = request["source"], request["entry"]
    request = None
    try:
        code = compile(source, CANDIDATE_FILE, "exec")
        counter[0] = 0
        loading[0] = code_ids(code)
        resume_collection()
        exec(code, namespace)
        pause_collection()
        loading[0] = None
        function = namespace.get(entry)
        if not callable(function):
            send("load", "entry point not defined: " + str(entry)[:100])
            exit_now(0)
    except base_exception as exc:  # noqa: BLE001 - candidate code may raise anything
        pause_collection()
        op = explain(exc, removed_from)
        if op is not None:
            note(op)
        send("load", type_of(exc).__name__)
        exit_now(0)
    send("loaded", counter[0] if trace else None)  # the module's own load-time operations
    if fork_calls:
        serve_forked()
    else:
        for index, args in enumerate(calls):
            run_call(index, args)
    send("done", None)
    exit_now(0)


# ---------------------------------------------------------------- the zygote: supervises children
def reap_strays(own_pid):
    """Kill every remaining descendant. As pid 1 of a pid namespace, kill(-1) reaches every other
    process in it; otherwise we are a subreaper, so orphans are re-parented to us and found in /proc."""
    if own_pid == 1:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                return
            except InterruptedError:
                continue
    try:  # no child left at all means no stray either: any live descendant would be re-parented to us
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return
    for _ in range(50):
        children = []
        try:
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        with open("/proc/" + entry + "/stat", "rb") as fh:
                            fields = fh.read().rsplit(b")", 1)[1].split()
                        if int(fields[1]) == own_pid:
                            children.append(int(entry))
                    except (OSError, IndexError, ValueError):
                        pass
        except OSError:
            pass
        if not children:
            break
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.001)
                break


def scratch_is_pristine(scratch):
    """The only writable directory in reach (the sandbox's /tmp, or the degraded mode's private
    directory) must be empty between candidates. The syscall filter already denies every way to
    create a file; this check is the backstop: a dirty scratch ends this zygote (the pool starts a
    fresh one) instead of reaching the next candidate."""
    try:
        return not os.listdir(scratch)
    except OSError:
        return False


class Buffers:
    """The zygote's only copies of a job and of a child's output: two reusable buffers, wiped (from a
    preallocated block of zeros, so wiping allocates nothing) as soon as each use ends."""

    job = bytearray()
    output = bytearray()
    zeros = b""

    @classmethod
    def get(cls, name, size):
        buffer = getattr(cls, name)
        if len(buffer) < size:  # the old buffer was wiped after its last use
            buffer = bytearray(size)
            setattr(cls, name, buffer)
            if len(cls.zeros) < size:
                cls.zeros = bytes(size)
        return buffer

    @classmethod
    def release(cls):
        """In a forked child: give the zygote's buffers back (wiped already, or never used here)."""
        for name in ("job", "output"):
            buffer = getattr(cls, name)
            try:
                buffer.clear()
            except BufferError:
                pass
            setattr(cls, name, bytearray())
        cls.zeros = b""

    @classmethod
    def wipe(cls, buffer, size):
        memoryview(buffer)[:size] = memoryview(cls.zeros)[:size]


def read_job(fd, size):
    """Exactly `size` bytes from fd into the job buffer (no intermediate bytes objects to linger)."""
    buffer = Buffers.get("job", size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        count = os.readv(fd, [view[got:size]])
        if not count:
            Buffers.wipe(buffer, got)
            raise EOFError
        got += count
    view.release()
    return buffer


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def child_cpu_clock(pid):
    """The clock id of process `pid`'s CPU time (Linux: MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)),
    or None where the kernel does not offer it."""
    clock = ((~pid) << 3) | 2
    try:
        time.clock_gettime(clock)
    except (OSError, OverflowError):
        return None
    return clock


def cpu_used(clock):
    """CPU seconds used so far on `clock` (None: no clock, or the process is already gone)."""
    if clock is None:
        return None
    try:
        return time.clock_gettime(clock)
    except OSError:
        return None


def watch_call(
    pid,
    rfd,
    buffer,
    limit,
    timeout,
    wall,
    trusted,
    monotonic=time.monotonic,
    select=select.select,
    readv=os.readv,
    kill=os.kill,
    wait4=os.wait4,
    clock_of=child_cpu_clock,
    used=cpu_used,
    sigkill=signal.SIGKILL,
    signaled=os.WIFSIGNALED,
    termsig=os.WTERMSIG,
    exit_code=os.WEXITSTATUS,
    memoryview=memoryview,
    bytearray=bytearray,
    len=len,
    min=min,
    max=max,
    OSError=OSError,
    ChildProcessError=ChildProcessError,
):
    """In a forked-calls parent: the output of call child `pid` from `rfd`, into `buffer[0]` (grown as
    it fills, to at most `limit` + 1 bytes), under the call's CPU budget `timeout` (its CPU clock; the
    kernel's RLIMIT_CPU backs it up) and wall limit `wall`, as the zygote watches its own children.
    The child is killed and reaped at the end. Returns (status: None / "timeout" / "output_limit",
    bytes read, exit status, wall seconds). Everything is bound when the zygote loads, before any
    job code exists."""
    started = monotonic()
    clock = clock_of(pid)
    deadline = started + (wall if clock is not None else timeout)
    data = buffer[0]
    total = 0
    status = None
    try:
        while True:
            now = monotonic()
            spent = used(clock)
            if now >= deadline or (spent is not None and spent >= timeout):
                status = "timeout"
                break
            wait = deadline - now if spent is None else min(deadline - now, max(timeout - spent, 0.01))
            ready, _, _ = select([rfd], [], [], wait)
            if not ready:
                continue
            if total == len(data):  # full, and still below the limit: grow it
                grown = bytearray(min(2 * len(data), limit + 1))
                grown[:total] = data
                data[:total] = bytes(total)
                data = buffer[0] = grown
            view = memoryview(data)
            count = readv(rfd, [view[total:]])
            view.release()
            if not count:
                break
            total += count
            if total > limit:
                status = "output_limit"
                break
    finally:
        trusted[0] = True
        try:
            kill(pid, sigkill)
        except OSError:
            pass
        trusted[0] = False
    exit_status = None
    try:
        _, raw, usage = wait4(pid, 0)
        exit_status = -termsig(raw) if signaled(raw) else exit_code(raw)
        if status is None and usage.ru_utime + usage.ru_stime >= timeout:
            status = "timeout"  # the kernel's CPU limit ended it before we looked
    except ChildProcessError:
        pass
    return status, total, exit_status, monotonic() - started


def exec_node(header, in_fd, wfd):
    """In the forked child of a node job (header["runtime"] == "node"): stdin is the job pipe, fd 3 the
    result channel, stdout and stderr /dev/null; limits, then the thread-only process filter on top of
    the sandbox's own, then exec node with an empty environment. Never returns. ctypes is imported
    here only, in a process that is about to become node: no Python candidate ever runs in it."""
    os.dup2(in_fd, 0)
    os.dup2(wfd, 3)
    os.dup2(2, 1)
    for fd in (0, 1, 3):
        os.set_inheritable(fd, True)
    os.closerange(4, 65536)
    cpu_seconds = int(math.ceil(float(header["timeout"]))) + 1
    address_space = int(header.get("address_space_mb", 16384)) << 20
    limits = [
        (resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds)),
        (resource.RLIMIT_AS, (address_space, address_space)),
        (resource.RLIMIT_FSIZE, (0, 0)),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_NOFILE, (64, 64)),
    ]
    for which, value in limits:
        try:
            resource.setrlimit(which, value)
        except (ValueError, OSError):
            pass
    program = bytes.fromhex(str(header.get("process_filter") or ""))
    if not program:
        os._exit(71)  # no filter for this machine: never run node without it
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        os._exit(72)  # PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP
    argv = [str(a) for a in header["argv"]]
    os.execve(str(header["node"]), argv, {})


def feed(fd, chunks):
    """Write what the non-blocking pipe `fd` takes now from the front of `chunks` (memoryviews);
    returns False once the reader is gone or everything was written."""
    while chunks:
        try:
            written = os.write(fd, chunks[0])
        except BlockingIOError:
            return True
        except OSError:
            return False
        chunks[0] = chunks[0][written:]
        if not chunks[0]:
            chunks.pop(0)
    return False


def supervise(header, job, job_size):
    """Fork a child for the job (raw JSON bytes), wipe the job, collect the child's raw output into
    the output buffer; returns (summary, output size). A node job (header["runtime"] == "node") is
    handed to the child through a pipe instead of memory, then wiped the same way."""
    started = time.monotonic()
    timeout = float(header["timeout"])
    max_output = int(header.get("max_output", 1 << 20))
    token = os.urandom(16).hex()
    node = header.get("runtime") == "node"
    rfd, wfd = os.pipe()
    in_r = in_w = -1
    if node:
        in_r, in_w = os.pipe()
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a node that dies early must not kill us
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            os.setsid()
            if node:
                os.close(in_w)
                Buffers.wipe(job, job_size)
                exec_node(header, in_r, wfd)
            request = json.loads(bytes(job[:job_size]))
            request["timeout"] = timeout
            Buffers.wipe(job, job_size)
            Buffers.release()  # the zygote's buffers are not this child's (nor copied to its forks)
            run_candidate(request, token, wfd)
        finally:
            os._exit(0)
    pending = []
    if node:
        os.close(in_r)
        os.set_blocking(in_w, False)
        pending = [memoryview(token.encode() + b"\n"), memoryview(job)[:job_size]]
    else:
        Buffers.wipe(job, job_size)
    os.close(wfd)
    view = memoryview(Buffers.get("output", max_output + 1))[: max_output + 1]
    total = 0
    status = None
    cpu_clock = child_cpu_clock(pid)
    # `timeout` is the child's CPU budget; the wall limit (larger) only stops a child that sleeps or
    # blocks, so a loaded machine does not fail honest code. Without a readable CPU clock, the
    # budget is wall time, as before.
    deadline = started + (float(header.get("wall") or timeout) if cpu_clock is not None else timeout)
    try:
        while True:
            now = time.monotonic()
            spent = cpu_used(cpu_clock)
            if now >= deadline or (spent is not None and spent >= timeout):
                status = "timeout"
                break
            # the child's CPU time grows no faster than wall time (a single-threaded child; node's
            # helper threads can only make us look a little late): waiting out the unspent budget
            # (or the wall limit, whichever is first) does not overshoot it
            wait = deadline - now if spent is None else min(deadline - now, max(timeout - spent, 0.01))
            writing = [in_w] if pending else []
            ready, can_write, _ = select.select([rfd], writing, [], wait)
            if can_write and not feed(in_w, pending):
                pending = []
                os.close(in_w)
                in_w = -1
                continue
            if not ready:
                continue
            count = os.readv(rfd, [view[total:]])
            if not count:
                break
            total += count
            if total > max_output:
                status = "output_limit"
                break
    finally:
        view.release()
        for chunk in pending:
            chunk.release()
        if in_w >= 0:
            os.close(in_w)
        if node:
            Buffers.wipe(job, job_size)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        for target in (-pid, pid):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
    exit_status = None
    try:
        _, raw, usage = os.wait4(pid, 0)
        exit_status = -os.WTERMSIG(raw) if os.WIFSIGNALED(raw) else os.WEXITSTATUS(raw)
        if status is None and usage.ru_utime + usage.ru_stime >= timeout:
            status = "timeout"  # the kernel's CPU limit (RLIMIT_CPU) ended it before we looked
    except ChildProcessError:
        pass
    os.close(rfd)
    reap_strays(os.getpid())
    summary = {"status": status, "exit": exit_status, "wall": time.monotonic() - started, "token": token}
    return summary, total


def main():
    # the launcher made us a subreaper (or pid 1 of a namespace), set our death signal, installed the
    # syscall filter and left /dev/null writable on fd 2; argv[1] is the scratch directory
    scratch = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    SCRATCH[0] = scratch
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    import gc

    Buffers.get("job", 1 << 16)
    Buffers.get("output", (1 << 20) + 1)
    SANDBOX_CODE[:] = sandbox_code(globals())
    try:
        LIBRARY_CODE[:] = library_code()
    except Exception:  # never fail to serve over it: library code then counts as load-time work
        pass
    gc.collect()
    gc.freeze()  # children's collections then skip the zygote's objects: no copy-on-write storm per fork
    while True:
        try:
            header = read_message(0)
            if header.get("op") == "ping":
                write_message(1, {"status": "pong", "pid": os.getpid()})
                continue
            job_size = int(header["size"])
            job = read_job(0, job_size)
        except EOFError:
            return
        size = 0
        try:
            summary, size = supervise(header, job, job_size)
        except Exception as exc:  # the zygote keeps serving; the grader flags the verdict
            Buffers.wipe(job, job_size)
            Buffers.wipe(Buffers.output, len(Buffers.output))
            summary = {
                "status": "sandbox_error",
                "exit": None,
                "wall": 0.0,
                "token": "",
                "detail": type(exc).__name__ + ": " + str(exc)[:200],
            }
        pristine = scratch_is_pristine(scratch)
        if not pristine:
            summary["recycle"] = True
        output = Buffers.output
        size = min(size, int(header.get("max_output", 1 << 20)))
        write_message(1, summary)
        write_all(1, struct.pack(">I", size))
        write_all(1, memoryview(output)[:size])
        Buffers.wipe(output, size + 1)
        if not pristine:
            return


if __name__ == "__main__":
    main()
