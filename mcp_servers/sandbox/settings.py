"""The sandbox's limits per run, its confinement and the interpreter it runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .confinement import ConfinementChoice, guard_only_allowed_by_env

RETENTION_GRACE_S = 600.0


@dataclass(frozen=True)
class SandboxSettings:
    """Per-run limits, the confinement and the interpreter. ``timeout_s`` also caps what a caller
    may ask.

    ``python`` defaults to the server's own interpreter; a frozen (PyInstaller) build must point
    it at a real Python 3 interpreter. ``max_processes`` caps processes and threads the program
    runs at once, itself included (kernel-enforced where the confinement counts them apart).
    ``disk_quota_mb`` and ``max_files`` cap the run folder's total; ``keep_runs`` and
    ``max_run_age_s`` are the retention of run folders. ``confinement`` is ``auto`` (the strongest
    that works here) or one by name; ``allow_guard_only`` lets ``auto`` fall back to the
    in-process guard alone when no OS confinement works (default: ``$ATRIUM_SANDBOX_ALLOW_GUARD_ONLY
    == "1"``), which a program can escape.
    """

    timeout_s: float = 30.0
    memory_mb: int = 512
    cpu_s: int | None = None
    max_output_bytes: int = 100_000
    file_size_mb: int = 64
    kill_grace_s: float = 1.0
    python: str | None = None
    max_processes: int = 32
    disk_quota_mb: int = 256
    max_files: int = 10_000
    keep_runs: int = 50
    max_run_age_s: float = 7 * 24 * 3600.0
    confinement: ConfinementChoice = "auto"
    allow_guard_only: bool = field(default_factory=guard_only_allowed_by_env)

    def cpu_seconds(self, timeout_s: float) -> int:
        """CPU-time limit: explicit, else the run's wall-clock timeout rounded up, plus one."""
        return self.cpu_s if self.cpu_s is not None else math.ceil(timeout_s) + 1

    @property
    def quota_bytes(self) -> int:
        """The disk quota of one run, in bytes."""
        return self.disk_quota_mb * 1024 * 1024

    def retention_grace_s(self) -> float:
        """A run folder younger than this may still be in use: never pruned."""
        return max(RETENTION_GRACE_S, 2 * self.timeout_s)
