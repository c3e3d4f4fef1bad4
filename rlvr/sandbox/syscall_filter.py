"""The sandbox's own seccomp-bpf filter, assembled here (pure Python, no libseccomp) so every backend
— namespaces, the degraded bare mode, docker under runc or gVisor — installs the same rules.

The trusted side builds the program; the launcher installs it (prctl) just before it execs the
zygote, so it binds the zygote and every candidate forked from it, and ctypes never exists in a
process that runs candidate code. It makes the sandbox's file system and its neighbours immutable
from inside, whatever Python, C extension or library call is used:

  * no file system writes: no open/openat with a write, create or truncate flag (the only writable
    fds a process has are those it inherited), no mknod (FIFOs, sockets, devices), mkdir, link,
    symlink, rename, unlink, rmdir, chmod, chown, truncate, utime, xattr or fallocate — so a
    candidate can neither leave a file for the next one nor exhaust inodes, and nothing it does
    lands on the host in degraded mode;
  * no way to address another process: setpriority, sched_set*, ioprio_set and prlimit64 on any
    other pid, pidfd_*, process_vm_*, ptrace, kcmp, process_madvise/mrelease, migrate/move_pages;
  * no kernel objects that outlive a process or bypass the rules: SysV IPC, memfd, userfaultfd,
    io_uring (its operations skip seccomp), sockets, bpf, perf_event_open, keyrings, namespaces,
    mounts and the privileged administration calls.
Every denied call fails with EPERM (ENOSYS for openat2, whose flags a filter cannot read, so libc
falls back to openat). Other ABIs (x32, i386 on x86_64) are denied wholesale.
"""

from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass

EPERM = 1
ENOSYS = 38

# classic BPF opcodes
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_JSET_K = 0x45
BPF_RET_K = 0x06
BPF_JA = 0x05
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
OFFSET_NR, OFFSET_ARCH, OFFSET_ARGS = 0, 4, 16
MAX_JUMP = 255

DENIED = (
    # file system writes (writable fds inherited before the filter keep working)
    "creat",
    "mknod",
    "mknodat",
    "mkdir",
    "mkdirat",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "rmdir",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "truncate",
    "ftruncate",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "fallocate",
    "open_by_handle_at",
    "name_to_handle_at",
    # other processes
    "setpriority",
    "sched_setparam",
    "sched_setscheduler",
    "sched_setaffinity",
    "sched_setattr",
    "ioprio_set",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    "process_vm_readv",
    "process_vm_writev",
    "ptrace",
    "kcmp",
    "process_madvise",
    "process_mrelease",
    "migrate_pages",
    "move_pages",
    "set_mempolicy",
    "mbind",
    # kernel objects that outlive a process or bypass the filter; administration
    "shmget",
    "semget",
    "msgget",
    "memfd_create",
    "memfd_secret",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "socket",
    "socketpair",
    "bpf",
    "perf_event_open",
    "add_key",
    "request_key",
    "keyctl",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "swapon",
    "swapoff",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "acct",
    "quotactl",
    "syslog",
    "sethostname",
    "setdomainname",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "personality",
)
OPEN_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@dataclass(frozen=True)
class Arch:
    audit_arch: int
    numbers: dict[str, int]
    open_flags_arg: dict[str, int]
    """open-like calls allowed only read-only: name -> index of their flags argument"""
    foreign_from: int | None = None
    """syscall numbers at or above this belong to another ABI (x32) and are denied"""


