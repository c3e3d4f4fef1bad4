"""The sandbox's seccomp program, checked two ways: its decisions, by running it in a small classic-BPF
interpreter for both supported architectures (so aarch64 is checked here too), and its syscall
tables, against libseccomp's where that library is installed. The kernel's own verdicts are
checked by the sandbox tests that run candidates."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct

import pytest
from adversarial.isolation import without_audit_hook

from rlvr.sandbox.syscall_filter import AARCH64, ARCHES, DENIED, ENOSYS, EPERM, X86_64, Arch, build_program

ALLOW = 0x7FFF0000
ERRNO = 0x00050000


def run_filter(program: bytes, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """Classic BPF over a little-endian struct seccomp_data {nr, arch, ip, args[6]}."""
    padded = (list(args) + [0] * 6)[:6]
    data = struct.pack("<iIQ6Q", nr, arch, 0, *padded)
    insns = [struct.unpack("HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    a, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == 0x20:  # ld w abs
            (a,) = struct.unpack_from("<I", data, k)
        elif code == 0x15:  # jeq k
            pc += jt if a == k else jf
        elif code == 0x35:  # jge k
            pc += jt if a >= k else jf
        elif code == 0x45:  # jset k
            pc += jt if a & k else jf
        elif code == 0x05:  # ja
            pc += k
        elif code == 0x06:  # ret k
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_decisions(machine: str) -> None:
    arch: Arch = ARCHES[machine]
    program = build_program(machine)
    assert program is not None and len(program) % 8 == 0 and len(program) // 8 < 4096
    n = arch.numbers

    def verdict(name: str, *args: int) -> int:
        return run_filter(program, arch.audit_arch, n[name], args)

    for name in DENIED:
        if name in n:
            assert verdict(name) == ERRNO | EPERM, name
    assert verdict("openat2") == ERRNO | ENOSYS
    flags_arg = arch.open_flags_arg["openat"]
    read_only = [0] * 4
    read_only[flags_arg] = os.O_RDONLY | os.O_CLOEXEC
    assert verdict("openat", *read_only) == ALLOW
    for flag in (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC, os.O_APPEND, os.O_CREAT | os.O_EXCL):
        writing = [0] * 4
        writing[flags_arg] = flag | os.O_CLOEXEC
        assert verdict("openat", *writing) == ERRNO | EPERM, flag
    assert verdict("prlimit64", 0) == ALLOW  # its own limits
    assert verdict("prlimit64", 1) == ERRNO | EPERM  # the zygote's
    assert verdict("prlimit64", 4242) == ERRNO | EPERM
    for allowed in (0, 1, 3, 60, 231):  # syscalls outside the tables are allowed
        if allowed not in n.values():
            assert run_filter(program, arch.audit_arch, allowed) == ALLOW
    assert run_filter(program, 0x40000003, 5) == ERRNO | ENOSYS  # i386 through int 0x80
    if arch.foreign_from is not None:
        assert run_filter(program, arch.audit_arch, arch.foreign_from | 2) == ERRNO | ENOSYS  # x32


def test_unknown_machine_has_no_filter() -> None:
    assert build_program("mips") is None


@pytest.mark.parametrize("arch", [X86_64, AARCH64], ids=["x86_64", "aarch64"])
def test_tables_match_libseccomp(arch: Arch) -> None:
    path = ctypes.util.find_library("seccomp")
    if path is None:
        pytest.skip("libseccomp is not installed; the tables are checked where it is")
    library = ctypes.CDLL(path)
    library.seccomp_syscall_resolve_name_arch.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    library.seccomp_syscall_resolve_name_arch.restype = ctypes.c_int
    unknown = []
    for name, number in arch.numbers.items():
        resolved = library.seccomp_syscall_resolve_name_arch(arch.audit_arch, name.encode())
        if resolved < 0:
            unknown.append(name)  # newer than this libseccomp
        else:
            assert resolved == number, (name, number, resolved)
    assert len(unknown) <= 3, unknown


# The kernel layer on its own: a zygote with the audit hook and the removal of os functions switched
# off (as if a candidate had found a way around both) still cannot write, make nodes or reach its
# zygote, in every backend.
UNGUARDED_ATTEMPTS = """
import os


def attempts():
    out = {}
    for name, call in {
        "mkfifo": lambda: os.mkfifo("fifo-" + str(os.getpid())),
        "mknod_tmp": lambda: os.mknod("/tmp/node"),
        "open_write": lambda: open("/tmp/written", "w"),
        "mkdir": lambda: os.mkdir("/tmp/dir"),
        "renice_zygote": lambda: os.setpriority(os.PRIO_PROCESS, os.getppid(), 19),
        "pin_zygote": lambda: os.sched_setaffinity(os.getppid(), {0}),
        "idle_zygote": lambda: os.sched_setscheduler(os.getppid(), os.SCHED_IDLE, os.sched_param(0)),
        "pidfd": lambda: os.pidfd_open(os.getppid()),
        "memfd": lambda: os.memfd_create("x"),
    }.items():
        try:
            call()
            out[name] = "allowed"
        except OSError as exc:
            out[name] = exc.errno
    return out
"""


def unguarded_zygote(source: str) -> str:
    weakened = without_audit_hook(source).replace("for name in POSIX_REMOVED:", "for name in ():")
    assert "note = install_audit_hook(" not in weakened and "for name in ():" in weakened
    return weakened


@pytest.mark.parametrize("backend", ["namespaces", "degraded", "docker"])
def test_kernel_layer_holds_without_the_audit_hook(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from adversarial.isolation import namespaced_sandbox

    import rlvr.sandbox.docker_backend as docker_backend
    import rlvr.sandbox.pool as pool_module
    from rlvr.sandbox import Job, LocalSandbox, make_sandbox

    if backend == "docker":
        from adversarial.docker_support import require_docker

        require_docker("runc")
        monkeypatch.setattr(docker_backend, "ZYGOTE_SOURCE", unguarded_zygote(docker_backend.ZYGOTE_SOURCE))
        pool = make_sandbox("docker", 1)
    else:
        monkeypatch.setattr(pool_module, "ZYGOTE_SOURCE", unguarded_zygote(pool_module.ZYGOTE_SOURCE))
        pool = namespaced_sandbox(1) if backend == "namespaces" else LocalSandbox(1, isolation="none")
    with pool:
        result = pool.run(Job(UNGUARDED_ATTEMPTS, "attempts", [()], timeout=20))
    assert result.status == "ok" and result.outcomes[0] is not None and result.outcomes[0].ok, result
    outcome = result.outcomes[0].value
    assert isinstance(outcome, dict)
    assert set(outcome.values()) == {errno.EPERM}, outcome
