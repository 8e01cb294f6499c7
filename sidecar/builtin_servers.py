"""The built-in MCP servers the sidecar hosts: in-process ones (workspace, memory, schedule,
skills) and stdio ones started from this interpreter (sandbox, agents)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_servers.schedule import ScheduleBook
from sidecar.context.lazy import LazyMemory
from sidecar.host.host import ServerSpec
from sidecar.llm.types import LMConfig


def _role(name: str) -> list[str]:
    """How this interpreter starts the built-in server `name`: a bundled app is one executable
    that takes its role from the first argument."""
    return [f"--mcp-{name}"] if getattr(sys, "frozen", False) else ["-m", f"mcp_servers.{name}"]


def workspace_spec(root: Path) -> ServerSpec:
    def target() -> Any:
        from mcp_servers.workspace import build_server

        return build_server(root)

    return ServerSpec(name="workspace", target=target, trusted=True)


def memory_spec(memory: LazyMemory) -> ServerSpec:
    """The memory server, in-process over the SDK's in-memory transport: it shares the
    sidecar's database connection, so the sidecar stays the one writer of the file."""

    def target() -> Any:
        from mcp_servers.memory import build_server

        return build_server(memory.wait().memory)

    return ServerSpec(name="memory", target=target, trusted=True)


def schedule_spec(book: Callable[[], ScheduleBook]) -> ServerSpec:
    """The schedule server, in-process on the sidecar's database (the one writer)."""

    def target() -> Any:
        from mcp_servers.schedule import build_server

        return build_server(book())

    return ServerSpec(name="schedule", target=target, trusted=True)


def skills_spec(workspace: Path, data: Path) -> ServerSpec:
    """Skills in process: the workspace's `.agents/skills` and `.claude/skills`, then the
    account's `<data dir>/skills`; their scripts run in the sandbox runner under the data dir."""

    def target() -> Any:
        from mcp_servers.skills import build_server, default_roots

        roots = default_roots(workspace, data / "skills")
        return build_server(roots, sandbox_dir=data / "sandbox" / "skills")

    return ServerSpec(name="skills", target=target, trusted=True)


def sandbox_spec(workdir: Path) -> ServerSpec:
    def target() -> Any:
        from mcp import StdioServerParameters

        # ATRIUM_SANDBOX_ALLOW_GUARD_ONLY=1 is the author's opt-in to the escapable guard-only
        # mode where no OS sandbox works (see the README's security section).
        passed = ("PATH", "HOME", "LANG", "TMPDIR", "ATRIUM_SANDBOX_ALLOW_GUARD_ONLY")
        env = {k: v for k, v in os.environ.items() if k in passed}
        args = [*_role("sandbox"), "--workdir", str(workdir)]
        return StdioServerParameters(command=sys.executable, args=args, env=env)

    return ServerSpec(name="sandbox", target=target, trusted=True)


def agents_spec(data: Path, model: Callable[[], LMConfig | None] | None = None) -> ServerSpec:
    """The strong-agent controllers (Claude Code, Codex, OpenClaw) as a built-in stdio server.
    The CLIs need the author's own environment (PATH, their keys and base URLs); Atrium's model
    settings (`model()`, resolved when the server starts) reach it as `ATRIUM_MODEL*`, which
    OpenClaw runs use as their model, so one key serves both."""

    def target() -> Any:
        from mcp import StdioServerParameters

        args = [*_role("agents"), "--trace-dir", str(data / "traces")]
        heartbeat = os.environ.get("ATRIUM_AGENTS_HEARTBEAT_S")
        if heartbeat:  # seconds of an agent's silence before a heartbeat (tests shorten it)
            args += ["--heartbeat", heartbeat]
        env = dict(os.environ)
        config = model() if model is not None else None
        if config is not None:
            env["ATRIUM_MODEL"] = config.model
            if config.api_base:
                env["ATRIUM_MODEL_API_BASE"] = config.api_base
            if config.api_key:
                env["ATRIUM_MODEL_API_KEY"] = config.api_key
        return StdioServerParameters(command=sys.executable, args=args, env=env)

    return ServerSpec(name="agents", target=target, trusted=True)
