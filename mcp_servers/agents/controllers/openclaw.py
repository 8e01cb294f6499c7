"""OpenClaw controller: `openclaw agent ... --json`, one JSON document at the end.

Start: `openclaw agent --agent ID --session-id NEW --message=PROMPT --json [--timeout S]
[--thinking L] [--local] [extra]`, with NEW a session id derived from the run id so the native
session is known even if the output omits it. Resume passes the existing session id. OpenClaw's
tool policy and approvals live in its Gateway configuration, so they are not set per run.
"""

from __future__ import annotations

import math
import uuid
from typing import ClassVar

from mcp_servers.agents.controllers.config import OpenClawConfig
from mcp_servers.agents.controllers.prompting import compose_prompt
from mcp_servers.agents.controllers.runner import SubprocessController
from mcp_servers.agents.parsers.base import StreamParser
from mcp_servers.agents.parsers.openclaw import OpenClawOutputParser
from mcp_servers.agents.requests import StartRequest
from mcp_servers.agents.results import AppliedPolicy


class OpenClawController(SubprocessController):
    """Drives `openclaw agent --json` (Gateway or embedded with `local`)."""

    provider: ClassVar = "openclaw"
    stdin_pipe: ClassVar[bool] = False

    def __init__(self, config: OpenClawConfig | None = None) -> None:
        self.openclaw_config = config or OpenClawConfig()
        super().__init__(self.openclaw_config)

    def session_for(self, request: StartRequest, resume_id: str | None) -> str:
        """The session id an attempt uses: the resumed one, or a fresh one per run."""
        if resume_id is not None:
            return resume_id
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"atrium-run:{request.run_id}"))

    def build_argv(self, request: StartRequest, resume_id: str | None) -> list[str]:
        cfg = self.openclaw_config
        argv = [cfg.executable, *cfg.prefix_args, "agent", "--agent", cfg.agent_id]
        argv += ["--session-id", self.session_for(request, resume_id)]
        argv += [f"--message={compose_prompt(request.instruction, request.attachments)}", "--json"]
        if request.timeout_s is not None:
            argv += ["--timeout", str(max(1, math.ceil(request.timeout_s)))]
        if cfg.thinking:
            argv += ["--thinking", cfg.thinking]
        if cfg.local:
            argv.append("--local")
        return [*argv, *cfg.extra_args]

    def applied_policy(self, request: StartRequest) -> AppliedPolicy:
        return AppliedPolicy(
            mode=request.tool_policy.mode,
            native=(),
            can_ask_permission=False,
            note=(
                "OpenClaw tool policy and exec approvals are configured in its Gateway; "
                "Atrium's tool policy is not enforced per run"
            ),
        )

    def notes(self, request: StartRequest) -> list[str]:
        notes = [
            "OpenClaw runs in its agent's configured workspace; working_dir is only the cwd",
        ]
        if request.model:
            notes.append("openclaw agent takes the model from its agent config; model ignored")
        if request.max_turns is not None:
            notes.append("openclaw agent has no turn limit; max_turns ignored")
        if not self.openclaw_config.local:
            notes.append("stopping the CLI may leave the Gateway-side run going")
        return notes

    def make_parser(self, request: StartRequest, resume_id: str | None) -> StreamParser:
        return OpenClawOutputParser(session_hint=self.session_for(request, resume_id))
