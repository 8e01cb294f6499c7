"""The agents MCP server: strong-agent CLIs (Claude Code, Codex, OpenClaw) as MCP tools.

Tools: `agent_providers` (installed CLIs and versions), `agent_run` / `agent_resume` (run an
instruction in a new or an existing native session and follow it to its end), `agent_status`,
`agent_cancel` and `agent_message` (by run id: the run id is the caller's `run_id`, else the one
in every progress message, the first of which is `{"run_id", "type": "run_started", "provider"}`).
A run's normalized events stream as progress notifications, its permission requests become
elicitations, cancelling the call interrupts the CLI (see `follow`). The result is the
`OperatorResult` as structured content plus a readable summary; a run that did not succeed is an
`isError` result. Refusals (bad arguments, unknown or finished run, a CLI that takes no input
mid-run) are `isError` results whose text starts with a stable `[code]`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field

from mcp_servers.agents.controllers import (
    AgentController,
    ClaudeCodeConfig,
    ClaudeCodeController,
    CodexConfig,
    CodexController,
    OpenClawConfig,
    OpenClawController,
)
from mcp_servers.agents.errors import (
    InputUnsupportedError,
    NoRunError,
)
from mcp_servers.agents.follow import Follower, FollowSettings, FollowState
from mcp_servers.agents.providers import ProvidersReport, executable_for, probe_providers
from mcp_servers.agents.requests import MessageReceipt
from mcp_servers.agents.results import OperatorResult, Provider
from mcp_servers.agents.runs import (
    AgentRun,
    ControllerFactory,
    RunBusyError,
    RunRegistry,
    RunStatus,
    UnknownRunError,
)
from mcp_servers.agents.tool_args import (
    AttachmentsArg,
    FallbackArg,
    IdleTimeoutArg,
    InstructionArg,
    MaxTurnsArg,
    MessageTextArg,
    ModelArg,
    NewRunIdArg,
    OptionalSessionIdArg,
    PolicyArg,
    ProviderArg,
    RunArgs,
    RunIdArg,
    RunLimits,
    SessionIdArg,
    SessionPolicyArg,
    TimeoutArg,
    WorkingDirArg,
)
from mcp_servers.serving import build_mcp_server

SERVER_NAME = "atrium-agents"

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_RUNS_AGENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)
_STOPS_RUN = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
_TALKS_TO_RUN = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

AgentContext = Context[RunRegistry, Any]
RunOutcome = Annotated[CallToolResult, OperatorResult] | InputRequiredResult


def default_controller_factory(
    *, trace_dir: Path | None = None, heartbeat_interval_s: float = 15.0
) -> ControllerFactory:
    """Controllers with default settings, writing traces to `trace_dir` (default: data dir)."""

    def build(provider: Provider, executable: str) -> AgentController:
        common: dict[str, Any] = {
            "executable": executable,
            "trace_dir": trace_dir,
            "heartbeat_interval_s": heartbeat_interval_s,
        }
        if provider == "claude":
            return ClaudeCodeController(ClaudeCodeConfig.model_validate(common))
        if provider == "codex":
            return CodexController(CodexConfig.model_validate(common))
        return OpenClawController(OpenClawConfig.model_validate(common))

    return build


def build_server(
    *,
    controller_factory: ControllerFactory | None = None,
    env: Mapping[str, str] | None = None,
    trace_dir: Path | None = None,
    heartbeat_interval_s: float = 15.0,
    cancel_wait_s: float = 30.0,
    unattended_timeout_s: float = 900.0,
) -> MCPServer[RunRegistry]:
    """Build the agents server.

    `env` is where CLIs are looked up (`PATH`, `ATRIUM_*_BIN`; default: this process's
    environment at call time). `controller_factory` builds a controller for a provider and the
    executable found (default: `default_controller_factory(trace_dir=..., ...)`).
    `heartbeat_interval_s` is the quiet time after which a progress heartbeat is sent,
    `cancel_wait_s` how long a cancelled call waits for its CLI to stop, and
    `unattended_timeout_s` how long a run waits for a client that went away while a permission
    question was out (2026-07-28 input-required rounds) before it is interrupted.
    """
    factory = controller_factory or default_controller_factory(
        trace_dir=trace_dir, heartbeat_interval_s=heartbeat_interval_s
    )
    follow_settings = FollowSettings(heartbeat_interval_s, cancel_wait_s)

    def lookup_env() -> Mapping[str, str]:
        return env if env is not None else dict(os.environ)

    @asynccontextmanager
    async def lifespan(_server: MCPServer[RunRegistry]) -> AsyncGenerator[RunRegistry]:
        registry = RunRegistry(
            factory,
            lambda provider: executable_for(provider, lookup_env()),
            unattended_timeout_s=unattended_timeout_s,
        )
        async with registry:
            yield registry

    server: MCPServer[RunRegistry] = build_mcp_server(
        SERVER_NAME,
        title="Atrium strong agents",
        instructions=(
            "Runs strong-agent CLIs (Claude Code, Codex, OpenClaw) on an instruction in a "
            "working directory. Events stream as progress; the CLI's permission questions come "
            "as elicitations; cancelling the call stops the agent."
        ),
        lifespan=lifespan,
    )
    _add_provider_tools(server, lookup_env)
    _add_run_tools(server, follow_settings)
    _add_control_tools(server, cancel_wait_s)
    return server


def _add_provider_tools(
    server: MCPServer[RunRegistry], lookup_env: Callable[[], Mapping[str, str]]
) -> None:
    @server.tool(name="agent_providers", title="Installed agent CLIs", annotations=_READ_ONLY)
    async def agent_providers() -> ProvidersReport:
        """Which strong-agent CLIs (claude, codex, openclaw) are installed here, where, and
        their versions (from `--version`)."""
        return await probe_providers(lookup_env())


def _add_run_tools(server: MCPServer[RunRegistry], settings: FollowSettings) -> None:
    @server.tool(name="agent_run", title="Run a strong agent", annotations=_RUNS_AGENT)
    async def agent_run(
        *,
        provider: ProviderArg,
        instruction: InstructionArg,
        working_dir: WorkingDirArg,
        ctx: AgentContext,
        session: SessionPolicyArg = "new",
        native_session_id: OptionalSessionIdArg = None,
        tool_policy: PolicyArg = None,
        timeout_s: TimeoutArg = None,
        idle_timeout_s: IdleTimeoutArg = None,
        model: ModelArg = None,
        max_turns: MaxTurnsArg = None,
        attachments: AttachmentsArg = None,
        run_id: NewRunIdArg = None,
    ) -> RunOutcome:
        """Run an instruction with a strong-agent CLI and follow it to its end.

        Progress notifications carry every normalized event as JSON (the first names the run
        id); permission questions come as elicitations; cancelling the call stops the CLI.
        Returns the operator result (status, native session, final message, changed files,
        metrics, trace paths); a run that did not succeed is an error result."""
        args = RunArgs(
            provider=provider,
            instruction=instruction,
            working_dir=working_dir,
            native_session_id=native_session_id,
            tool_policy=tool_policy,
            limits=RunLimits(timeout_s, idle_timeout_s, max_turns),
            model=model,
            attachments=tuple(attachments or ()),
            run_id=run_id,
        )
        args.check_session_policy(session)
        return await _run(ctx, settings, args)

    @server.tool(
        name="agent_resume", title="Resume a strong-agent session", annotations=_RUNS_AGENT
    )
    async def agent_resume(
        *,
        provider: ProviderArg,
        native_session_id: SessionIdArg,
        instruction: InstructionArg,
        working_dir: WorkingDirArg,
        ctx: AgentContext,
        tool_policy: PolicyArg = None,
        timeout_s: TimeoutArg = None,
        idle_timeout_s: IdleTimeoutArg = None,
        model: ModelArg = None,
        max_turns: MaxTurnsArg = None,
        attachments: AttachmentsArg = None,
        run_id: NewRunIdArg = None,
        fallback_to_start: FallbackArg = True,
    ) -> RunOutcome:
        """Continue a native CLI session with a new instruction (same streaming, questions,
        cancellation and result as agent_run). The result's `attempts` and `notes` say if the
        resume failed and a fresh session was started instead."""
        args = RunArgs(
            provider=provider,
            instruction=instruction,
            working_dir=working_dir,
            native_session_id=native_session_id,
            tool_policy=tool_policy,
            limits=RunLimits(timeout_s, idle_timeout_s, max_turns),
            model=model,
            attachments=tuple(attachments or ()),
            run_id=run_id,
            fallback_to_start=fallback_to_start,
        )
        return await _run(ctx, settings, args)


def _add_control_tools(server: MCPServer[RunRegistry], cancel_wait_s: float) -> None:
    @server.tool(name="agent_status", title="Status of an agent run", annotations=_READ_ONLY)
    async def agent_status(run_id: RunIdArg, ctx: AgentContext) -> RunStatus:
        """A run's phase (starting, running, awaiting_permission, finished), its last event,
        pending permission questions, metrics so far, and the result once finished."""
        return _find(ctx, run_id).status()

    @server.tool(name="agent_cancel", title="Cancel an agent run", annotations=_STOPS_RUN)
    async def agent_cancel(
        run_id: RunIdArg,
        ctx: AgentContext,
        wait_s: Annotated[
            float | None, Field(ge=0, description="How long to wait for the run to end.")
        ] = None,
    ) -> RunStatus:
        """Interrupt a run (the CLI is asked to stop, then signalled) and wait for it to end;
        returns its status, with the interrupted result when it ended in time."""
        run = _find(ctx, run_id)
        await run.stop(cancel_wait_s if wait_s is None else wait_s)
        return run.status()

    @server.tool(name="agent_message", title="Message a running agent", annotations=_TALKS_TO_RUN)
    async def agent_message(
        run_id: RunIdArg, text: MessageTextArg, ctx: AgentContext
    ) -> MessageReceipt:
        """Tell a running agent something while it works; returns at once with a receipt.

        Claude Code takes the message as its next turn once its current turn ends (the run
        goes on until that turn's result). Codex and OpenClaw take no input mid-run: that is
        an `[input_unsupported]` error (cancel the run and run it again with the message). A
        run that is unknown, finished or stopping is an `[unknown_run]` error. The message is
        recorded in the run's trace and events (`state_hint` `message_sent`)."""
        run = _find(ctx, run_id)
        try:
            return await run.send_message(text)
        except NoRunError as exc:
            raise ToolError(f"[unknown_run] run {run_id} is not running: {exc}") from exc
        except InputUnsupportedError as exc:
            raise ToolError(f"[{exc.code}] {exc}") from exc


async def _run(
    ctx: AgentContext, settings: FollowSettings, args: RunArgs
) -> CallToolResult | InputRequiredResult:
    registry = _registry(ctx)
    if ctx.request_state is not None:
        return await _continue(ctx, registry, settings, ctx.request_state)
    if args.run_id is not None and args.run_id in registry:
        raise ToolError(f"[run_exists] a run {args.run_id} exists already")
    run = await registry.launch(args.provider, args.to_request())
    return await Follower(run, registry, ctx, settings).follow()


async def _continue(
    ctx: AgentContext, registry: RunRegistry, settings: FollowSettings, raw_state: str
) -> CallToolResult | InputRequiredResult:
    """A retry of an input-required round: answer the questions and follow the run on."""
    try:
        state = FollowState.load(raw_state)
    except ValueError as exc:
        raise ToolError("[invalid_state] the request state is not from this server") from exc
    run = _find(ctx, state.run_id)
    try:
        return await Follower(run, registry, ctx, settings).follow(state)
    except RunBusyError as exc:
        raise ToolError(f"[run_busy] run {run.run_id} is followed by another call") from exc


def _registry(ctx: AgentContext) -> RunRegistry:
    return ctx.request_context.lifespan_context


def _find(ctx: AgentContext, run_id: str) -> AgentRun:
    try:
        return _registry(ctx).get(run_id)
    except UnknownRunError as exc:
        raise ToolError(f"[unknown_run] no run {run_id} on this connection") from exc
