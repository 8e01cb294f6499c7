"""Claude Code controller: a stream-json CLI process driven over stdin/stdout.

Command line (the official SDKs' controlled mode):
`claude --output-format stream-json --verbose --input-format stream-json
 --permission-prompt-tool stdio --permission-mode M [--allowedTools ..] [--disallowedTools ..]
 [--model M] [--max-turns N] [--resume ID] [--include-partial-messages] [extra args]`.
The prompt goes to stdin as a stream-json user message. `can_use_tool` control requests become
`permission_request` events and are answered with `control_response` lines. After the result
the host closes stdin; stopping is interrupt request -> close stdin -> SIGTERM -> SIGKILL.
A run the author stopped before its result ends `interrupted`, whatever the CLI prints after
the interrupt request.

Applied policy inside Atrium: the sidecar gives a writing Claude Code task an isolated copy of
the workspace as its working directory (the review gate), so `workspace_write` maps to
`acceptEdits` there: edits land in the copy, and only the files the author accepts in the
changeset reach the workspace. Anything beyond edits still asks Atrium.
"""

from __future__ import annotations

import base64
import os
from typing import ClassVar

import anyio
from pydantic import JsonValue

from mcp_servers.agents.controllers.config import ClaudeCodeConfig
from mcp_servers.agents.controllers.prompting import compose_prompt, without_prefixes
from mcp_servers.agents.controllers.run_state import AttemptIO, RunState, first_of
from mcp_servers.agents.controllers.runner import SubprocessController
from mcp_servers.agents.errors import UnknownPermissionRequestError
from mcp_servers.agents.events import StateHint
from mcp_servers.agents.parsers.base import StreamParser
from mcp_servers.agents.parsers.claude import FILE_TOOLS, ClaudeStreamParser
from mcp_servers.agents.parsers.claude_stdin import (
    interrupt_request,
    permission_response,
    user_message,
)
from mcp_servers.agents.process import StopStep
from mcp_servers.agents.requests import (
    Attachment,
    PermissionDecision,
    PolicyMode,
    StartRequest,
)
from mcp_servers.agents.results import AppliedPolicy

