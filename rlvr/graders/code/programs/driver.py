"""The source the sandbox runs for a program task: a small driver with the candidate's program
embedded as a string literal (so none of the program runs when the module loads).

The sandbox loads this driver once per round of tests (compiling the program, running none of it)
and runs each test in its own child forked from that loaded state (`run_each`), so nothing the
program leaves behind — a module attribute, `sys.modules`, `builtins` — reaches the next test:
`_rlvr_run_program(stdin_text, max_bytes)` executes the program as `__main__` in fresh globals with
stdin, stdout and stderr replaced by in-memory files, and answers plain data: `[stdout, exit_code,
exception_name, stderr_bytes, truncated]`. `open(0)`/`open(1)`, `exit()`/`quit()`, `os._exit(n)` and
`sys.stdin.buffer` work as in a judge; stderr is counted and discarded (it never fails a test). A
call-based test (`_rlvr_call_program(name, args, max_bytes)`) executes the program and calls its
function `name` (or the method of a LeetCode-style `Solution` class).

`max_bytes` is the public per-test stdout limit (the same for every test of every task): the
program may learn it, since it says nothing about the expected output. The sandbox caps the size of
what the child reports from outside its process as well.

Nothing here decides a verdict: the output goes back as data and the trusted process compares it
with the expected output, which never enters the sandbox.
"""

from __future__ import annotations

RUN_ENTRY = "_rlvr_run_program"
CALL_ENTRY = "_rlvr_call_program"

_DRIVER = """
import io as _rlvr_io

try:  # compiled once, when the driver loads (nothing of the program runs here)
    _RLVR_CODE = compile(_RLVR_PROGRAM, "<program>", "exec")
except BaseException:
    _RLVR_CODE = None  # compiled again inside the run, which then reports the error


class _RlvrOutputLimit(Exception):
    pass


class _RlvrExit(BaseException):
    pass


class _RlvrBounded(_rlvr_io.BytesIO):
    def __init__(self, max_bytes):
        super().__init__()
        self.max_bytes = max_bytes

    def write(self, data):
        if self.tell() + len(data) > self.max_bytes:
            raise _RlvrOutputLimit()
        return super().write(data)


class _RlvrCounted(_rlvr_io.RawIOBase):
    def __init__(self):
        super().__init__()
        self.written = 0

    def writable(self):
        return True

    def write(self, data):
        self.written += len(data)
        return len(data)


def _rlvr_streams(stdin_text, max_bytes):
    io = _rlvr_io
    stdin = io.TextIOWrapper(io.BytesIO(stdin_text.encode("utf-8", "surrogatepass")), encoding="utf-8")
    out_bytes, err_bytes = _RlvrBounded(max_bytes), _RlvrCounted()
    stdout = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="replace", write_through=True)
    stderr = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="replace", write_through=True)
    return stdin, stdout, stderr, out_bytes, err_bytes


def _rlvr_execute(stdin_text, max_bytes, call=None, args=()):
    import builtins
    import os
    import sys

    stdin, stdout, stderr, out_bytes, err_bytes = _rlvr_streams(stdin_text, max_bytes)
    real_open = builtins.open

    def judge_open(file, *rest, **options):
        if file == 0:
            return stdin
        if file in (1, 2):
            return stdout if file == 1 else stderr
        return real_open(file, *rest, **options)

    def judge_exit(code=None):
        raise SystemExit(code)

    def fast_exit(code):
        # os._exit ends a judged process with what it wrote so far: the same here (the child ends
        # right after this test in any case)
        raise _RlvrExit(code)

    names = dict(vars(builtins))
    names.update(open=judge_open, exit=judge_exit, quit=judge_exit)
    program_globals = {"__name__": "__main__" if call is None else "__candidate__", "__builtins__": names}
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    os._exit = fast_exit
    sys.modules["posix"]._exit = fast_exit
    exit_code, raised, truncated, value = 0, None, False, None
    try:
        code = _RLVR_CODE if _RLVR_CODE is not None else compile(_RLVR_PROGRAM, "<program>", "exec")
        exec(code, program_globals)
        if call is not None:
            function = program_globals.get(call)
            if function is None and "Solution" in program_globals:  # LeetCode style
                function = getattr(program_globals["Solution"](), call)
            value = function(*args)
    except SystemExit as stop:
        code = stop.code
        exit_code = 0 if code is None else code if type(code) is int else 1
    except _RlvrExit as stop:
        code = stop.args[0] if stop.args else 1
        exit_code = code if type(code) is int else 1
    except _RlvrOutputLimit:
        truncated = True
    except BaseException as exc:
        raised = type(exc).__name__
        exit_code = 1
    finally:
        try:
            stdout.flush()
        except _RlvrOutputLimit:
            truncated = True
        except BaseException:
            pass
        sys.stdin, sys.stdout, sys.stderr = saved
    text = bytes(out_bytes.getbuffer()[:max_bytes]).decode("utf-8", "replace")
    return text, int(exit_code), raised, err_bytes.written, truncated, value


def _rlvr_run_program(stdin_text, max_bytes):
    text, exit_code, raised, stderr_bytes, truncated, _ = _rlvr_execute(stdin_text, max_bytes)
    return [text, exit_code, raised, stderr_bytes, truncated]


def _rlvr_call_program(call, args, max_bytes):
    _, _, raised, _, truncated, value = _rlvr_execute("", max_bytes, call, args)
    return [raised, value]
"""


def driver_source(program: str) -> str:
    """The sandbox source for `program` (any text: it is embedded as a literal, never spliced)."""
    return f"_RLVR_PROGRAM = {program!r}\n" + _DRIVER
