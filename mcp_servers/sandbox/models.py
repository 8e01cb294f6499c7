"""Structured result of ``run_python`` (published as the tool's ``outputSchema``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

NetworkLayer = Literal["netns", "landlock", "guard"]
FilesystemLayer = Literal["landlock", "guard"]


class Isolation(BaseModel):
    """Which isolation layers were actually applied to the run (empty if it never started).

    ``netns``: a private network namespace; ``landlock``: kernel Landlock rules (filesystem, and
    TCP with ABI >= 4); ``guard``: the in-process Python audit-hook guard (always applied).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    network: list[NetworkLayer]
    filesystem: list[FilesystemLayer]


class RunResult(BaseModel):
    """Outcome of one sandboxed run.

    ``exit_code`` is negative (``-signal``) when the process was killed by a signal.
    ``killed_reason`` is None for a normal exit, else ``timeout`` (wall clock), ``cpu_time``
    (RLIMIT_CPU) or ``signal:<NAME>``. Output over the limit is cut and ends with a
    ``[... truncated N bytes ...]`` marker. ``run_dir`` names the run's directory inside the
    sandbox workdir; files the code wrote stay there.
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
