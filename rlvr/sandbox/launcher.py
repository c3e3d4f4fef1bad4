"""Trusted launcher for a zygote. Never imported: the pool runs its *text* as
`python -I -S -B -c <this source> <config json>`, standard library only.

Two modes. `namespaces` (the local sandbox) builds the isolation below. `bare` (the degraded local
mode, and docker, whose container already is the isolation) only does the last steps: /dev/null
on fd 2, subreaper + death signal (degraded mode), chdir into the scratch directory, no_new_privs,
the sandbox's syscall filter (see syscall_filter.py), report, exec. Either way ctypes exists only
in this process, never in the zygote that forks candidates: exec replaces it.

Order of events in `namespaces` mode (all before any candidate code exists):
 1. stage 1 — a private mount namespace to build in (as host root; or, unprivileged, inside a user
    namespace of our own): a fresh tmpfs root holding only the runtime view's read-only binds (the
    interpreter, its libraries, the standard library with site-packages covered), /dev/null, zero,
    random, urandom and a small writable /tmp; pivot into it and detach the old root;
 2. stage 2 — if we were host root, become host `nobody`; unshare user, mount, pid, net, ipc and
    uts namespaces and map our uid/gid to 0 inside. The new user namespace is less privileged than
    the one that made the mounts, so the kernel locks them: they cannot be unmounted or made writable;
 3. fork: the child is pid 1 of the new pid namespace (when it exits, the kernel kills every process
    left in it); the launcher waits for it, and the child dies with the launcher (PDEATHSIG), so
    killing the launcher kills the whole tree;
 4. the child drops every capability, sets no_new_privs and installs a seccomp filter (libseccomp,
    loaded before the pivot, when present) denying ptrace, mount, bpf, perf_event_open, kexec, module
    loading, new namespaces, sockets, ..., then the sandbox's own filter (no file system writes, no
    other process addressable: the same rules in every mode);
 5. reports {"status": "isolated", "flags": [...]} on stdout and execs the zygote with an empty
    environment.

On any failure before step 5 it reports {"status": "setup_error", "detail": ...} and exits 1.
"""

import ctypes
import json
import os
import select
import signal
import struct
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWCGROUP = 0x02000000
NAMESPACE_FLAGS = (
    CLONE_NEWNS,
    CLONE_NEWUTS,
    CLONE_NEWIPC,
    CLONE_NEWUSER,
    CLONE_NEWPID,
    CLONE_NEWNET,
    CLONE_NEWCGROUP,
)

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2
# statvfs f_flag bit -> the mount flag a bind remount must keep (the kernel locks them in a user namespace)
LOCKED_FLAGS = (
    (2, MS_NOSUID),
    (4, MS_NODEV),
    (8, MS_NOEXEC),
    (1024, MS_NOATIME),
    (2048, MS_NODIRATIME),
    (4096, MS_RELATIME),
)

PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
NOBODY = 65534
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_MASKED_EQ = 7
EPERM = 1
ENOSYS = 38
SECCOMP_DENIED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "pidfd_open",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "unshare",
    "setns",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "keyctl",
    "add_key",
    "request_key",
    "open_by_handle_at",
    "name_to_handle_at",
    "iopl",
    "ioperm",
    "lookup_dcookie",
    "fanotify_init",
    "sethostname",
    "setdomainname",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "vhangup",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "socket",
    "socketpair",
    "personality",
    "uselib",
    "nfsservctl",
    "mbind",
    "migrate_pages",
    "move_pages",
    "set_mempolicy",
)

libc = ctypes.CDLL(None, use_errno=True)


class SetupError(Exception):
    pass


class ArgCompare(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def report(message):
    data = json.dumps(message).encode()
    os.write(1, struct.pack(">I", len(data)) + data)


def check(result, what):
    if result != 0:
        raise SetupError(what + ": " + os.strerror(ctypes.get_errno()))


def encode(text):
    return None if text is None else text.encode()


def mount(source, target, fstype, flags, data=None):
    check(
        libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)),
        "mount " + target,
    )


