"""The sandbox MCP server: one tool, ``run_python``, that runs code in a confined child process.

See :mod:`.runner` for how a run is started and supervised and :mod:`._bootstrap` for what is
and is not enforced inside the child. Each result reports the isolation layers that applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .models import RunResult
from .runner import SandboxSettings, run_python

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
    kill_grace_s: float = 1.0,
    python: str | None = None,
) -> MCPServer:
    """Build the sandbox server; runs go to fresh subdirectories of ``workdir`` (created).

    ``timeout_s`` is the default and the maximum wall-clock time per run; ``memory_mb`` caps the
    child's address space; ``cpu_s`` caps CPU seconds (default: the run's timeout plus one);
    ``max_output_bytes`` caps each of stdout and stderr; ``kill_grace_s`` is the SIGTERM-to-SIGKILL
    grace on timeout; ``python`` is the child interpreter (default: this one).
    """
    root = workdir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    limits = SandboxSettings(
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        cpu_s=cpu_s,
        max_output_bytes=max_output_bytes,
        kill_grace_s=kill_grace_s,
        python=python,
    )
    server = MCPServer(
        SERVER_NAME,
        title="Atrium sandbox",
        instructions=(
            "Runs Python (standard library only) in a separate, confined process with no "
            "network, limited time, memory and output, writing only in its own run directory."
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
        time, memory and output; returns exit code, stdout, stderr and what was enforced."""
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
        f"network: {'+'.join(result.isolation.network) or 'none'}; "
        f"filesystem: {'+'.join(result.isolation.filesystem) or 'none'}"
    )
    parts = [f"{head} ({layers})"]
    if result.stdout:
        parts.append(f"--- stdout ---\n{result.stdout}")
    if result.stderr:
        parts.append(f"--- stderr ---\n{result.stderr}")
    return "\n".join(parts)
