"""Child-side bootstrap: confine this process, then run the author's code as ``__main__``.

Run as a script (``python -I -S -B -X utf8 _bootstrap.py CONFIG_JSON``), usually already inside
the OS-level confinement the runner chose (bubblewrap or ``unshare`` namespaces, a macOS
``sandbox-exec`` profile; see :mod:`.confinement`), so it uses the standard library only and
imports nothing from Atrium. In order it applies:

1. **Identity** (kernel): when the server runs as root, bubblewrap starts this script as root
   with only CAP_SETUID/CAP_SETGID, and it becomes an unused high uid that owns nothing but the
   run directory (root is exempt from the process cap below; that uid is not). In the ``unshare``
   fallback it drops every capability it holds inside its user namespace.
2. **rlimits** (kernel, always): address space (``RLIMIT_AS``), CPU seconds (``RLIMIT_CPU``:
   SIGXCPU, then SIGKILL one second later), file size (``RLIMIT_FSIZE``), open files, no core
   dumps, and, where the kernel counts only this run's processes (a user namespace of its own, or
   the uid of step 1), processes and threads (``RLIMIT_NPROC``).
3. **Network namespace** (kernel, Linux, when not already in one): ``unshare(CLONE_NEWNET)`` as
   root, else ``unshare(CLONE_NEWUSER | CLONE_NEWNET)`` where unprivileged user namespaces are
   enabled. The new namespace has only a downed loopback: nothing is reachable, not 127.0.0.1.
4. **Landlock** (kernel, Linux >= 5.13, when available): writes and any other change only beneath
   the run directory; reads and execution only beneath the Python installation, the system library
   directories and a few device files; with ABI >= 4 no TCP bind/connect; with ABI >= 6 no signals
   to processes outside the sandbox. Inherited by anything the code manages to start.
5. **A supervisor** (everywhere but under ``sandbox-exec``, which forbids forking): this process
   forks the program and waits for it, then reports its exact exit status on the status pipe
   (bubblewrap's own exit code folds signals into 128+n) and exits, so the runner ends whatever
   the program left behind at once.
6. **The Python guard** (always, in-process ``sys.addaudithook``, in the program only): refuses
   socket use, starting processes, ``ctypes``, writes outside the run directory and opening
   directories outside it.

The guard is a convenience, not a boundary: code can switch it off (through ``gc``, or native
code). What holds then is steps 1-5 and the confinement around them. Without that confinement
(``guard_only``) a program that disables the guard can start processes that outlive the run.
The status pipe carries two JSON lines: the layers applied, then ``{"exit_code": n}``.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import resource
import signal
import sys
import traceback
import types
from collections.abc import Sequence
from typing import Any

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_PR_SET_NO_NEW_PRIVS = 38
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_V1_ALL = (1 << 13) - 1
_FS_REFER = 1 << 13
_FS_TRUNCATE = 1 << 14
_FS_IOCTL_DEV = 1 << 15
_FS_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_NET_TCP_BIND_CONNECT = (1 << 0) | (1 << 1)
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
# The runner's own processes inside the run's process count: bubblewrap's init and the supervisor.
PROCESS_OVERHEAD = 2
_SCOPE_ABSTRACT_UNIX_AND_SIGNAL = (1 << 0) | (1 << 1)

SYSTEM_READ_ROOTS = ("/usr", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/localtime")
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def drop_identity(uid: int, gid: int) -> None:
    """Become ``uid``/``gid`` with no supplementary groups (needs CAP_SETUID/CAP_SETGID).

    Changing every uid away from 0 clears all capabilities.
    """
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def drop_capabilities() -> None:
    """Clear every capability this process holds (in its own user namespace); best effort."""
    if not sys.platform.startswith("linux"):
        return
    libc = _libc()
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    libc.capset(ctypes.byref(header), data)


def limit_processes(max_processes: int) -> bool:
    """Cap processes and threads at ``max_processes`` plus the runner's own; False if refused."""
    nproc = getattr(resource, "RLIMIT_NPROC", None)
    if nproc is None:
        return False
    wanted = max_processes + PROCESS_OVERHEAD
    try:
        resource.setrlimit(nproc, (wanted, wanted))
    except (OSError, ValueError):
        return False
    return True


def apply_rlimits(memory_bytes: int, cpu_s: int, file_bytes: int) -> None:
    """Set hard limits (clamped to what the parent already allows)."""
    limits = (
        (resource.RLIMIT_AS, memory_bytes, memory_bytes),
        (resource.RLIMIT_CPU, cpu_s, cpu_s + 1),
        (resource.RLIMIT_FSIZE, file_bytes, file_bytes),
        (resource.RLIMIT_NOFILE, 256, 256),
        (resource.RLIMIT_CORE, 0, 0),
    )
    for kind, wanted_soft, wanted_hard in limits:
        _, ceiling = resource.getrlimit(kind)
        if ceiling == resource.RLIM_INFINITY:
            resource.setrlimit(kind, (wanted_soft, wanted_hard))
        else:
            resource.setrlimit(kind, (min(wanted_soft, ceiling), min(wanted_hard, ceiling)))


def die_with_server(server_pid: object) -> None:
    """SIGKILL this process when the server that started it dies (Linux), so a program that
    sleeps or spins never outlives a killed server; exit now if it is already gone."""
    if sys.platform.startswith("linux"):
        _libc().prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if isinstance(server_pid, int) and os.getppid() != server_pid:
        os._exit(137)


