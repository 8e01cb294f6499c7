"""The OS-level boundary of a run: which confinement this machine offers, and the command that
puts the sandbox child inside it.

- ``bubblewrap`` (Linux, ``bwrap``): new PID, network, mount, IPC, UTS (and cgroup) namespaces,
  plus a user namespace with no nested ones when the server is not root. The child sees a
  read-only tmpfs root holding only ``/usr`` and the library directories, the interpreter, the
  bootstrap, a fresh ``/proc`` and ``/dev``, and its run directory (the only writable place). It
  is killed with its parent (``--die-with-parent``); when the PID namespace's first process dies
  the kernel kills every process in it, so nothing outlives the run.
- ``unshare`` (Linux, util-linux >= 2.38): the same namespaces, but the host's filesystem view
  (Landlock, where the kernel has it, is then the file boundary); ``setpriv --pdeathsig`` ties it
  to the server.
- ``sandbox_exec`` (macOS): a Seatbelt profile that denies the network, process creation,
  exec of anything but the interpreter, signals to others, and writes outside the run directory.
- ``guard_only``: no OS boundary; only rlimits, Landlock and the network namespace where the
  bootstrap can apply them itself, and the in-process guard. Used only when a setting allows it.

``auto`` takes the first that works here (each is probed once per process by running ``true``
inside it), else refuses with :class:`SandboxUnavailableError`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import anyio

from .errors import SandboxUnavailableError
from .models import Confinement, FilesystemLayer, NetworkLayer, ProcessLayer

ConfinementChoice = Literal["auto", "bubblewrap", "unshare", "sandbox_exec", "guard_only"]
CHOICES: tuple[str, ...] = get_args(ConfinementChoice)
ALLOW_GUARD_ONLY_ENV = "ATRIUM_SANDBOX_ALLOW_GUARD_ONLY"
PROBE_TIMEOUT_S = 10.0
# Directories of the host shown read-only inside bubblewrap (symlinks are recreated as symlinks).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime")
# A root server runs each program as a fresh uid from this range: it owns nothing but the run.
SANDBOX_UID_BASE = 0x7D000000
SANDBOX_UID_SPAN = 1 << 20
NOBODY = 65534
INSTALL_HINT = (
    "Install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf "
    "install bubblewrap`; Arch: `sudo pacman -S bubblewrap`) and allow unprivileged user "
    "namespaces, or set "
    f"{ALLOW_GUARD_ONLY_ENV}=1 (or --allow-guard-only) to run with the in-process guard and "
    "rlimits only, which a program can escape (it can start processes that outlive the run)."
)


@dataclass(frozen=True)
class Layers:
    """What the confinement itself enforces (the bootstrap adds its own layers)."""

    network: tuple[NetworkLayer, ...] = ()
    filesystem: tuple[FilesystemLayer, ...] = ()
    processes: tuple[ProcessLayer, ...] = ()


LAYERS: dict[Confinement, Layers] = {
    "bubblewrap": Layers(("netns",), ("mountns",), ("pidns",)),
    "unshare": Layers(("netns",), (), ("pidns",)),
    "sandbox_exec": Layers(("sandbox_exec",), ("sandbox_exec",), ("no_fork",)),
    "guard_only": Layers(),
}


@dataclass(frozen=True)
class Jail:
    """How one run is started: the command before the interpreter, and what the bootstrap does.

    ``identity`` is the (uid, gid) a root server's program runs as; ``count_processes`` says the
    kernel would count only this run's processes, so ``RLIMIT_NPROC`` is a real cap.
    """

    confinement: Confinement
    prefix: tuple[str, ...]
    identity: tuple[int, int] | None = None
    count_processes: bool = False

    @property
    def namespaced(self) -> bool:
        """PID and network namespaces: ending the outer process ends every process of the run."""
        return self.confinement in ("bubblewrap", "unshare")

    @property
    def supervised(self) -> bool:
        """The bootstrap forks the program and reports its exit status (not where forks fail)."""
        return self.confinement != "sandbox_exec"


_probed: dict[Confinement, str | None] = {}


async def choose(choice: ConfinementChoice, *, allow_guard_only: bool) -> Confinement:
    """The confinement runs get: ``choice`` if it works here, or for ``auto`` the strongest that
    does (``guard_only`` only when allowed).

    Raises:
        SandboxUnavailableError: Nothing acceptable works on this machine; the message says why
            and how to install bubblewrap.
    """
    if choice == "guard_only":
        return "guard_only"
    candidates: list[Confinement] = [choice] if choice != "auto" else _platform_candidates()
    reasons: list[str] = []
    for candidate in candidates:
        why_not = await _probe(candidate)
        if why_not is None:
            return candidate
        reasons.append(f"{candidate}: {why_not}")
    if choice == "auto" and allow_guard_only and sys.platform != "win32":
        return "guard_only"
    if sys.platform == "win32":
        reasons.append("Windows has no confinement the sandbox can use (its limits are POSIX)")
    raise SandboxUnavailableError(
        "no OS-level sandbox works here ("
        + "; ".join(reasons or ["none for this platform"])
        + "). "
        + INSTALL_HINT
    )


def _platform_candidates() -> list[Confinement]:
    if sys.platform.startswith("linux"):
        return ["bubblewrap", "unshare"]
    if sys.platform == "darwin":
        return ["sandbox_exec"]
    return []


async def _probe(confinement: Confinement) -> str | None:
    """None when ``confinement`` can run ``true`` here, else why not (cached per process)."""
    if confinement in _probed:
        return _probed[confinement]
    command = _probe_command(confinement)
    if command is None:
        why_not: str | None = f"not available on {sys.platform}"
    elif tool(command[0]) is None:
        why_not = f"`{command[0]}` is not installed"
    else:
        why_not = await _run_probe(command)
    _probed[confinement] = why_not
    return why_not


def tool(name: str) -> str | None:
    """The full path of a system tool: on PATH, else in /usr/bin or /bin."""
    if os.path.isabs(name):
        return name if os.access(name, os.X_OK) else None
    search = os.pathsep.join((os.environ.get("PATH", ""), "/usr/bin", "/bin"))
    return shutil.which(name, path=search)


def _probe_command(confinement: Confinement) -> list[str] | None:
    true = tool("true") or "/usr/bin/true"
    if confinement == "bubblewrap" and sys.platform.startswith("linux"):
        return [*bubblewrap_prefix(read_only=(), run_dir=None), os.path.realpath(true)]
    if confinement == "unshare" and sys.platform.startswith("linux"):
        return [*unshare_prefix(), true]
    if confinement == "sandbox_exec" and sys.platform == "darwin":
        return ["sandbox-exec", "-p", "(version 1)(allow default)", true]
    return None


async def _run_probe(command: list[str]) -> str | None:
    try:
        with anyio.fail_after(PROBE_TIMEOUT_S):
            done = await anyio.run_process(command, check=False, stdin=subprocess.DEVNULL)
    except TimeoutError:
        return f"`{command[0]}` did not finish within {PROBE_TIMEOUT_S:g}s"
    except OSError as exc:
        return f"`{command[0]}` could not start ({exc.strerror})"
    if done.returncode == 0:
        return None
    first = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
    return f"`{command[0]}` failed ({first[0] if first else f'exit {done.returncode}'})"


def jail(confinement: Confinement, *, run_dir: Path, read_only: Sequence[str]) -> Jail:
    """The command prefix and identity for one run in ``run_dir`` (not yet created)."""
    as_root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    if confinement == "bubblewrap":
        prefix = bubblewrap_prefix(read_only=read_only, run_dir=str(run_dir), as_root=as_root)
        identity = sandbox_identity() if as_root else None
        return Jail(confinement, tuple(prefix), identity, count_processes=True)
    if confinement == "unshare":
        # A user namespace of its own counts processes apart, except for root (exempt).
        return Jail(confinement, tuple(unshare_prefix()), count_processes=not as_root)
    if confinement == "sandbox_exec":
        return Jail(confinement, tuple(sandbox_exec_prefix(str(run_dir), read_only)))
    return Jail(confinement, ())


def bubblewrap_prefix(
    *, read_only: Sequence[str], run_dir: str | None, as_root: bool | None = None
) -> list[str]:
    """``bwrap`` and its options up to the command.

    As root no user namespace is made (the program drops to its own uid in the bootstrap, which
    keeps CAP_SETUID/CAP_SETGID for that alone); otherwise a user namespace in which no further
    one may be made. The bootstrap changes into the run directory itself (after dropping root).
    """
    if as_root is None:
        as_root = os.geteuid() == 0
    args = [
        tool("bwrap") or "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
    ]
    args += ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if as_root:
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    view = _View()
    args += view.system()
    args += ["--proc", "/proc", "--dev", "/dev"]
    for root in read_only:
        args += view.bind("--ro-bind", root)
    if run_dir is not None:
        args += view.bind("--bind", run_dir)
    return [*args, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/", "--"]


class _View:
    """Builds the filesystem a bubblewrap child sees, at the same paths as on the host."""

    def __init__(self) -> None:
        self.mounted: list[str] = []
        self.made: set[str] = {"/"}

    def system(self) -> list[str]:
        args: list[str] = []
        for path in SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
                self.made.add(path)
            elif os.path.isdir(path):
                args += self.bind("--ro-bind", path)
        for path in SYSTEM_FILES:
            if os.path.exists(path):
                args += self.bind("--ro-bind", os.path.realpath(path), dest=path)
        return args

    def bind(self, option: str, source: str, *, dest: str | None = None) -> list[str]:
        """Bind ``source`` (at ``dest``, default the same path), making its parents 0755.

        A read-only path already inside a mounted one is left out (it is visible already).
        """
        target = dest or source
        if option == "--ro-bind" and any(_within(target, m) for m in self.mounted):
            return []
        args: list[str] = []
        for parent in reversed(Path(target).parents):
            text = str(parent)
            if text in self.made or any(_within(text, m) for m in self.mounted):
                continue
            args += ["--perms", "0755", "--dir", text]
            self.made.add(text)
        self.mounted.append(target)
        return [*args, option, source, target]


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def unshare_prefix() -> list[str]:
    """``unshare`` into new user, PID, network, mount, IPC and UTS namespaces, tied to the
    server by ``setpriv --pdeathsig`` and killing its child (PID 1 of the run) when it dies."""
    return [
        tool("setpriv") or "setpriv",
        "--pdeathsig",
        "KILL",
        "--",
        tool("unshare") or "unshare",
        "--user",
        "--map-current-user",
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
        "--net",
        "--ipc",
        "--uts",
        "--",
    ]


def sandbox_exec_prefix(run_dir: str, read_only: Sequence[str]) -> list[str]:
    """``sandbox-exec`` with a profile for one run (macOS). Reads are not restricted."""
    interpreters = " ".join(f"(subpath {_sbpl(os.path.realpath(r))})" for r in read_only)
    profile = "\n".join(
        (
            "(version 1)",
            "(allow default)",
            "(deny network*)",
            "(deny process-fork)",
            "(deny process-exec)",
            f"(allow process-exec {interpreters})" if interpreters else "",
            "(deny file-write*)",
            f"(allow file-write* (subpath {_sbpl(os.path.realpath(run_dir))})",
            '  (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/fd/"))',
            "(deny signal)",
            "(allow signal (target self))",
        )
    )
    return [tool("sandbox-exec") or "sandbox-exec", "-p", profile]


def _sbpl(text: str) -> str:
    """A Seatbelt (SBPL) string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sandbox_identity() -> tuple[int, int]:
    """A uid/gid for a root server's program: an unused one from a high range (each run its own,
    so the kernel's process count is this run's alone)."""
    uid = SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_SPAN)
    return uid, uid


