"""The sandbox MCP server: one tool, ``run_python``, that runs code in a confined child process.

See :mod:`.confinement` for the OS-level boundary, :mod:`.runner` for how a run is started and
supervised, :mod:`._bootstrap` for what is enforced inside the child and :mod:`.folders` for the
disk quota and the retention of run folders. Each result reports the layers that applied.
Refusals are tool errors whose text starts with a code: ``[sandbox_unavailable]``,
``[disk_quota_exceeded]``, ``[spawn_failed]``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from mcp_servers.serving import build_mcp_server

from .confinement import ConfinementChoice
from .models import RunResult
from .runner import SandboxSettings, prune, run_python

SERVER_NAME = "atrium-sandbox"

_ANNOTATIONS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def build_server(
    workdir: Path,
    *,
    timeout_s: float = 30.0,
    memory_mb: int = 512,
    cpu_s: int | None = None,
    max_output_bytes: int = 100_000,
    file_size_mb: int = 64,
    kill_grace_s: float = 1.0,
    python: str | None = None,
    max_processes: int = 32,
    disk_quota_mb: int = 256,
    max_files: int = 10_000,
    keep_runs: int = 50,
    max_run_age_s: float = 7 * 24 * 3600.0,
    confinement: ConfinementChoice = "auto",
    allow_guard_only: bool | None = None,
) -> MCPServer:
    """Build the sandbox server; runs go to fresh subdirectories of ``workdir`` (created), and
    run folders past the retention are removed now and after each run.

    ``timeout_s`` is the default and the maximum wall-clock time per run; ``memory_mb`` caps the
    child's address space; ``cpu_s`` caps CPU seconds (default: the run's timeout plus one);
    ``max_output_bytes`` caps each of stdout and stderr; ``file_size_mb`` each file written;
    ``kill_grace_s`` is the SIGTERM-to-SIGKILL grace on timeout without a PID namespace;
    ``python`` is the child interpreter (default: this one); ``max_processes`` caps the program's
    processes and threads; ``disk_quota_mb`` and ``max_files`` cap what a run keeps in its
    folder; ``keep_runs`` and ``max_run_age_s`` are the retention; ``confinement`` and
    ``allow_guard_only`` (None: from the environment) choose the OS-level boundary (see
    :class:`SandboxSettings`).
    """
    root = workdir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    limits = SandboxSettings(
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        cpu_s=cpu_s,
        max_output_bytes=max_output_bytes,
        file_size_mb=file_size_mb,
        kill_grace_s=kill_grace_s,
        python=python,
        max_processes=max_processes,
        disk_quota_mb=disk_quota_mb,
        max_files=max_files,
        keep_runs=keep_runs,
        max_run_age_s=max_run_age_s,
        confinement=confinement,
    )
    if allow_guard_only is not None:
        limits = replace(limits, allow_guard_only=allow_guard_only)
    prune(root, limits)
    server = build_mcp_server(
        SERVER_NAME,
        title="Atrium sandbox",
        instructions=(
            "Runs Python (standard library only) in a separate process confined by the operating "
            "system: no network, limited time, memory, processes, output and disk, writing only "
            "in its own run directory."
        ),
    )
    _add_run_python(server, root, limits)
    return server


def _add_run_python(server: MCPServer, workdir: Path, limits: SandboxSettings) -> None:
    @server.tool(name="run_python", title="Run Python in the sandbox", annotations=_ANNOTATIONS)
    async def run(
        code: Annotated[str, Field(description="Python source, run as __main__.")],
        timeout_s: Annotated[
            float | None, Field(gt=0, description="Wall-clock limit, capped by the server.")
        ] = None,
        stdin: Annotated[str | None, Field(description="Text fed to the program's stdin.")] = None,
    ) -> Annotated[CallToolResult, RunResult]:
        """Run Python code in a fresh sandbox directory: no network, no subprocesses, bounded
        time, memory, output and disk; returns exit code, stdout, stderr and what was enforced."""
        effective = min(timeout_s or limits.timeout_s, limits.timeout_s)
        try:
            result = await run_python(
                workdir, code, timeout_s=effective, stdin=stdin, limits=limits
            )
        except OSError as exc:
            raise ToolError(f"[spawn_failed] could not start the sandbox: {exc.strerror}") from exc
        return CallToolResult(
            content=[TextContent(type="text", text=summary(result))],
            structured_content=result.model_dump(mode="json"),
        )


def summary(result: RunResult) -> str:
    """A readable account of a run for the model."""
    if result.timed_out:
        head = f"Timed out after {result.timeout_s:g}s and was killed."
    elif result.killed_reason is not None:
        head = f"Killed ({result.killed_reason}) after {result.duration_s:g}s."
    else:
        head = f"Exit code {result.exit_code} after {result.duration_s:g}s."
    layers = (
        f"confinement: {result.isolation.confinement or 'none'}; "
        f"network: {'+'.join(result.isolation.network) or 'none'}; "
        f"filesystem: {'+'.join(result.isolation.filesystem) or 'none'}; "
        f"processes: {'+'.join(result.isolation.processes) or 'none'}"
    )
    parts = [f"{head} ({layers})"]
    if result.stdout:
        parts.append(f"--- stdout ---\n{result.stdout}")
    if result.stderr:
        parts.append(f"--- stderr ---\n{result.stderr}")
    return "\n".join(parts)