def isolate_network() -> bool:
    """Move into a fresh network namespace; False when the kernel or privileges forbid it."""
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    if libc.unshare(_CLONE_NEWNET) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        try:
            with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
                handle.write(text)
        except OSError:
            break  # unmapped ids only change what the process sees of itself
    return True


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    if not sys.platform.startswith("linux"):
        return 0
    abi = _libc().syscall(_SYS_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, int(abi))


def restrict_filesystem(run_dir: str, read_roots: Sequence[str]) -> int:
    """Apply Landlock: full access beneath ``run_dir``, read/execute beneath ``read_roots``.

    Returns the ABI version applied, or 0 if Landlock is unavailable (nothing changed then).
    """
    abi = landlock_abi()
    if abi < 1:
        return 0
    fs = _FS_V1_ALL | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    fs |= _FS_IOCTL_DEV if abi >= 5 else 0
    attr = _RulesetAttr(
        fs,
        _NET_TCP_BIND_CONNECT if abi >= 4 else 0,
        _SCOPE_ABSTRACT_UNIX_AND_SIGNAL if abi >= 6 else 0,
    )
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    libc = _libc()
    ruleset = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return 0
    try:
        _allow(libc, ruleset, run_dir, fs)
        for root in read_roots:
            _allow(libc, ruleset, root, fs & (_FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR))
        for device in DEVICE_FILES:
            _allow(libc, ruleset, device, fs & (_FS_READ_FILE | _FS_WRITE_FILE | _FS_TRUNCATE))
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return 0
        if libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            return 0
    finally:
        os.close(ruleset)
    return abi


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    """Add a path-beneath rule; silently skip paths that do not exist here."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _FS_FILE_RIGHTS
        rule = _PathBeneathAttr(access, fd)
        libc.syscall(
            _SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
        )
    finally:
        os.close(fd)


def main(argv: Sequence[str]) -> None:
    """Confine, report the applied layers on the status fd, then run the code (supervised)."""
    config: dict[str, Any] = json.loads(argv[1])
    run_dir: str = config["run_dir"]
    status_fd: int = config["status_fd"]
    guard = _load_guard()  # before Landlock, which may hide this directory
    identity = config.get("identity")
    if identity:
        drop_identity(identity[0], identity[1])
    elif config.get("drop_capabilities"):
        drop_capabilities()
    os.chdir(run_dir)
    os.environ.pop("PWD", None)  # bubblewrap sets it for its own --chdir
    apply_rlimits(config["memory_bytes"], config["cpu_s"], config["file_bytes"])
    layers = _confine(config, run_dir)
    _write_status(status_fd, layers)
    with open(config["code_path"], encoding="utf-8") as handle:
        source = handle.read()
    if config.get("supervise"):
        _supervise(status_fd)  # returns in the program's process only
    else:
        os.close(status_fd)
    guard.install(run_dir)
    _run(source, run_dir)


def _confine(config: dict[str, Any], run_dir: str) -> dict[str, Any]:
    """Apply the kernel layers this process sets itself; return what applied."""
    network: list[str] = []
    filesystem: list[str] = []
    processes: list[str] = []
    if config.get("max_processes") and limit_processes(config["max_processes"]):
        processes.append("nproc")
    if not config.get("namespaced") and isolate_network():
        network.append("netns")
    die_with_server(config.get("parent_pid"))
    roots = [sys.base_prefix, sys.prefix, *config.get("read_roots", ()), *SYSTEM_READ_ROOTS]
    abi = restrict_filesystem(run_dir, roots)
    if abi:
        filesystem.append("landlock")
        if abi >= 4:
            network.append("landlock")
    return {
        "network": network,
        "filesystem": filesystem,
        "processes": processes,
        "landlock_abi": abi,
    }


def _supervise(status_fd: int) -> None:
    """Fork: the child returns to run the program; this process waits for it, reports its exit
    status on ``status_fd`` and exits, never returning.

    It reaps every child it is given (as PID 1 of an ``unshare`` namespace orphans come to it),
    and it is not dumpable, so the program cannot reach its status pipe through ``/proc``.
    """
    supervisor = os.getpid()
    child = os.fork()
    if child == 0:
        os.close(status_fd)
        if sys.platform.startswith("linux"):
            _libc().prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
        if os.getppid() != supervisor:
            os._exit(137)
        return
    if sys.platform.startswith("linux"):
        _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    # A timeout's SIGTERM to the process group is for the program; this process reports it.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        reaped, status = os.waitpid(-1, 0)
        if reaped == child:
            break
    code = os.waitstatus_to_exitcode(status)
    _write_status(status_fd, {"exit_code": code})
    os._exit(code if code >= 0 else 128 - code)


def _load_guard() -> types.ModuleType:
    """Load ``_guard.py`` from beside this file (``-I`` keeps this directory off sys.path)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_guard.py")
    spec = importlib.util.spec_from_file_location("_atrium_sandbox_guard", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the sandbox guard from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write_status(fd: int, status: dict[str, Any]) -> None:
    """One JSON line on the status pipe."""
    os.write(fd, json.dumps(status).encode("utf-8") + b"\n")


def _run(source: str, run_dir: str) -> None:
    """Execute the code as ``__main__`` and print tracebacks without bootstrap frames."""
    module = types.ModuleType("__main__")
    module.__dict__["__file__"] = os.path.join(run_dir, "main.py")
    module.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = module
    sys.argv = ["main.py"]
    sys.path.insert(0, run_dir)
    try:
        exec(compile(source, "main.py", "exec"), module.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "main.py":
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv)
