"""Claude Code controller: a stream-json CLI process driven over stdin/stdout.

Command line (the official SDKs' controlled mode):
`claude --output-format stream-json --verbose --input-format stream-json --replay-user-messages
 --permission-prompt-tool stdio --permission-mode M [--allowedTools ..] [--disallowedTools ..]
 [--model M] [--max-turns N] [--resume ID] [--include-partial-messages] [extra args]`.
The prompt goes to stdin as a stream-json user message. `can_use_tool` control requests become
`permission_request` events and are answered with `control_response` lines. After the result
the host closes stdin; stopping is interrupt request -> close stdin -> SIGTERM -> SIGKILL.
A run the author stopped before its result ends `interrupted`, whatever the CLI prints after
the interrupt request.

A message sent while the run goes on (`send_message`) is one more stream-json user message with
an id of its own. Claude Code queues it and takes it (with any others waiting) as the next turn
once the current one's result is out; so the run ends at the first result after which no message
is still waiting (`claude_turns`), and its result is that last turn's.

Applied policy inside Atrium: the sidecar gives a writing Claude Code task an isolated copy of
the workspace as its working directory (the review gate), so `workspace_write` maps to
`acceptEdits` there: edits land in the copy, and only the files the author accepts in the
changeset reach the workspace. Anything beyond edits still asks Atrium.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import ClassVar

import anyio
from pydantic import JsonValue

from mcp_servers.agents.controllers.claude_turns import TurnLedger
from mcp_servers.agents.controllers.config import ClaudeCodeConfig
from mcp_servers.agents.controllers.prompting import compose_prompt, without_prefixes
from mcp_servers.agents.controllers.run_state import AttemptIO, RunState, first_of
from mcp_servers.agents.controllers.runner import SubprocessController
from mcp_servers.agents.errors import NoRunError, UnknownPermissionRequestError
from mcp_servers.agents.events import StateHint
from mcp_servers.agents.parsers.base import StreamParser
from mcp_servers.agents.parsers.claude import FILE_TOOLS, ClaudeStreamParser
from mcp_servers.agents.parsers.claude_stdin import (
    interrupt_request,
    new_message_id,
    permission_response,
    user_message,
)
from mcp_servers.agents.process import StopStep
from mcp_servers.agents.requests import (
    Attachment,
    MessageReceipt,
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
_MESSAGE_NOTE = (
    "Claude Code takes it as its next turn once the current turn ends (messages waiting "
    "together are joined into one turn); the run ends after the last such turn"
)


@dataclass
class _RunInput:
    """The messages sent to one run, and the attempt whose stdin takes them now."""

    run: RunState
    messages: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """(message id, text) of every message accepted, in order: a fresh attempt after a failed
    resume gets them all again."""
    io: AttemptIO | None = None
    """The current attempt, once its prompt and the messages before it are written."""
    ledger: TurnLedger | None = None


class ClaudeCodeController(SubprocessController):
    """Drives `claude` in stream-json mode; bridges its permission prompts to Atrium."""

    provider: ClassVar = "claude"
    stdin_pipe: ClassVar[bool] = True

    def __init__(self, config: ClaudeCodeConfig | None = None) -> None:
        self.claude_config = config or ClaudeCodeConfig()
        super().__init__(self.claude_config)
        self._interrupts = 0
        self._stopped_by_author: set[str] = set()
        self._input: _RunInput | None = None

    def build_argv(self, request: StartRequest, resume_id: str | None) -> list[str]:
        cfg = self.claude_config
        policy = request.tool_policy
        argv = [cfg.executable, *cfg.prefix_args]
        argv += ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
        argv.append("--replay-user-messages")  # its echoes tell which messages it has taken
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
        state = self._input_of(run)
        state.io = None
        prompt_id = new_message_id()
        state.ledger = ledger = TurnLedger(prompt_id)
        await self.send_json(run, io.proc, user_message(text, images, message_id=prompt_id))
        written = 0
        while written < len(state.messages):  # those sent before the CLI had its prompt
            message_id, body = state.messages[written]
            ledger.written(message_id)
            await self.send_json(run, io.proc, user_message(body, message_id=message_id))
            written += 1
        state.io = io

    def is_final_result(self, run: RunState, io: AttemptIO) -> bool:
        state = self._input_of(run)
        if run.stop_requested.is_set() or state.ledger is None:
            return True
        if isinstance(io.parser, ClaudeStreamParser):
            state.ledger.take_echoes(io.parser.replayed)
        return state.ledger.waiting == 0

    async def on_terminal(self, run: RunState, io: AttemptIO) -> None:
        await io.proc.close_stdin()

    async def send_message(self, text: str) -> MessageReceipt:
        """Write `text` to the CLI's stdin as a user message (held until the CLI has its
        prompt); Claude Code takes it as its next turn.

        Raises:
            NoRunError: no run is going, or it is ending (its last result is in, or a stop
                was asked for) and the CLI reads no more input.
        """
        run = self._require_run()
        state = self._input_of(run)
        ending = state.io is not None and state.io.terminal.is_set()
        if run.done.is_set() or run.stop_requested.is_set() or ending:
            raise NoRunError("the run has ended or is ending; it takes no more messages")
        message_id = new_message_id()
        state.messages.append((message_id, text))
        detail: dict[str, JsonValue] = {"message_id": message_id, "delivery": "stdin", "text": text}
        run.emit(StateHint(hint="message_sent", detail=detail))
        io, ledger = state.io, state.ledger
        if io is not None and ledger is not None:
            ledger.written(message_id)  # before the write: the CLI may echo it at once
            if not await self.send_json(run, io.proc, user_message(text, message_id=message_id)):
                ledger.withdraw(message_id)
                state.messages.remove((message_id, text))
                raise NoRunError("Claude Code no longer reads its input; the run is ending")
        return MessageReceipt(
            run_id=run.request.run_id, message_id=message_id, delivery="stdin", note=_MESSAGE_NOTE
        )

    def _input_of(self, run: RunState) -> _RunInput:
        if self._input is None or self._input.run is not run:
            self._input = _RunInput(run)
        return self._input

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
            return
        ledger = self._input_of(run).ledger
        if ledger is not None and ledger.waiting and run.parser.acc.outcome is not None:
            run.notes.append(
                f"{ledger.waiting} message(s) sent to the run were never taken: Claude Code "
                "ended before their turn"
            )

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