def locked_flags(path):
    current = os.statvfs(path).f_flag
    return sum(flag for bit, flag in LOCKED_FLAGS if current & bit)


def write_file(path, text, dir_fd=None):
    try:
        fd = os.open(path, os.O_WRONLY, dir_fd=dir_fd)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        raise SetupError("write " + path + ": " + str(exc.strerror)) from exc


def map_to_root(proc_fd):
    """Map our own uid/gid (the only mapping an unprivileged process may write) to 0 inside."""
    uid, gid = os.geteuid(), os.getegid()
    write_file("self/setgroups", "deny", proc_fd)
    write_file("self/uid_map", f"0 {uid} 1", proc_fd)
    write_file("self/gid_map", f"0 {gid} 1", proc_fd)


def enter_private_mounts(proc_fd):
    """Stage 1: a mount namespace we may build in (as host root, or as root of our own user namespace)."""
    if os.geteuid() == 0:
        check(libc.unshare(CLONE_NEWNS), "unshare mount namespace")
    else:
        check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare user namespace (unavailable?)")
        map_to_root(proc_fd)


def make_mount_point(path, is_dir):
    if is_dir:
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o444))


def bind_read_only(source, path, is_device):
    keep = locked_flags(source)
    mount(source, path, None, MS_BIND)
    extra = MS_NOSUID | (MS_NOEXEC if is_device else MS_NODEV)
    mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep | extra)


def build_root(config):
    """A fresh tmpfs holding only the view's read-only binds, device nodes and a small /tmp; pivot into it."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = "/tmp"  # only a mount point inside our private mount namespace; the host's /tmp is untouched
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4k,mode=0755")
    for source, target, is_dir in config["binds"]:
        make_mount_point(root + target, is_dir)
        bind_read_only(source, root + target, False)
    for device in DEVICES:
        if os.path.exists(device):
            make_mount_point(root + device, False)
            bind_read_only(device, root + device, True)
    for hidden in config["hidden"]:
        mount(
            "tmpfs",
            root + hidden,
            "tmpfs",
            MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
            "size=4k,nr_inodes=8,mode=0555",
        )
    make_mount_point(root + "/tmp", True)
    mount(
        "tmpfs",
        root + "/tmp",
        "tmpfs",
        MS_NOSUID | MS_NODEV | MS_NOEXEC,
        f"size={int(config.get('tmp_mb', 16))}m,nr_inodes={int(config.get('tmp_inodes', 1024))},mode=1777",
    )
    os.chdir(root)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise SetupError("pivot_root: unknown architecture " + os.uname().machine)
    check(libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def enter_namespaces(proc_fd, host_root):
    """Stage 2: as host `nobody` (when we were root), fresh user/mount/pid/net/ipc/uts namespaces. The
    new user namespace is less privileged than the one that made the mounts, so they are locked."""
    if host_root:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the uid change cleared it; /proc/self/*_map need it
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    check(libc.unshare(flags), "unshare namespaces")
    map_to_root(proc_fd)


def drop_capabilities():
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    for capability in range(64):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            break  # EINVAL: past the last capability this kernel knows
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (CapData * 2)()
    check(libc.capset(ctypes.byref(header), data), "capset")


def load_libseccomp():
    """Loaded before the pivot: the sandbox's root does not hold libseccomp."""
    try:
        return ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None


