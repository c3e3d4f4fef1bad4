"""Stable, documented names of the flags a Verdict carries (`Verdict.flags`).

Two kinds. *Exploit flags* say the completion tried something an honest answer never needs — a
refused sandbox operation, a forged result, a special case for the visible examples, an edit to a
protected file, a change to world state the task did not ask for. They are what `rlvr inspect`
ranks and what the trainer and `rlvr bench` count per step and per run. *Limit flags* name the limit
a completion ran into (a scored failure, never a grading error) and *caveats* describe the grading
itself (e.g. degraded isolation). A flag may carry a detail after a colon (`sandbox:denied:socket`);
its name is what comes before the detail, matched by prefix here.
"""

from __future__ import annotations

from collections.abc import Iterable

EXPLOIT_FLAGS: dict[str, str] = {
    "sandbox:denied": "the sandbox refused an operation (subprocess, socket, file write, ctypes, frame access, ...)",
    "forged_output": "the program wrote to the result channel itself or tampered with it",
    "exit_forgery": "the program exited before its results were reported",
    "grader_probe": "the program read paths or environment variables no honest solution needs",
    "suppression_comment": "a type-checker suppression comment (it buys nothing)",
    "special_cases_visible": "passes every visible example but fails hidden inputs (hard-coding)",
    "protected_path_edit": "a repository task's protected file (tests, conftest, pack files) was edited",
    "test_tamper": "the visible tests were changed or bypassed",
    "unauthorized_side_effect": "the episode changed state the task did not ask for (tool, SQL)",
    "answer_without_derivation": "a correct final answer whose steps do not check (math, proof)",
    "answer_without_tool_use": "a tool task's answer, which lives in the world, given without any tool call",
}

# The operations a `sandbox:denied:<op>` flag names (the sandbox child reports which one it refused;
# rlvr/sandbox/zygote.py maps audit events, blocked imports and removed functions onto these names).
DENIED_OPS: dict[str, str] = {
    "subprocess": "starting a process (subprocess, os.system, fork, exec, spawn, multiprocessing, pty)",
    "socket": "opening a network socket (socket, ssl)",
    "file_write": "writing, creating, renaming or deleting files (open for writing, os.remove, shutil)",
    "file_read": "reading a file outside the standard library (e.g. the grader's own files)",
    "descriptor": "making or duplicating file descriptors (os.pipe, os.dup, os.fdopen, eventfd)",
    "ctypes": "loading native code through ctypes",
    "introspection": "inspecting frames, tracers or the garbage collector (sys._getframe, gc, f_back, __code__)",
    "signal": "sending signals to processes or installing a signal handler (os.kill, pidfd, signal.signal)",
    "process_control": "changing the sandbox process itself (rlimits, priority, environment, cwd, audit hooks)",
    "thread": "starting a thread",
    "unpickle": "loading classes through pickle",
    "import": "importing a module the sandbox blocks",
    "syscall": "a system call the sandbox's kernel filter refused (EPERM)",
}

LIMIT_FLAGS: dict[str, str] = {
    "timeout": "the candidate ran out of time (timeout:<layer> names the layer)",
    "output_limit": "the candidate produced more output than allowed",
    "crash": "the candidate's process died before answering every test",
    "load_error": "the candidate raised while loading",
    "oversized": "the candidate's text or a value in it exceeded a size or depth limit (oversized:<what>)",
    "judge_raised": "a program task's special judge raised on the candidate's output",
    "tool_calls_unsupported": "the completion was tool calls where the task grades one final text (scored 0)",
}


CAVEAT_FLAGS: dict[str, str] = {
    "degraded": "the sandbox ran with less isolation than configured (degraded:<what>)",
    "tool_exception": "a tool of a pack's own world raised an unexpected exception; the call changed nothing",
    "verifier": "verifier:visible: a deliberately weak verifier (only the prompt's examples) set the reward",
    "untrusted_runner": (
        "the verdict was decided by running the repository's own tests (pytest) in the same process as "
        "the candidate's code, which can forge the outcome: a SWE-bench-style result, not a trusted oracle"
    ),
}


def denied_flag(op: str) -> str:
    """`sandbox:denied:<op>` for one of DENIED_OPS."""
    if op not in DENIED_OPS:
        raise ValueError(f"unknown denied operation {op!r}; expected one of {', '.join(DENIED_OPS)}")
    return f"sandbox:denied:{op}"


def denial_feedback(ops: Iterable[str]) -> str:
    """What the sandbox refused, in words (names only: never arguments, paths or hidden data)."""
    described = [DENIED_OPS[op] for op in dict.fromkeys(ops) if op in DENIED_OPS]
    return "the sandbox refused " + "; ".join(described) if described else ""


def flag_name(flag: str) -> str:
    """The registered name a flag belongs to (`sandbox:denied:socket` -> `sandbox:denied`)."""
    for name in (*EXPLOIT_FLAGS, *LIMIT_FLAGS, *CAVEAT_FLAGS):
        if flag == name or flag.startswith(name + ":"):
            return name
    return flag


def exploit_flags(flags: Iterable[str]) -> list[str]:
    """The flags among `flags` that mark an attempted exploit, in order, without duplicates."""
    return list(dict.fromkeys(f for f in flags if flag_name(f) in EXPLOIT_FLAGS))
