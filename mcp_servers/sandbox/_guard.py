"""The in-process guard of the sandbox child: an audit hook that refuses risky operations.

Installed by the bootstrap right before the author's code runs; audit hooks cannot be removed.
The policy (:func:`decide`) is a plain function so it can be tested directly. It refuses:

- network use: socket connect/bind/send and every name lookup (sockets may still be created,
  so ``socket.socketpair`` and asyncio keep working);
- starting processes or signalling others: fork, exec, spawn, ``subprocess``, ``os.system``,
  ``os.kill`` of any process but itself;
- ``ctypes`` (any ctypes event) and importing the modules that would undo the above;
- writing, creating, removing, renaming, linking or changing files outside the run directory
  (symlinks and ``dir_fd`` arguments are resolved first), and opening directories outside it.

This is a convenience, not a security boundary: code can switch it off (its functions are
reachable through ``gc``), native code can get around audit hooks and a racing thread can swap a
path between the check and the use. The boundary is the OS confinement around the child
(:mod:`.confinement`) and the kernel layers the bootstrap applies (uid, rlimits, Landlock).
Standard library only: it runs inside the sandbox child.
"""

from __future__ import annotations

import os
import sys

NETWORK_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
        "socket.sethostname",
    }
)
PROCESS_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.startfile",
        "subprocess.Popen",
        "pty.spawn",
    }
)
BLOCKED_IMPORTS = frozenset(
    {"_posixsubprocess", "_ctypes", "_xxsubinterpreters", "_testcapi", "_testinternalcapi"}
)
# event -> ((path arg index, dir_fd arg index or -1), ...)
PATH_EVENTS: dict[str, tuple[tuple[int, int], ...]] = {
    "os.rename": ((0, 2), (1, 3)),
    "os.link": ((0, 2), (1, 3)),
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.mkdir": ((0, 2),),
    "os.symlink": ((1, 2),),
    "os.truncate": ((0, -1),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.utime": ((0, 3),),
    "os.chflags": ((0, -1),),
    "os.lchflags": ((0, -1),),
    "os.setxattr": ((0, -1),),
    "os.removexattr": ((0, -1),),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def decide(event: str, args: tuple[object, ...], run_dir: str) -> str | None:
    """Why ``event`` with ``args`` is refused, or None when it may proceed.

    ``run_dir`` must be a real (symlink-free) absolute path.
    """
    if event in NETWORK_EVENTS:
        return "network access is disabled"
    if event in PROCESS_EVENTS:
        return "starting processes is disabled"
    if event.startswith("ctypes."):
        return "ctypes is disabled"
    if event == "import" and args and args[0] in BLOCKED_IMPORTS:
        return f"importing {args[0]} is disabled"
    if event in ("os.kill", "os.killpg"):
        return None if args and args[0] in (os.getpid(), 0) else "signalling other processes"
    if event == "open":
        return _decide_open(args, run_dir)
    for path_index, fd_index in PATH_EVENTS.get(event, ()):
        if not _inside(_arg(args, path_index), _arg(args, fd_index), run_dir):
            return "changes outside the run directory are disabled"
    return None


def _arg(args: tuple[object, ...], index: int) -> object:
    return args[index] if 0 <= index < len(args) else None


def _decide_open(args: tuple[object, ...], run_dir: str) -> str | None:
    path, mode, flags = _arg(args, 0), _arg(args, 1), _arg(args, 2)
    if isinstance(path, int) or path is None:
        return None
    writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and flags & _WRITE_FLAGS != 0
    )
    if writing:
        return None if _inside(path, None, run_dir) else "writing outside the run directory"
    if isinstance(path, str | bytes) and os.path.isdir(path) and not _inside(path, None, run_dir):
        return "opening directories outside the run directory"
    return None


def _inside(path: object, dir_fd: object, run_dir: str) -> bool:
    """True when ``path`` (relative to ``dir_fd`` or the cwd) resolves beneath ``run_dir``."""
    if isinstance(path, int):
        return True  # an fd was already admitted when it was opened
    if not isinstance(path, str | bytes | os.PathLike):
        return False
    text = os.fsdecode(path)  # pyright: ignore[reportUnknownArgumentType]
    # Audit events pass dir_fd=-1 (or AT_FDCWD) when the call named no directory: the path is
    # then relative to the cwd, not to a descriptor.
    if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(text):
        try:
            base = os.readlink(f"/proc/self/fd/{dir_fd}")
        except OSError:
            return False
        text = os.path.join(base, text)
    real = os.path.realpath(text)
    return real == run_dir or real.startswith(run_dir.rstrip(os.sep) + os.sep)


def install(run_dir: str) -> None:
    """Install the guard for ``run_dir`` in this process, permanently."""
    real_run = os.path.realpath(run_dir)

    def hook(event: str, args: tuple[object, ...]) -> None:
        reason = decide(event, args, real_run)
        if reason is not None:
            raise PermissionError(f"sandbox: {reason} ({event})")

    _disarm_fork_exec()
    sys.addaudithook(hook)


def _disarm_fork_exec() -> None:
    """``_posixsubprocess.fork_exec`` raises no audit event; replace it before it can be used."""
    try:
        import _posixsubprocess  # type: ignore[import-not-found]
    except ImportError:
        return

    def refuse(*_args: object) -> None:
        raise PermissionError("sandbox: starting processes is disabled")

    _posixsubprocess.fork_exec = refuse  # pyright: ignore[reportAttributeAccessIssue]
