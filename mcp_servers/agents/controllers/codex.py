"""Codex CLI controller: one `codex exec --json` process per attempt, stdin = /dev/null.

Start: `codex exec --json --skip-git-repo-check -C DIR --sandbox MODE [-m M] [--image=a,b]
[extra] -- PROMPT`. Resume puts every exec option before the subcommand (`--sandbox`, `-C` are
not global in clap, and root options are inherited by `resume`):
`codex exec --json ... --sandbox MODE resume ID -- PROMPT`. Exec mode never asks for approval
(approval policy `never`), so Atrium's tool policy becomes the sandbox mode and the result says
so. Stopping is SIGINT -> SIGTERM -> SIGKILL to the process group; any exit code is accepted
after a stop.

Applied policy inside Atrium: since exec mode never asks, the sidecar never points a writing
Codex task at the author's workspace. It gets an isolated copy (a git worktree or a snapshot
folder, the review gate) as `-C`, so `workspace-write` confines its writes to the copy, and
only the files the author accepts from the changeset reach the workspace.
"""

from __future__ import annotations

from typing import ClassVar

from mcp_servers.agents.controllers.config import CodexConfig
from mcp_servers.agents.controllers.prompting import compose_prompt
from mcp_servers.agents.controllers.runner import SubprocessController
from mcp_servers.agents.parsers.base import StreamParser
from mcp_servers.agents.parsers.codex import CodexStreamParser
from mcp_servers.agents.requests import PolicyMode, StartRequest
from mcp_servers.agents.results import AppliedPolicy

SANDBOX_MODES: dict[PolicyMode, str] = {
    "read_only": "read-only",
    "workspace_write": "workspace-write",
    "full_access": "danger-full-access",
}


class CodexController(SubprocessController):
    """Drives `codex exec --json`; tool policy is enforced by the sandbox, never by prompts."""

    provider: ClassVar = "codex"
    stdin_pipe: ClassVar[bool] = False

    def __init__(self, config: CodexConfig | None = None) -> None:
        self.codex_config = config or CodexConfig()
        super().__init__(self.codex_config)

    def build_argv(self, request: StartRequest, resume_id: str | None) -> list[str]:
        cfg = self.codex_config
        argv = [cfg.executable, *cfg.prefix_args, "exec", "--json"]
        if cfg.skip_git_repo_check:
            argv.append("--skip-git-repo-check")
        if cfg.ephemeral:
            argv.append("--ephemeral")
        argv += ["-C", str(request.working_dir)]
        argv += ["--sandbox", SANDBOX_MODES[request.tool_policy.mode]]
        if request.model:
            argv += ["-m", request.model]
        images = [str(a.path) for a in request.attachments if a.is_image]
        if images:
            argv.append(f"--image={','.join(images)}")
        argv += cfg.extra_args
        if resume_id is not None:
            argv += ["resume", resume_id]
        others = [a for a in request.attachments if not a.is_image]
        return [*argv, "--", compose_prompt(request.instruction, others)]

    def applied_policy(self, request: StartRequest) -> AppliedPolicy:
        mode = request.tool_policy.mode
        sandbox = SANDBOX_MODES[mode]
        return AppliedPolicy(
            mode=mode,
            native=("--sandbox", sandbox),
            can_ask_permission=False,
            note=(
                f"codex exec cannot ask for approval (approval policy never); the tool policy "
                f"is enforced only by the {sandbox} sandbox"
            ),
        )

    def notes(self, request: StartRequest) -> list[str]:
        notes: list[str] = []
        policy = request.tool_policy
        if policy.allowed_tools or policy.disallowed_tools:
            notes.append("codex exec has no per-tool rules; allowed/disallowed tools ignored")
        if request.max_turns is not None:
            notes.append("codex exec has no turn limit; max_turns ignored")
        return notes

    def make_parser(self, request: StartRequest, resume_id: str | None) -> StreamParser:
        return CodexStreamParser()
