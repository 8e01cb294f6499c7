"""Strong-agent controllers: one normalized contract over Claude Code, Codex and OpenClaw."""

from __future__ import annotations

from pathlib import Path

from mcp_servers.agents.controllers.base import AgentController
from mcp_servers.agents.controllers.claude import ClaudeCodeController
from mcp_servers.agents.controllers.codex import CodexController
from mcp_servers.agents.controllers.config import (
    ClaudeCodeConfig,
    CodexConfig,
    ControllerConfig,
    OpenClawConfig,
)
from mcp_servers.agents.controllers.openclaw import OpenClawController
from mcp_servers.agents.controllers.runner import SubprocessController
from mcp_servers.agents.results import Provider

__all__ = [
    "AgentController",
    "ClaudeCodeConfig",
    "ClaudeCodeController",
    "CodexConfig",
    "CodexController",
    "ControllerConfig",
    "OpenClawConfig",
    "OpenClawController",
    "SubprocessController",
    "build_controller",
]


def build_controller(
    provider: Provider, executable: str | Path | None = None, *, trace_dir: Path | None = None
) -> AgentController:
    """A controller for `provider`, running `executable` (default: the CLI's name on PATH).

    For more settings build the provider's config and controller directly, e.g.
    `ClaudeCodeController(ClaudeCodeConfig(executable=..., permission_prompt=False))`.
    """
    overrides: dict[str, object] = {"trace_dir": trace_dir}
    if executable is not None:
        overrides["executable"] = str(executable)
    if provider == "claude":
        return ClaudeCodeController(ClaudeCodeConfig.model_validate(overrides))
    if provider == "codex":
        return CodexController(CodexConfig.model_validate(overrides))
    return OpenClawController(OpenClawConfig.model_validate(overrides))