def install_seccomp(seccomp):
    """Deny dangerous system calls. Returns the flags to report ([] or ["no-seccomp"])."""
    if seccomp is None:
        return ["no-seccomp"]
    seccomp.seccomp_init.restype = ctypes.c_void_p
    seccomp.seccomp_init.argtypes = [ctypes.c_uint32]
    seccomp.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    seccomp.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(ArgCompare),
    ]
    seccomp.seccomp_load.argtypes = [ctypes.c_void_p]
    seccomp.seccomp_release.argtypes = [ctypes.c_void_p]
    context = seccomp.seccomp_init(SCMP_ACT_ALLOW)
    if not context:
        raise SetupError("seccomp_init failed")

    def deny(name, errno, conditions=()):
        number = seccomp.seccomp_syscall_resolve_name(name.encode())
        if number < 0:
            return  # not a system call on this architecture
        array = (ArgCompare * max(1, len(conditions)))(*conditions)
        result = seccomp.seccomp_rule_add_array(context, 0x00050000 | errno, number, len(conditions), array)
        if result != 0:
            raise SetupError(f"seccomp rule for {name}: {os.strerror(-result)}")

    try:
        for name in SECCOMP_DENIED:
            deny(name, EPERM)
        for flag in NAMESPACE_FLAGS:
            deny("clone", EPERM, [ArgCompare(0, SCMP_CMP_MASKED_EQ, flag, flag)])
        deny("clone3", ENOSYS)  # its flags live in memory a filter cannot read; libc falls back to clone
        result = seccomp.seccomp_load(context)
        if result != 0:
            raise SetupError("seccomp_load: " + os.strerror(-result))
    finally:
        seccomp.seccomp_release(context)
    return []


def install_syscall_filter(config):
    """The sandbox's own filter (built by the trusted side, see syscall_filter.py). Returns the flags
    to report: [] or ["no-syscall-filter"] where no filter exists for this machine."""
    program = bytes.fromhex(config["syscall_filter"]) if config.get("syscall_filter") else b""
    if not program:
        return ["no-syscall-filter"]
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "syscall filter")
    return []


def writable_devnull_on_stderr():
    """The filter denies opening files for writing; the zygote's children reuse this fd."""
    fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 2:
        os.dup2(fd, 2)
        os.close(fd)


def exec_zygote(config):
    interpreter = config["interpreter"]
    scratch = config.get("scratch") or "/tmp"
    try:
        os.execve(
            interpreter, [interpreter, "-I", "-S", "-B", "-X", "utf8", "-c", config["zygote"], scratch], {}
        )
    finally:
        os._exit(1)


def main_bare(config):
    try:
        writable_devnull_on_stderr()
        if config.get("subreaper"):
            libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # die with the grader
        if config.get("scratch"):
            os.chdir(config["scratch"])
        flags = install_syscall_filter(config)
    except (SetupError, OSError) as exc:
        report({"status": "setup_error", "detail": str(exc)})
        os._exit(1)
    report({"status": "ready", "flags": flags})
    exec_zygote(config)


def main():
    config = json.loads(sys.argv[1])
    if config.get("mode") == "bare":
        main_bare(config)
        return
    host_root = os.geteuid() == 0
    seccomp = load_libseccomp()
    try:
        writable_devnull_on_stderr()
        proc_fd = os.open("/proc", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        enter_private_mounts(proc_fd)
        build_root(config)
        enter_namespaces(proc_fd, host_root)
        os.close(proc_fd)
    except (SetupError, OSError) as exc:
        report({"status": "setup_error", "detail": str(exc)})
        os._exit(1)
    alive_read, alive_write = os.pipe()  # EOF on alive_read means the launcher is gone
    pid = os.fork()
    if pid:
        os.close(alive_read)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1):
            os.dup2(devnull, fd)  # only the namespace's init holds the protocol pipes
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    os.close(alive_write)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([alive_read], [], [], 0)[0]:
        os._exit(1)  # the launcher died before PDEATHSIG was armed
    os.close(alive_read)
    try:
        check(libc.sethostname(b"sandbox", 7), "sethostname")
        drop_capabilities()
        flags = install_seccomp(seccomp) + install_syscall_filter(config)
    except (SetupError, OSError) as exc:
        report({"status": "setup_error", "detail": str(exc)})
        os._exit(1)
    report({"status": "isolated", "flags": flags})
    exec_zygote(config)


main()