X86_64 = Arch(
    audit_arch=0xC000003E,
    foreign_from=0x40000000,
    open_flags_arg={"open": 1, "openat": 2},
    numbers={
        "open": 2, "openat": 257, "openat2": 437, "creat": 85, "mknod": 133, "mknodat": 259,
        "mkdir": 83, "mkdirat": 258, "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266,
        "rename": 82, "renameat": 264, "renameat2": 316, "unlink": 87, "unlinkat": 263, "rmdir": 84,
        "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchown": 93,
        "lchown": 94, "fchownat": 260, "truncate": 76, "ftruncate": 77, "utime": 132, "utimes": 235,
        "utimensat": 280, "futimesat": 261, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
        "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "fallocate": 285,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "setpriority": 141, "sched_setparam": 142,
        "sched_setscheduler": 144, "sched_setaffinity": 203, "sched_setattr": 314, "ioprio_set": 251,
        "prlimit64": 302, "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438,
        "process_vm_readv": 310, "process_vm_writev": 311, "ptrace": 101, "kcmp": 312,
        "process_madvise": 440, "process_mrelease": 448, "migrate_pages": 256, "move_pages": 279,
        "set_mempolicy": 238, "mbind": 237, "shmget": 29, "semget": 64, "msgget": 68,
        "memfd_create": 319, "memfd_secret": 447, "userfaultfd": 323, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "socket": 41, "socketpair": 53, "bpf": 321,
        "perf_event_open": 298, "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
        "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "swapon": 167,
        "swapoff": 168, "reboot": 169, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
        "finit_module": 313, "delete_module": 176, "acct": 163, "quotactl": 179, "syslog": 103,
        "sethostname": 170, "setdomainname": 171, "settimeofday": 164, "clock_settime": 227,
        "clock_adjtime": 305, "adjtimex": 159, "personality": 135,
    },
)  # fmt: skip

AARCH64 = Arch(
    audit_arch=0xC00000B7,
    open_flags_arg={"openat": 2},
    numbers={
        "openat": 56, "openat2": 437, "mknodat": 33, "mkdirat": 34, "linkat": 37, "symlinkat": 36,
        "renameat": 38, "renameat2": 276, "unlinkat": 35, "fchmod": 52, "fchmodat": 53,
        "fchmodat2": 452, "fchown": 55, "fchownat": 54, "truncate": 45, "ftruncate": 46,
        "utimensat": 88, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14,
        "lremovexattr": 15, "fremovexattr": 16, "fallocate": 47, "open_by_handle_at": 265,
        "name_to_handle_at": 264, "setpriority": 140, "sched_setparam": 118, "sched_setscheduler": 119,
        "sched_setaffinity": 122, "sched_setattr": 274, "ioprio_set": 30, "prlimit64": 261,
        "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438, "process_vm_readv": 270,
        "process_vm_writev": 271, "ptrace": 117, "kcmp": 272, "process_madvise": 440,
        "process_mrelease": 448, "migrate_pages": 238, "move_pages": 239, "set_mempolicy": 237,
        "mbind": 235, "shmget": 194, "semget": 190, "msgget": 186, "memfd_create": 279,
        "memfd_secret": 447, "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "socket": 198, "socketpair": 199, "bpf": 280, "perf_event_open": 241,
        "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97, "setns": 268, "mount": 40,
        "umount2": 39, "pivot_root": 41, "chroot": 51, "swapon": 224, "swapoff": 225, "reboot": 142,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "acct": 89, "quotactl": 60, "syslog": 116, "sethostname": 161,
        "setdomainname": 162, "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266,
        "adjtimex": 171, "personality": 92,
    },
)  # fmt: skip

ARCHES = {"x86_64": X86_64, "aarch64": AARCH64}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)


def _low_word(arg: int) -> int:
    """Offset of the low 32 bits of syscall argument `arg` in struct seccomp_data."""
    return OFFSET_ARGS + 8 * arg + (0 if sys.byteorder == "little" else 4)


