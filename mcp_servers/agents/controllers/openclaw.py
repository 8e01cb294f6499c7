"""OpenClaw controller: `openclaw agent ... --json --local`, one JSON document at the end.

Start: `openclaw agent --agent ID --session-id NEW --message=PROMPT --json [--timeout S]
[--thinking L] --local [extra]`, with NEW a session id derived from the run id so the native
session is known even if the output omits it. Resume passes the existing session id.

Each Atrium session runs in its own OpenClaw state folder (`openclaw_state`): the CLI's `HOME`,
with a config whose workspace is the run's working dir, whose model is Atrium's, and whose tool
allow/deny lists carry Atrium's tool policy. While the CLI runs, and once more after it exits, the
run's new rows of OpenClaw's session transcript (SQLite, read read-only) become tool_call /
tool_result / message events, so an embedded turn's steps show live too (nothing streams on its
stdout).

Modes: `local` runs embedded (`--local`) here; `gateway` runs on the configured Gateway over its
WebSocket protocol (`OpenClawGatewayController`), and a Gateway it cannot use fails the run with one
line saying why, never a silent success; `auto` (default) probes the configured Gateway
(`gateway_url`, else `$ATRIUM_OPENCLAW_GATEWAY_URL`; token: `gateway_token`, else
`$ATRIUM_OPENCLAW_GATEWAY_TOKEN`) and uses it for a read-only task when it answers and a token is
set, else runs embedded and says why in the result's notes. A task that may write always runs
embedded in `auto` mode: the Gateway works in its own configured workspace, outside the review
gate's isolated copy.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import ClassVar

import anyio
import anyio.abc

from mcp_servers.agents.controllers.config import OpenClawConfig
from mcp_servers.agents.controllers.openclaw_gateway import OpenClawGatewayController, probe_gateway
from mcp_servers.agents.controllers.openclaw_state import (
    build_config,
    last_seq,
    model_from_settings,
    read_transcript,
    state_env,
    tool_policy,
    transcript_db,
    write_state,
)
from mcp_servers.agents.controllers.prompting import compose_prompt
from mcp_servers.agents.controllers.run_state import AttemptIO, RunState
from mcp_servers.agents.controllers.runner import SubprocessController
from mcp_servers.agents.errors import RunInProgressError
from mcp_servers.agents.events import AgentEvent
from mcp_servers.agents.parsers.base import StreamParser
from mcp_servers.agents.parsers.openclaw import OpenClawOutputParser
from mcp_servers.agents.parsers.openclaw_transcript import transcript_events
from mcp_servers.agents.process import StopStep
from mcp_servers.agents.requests import (
    MessageReceipt,
    PermissionDecision,
    ResumeRequest,
    StartRequest,
)
from mcp_servers.agents.results import AppliedPolicy, OperatorResult
from mcp_servers.agents.traces import default_trace_dir

TRANSCRIPT_POLL_S = 1.0
"""How often the session's transcript is read while an embedded turn runs."""