_PERMISSION_MODES: dict[PolicyMode, str] = {
    "read_only": "default",
    "workspace_write": "acceptEdits",
    "full_access": "bypassPermissions",
}
# Full access without bypassPermissions (refused as root): these built-in tools never ask.
FULL_ACCESS_TOOLS = ("Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "WebFetch", "WebSearch")


class ClaudeCodeController(SubprocessController):
    """Drives `claude` in stream-json mode; bridges its permission prompts to Atrium."""

    provider: ClassVar = "claude"
    stdin_pipe: ClassVar[bool] = True

    def __init__(self, config: ClaudeCodeConfig | None = None) -> None:
        self.claude_config = config or ClaudeCodeConfig()
        super().__init__(self.claude_config)
        self._interrupts = 0
        self._stopped_by_author: set[str] = set()

    def build_argv(self, request: StartRequest, resume_id: str | None) -> list[str]:
        cfg = self.claude_config
        policy = request.tool_policy
        argv = [cfg.executable, *cfg.prefix_args]
        argv += ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
        if cfg.permission_prompt:
            argv += ["--permission-prompt-tool", "stdio"]
        argv += ["--permission-mode", self._permission_mode(request)]
        disallowed = list(policy.disallowed_tools)
        if policy.mode == "read_only":
            disallowed += [tool for tool in FILE_TOOLS if tool not in disallowed]
        allowed = list(policy.allowed_tools)
        if policy.mode == "full_access" and not self._bypasses():
            allowed += [tool for tool in FULL_ACCESS_TOOLS if tool not in allowed]
        if allowed:
            argv += ["--allowedTools", ",".join(allowed)]
        if disallowed:
            argv += ["--disallowedTools", ",".join(disallowed)]
        if request.model:
            argv += ["--model", request.model]
        if request.max_turns is not None:
            argv += ["--max-turns", str(request.max_turns)]
        if resume_id is not None:
            argv += ["--resume", resume_id]
        if cfg.include_partial_messages:
            argv.append("--include-partial-messages")
        return [*argv, *cfg.extra_args]

    def applied_policy(self, request: StartRequest) -> AppliedPolicy:
        mode = request.tool_policy.mode
        native = ("--permission-mode", self._permission_mode(request))
        bypassed = mode == "full_access" and self._bypasses()
        asks = self.claude_config.permission_prompt and not bypassed
        note = {
            "read_only": "file-editing tools disallowed; other tools ask Atrium",
            "workspace_write": "edits auto-approved; other tools ask Atrium",
            "full_access": "all permission checks bypassed",
        }[mode]
        if mode == "full_access" and not bypassed:
            native += ("--allowedTools", ",".join(FULL_ACCESS_TOOLS))
            note = (
                "bypassPermissions not used (Claude Code refuses it as root): edits and the "
                "built-in tools are pre-allowed; anything else asks Atrium"
            )
        if not self.claude_config.permission_prompt and not bypassed:
            note += " (no permission prompt tool: the CLI denies what it would ask)"
        return AppliedPolicy(mode=mode, native=native, can_ask_permission=asks, note=note)

    def _bypasses(self) -> bool:
        """Whether full access may use bypassPermissions (not as root unless configured)."""
        configured = self.claude_config.bypass_permissions
        return configured if configured is not None else os.geteuid() != 0

    def _permission_mode(self, request: StartRequest) -> str:
        mode = request.tool_policy.mode
        if mode == "full_access" and not self._bypasses():
            return _PERMISSION_MODES["workspace_write"]
        return _PERMISSION_MODES[mode]

    def make_parser(self, request: StartRequest, resume_id: str | None) -> StreamParser:
        return ClaudeStreamParser()

    def child_env(self, request: StartRequest) -> dict[str, str]:
        # A claude spawned from inside a claude session misbehaves if it inherits these.
        inherited = without_prefixes(os.environ, ["CLAUDECODE"], ["CLAUDE_CODE_"])
        return {**inherited, **self.config.env, **request.env}

    async def on_spawned(self, run: RunState, io: AttemptIO) -> None:
        request = run.request
        images: list[tuple[str, str]] = []
        others: list[Attachment] = []
        for attachment in request.attachments:
            if not attachment.is_image:
                others.append(attachment)
                continue
            try:
                data = await anyio.Path(attachment.path).read_bytes()
            except OSError as exc:
                run.notes.append(f"image {attachment.path} not sent inline: {exc.strerror}")
                others.append(attachment)
                continue
            images.append((attachment.media_type, base64.b64encode(data).decode("ascii")))
        text = compose_prompt(request.instruction, others)
        await self.send_json(run, io.proc, user_message(text, images))

    async def on_terminal(self, run: RunState, io: AttemptIO) -> None:
        await io.proc.close_stdin()

    async def stop_process(self, run: RunState, io: AttemptIO) -> None:
        cfg = self.config
        if run.stop_reason == "interrupt" and not io.terminal.is_set():
            self._stopped_by_author.add(run.request.run_id)
        if io.proc.returncode is None and not io.terminal.is_set():
            self._interrupts += 1
            request_id = f"atrium_interrupt_{self._interrupts}"
            if await self.send_json(run, io.proc, interrupt_request(request_id)):
                signals = {"terminal": io.terminal, "eof": io.stdout_done}
                await first_of(signals, cfg.interrupt_grace_s)
        await io.proc.stop(
            [
                StopStep("close_stdin", cfg.exit_grace_s),
                StopStep("sigterm", cfg.term_grace_s),
                StopStep("sigkill", cfg.term_grace_s),
            ]
        )

    def on_exited(self, run: RunState) -> None:
        # The author stopped the run before its result, and this controller told the CLI so:
        # whatever the CLI printed afterwards (its own success result, an error, nothing), the
        # run ends `interrupted`. A result that came before the stop still stands.
        if run.request.run_id in self._stopped_by_author:
            self._stopped_by_author.discard(run.request.run_id)
            run.parser.acc.outcome = None

    async def answer_permission(self, request_id: str, decision: PermissionDecision) -> None:
        run = self._require_run()
        request = run.pending.get(request_id)
        if request is None or run.proc is None:
            raise UnknownPermissionRequestError(request_id)
        payload = permission_response(request, decision)
        del run.pending[request_id]
        run.touch()
        await self.send_json(run, run.proc, payload)
        detail: dict[str, JsonValue] = {"request_id": request_id, "behavior": decision.behavior}
        run.emit(StateHint(hint="permission_answered", detail=detail))
