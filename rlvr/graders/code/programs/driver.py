"""The source the sandbox runs for a program task: a small driver with the candidate's program
embedded as a string literal (so none of the program runs when the module loads).

One sandbox call runs the program once on one test: `_rlvr_run_program(stdin_text, max_bytes)`
executes the program as `__main__` in fresh globals with stdin, stdout and stderr replaced by
in-memory files, and answers plain data: `[stdout, exit_code, exception_name, stderr_bytes,
truncated]`. `open(0)`/`open(1)`, `exit()`/`quit()` and `sys.stdin.buffer` work as in a judge. A
call-based test (`_rlvr_call_program(name, args, max_bytes)`) executes the program and calls its
function `name` (or the method of a LeetCode-style `Solution` class).

Nothing here decides a verdict: the output goes back as data and the trusted process compares it
with the expected output, which never enters the sandbox.
"""

from __future__ import annotations

RUN_ENTRY = "_rlvr_run_program"
CALL_ENTRY = "_rlvr_call_program"

_DRIVER = """

class _RlvrOutputLimit(Exception):
    pass


def _rlvr_streams(stdin_text, max_bytes):
    import io

    class Bounded(io.BytesIO):
        def write(self, data):
            if self.tell() + len(data) > max_bytes:
                raise _RlvrOutputLimit()
            return super().write(data)

    stdin = io.TextIOWrapper(io.BytesIO(stdin_text.encode("utf-8", "surrogatepass")), encoding="utf-8")
    out_bytes, err_bytes = Bounded(), Bounded()
    stdout = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="replace", write_through=True)
    stderr = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="replace", write_through=True)
    return stdin, stdout, stderr, out_bytes, err_bytes


def _rlvr_execute(stdin_text, max_bytes, call=None, args=()):
    import builtins
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

    names = dict(vars(builtins))
    names.update(open=judge_open, exit=judge_exit, quit=judge_exit)
    program_globals = {"__name__": "__main__" if call is None else "__candidate__", "__builtins__": names}
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    exit_code, raised, truncated, value = 0, None, False, None
    try:
        exec(compile(_RLVR_PROGRAM, "<program>", "exec"), program_globals)
        if call is not None:
            function = program_globals.get(call)
            if function is None and "Solution" in program_globals:  # LeetCode style
                function = getattr(program_globals["Solution"](), call)
            value = function(*args)
    except SystemExit as stop:
        code = stop.code
        exit_code = 0 if code is None else code if type(code) is int else 1
    except _RlvrOutputLimit:
        truncated = True
    except BaseException as exc:
        raised = type(exc).__name__
        exit_code = 1
    finally:
        try:
            stdout.flush()
        except BaseException:
            truncated = True
        sys.stdin, sys.stdout, sys.stderr = saved
    text = bytes(out_bytes.getbuffer()[:max_bytes]).decode("utf-8", "replace")
    return text, int(exit_code), raised, len(err_bytes.getbuffer()), truncated, value


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