class OpenClawController(SubprocessController):
    """Drives `openclaw agent --json --local` in an isolated state folder per Atrium session."""

    provider: ClassVar = "openclaw"
    stdin_pipe: ClassVar[bool] = False

    def __init__(self, config: OpenClawConfig | None = None) -> None:
        self.openclaw_config = config or OpenClawConfig()
        super().__init__(self.openclaw_config)
        self._session: str | None = None
        self._start_seq = -1
        self._seen_seq = -1
        self._gateway: OpenClawGatewayController | None = None
        self._mode_note: str | None = None

    # -- mode: a Gateway run is delegated, an embedded one runs here -------------------------

    def gateway_settings(self) -> tuple[str | None, str | None]:
        """The Gateway URL and token: the config's, else the environment's."""
        cfg = self.openclaw_config
        env = {**os.environ, **cfg.env}
        url = cfg.gateway_url or env.get("ATRIUM_OPENCLAW_GATEWAY_URL") or None
        token = cfg.gateway_token or env.get("ATRIUM_OPENCLAW_GATEWAY_TOKEN") or None
        return url, token

    async def pick_mode(self, request: StartRequest) -> OpenClawGatewayController | None:
        """The Gateway controller for this run, or None to run embedded (with `_mode_note`).

        In `auto` mode a task that may write runs embedded even when a Gateway answers: a
        Gateway works in its own configured workspace, so only an embedded run works in the
        review gate's isolated copy and brings its changes back for the author to accept.
        `gateway` mode is the author's explicit choice and keeps the Gateway (the result says
        its changes do not pass the gate).
        """
        cfg = self.openclaw_config
        self._mode_note = None
        if cfg.mode == "local":
            return None
        url, token = self.gateway_settings()
        if cfg.mode == "auto":
            if url is None:
                return None
            if cfg.isolate and request.tool_policy.mode != "read_only":
                self._mode_note = (
                    f"a task that may write runs embedded (--local) in its own folder, so its "
                    f"changes pass the review gate; the OpenClaw Gateway at {url} serves "
                    f"read-only tasks"
                )
                return None
            reason = await probe_gateway(url, cfg.gateway_probe_s)
            if reason is None and not token:
                reason = "needs a token (gateway_token / ATRIUM_OPENCLAW_GATEWAY_TOKEN)"
            if reason is not None:
                self._mode_note = f"OpenClaw Gateway at {url} {reason}; ran embedded (--local)"
                return None
        settings = cfg.model_copy(update={"gateway_url": url, "gateway_token": token})
        gateway = OpenClawGatewayController(settings)
        assert self._group is not None
        await self._group.start(self._host_gateway, gateway)
        return gateway

    async def _host_gateway(
        self,
        gateway: OpenClawGatewayController,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        async with gateway:
            task_status.started()
            await gateway.stopped.wait()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._gateway is not None:
            self._gateway.stopped.set()
        await super().__aexit__(exc_type, exc, tb)

    async def start(self, request: StartRequest) -> None:
        await self._begin(request)

    async def resume(self, request: ResumeRequest) -> None:
        await self._begin(request)

    async def _begin(self, request: StartRequest) -> None:
        if self._gateway is not None and self._gateway.busy:
            raise RunInProgressError("the previous run has not finished")
        if self._run is not None and not self._run.done.is_set():
            raise RunInProgressError("the previous run has not finished")
        if self._gateway is not None:
            self._gateway.stopped.set()
        self._gateway = await self.pick_mode(request) if self._group is not None else None
        if self._gateway is not None:
            await (
                self._gateway.resume(request)
                if isinstance(request, ResumeRequest)
                else self._gateway.start(request)
            )
        elif isinstance(request, ResumeRequest):
            await super().resume(request)
        else:
            await super().start(request)

    def stream(self) -> AsyncIterator[AgentEvent]:
        return self._gateway.stream() if self._gateway is not None else super().stream()

    async def interrupt(self) -> None:
        if self._gateway is not None:
            await self._gateway.interrupt()
        else:
            await super().interrupt()

    async def answer_permission(self, request_id: str, decision: PermissionDecision) -> None:
        if self._gateway is not None:
            await self._gateway.answer_permission(request_id, decision)
        else:
            await super().answer_permission(request_id, decision)

    async def send_message(self, text: str) -> MessageReceipt:
        """Refused for both kinds of run: `openclaw agent --local` reads no input once started,
        and a Gateway run would get the message only as a later run (`openclaw_gateway`).

        Raises:
            InputUnsupportedError: always, naming the kind of run.
        """
        if self._gateway is not None:
            return await self._gateway.send_message(text)
        return await super().send_message(text)

    async def wait(self) -> OperatorResult:
        return await (self._gateway.wait() if self._gateway is not None else super().wait())

    @property
    def result(self) -> OperatorResult | None:
        return self._gateway.result if self._gateway is not None else super().result

    # -- embedded runs -----------------------------------------------------------------------

    def session_for(self, request: StartRequest, resume_id: str | None) -> str:
        """The session id an attempt uses: the resumed one, or a fresh one per run."""
        if resume_id is not None:
            return resume_id
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"atrium-run:{request.run_id}"))

    def state_dir(self, session_id: str) -> Path:
        """The OpenClaw state folder (the CLI's HOME) of one native session."""
        cfg = self.openclaw_config
        traces = cfg.trace_dir or default_trace_dir()
        return (cfg.state_root or traces.parent / "openclaw-state") / session_id

    def build_argv(self, request: StartRequest, resume_id: str | None) -> list[str]:
        cfg = self.openclaw_config
        session = self.session_for(request, resume_id)
        self._session = session
        argv = [cfg.executable, *cfg.prefix_args, "agent", "--agent", cfg.agent_id]
        argv += ["--session-id", session]
        argv += [f"--message={compose_prompt(request.instruction, request.attachments)}", "--json"]
        if request.timeout_s is not None:
            argv += ["--timeout", str(max(1, math.ceil(request.timeout_s)))]
        if cfg.thinking:
            argv += ["--thinking", cfg.thinking]
        if cfg.mode != "gateway":
            argv.append("--local")
        return [*argv, *cfg.extra_args]

    def child_env(self, request: StartRequest) -> dict[str, str]:
        """The inherited environment plus, when isolated, the session's fresh state folder."""
        env = super().child_env(request)
        cfg = self.openclaw_config
        if not cfg.isolate or self._session is None:
            return env
        state = self.state_dir(self._session)
        model = cfg.model or model_from_settings(env, request.model)
        write_state(state, build_config(request.working_dir, model, request.tool_policy))
        self._start_seq = last_seq(transcript_db(state, cfg.agent_id), self._session)
        self._seen_seq = self._start_seq
        return {**env, **state_env(state)}

    async def on_spawned(self, run: RunState, io: AttemptIO) -> None:
        """Follow the session's transcript while the CLI runs, so its steps show live."""
        if self.openclaw_config.isolate and self._session is not None and self._group is not None:
            self._group.start_soon(self._follow_transcript, run, io, self._session)

    async def _follow_transcript(self, run: RunState, io: AttemptIO, session: str) -> None:
        parser = run.parser
        if not isinstance(parser, OpenClawOutputParser):
            return
        db = transcript_db(self.state_dir(session), self.openclaw_config.agent_id)
        workspace = str(run.request.working_dir)
        while not io.stdout_done.is_set():
            with anyio.move_on_after(TRANSCRIPT_POLL_S):
                await io.stdout_done.wait()
            if io.stdout_done.is_set():
                return  # the rest is read once the CLI exited (`on_exited`)
            rows = await anyio.to_thread.run_sync(read_transcript, db, session, self._seen_seq)
            if not rows or io.stdout_done.is_set():
                continue
            self._seen_seq = max(row.seq for row in rows)
            parser.streamed = True
            run.touch()
            for event in transcript_events(rows, workspace):
                parser.acc.observe(event)
                run.emit(event)

    async def stop_process(self, run: RunState, io: AttemptIO) -> None:
        """Stop the CLI and everything it started, within 2 s at the default graces: SIGINT
        (OpenClaw exits 130), SIGTERM, SIGKILL, then SIGKILL to what is left of its process
        group (a stopped turn's tools have nobody to report to)."""
        cfg = self.openclaw_config
        await io.proc.stop(
            [
                StopStep("sigint", cfg.sigint_grace_s),
                StopStep("sigterm", cfg.sigterm_grace_s),
                StopStep("sigkill", cfg.term_grace_s),
            ]
        )
        io.proc.kill_group()

    def on_exited(self, run: RunState) -> None:
        cfg = self.openclaw_config
        parser = run.parser
        if not cfg.isolate or self._session is None or not isinstance(parser, OpenClawOutputParser):
            return
        db = transcript_db(self.state_dir(self._session), cfg.agent_id)
        parser.add_transcript(read_transcript(db, self._session, self._seen_seq))

    def applied_policy(self, request: StartRequest) -> AppliedPolicy:
        mode = request.tool_policy.mode
        if not self.openclaw_config.isolate:
            return AppliedPolicy(
                mode=mode,
                native=(),
                can_ask_permission=False,
                note=(
                    "OpenClaw runs with the author's own config (isolate off): its tool policy "
                    "applies, not Atrium's"
                ),
            )
        _, native, note = tool_policy(request.tool_policy)
        return AppliedPolicy(mode=mode, native=native, can_ask_permission=False, note=note)

    def notes(self, request: StartRequest) -> list[str]:
        cfg = self.openclaw_config
        notes: list[str] = [self._mode_note] if self._mode_note else []
        if not cfg.isolate:
            notes.append("OpenClaw runs in its own configured workspace; working_dir is the cwd")
            if request.model:
                notes.append("openclaw agent takes the model from its agent config; model ignored")
        elif cfg.model is None and model_from_settings(self.child_env_base(request)) is None:
            notes.append("no Atrium model configured; OpenClaw uses its default model")
        if request.max_turns is not None:
            notes.append("openclaw agent has no turn limit; max_turns ignored")
        return notes

    def child_env_base(self, request: StartRequest) -> dict[str, str]:
        """The environment before the state folder is applied (where the model settings are)."""
        return super().child_env(request)

    def make_parser(self, request: StartRequest, resume_id: str | None) -> StreamParser:
        return OpenClawOutputParser(
            session_hint=self.session_for(request, resume_id), workspace=str(request.working_dir)
        )
