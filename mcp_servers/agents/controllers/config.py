"""Per-controller configuration: how to invoke the CLI and how patient to be with it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mcp_servers.agents.controllers.openclaw_state import OpenClawModel


class ControllerConfig(BaseModel):
    """Settings shared by every subprocess controller.

    The CLI is invoked as `[executable, *prefix_args, <provider args>, *extra_args]`;
    `prefix_args` lets an interpreter run a script (tests run a fake CLI this way).
    `env` is added to the inherited environment (request env wins over it).
    Grace periods are the waits between the stop stages.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    executable: str
    prefix_args: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    trace_dir: Path | None = None
    heartbeat_interval_s: float = 15.0
    exit_grace_s: float = 5.0
    term_grace_s: float = 5.0
    interrupt_grace_s: float = 10.0


class ClaudeCodeConfig(ControllerConfig):
    """Claude Code: `executable` defaults to `claude`.

    `permission_prompt` routes "ask" decisions to Atrium (`--permission-prompt-tool stdio`);
    without it the CLI denies them itself. `include_partial_messages` streams text deltas.
    `bypass_permissions` says how the `full_access` policy is applied: True passes
    `--permission-mode bypassPermissions`; False approximates it with `acceptEdits` plus every
    built-in tool pre-allowed; None (default) bypasses unless this process runs as root, where
    Claude Code refuses bypassPermissions ("cannot be used with root/sudo privileges").
    """

    executable: str = "claude"
    permission_prompt: bool = True
    include_partial_messages: bool = False
    bypass_permissions: bool | None = None


class CodexConfig(ControllerConfig):
    """Codex CLI: `executable` defaults to `codex`; `ephemeral` keeps no session files."""

    executable: str = "codex"
    skip_git_repo_check: bool = True
    ephemeral: bool = False


class OpenClawConfig(ControllerConfig):
    """OpenClaw: the agent id to talk to, embedded (`--local`) or through a Gateway.

    `isolate` (default) gives each Atrium session its own state folder under `state_root` (default:
    `openclaw-state` beside the traces) with a config Atrium writes: workspace = the run's working
    dir, model = `model` or Atrium's model settings, tool policy = the request's. Without it the
    CLI uses the author's own `~/.openclaw`. `mode` picks embedded (`local`), Gateway
    (`gateway`: `gateway_url` with `gateway_token`, else a clear failure) or `auto`: the Gateway
    when one is configured and answers, else embedded.

    Stopping an embedded run (the author's stop, a timeout) takes under 2 s whatever the general
    graces: SIGINT, which OpenClaw answers by exiting 130 within about a second; SIGTERM after
    `sigint_grace_s`; SIGKILL to the process group after `sigterm_grace_s` more.
    """

    executable: str = "openclaw"
    agent_id: str = "main"
    mode: Literal["auto", "local", "gateway"] = "auto"
    thinking: str | None = None
    isolate: bool = True
    state_root: Path | None = None
    model: OpenClawModel | None = None
    gateway_url: str | None = None
    gateway_token: str | None = None
    gateway_probe_s: float = 3.0
    sigint_grace_s: float = 1.0
    sigterm_grace_s: float = 0.5
