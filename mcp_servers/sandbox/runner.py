"""Run Python code in a confined child process (parent side): one call of ``run_python``.

Each run gets a fresh directory ``<workdir>/run-<id>/`` holding ``main.py``, used as the child's
cwd, HOME and (via ``.tmp``) TMPDIR (see :mod:`.folders`). The child is ``<python> -I -S -B -X
utf8 _bootstrap.py`` (isolated mode: no ``PYTHON*`` variables, no site-packages, no user site;
standard library only), started inside the OS-level confinement chosen for this machine
(:mod:`.confinement`) and supervised by :mod:`.supervision`. Its environment is built from
scratch, so no API key or other secret of the author's leaks in. The bootstrap applies the
kernel limits and the guard (see :mod:`._bootstrap`) and reports the layers it applied and the
program's exit status. After the run its folder is checked against the disk quota (over it, the
folder is removed and the call fails with ``disk_quota_exceeded``) and old run folders are pruned.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from .confinement import LAYERS, Jail, choose, give_to, interpreter_roots, jail
from .errors import DiskQuotaExceededError
from .folders import disk_usage, prepare_run, prune_runs, remove_run
from .models import Isolation, RunResult
from .settings import SandboxSettings
from .supervision import BOOTSTRAP, CHILD_FLAGS, Capture, Run, child_env, run_child

__all__ = [
    "BOOTSTRAP",
    "CHILD_FLAGS",
    "SandboxSettings",
    "child_env",
    "interpreter",
    "isolation",
    "killed_reason",
    "prune",
    "run_python",
]


def interpreter(python: str | None) -> list[str]:
    """How to start the child's Python: the configured interpreter, this one, or, in a bundled
    app (which has no `python`), the bundle's own executable in its `--python` role."""
    if python:
        return [python]
    if getattr(sys, "frozen", False):
        return [sys.executable, "--python"]
    return [sys.executable]


async def run_python(
    workdir: Path, code: str, *, timeout_s: float, stdin: str | None, limits: SandboxSettings
) -> RunResult:
    """Run ``code`` in a new run directory under ``workdir`` and report what happened.

    Raises:
        SandboxUnavailableError: No OS-level confinement works here and guard-only is not allowed.
        DiskQuotaExceededError: The run wrote more than its quota (its folder is removed).
        OSError: If the run directory cannot be created or the child cannot be started.
    """
    confinement = await choose(limits.confinement, allow_guard_only=limits.allow_guard_only)
    python, roots = interpreter_roots(interpreter(limits.python))
    run_dir = prepare_run(workdir, code)
    plan = jail(confinement, run_dir=run_dir, read_only=[*roots, str(BOOTSTRAP.parent)])
    run = Run(
        plan,
        run_dir,
        limits,
        timeout_s,
        stdin,
        Capture(limits.max_output_bytes),
        Capture(limits.max_output_bytes),
    )
    config = _config(run, roots, give_to(plan.identity, run_dir))
    started = anyio.current_time()
    await run_child([*plan.prefix, *python], config, run)
    await _account(run)
    await anyio.to_thread.run_sync(prune, workdir, limits)
    outcome = run.outcome
    exit_code = outcome.exit_code if outcome.exit_code is not None else -signal.SIGKILL
    return RunResult(
        exit_code=exit_code,
        stdout=run.out.text(),
        stderr=run.err.text(),
        timed_out=outcome.timed_out,
        killed_reason=killed_reason(exit_code, timed_out=outcome.timed_out),
        duration_s=round(anyio.current_time() - started, 3),
        stdout_truncated=run.out.dropped > 0,
        stderr_truncated=run.err.dropped > 0,
        timeout_s=timeout_s,
        run_dir=run_dir.name,
        isolation=isolation(plan, outcome.layers),
    )


def _config(run: Run, roots: list[str], identity: tuple[int, int] | None) -> dict[str, object]:
    """What the bootstrap is told (as JSON on its command line)."""
    limits, plan = run.limits, run.plan
    config: dict[str, object] = {
        "run_dir": str(run.run_dir),
        "code_path": str(run.run_dir / "main.py"),
        "memory_bytes": limits.memory_mb * 1024 * 1024,
        "cpu_s": limits.cpu_seconds(run.timeout_s),
        "file_bytes": limits.file_size_mb * 1024 * 1024,
        "read_roots": roots,
        "namespaced": plan.namespaced,
        "supervise": plan.supervised,
        "identity": identity,
        # Root in its own user namespace, or a root server's program that could not get a uid.
        "drop_capabilities": plan.confinement == "unshare" or plan.identity != identity,
        "max_processes": limits.max_processes if _counts(plan, identity) else None,
    }
    if not plan.namespaced:
        config["parent_pid"] = os.getpid()
    return config


def _counts(plan: Jail, identity: tuple[int, int] | None) -> bool:
    """The kernel would count this run's processes apart (a root program that kept root would
    be exempt from the cap)."""
    if plan.confinement == "bubblewrap" and plan.identity is not None:
        return identity is not None
    return plan.count_processes


async def _account(run: Run) -> None:
    """Check the run folder against the quota once more; over it, remove the folder and raise.

    Raises:
        DiskQuotaExceededError: The run wrote more than its limits allow.
    """
    limits = run.limits
    usage = run.outcome.over_quota or await anyio.to_thread.run_sync(
        disk_usage, run.run_dir, limits.max_files
    )
    if usage.bytes <= limits.quota_bytes and usage.entries <= limits.max_files:
        return
    await anyio.to_thread.run_sync(remove_run, run.run_dir)
    raise DiskQuotaExceededError(
        used_bytes=usage.bytes,
        quota_bytes=limits.quota_bytes,
        files=usage.entries,
        max_files=limits.max_files,
    )


def prune(workdir: Path, limits: SandboxSettings) -> list[str]:
    """Apply the retention to ``workdir`` (blocking); return the folders removed."""
    return prune_runs(
        workdir,
        keep=limits.keep_runs,
        max_age_s=limits.max_run_age_s,
        grace_s=limits.retention_grace_s(),
    )


def isolation(plan: Jail, reported: Mapping[str, Any]) -> Isolation:
    """The layers of a run: the confinement's own, then those the bootstrap applied, the guard
    last (nothing but the confinement if the bootstrap died before reporting)."""
    own = LAYERS[plan.confinement]
    if not reported:
        return Isolation(
            confinement=plan.confinement,
            network=list(own.network),
            filesystem=list(own.filesystem),
            processes=list(own.processes),
        )

    def merged(kind: str, base: tuple[str, ...]) -> list[Any]:
        values = [*base, *reported.get(kind, ()), "guard"]
        return list(dict.fromkeys(values))

    return Isolation(
        confinement=plan.confinement,
        network=merged("network", own.network),
        filesystem=merged("filesystem", own.filesystem),
        processes=merged("processes", own.processes),
    )


def killed_reason(exit_code: int, *, timed_out: bool) -> str | None:
    """Why the child died: ``timeout``, ``cpu_time``, ``signal:<NAME>``, or None."""
    if timed_out:
        return "timeout"
    if exit_code >= 0:
        return None
    if exit_code == -signal.SIGXCPU:
        return "cpu_time"
    try:
        return f"signal:{signal.Signals(-exit_code).name}"
    except ValueError:
        return f"signal:{-exit_code}"
