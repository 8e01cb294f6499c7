"""Structured result of ``run_python`` (published as the tool's ``outputSchema``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Confinement = Literal["bubblewrap", "unshare", "sandbox_exec", "guard_only"]
NetworkLayer = Literal["netns", "landlock", "sandbox_exec", "guard"]
FilesystemLayer = Literal["mountns", "landlock", "sandbox_exec", "guard"]
ProcessLayer = Literal["pidns", "nproc", "no_fork", "guard"]


class Isolation(BaseModel):
    """Which isolation layers were actually applied to the run (empty if it never started).

    ``confinement`` is the OS-level boundary the child ran in: ``bubblewrap`` (Linux: user, PID,
    network, mount, IPC and UTS namespaces with a minimal read-only view of the filesystem),
    ``unshare`` (Linux: the same namespaces, but the host's filesystem view), ``sandbox_exec``
    (macOS: a Seatbelt profile) or ``guard_only`` (no OS boundary, allowed by a setting).

    Layers: ``netns`` a private network namespace; ``mountns`` a mount namespace holding only the
    interpreter, the system libraries and the run directory; ``pidns`` a PID namespace, so every
    process of the run dies when it ends; ``nproc`` a kernel cap on processes and threads
    (``RLIMIT_NPROC``); ``no_fork`` the kernel refuses to create processes at all;
    ``landlock`` kernel Landlock rules (filesystem, and TCP with ABI >= 4); ``sandbox_exec`` the
    macOS profile; ``guard`` the in-process Python audit-hook guard (always applied, a
    convenience: code can switch it off).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    confinement: Confinement | None = None
    network: list[NetworkLayer]
    filesystem: list[FilesystemLayer]
    processes: list[ProcessLayer] = []


class RunResult(BaseModel):
    """Outcome of one sandboxed run.

    ``exit_code`` is negative (``-signal``) when the process was killed by a signal.
    ``killed_reason`` is None for a normal exit, else ``timeout`` (wall clock), ``cpu_time``
    (RLIMIT_CPU) or ``signal:<NAME>``. Output over the limit is cut and ends with a
    ``[... truncated N bytes ...]`` marker. ``run_dir`` names the run's directory inside the
    sandbox workdir; files the code wrote stay there until the retention removes the folder.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    killed_reason: str | None
    duration_s: float
    stdout_truncated: bool
    stderr_truncated: bool
    timeout_s: float
    run_dir: str
    isolation: Isolation