def build_program(machine: str | None = None) -> bytes | None:
    """The filter as a struct sock_filter array for this (or the named) machine, or None where the
    syscall table is unknown (the sandbox then reports `no-syscall-filter`)."""
    arch = ARCHES.get(machine or os.uname().machine)
    if arch is None:
        return None
    deny = SECCOMP_RET_ERRNO | EPERM
    body: list[bytes] = []
    # each rule is a block that starts with A = the syscall number and ends by returning or
    # falling through to the next rule with A reloaded
    for name, arg in sorted(arch.open_flags_arg.items()):
        number = arch.numbers[name]
        body += [
            _insn(BPF_JEQ_K, 0, 3, number),  # not this call: skip the block
            _insn(BPF_LD_W_ABS, 0, 0, _low_word(arg)),
            _insn(BPF_JSET_K, 0, 1, OPEN_WRITE_FLAGS),
            _insn(BPF_RET_K, 0, 0, deny),
            _insn(BPF_LD_W_ABS, 0, 0, OFFSET_NR),
        ]
    # prlimit64 only on itself (pid 0): reading or lowering its own limits stays possible
    body += [
        _insn(BPF_JEQ_K, 0, 3, arch.numbers["prlimit64"]),
        _insn(BPF_LD_W_ABS, 0, 0, _low_word(0)),
        _insn(BPF_JEQ_K, 1, 0, 0),
        _insn(BPF_RET_K, 0, 0, deny),
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_NR),
    ]
    body.append(_insn(BPF_JEQ_K, 0, 1, arch.numbers["openat2"]))
    body.append(_insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS))
    denied = sorted({arch.numbers[name] for name in DENIED if name in arch.numbers})
    # a run of equality tests that all jump to one shared "deny" return at the end of the run
    for start in range(0, len(denied), 64):
        chunk = denied[start : start + 64]
        for index, number in enumerate(chunk):
            body.append(_insn(BPF_JEQ_K, len(chunk) - index, 0, number))
        body.append(_insn(BPF_JA, 0, 0, 1))  # none matched: skip the deny
        body.append(_insn(BPF_RET_K, 0, 0, deny))
    body.append(_insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    head = [
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_ARCH),
        _insn(BPF_JEQ_K, 1, 0, arch.audit_arch),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS),  # another ABI (i386 via int 0x80, ...)
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_NR),
    ]
    if arch.foreign_from is not None:
        head += [
            _insn(BPF_JGE_K, 0, 1, arch.foreign_from),
            _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS),
        ]
    return b"".join(head + body)


# ---------------------------------------------------------------- node children: no new processes
# Node needs threads (V8's platform workers, libuv), so the RLIMIT_NPROC=0 that stops a Python
# candidate from forking cannot apply to it. Instead, the zygote's node child installs this second
# filter (filters stack: both apply) just before it execs node: a clone that makes a thread
# (CLONE_THREAD) is allowed, every other way to make a process is not (fork, vfork and clone without
# CLONE_THREAD fail with EPERM; clone3, whose flags a filter cannot read, with ENOSYS so libc falls
# back to clone). Node's child_process has nothing to run: the candidate never reaches it anyway.
CLONE_THREAD = 0x00010000
PROCESS_CALLS = {
    "x86_64": {"clone": 56, "fork": 57, "vfork": 58, "clone3": 435},
    "aarch64": {"clone": 220, "clone3": 435},
}


def build_thread_only_program(machine: str | None = None) -> bytes | None:
    """The node child's extra filter for this (or the named) machine; None where unknown."""
    name = machine or os.uname().machine
    arch, numbers = ARCHES.get(name), PROCESS_CALLS.get(name)
    if arch is None or numbers is None:
        return None
    deny = SECCOMP_RET_ERRNO | EPERM
    program = [
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_ARCH),
        _insn(BPF_JEQ_K, 1, 0, arch.audit_arch),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS),
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_NR),
        _insn(BPF_JEQ_K, 0, 1, numbers["clone3"]),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS),
        _insn(BPF_JEQ_K, 0, 4, numbers["clone"]),
        _insn(BPF_LD_W_ABS, 0, 0, _low_word(0)),
        _insn(BPF_JSET_K, 1, 0, CLONE_THREAD),
        _insn(BPF_RET_K, 0, 0, deny),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    for call in ("fork", "vfork"):
        if call in numbers:
            program += [_insn(BPF_JEQ_K, 0, 1, numbers[call]), _insn(BPF_RET_K, 0, 0, deny)]
    program.append(_insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return b"".join(program)
