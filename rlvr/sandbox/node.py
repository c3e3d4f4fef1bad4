"""Node.js in the sandbox: what the zygote needs to run a JavaScript candidate.

A node child is a fork of the same warm zygote (see zygote.py): it takes the job on stdin from the
zygote (the job is never parsed by the zygote), installs the thread-only process filter
(`syscall_filter.build_thread_only_program`) on top of the sandbox's own filter, sets its limits and
execs `node <flags> -e <node_runner.js>` with an empty environment. The runner answers on fd 3 in
the zygote's framed, token-tagged protocol, so decoding and verdicts are the same as for Python.

Limits differ from a Python child in two ways, both node-only: there is no RLIMIT_NPROC=0 (node
needs threads; the process filter denies new processes instead) and the address-space limit is
larger (V8 reserves virtual memory it never touches), while `--max-old-space-size` bounds the heap.
Node's permission model (`--experimental-permission`) additionally refuses file system reads,
child processes, workers and native add-ons to everything the runner does not hand out.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from rlvr.sandbox.syscall_filter import build_thread_only_program
from rlvr.sandbox.view import Bind, shared_libraries

RUNNER_SOURCE = (Path(__file__).parent / "node_runner.js").read_text()
NODE_ENV = "RLVR_NODE"
HEAP_MB = 256
ADDRESS_SPACE_MB = 16384  # virtual reservations (V8's cage and code range), not memory used
NODE_FLAGS = (
    f"--max-old-space-size={HEAP_MB}",
    "--max-semi-space-size=16",
    "--stack-size=984",
    "--experimental-permission",
    "--no-warnings",
)


class NodeUnavailable(RuntimeError):
    """No usable `node` on this machine (TypeScript/JavaScript candidates cannot run)."""


@functools.lru_cache(maxsize=1)
def node_binary() -> str:
    """The real path of the node executable (RLVR_NODE, else `node` on PATH)."""
    found = os.environ.get(NODE_ENV) or shutil.which("node")
    if not found or not os.access(found, os.X_OK):
        raise NodeUnavailable("node not found: install Node.js >= 20 or set RLVR_NODE")
    return os.path.realpath(found)


def node_binds() -> list[Bind]:
    """Read-only binds that make node runnable inside the sandbox: the binary and its libraries."""
    binary = node_binary()
    binds = [Bind(binary, binary, False)]
    for library in shared_libraries([binary]):
        real = os.path.realpath(library)
        if os.path.isfile(real):
            binds.append(Bind(real, library, False))
    return binds


def node_header() -> dict[str, object]:
    """What a run request tells the zygote about a node job (all trusted: built here)."""
    program = build_thread_only_program()
    binary = node_binary()
    return {
        "runtime": "node",
        "node": binary,
        "argv": [binary, *NODE_FLAGS, "-e", RUNNER_SOURCE],
        "process_filter": program.hex() if program else "",
        "address_space_mb": ADDRESS_SPACE_MB,
    }