def give_to(identity: tuple[int, int] | None, run_dir: Path) -> tuple[int, int] | None:
    """Make ``run_dir`` and what is in it owned by ``identity``; the identity that holds.

    A uid the kernel cannot map here (a container with a short uid map) falls back to nobody.
    """
    if identity is None:
        return None
    for uid, gid in (identity, (NOBODY, NOBODY)):
        try:
            for path in (run_dir, *run_dir.rglob("*")):
                os.chown(path, uid, gid, follow_symlinks=False)
        except OSError:
            continue
        return uid, gid
    return None


def interpreter_roots(python: Sequence[str]) -> tuple[list[str], list[str]]:
    """The interpreter command with its executable resolved, and the folders it reads.

    The running interpreter needs its base prefix; a frozen bundle its own folder; a configured
    one its prefix (the parent of its ``bin``).
    """
    executable = os.path.realpath(shutil.which(python[0]) or python[0])
    if getattr(sys, "frozen", False) and python[0] == sys.executable:
        roots = [os.path.dirname(executable)]
    elif python[0] == sys.executable:
        roots = [os.path.realpath(sys.base_prefix), os.path.dirname(executable)]
    else:
        roots = [os.path.dirname(os.path.dirname(executable))]
    return [executable, *python[1:]], list(dict.fromkeys(roots))


def guard_only_allowed_by_env() -> bool:
    """``ATRIUM_SANDBOX_ALLOW_GUARD_ONLY=1`` allows the guard-only fallback."""
    return os.environ.get(ALLOW_GUARD_ONLY_ENV, "") == "1"
