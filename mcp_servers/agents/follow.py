"""Following a run from an MCP tool call: progress, heartbeats, permission elicitations, cancel.

Every normalized event goes to the client as a progress notification whose message is the event
as compact JSON (`run_id` and `seq` added, long strings shortened); quiet periods send heartbeat
messages. A permission request is put to the client as a form elicitation:

* handshake-era protocols (<= 2025-11-25) allow server-to-client requests during a call, so the
  elicitation is sent inline and the run continues in the same call;
* from 2026-07-28 on, a call cannot send requests, so it returns an `InputRequiredResult` asking
  the questions, with the run id in the (sealed) request state; the run keeps waiting in the
  registry, and the client's retry answers the questions and goes on following it.

If the call is cancelled, the run is interrupted and the call waits (shielded, bounded) until
the CLI is stopped before the cancellation completes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
)
from mcp_types.version import is_version_at_least
from pydantic import JsonValue, ValidationError

from mcp_servers.agents.elicitation import (
    UNANSWERABLE_MESSAGE,
    decision_from,
    elicitation_message,
    elicitation_schema,
)
from mcp_servers.agents.events import AgentEvent, Heartbeat, PermissionRequest
from mcp_servers.agents.requests import DenyTool
from mcp_servers.agents.results import OperatorResult, Provider
from mcp_servers.agents.runs import AgentRun, RunRegistry, Sequenced

INPUT_REQUIRED_VERSION = "2026-07-28"
MAX_FIELD_CHARS = 2000
TITLES: dict[Provider, str] = {"claude": "Claude Code", "codex": "Codex", "openclaw": "OpenClaw"}


@dataclass
class FollowSettings:
    """How a call follows a run: heartbeat period, and how long a cancel waits for the CLI."""

    heartbeat_interval_s: float = 15.0
    cancel_wait_s: float = 30.0


class FollowState:
    """The request state of an input-required round: which run, which questions were asked."""

    def __init__(self, run_id: str, asked: list[str]) -> None:
        self.run_id = run_id
        self.asked = asked

    def dump(self) -> str:
        """Compact JSON (the SDK seals it before it leaves the server)."""
        return json.dumps({"run_id": self.run_id, "asked": self.asked}, separators=(",", ":"))

    @classmethod
    def load(cls, text: str) -> FollowState:
        """Parse a state this server minted.

        Raises:
            ValueError: the text is not such a state.
        """
        value: JsonValue = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError("not an agents request state")
        run_id, asked = value.get("run_id"), value.get("asked")
        if not isinstance(run_id, str) or not isinstance(asked, list):
            raise ValueError("not an agents request state")
        return cls(run_id, [str(a) for a in asked])


class Follower:
    """Streams one run to one tool call (see the module docstring)."""

    def __init__(
        self, run: AgentRun, registry: RunRegistry, ctx: Context[Any, Any], settings: FollowSettings
    ) -> None:
        self.run = run
        self.registry = registry
        self.ctx = ctx
        self.settings = settings
        self._sent = 0

    async def follow(
        self, state: FollowState | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Follow the run to its end or to the next round of questions.

        Raises:
            RunBusyError: another call is following the run.
        """
        async with self.run.follow():
            try:
                outcome = await self._follow(state)
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self.run.stop(self.settings.cancel_wait_s)
                raise
        if isinstance(outcome, InputRequiredResult):
            # Nobody follows the run until the client retries; do not wait for ever.
            self.registry.expire_unless_followed(self.run)
        return outcome

    async def _follow(self, state: FollowState | None) -> CallToolResult | InputRequiredResult:
        if state is None:
            await self._notify({"type": "run_started", "provider": self.run.provider})
        else:
            reasked = await self._apply_answers(state)
            if reasked:
                return self._input_required(reasked)
        return await self._pump()

    async def _pump(self) -> CallToolResult | InputRequiredResult:
        while (item := await self._next()) is not None:
            event = await self._event(item)
            if not isinstance(event, PermissionRequest) or event.request_id not in self.run.pending:
                continue
            if not _can_elicit(self.ctx):
                await self.run.answer(event.request_id, DenyTool(message=UNANSWERABLE_MESSAGE))
            elif _input_required_era(self.ctx):
                asked, ended = await self._drain_permissions([event])
                if asked:
                    return self._input_required(asked)
                if ended:
                    break
            else:
                answer = await self._elicit_inline(event)
                if answer is not None:
                    await self.run.answer(event.request_id, decision_from(event, answer))
        assert self.run.result is not None
        return tool_result(self.run.result)

    async def _next(self) -> Sequenced | None:
        """The next event (None once the run ended), sending heartbeats while it is quiet."""
        while True:
            with anyio.move_on_after(self.settings.heartbeat_interval_s):
                try:
                    return await self.run.receive.receive()
                except anyio.EndOfStream:
                    return None
            idle = round(anyio.current_time() - self.run.last_activity, 3)
            beat = Heartbeat(elapsed_s=round(self.run.elapsed_s, 3), idle_s=idle)
            await self._notify({**beat.model_dump(mode="json"), "phase": self.run.phase})

    async def _drain_permissions(
        self, asked: list[PermissionRequest]
    ) -> tuple[list[PermissionRequest], bool]:
        """Forward the events already queued, collecting more permission requests to batch.

        Returns the requests still pending and whether the run's event stream ended.
        """
        ended = False
        while True:
            try:
                item = self.run.receive.receive_nowait()
            except anyio.WouldBlock:
                break
            except anyio.EndOfStream:
                ended = True
                break
            event = await self._event(item)
            if isinstance(event, PermissionRequest):
                asked.append(event)
        return [p for p in asked if p.request_id in self.run.pending], ended

    def _input_required(self, asked: list[PermissionRequest]) -> InputRequiredResult:
        title = TITLES[self.run.provider]
        requests = {
            p.request_id: ElicitRequest(
                params=ElicitRequestFormParams(
                    message=elicitation_message(p, title),
                    requested_schema=elicitation_schema(p),
                )
            )
            for p in asked
        }
        state = FollowState(self.run.run_id, [p.request_id for p in asked])
        return InputRequiredResult(input_requests=dict(requests), request_state=state.dump())

    async def _apply_answers(self, state: FollowState) -> list[PermissionRequest]:
        """Answer the questions of the last round; return those still unanswered."""
        responses = self.ctx.input_responses or {}
        unanswered: list[PermissionRequest] = []
        for request_id in state.asked:
            request = self.run.pending.get(request_id)
            if request is None:
                continue
            answer = responses.get(request_id)
            if isinstance(answer, ElicitResult):
                await self.run.answer(request_id, decision_from(request, answer))
            else:
                unanswered.append(request)
        return unanswered

    async def _elicit_inline(self, request: PermissionRequest) -> ElicitResult | None:
        """Ask the client during the call (handshake-era protocols).

        Returns None if the run ended first (the question is withdrawn); a failing client
        counts as a dismissal.
        """
        answers: list[ElicitResult] = []
        async with anyio.create_task_group() as group:

            async def ask() -> None:
                try:
                    answers.append(
                        await self.ctx.session.elicit_form(
                            message=elicitation_message(request, TITLES[self.run.provider]),
                            requested_schema=elicitation_schema(request),
                            related_request_id=self.ctx.request_id,
                        )
                    )
                except (MCPError, ValidationError):
                    answers.append(ElicitResult(action="cancel"))
                group.cancel_scope.cancel()

            async def withdraw_when_the_run_ends() -> None:
                await self.run.done.wait()
                group.cancel_scope.cancel()

            group.start_soon(ask)
            group.start_soon(withdraw_when_the_run_ends)
        return answers[0] if answers else None

    async def _event(self, item: Sequenced) -> AgentEvent:
        """Forward one event as progress; return it."""
        seq, event = item
        await self._notify({"seq": seq, **event.model_dump(mode="json")})
        return event

    async def _notify(self, fields: dict[str, JsonValue]) -> None:
        self._sent += 1
        message = json.dumps(
            {"run_id": self.run.run_id, **shorten(fields)},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        await self.ctx.report_progress(self._sent, None, message)


def tool_result(result: OperatorResult) -> CallToolResult:
    """The run's result as an MCP tool result: summary text, structured result, isError."""
    return CallToolResult(
        content=[TextContent(type="text", text=summary(result))],
        structured_content=result.model_dump(mode="json"),
        is_error=result.status != "success",
    )


def summary(result: OperatorResult) -> str:
    """A readable account of a run for the model and the author."""
    lines = [f"{TITLES[result.provider]} run {result.run_id}: {result.status}"]
    if result.session is not None:
        lines.append(f"session: {result.session.session_id}")
    if result.error is not None:
        lines.append(f"error [{result.error.code}]: {result.error.message}")
    if result.final_message:
        lines.append(f"final message:\n{result.final_message}")
    metrics = result.metrics
    figures = [f"{metrics.tool_calls} tool calls"]
    if metrics.input_tokens is not None or metrics.output_tokens is not None:
        figures.append(f"tokens in/out {metrics.input_tokens}/{metrics.output_tokens}")
    if metrics.cost_usd is not None:
        figures.append(f"cost ${metrics.cost_usd:.4f}")
    if metrics.duration_ms is not None:
        figures.append(f"{metrics.duration_ms / 1000:.1f}s")
    lines.append("metrics: " + ", ".join(figures))
    if result.artifacts:
        changed = ", ".join(f"{a.path} ({a.change})" for a in result.artifacts)
        lines.append(f"files changed: {changed}")
    if result.permission_denials:
        denied = ", ".join(d.tool_name for d in result.permission_denials)
        lines.append(f"permission denied for: {denied}")
    if result.trace is not None:
        lines.append(f"trace: {result.trace.normalized_path}")
    return "\n".join(lines)


def shorten(value: JsonValue, limit: int = MAX_FIELD_CHARS) -> Any:
    """`value` with every string longer than `limit` cut (progress messages stay small)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return f"{value[:limit]}… [{len(value) - limit} more chars]"
    if isinstance(value, dict):
        return {k: shorten(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten(v, limit) for v in value]
    return value


def _input_required_era(ctx: Context[Any, Any]) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, INPUT_REQUIRED_VERSION)


def _can_elicit(ctx: Context[Any, Any]) -> bool:
    """Whether the client declared form elicitation (an empty capability means form)."""
    caps = ctx.client_capabilities
    if caps is None or caps.elicitation is None:
        return False
    return caps.elicitation.form is not None or caps.elicitation.url is None
