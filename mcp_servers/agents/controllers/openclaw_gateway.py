"""OpenClaw through its Gateway: the WebSocket protocol, live deltas and tool steps, real abort.

`GatewayConnection` speaks the protocol of OpenClaw 2026.9.6 (v4; v3 in older docs): the Gateway
sends `connect.challenge`, the client answers `connect` with token auth as an operator, gets
`hello-ok`, then sends requests and receives responses and broadcast events. A run is the `agent`
request (`{message, agentId, sessionId, idempotencyKey, timeout?, thinking?}` answered at once
with `{runId}`), its `agent` events (see `parsers/openclaw_gateway`), `agent.wait {runId}` for
the outcome and `sessions.abort {runId}` to stop it on the Gateway side.

`OpenClawGatewayController` drives one run at a time that way. A Gateway that cannot be used
(no token, nothing listening, token refused) ends the run as `failed` with one line saying why.

Such a run takes no message mid-run. Checked against the real Gateway (2026.9.6, a scripted model):
`chat.send {sessionKey, message, idempotencyKey}` to the run's session, with or without
`queueMode: "steer"`, is answered `{runId: <the idempotency key>, status: "started"}` and runs as
a separate run on that session once this one has ended; the model calls of this run never see
it. Steering reaches only runs the Gateway's chat pipeline started (its reply-run registry), not
an `agent` request's. Following such follow-up runs to their end is what a message would need.
"""

from __future__ import annotations

import contextlib
import json
import logging
import platform
import uuid
from typing import Any, ClassVar, cast

import anyio
import anyio.abc
from pydantic import JsonValue
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from mcp_servers.agents.controllers.config import OpenClawConfig
from mcp_servers.agents.controllers.prompting import compose_prompt
from mcp_servers.agents.controllers.run_state import RunState, new_event_stream
from mcp_servers.agents.controllers.single_run import SingleRunController
from mcp_servers.agents.errors import (
    ControllerNotOpenError,
    InputUnsupportedError,
    RunInProgressError,
)
from mcp_servers.agents.events import StateHint
from mcp_servers.agents.parsers.base import JsonObject, as_object, dict_of, str_of
from mcp_servers.agents.parsers.openclaw import classify_error
from mcp_servers.agents.parsers.openclaw_gateway import OpenClawGatewayParser
from mcp_servers.agents.parsers.outcome import RunFacts, build_result, terminal_event
from mcp_servers.agents.requests import MessageReceipt, StartRequest
from mcp_servers.agents.results import (
    AppliedPolicy,
    Attempt,
    ErrorCode,
    NormalizedError,
)
from mcp_servers.agents.traces import TraceWriter, default_trace_dir

logger = logging.getLogger(__name__)

PROTOCOL_RANGE = (3, 4)
CLIENT_VERSION = "0.1.0"
ABORT_WAIT_S = 10.0
WAIT_MS = 24 * 3600 * 1000
"""`agent.wait`'s own limit: a day (the run's timeout is Atrium's deadline and OpenClaw's)."""


class GatewayUnavailableError(Exception):
    """The Gateway cannot run the turn; `error` says why in one line."""

    def __init__(self, error: NormalizedError) -> None:
        super().__init__(error.message)
        self.error = error


def gateway_failure(
    url: str, token: str | None, reason: str, code: ErrorCode | None = None
) -> NormalizedError:
    """The normalized error for a Gateway that could not be used (`code`: else classified)."""
    if not token:
        message = (
            f"OpenClaw Gateway needs a token: set gateway_token (gateway.auth.token in the "
            f"Gateway's openclaw.json) to use {url}"
        )
        return NormalizedError(code=ErrorCode.CONFIGURATION, message=message)
    code = code or classify_error(reason)
    if code is ErrorCode.AGENT_ERROR:
        code = ErrorCode.CONFIGURATION
    return NormalizedError(
        code=code, message=f"OpenClaw Gateway at {url}: {reason}", detail={"url": url}
    )


class GatewayConnection:
    """One authenticated operator connection; requests are answered by id, events queued."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._answers: dict[str, JsonObject] = {}
        self._answered: dict[str, anyio.Event] = {}
        self.hello: JsonObject = {}
        send, receive = anyio.create_memory_object_stream[JsonObject](1_000_000)
        self._event_send = send
        self.events = receive
        self.closed = anyio.Event()

    @classmethod
    async def open(
        cls, url: str, token: str | None, timeout_s: float, group: anyio.abc.TaskGroup
    ) -> GatewayConnection:
        """Connect and authenticate; the reader runs in `group` until `close`.

        Raises:
            GatewayUnavailableError: no token, nothing answering, or the handshake refused.
        """
        if not token:
            raise GatewayUnavailableError(gateway_failure(url, token, "no token"))
        try:
            with anyio.fail_after(timeout_s):
                socket = await connect(url, max_size=None, open_timeout=timeout_s)
                challenge = as_object(json.loads(await socket.recv())) or {}
        except (OSError, TimeoutError, WebSocketException, ValueError) as exc:
            reason = f"not reachable ({type(exc).__name__}: {exc})"
            error = gateway_failure(url, token, reason, ErrorCode.MODEL_UNREACHABLE)
            raise GatewayUnavailableError(error) from exc
        if challenge.get("event") != "connect.challenge":
            await socket.close()
            reason = "did not send connect.challenge (not an OpenClaw Gateway?)"
            raise GatewayUnavailableError(gateway_failure(url, token, reason))
        conn = cls(socket)
        group.start_soon(conn._read)
        params: dict[str, JsonValue] = {
            "minProtocol": PROTOCOL_RANGE[0],
            "maxProtocol": PROTOCOL_RANGE[1],
            "client": {
                "id": "cli",
                "version": CLIENT_VERSION,
                "platform": platform.system().lower(),
                "mode": "cli",
            },
            "role": "operator",
            "scopes": ["operator.read", "operator.write"],
            "caps": ["tool-events"],
            "auth": {"token": token},
        }
        try:
            with anyio.fail_after(timeout_s):
                conn.hello = await conn.request("connect", params)
        except (GatewayRequestError, TimeoutError, ConnectionError) as exc:
            await conn.close()
            reason = f"refused the connection ({exc})"
            raise GatewayUnavailableError(gateway_failure(url, token, reason)) from exc
        return conn

    async def _read(self) -> None:
        try:
            async for message in self._socket:
                frame = as_object(json.loads(message)) if isinstance(message, str) else None
                if frame is None:
                    continue
                if frame.get("type") == "res":
                    key = str(frame.get("id"))
                    self._answers[key] = frame
                    if key in self._answered:
                        self._answered[key].set()
                elif frame.get("type") == "event":
                    self._event_send.send_nowait(frame)
        except (WebSocketException, OSError, ValueError) as exc:
            logger.info("OpenClaw Gateway connection ended: %s", exc)
        finally:
            self.closed.set()
            for waiting in self._answered.values():
                waiting.set()
            self._event_send.close()

    async def request(self, method: str, params: dict[str, JsonValue]) -> JsonObject:
        """Send a request and wait for its response payload.

        Raises:
            GatewayRequestError: the Gateway answered `ok: false`.
            ConnectionError: the connection closed first.
        """
        key = uuid.uuid4().hex
        answered = self._answered[key] = anyio.Event()
        frame = {"type": "req", "id": key, "method": method, "params": params}
        try:
            await self._socket.send(json.dumps(frame))
        except WebSocketException as exc:
            raise ConnectionError(f"Gateway connection closed: {exc}") from exc
        await answered.wait()
        del self._answered[key]
        answer = self._answers.pop(key, None)
        if answer is None:
            raise ConnectionError("Gateway connection closed before answering")
        if answer.get("ok") is not True:
            raise GatewayRequestError(method, dict_of(answer.get("error")))
        return dict_of(answer.get("payload"))

    async def close(self) -> None:
        """Close the socket and the event queue."""
        await self._socket.close()
        self.events.close()


class GatewayRequestError(Exception):
    """The Gateway answered a request with `ok: false`."""

    def __init__(self, method: str, error: JsonObject) -> None:
        self.code = str_of(error.get("code")) or "ERROR"
        self.message = str_of(error.get("message")) or json.dumps(error)
        super().__init__(f"{method}: {self.code}: {self.message}")


async def probe_gateway(url: str, timeout_s: float) -> str | None:
    """None if something answers at `url` with OpenClaw's connect challenge, else why not."""
    try:
        with anyio.fail_after(timeout_s):
            async with connect(url, open_timeout=timeout_s) as socket:
                first = as_object(json.loads(await socket.recv())) or {}
    except (OSError, TimeoutError, WebSocketException, ValueError) as exc:
        return f"not reachable ({type(exc).__name__}: {exc})"
    if first.get("event") != "connect.challenge":
        return "did not send connect.challenge (not an OpenClaw Gateway?)"
    return None


class OpenClawGatewayController(SingleRunController):
    """Runs OpenClaw turns on a Gateway over its WebSocket protocol."""

    provider: ClassVar = "openclaw"

    def __init__(self, config: OpenClawConfig) -> None:
        super().__init__()
        self.config = config
        self._parser: OpenClawGatewayParser | None = None
        self.notes: list[str] = []
        self.stopped = anyio.Event()
        """Set by an owner hosting this controller in its own task group, to close it."""

    @property
    def busy(self) -> bool:
        """Whether a run is still going."""
        return self._run is not None and not self._run.done.is_set()

    @property
    def url(self) -> str:
        return self.config.gateway_url or "ws://127.0.0.1:18789"

    async def _launch(self, request: StartRequest, resume_id: str | None) -> None:
        if self._group is None:
            raise ControllerNotOpenError("use the controller inside `async with`")
        if self._run is not None and not self._run.done.is_set():
            raise RunInProgressError("the previous run has not finished")
        session = resume_id or str(uuid.uuid5(uuid.NAMESPACE_URL, f"atrium-run:{request.run_id}"))
        send, receive = new_event_stream()
        trace = TraceWriter(self.config.trace_dir or default_trace_dir(), request.run_id)
        parser = OpenClawGatewayParser(session_id=session)
        run = RunState(request=request, parser=parser, trace=trace, send=send, receive=receive)
        run.notes.extend(self.notes)
        # `agent`'s `cwd` is reserved for plugin-owned runs in 2026.9.6, so no per-run folder.
        run.notes.append(
            f"the OpenClaw Gateway works in its own configured workspace, not in "
            f"{request.working_dir}; what it changes there does not pass Atrium's review gate"
        )
        self._run, self._parser = run, parser
        await self._group.start(self._drive, run, parser, session, resume_id)

    async def _drive(
        self,
        run: RunState,
        parser: OpenClawGatewayParser,
        session: str,
        resume_id: str | None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        task_status.started()
        wait: JsonObject | None = None
        try:
            async with anyio.create_task_group() as group:
                wait = await self._turn(run, parser, session, group)
                group.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            run.request_stop("interrupt")
            raise
        except Exception as exc:  # a task group wraps them; a bug must still end with a result
            leaf = _leaf(exc)
            run.fatal_error = _as_error(leaf)
            if run.fatal_error.code is ErrorCode.INTERNAL_ERROR:
                logger.error("gateway run %s crashed", run.request.run_id, exc_info=leaf)
        finally:
            for event in parser.finish_with(wait):
                run.emit(event)
            mode = "resume" if resume_id is not None else "start"
            outcome = "completed" if parser.acc.outcome == "success" else "failed"
            run.attempts.append(Attempt(mode=mode, resume_session_id=resume_id, outcome=outcome))
            self._finish(run, parser)

    async def _turn(
        self,
        run: RunState,
        parser: OpenClawGatewayParser,
        session: str,
        group: anyio.abc.TaskGroup,
    ) -> JsonObject | None:
        cfg = self.config
        request = run.request
        conn = await GatewayConnection.open(self.url, cfg.gateway_token, cfg.gateway_probe_s, group)
        try:
            params: dict[str, JsonValue] = {
                "message": compose_prompt(request.instruction, request.attachments),
                "agentId": cfg.agent_id,
                "sessionId": session,
                "idempotencyKey": request.run_id,
            }
            if request.timeout_s is not None:
                params["timeout"] = max(1, int(request.timeout_s))
            if cfg.thinking:
                params["thinking"] = cfg.thinking
            accepted = await conn.request("agent", params)
            run_id = str_of(accepted.get("runId"))
            if run_id is None:
                raise GatewayRequestError("agent", {"message": "no runId in the answer"})
            parser.run_id = run_id
            run.emit(StateHint(hint="gateway_run", detail={"run_id": run_id, "url": self.url}))
            group.start_soon(self._pump, run, parser, conn)
            group.start_soon(self._abort_when_stopped, run, parser, conn, group.cancel_scope)
            waiting: dict[str, JsonValue] = {"runId": run_id, "timeoutMs": WAIT_MS}
            wait: JsonObject | None = None
            with anyio.move_on_after(run.remaining_s()) as deadline:
                wait = await conn.request("agent.wait", waiting)
            if deadline.cancelled_caught:
                run.request_stop("timeout")
                with anyio.move_on_after(ABORT_WAIT_S):
                    return await conn.request("agent.wait", waiting)
                return None
            return wait
        finally:
            with anyio.CancelScope(shield=True):
                await conn.close()

    async def _pump(
        self, run: RunState, parser: OpenClawGatewayParser, conn: GatewayConnection
    ) -> None:
        # The queue closes with the connection (the run's end): that ends the loop too.
        with contextlib.suppress(anyio.ClosedResourceError):
            async for frame in conn.events:
                if frame.get("event") == "agent":
                    run.trace.write_raw(json.dumps(frame, ensure_ascii=False))
                events = parser.feed_frame(frame)
                if events:
                    run.touch()
                for event in events:
                    run.emit(event)

    async def _abort_when_stopped(
        self,
        run: RunState,
        parser: OpenClawGatewayParser,
        conn: GatewayConnection,
        turn: anyio.CancelScope,
    ) -> None:
        """On stop, abort the run on the Gateway (`sessions.abort {key, runId}`, else
        `chat.abort`); give it ABORT_WAIT_S to end, then stop waiting for it."""
        await run.stop_requested.wait()
        run_id = parser.run_id or ""
        detail: dict[str, Any] = {"run_id": run_id, "reason": run.stop_reason}
        attempts: list[tuple[str, dict[str, JsonValue]]] = [
            ("sessions.abort", {"key": parser.session_key, "runId": run_id}),
            ("chat.abort", {"sessionKey": parser.session_key, "runId": run_id}),
        ]
        if parser.session_key is None:
            attempts = [("sessions.abort", {"runId": run_id})]
        errors: list[str] = []
        for method, params in attempts:
            try:
                detail["answer"] = await conn.request(method, params)
                detail["method"] = method
                break
            except (GatewayRequestError, ConnectionError) as exc:
                errors.append(str(exc))
        else:
            detail["error"] = "; ".join(errors)
        run.emit(StateHint(hint="gateway_abort", detail=detail))
        await anyio.sleep(ABORT_WAIT_S)
        turn.cancel()

    async def send_message(self, text: str) -> MessageReceipt:
        """Refused: the Gateway would run the message after this run, unseen (module docstring).

        Raises:
            InputUnsupportedError: always.
        """
        raise InputUnsupportedError("an OpenClaw Gateway run")

    def _finish(self, run: RunState, parser: OpenClawGatewayParser) -> None:
        facts = RunFacts(
            run_id=run.request.run_id,
            provider=self.provider,
            stop_reason=run.stop_reason,
            measured_duration_ms=int((anyio.current_time() - run.started_at) * 1000),
            trace=run.trace.ref,
            policy=self.applied_policy(run.request),
            attempts=tuple(run.attempts),
            notes=tuple(run.notes),
            fatal_error=run.fatal_error,
        )
        result = build_result(parser.acc, facts)
        run.result = result
        run.emit(terminal_event(result))
        run.trace.write_result(result)
        run.trace.close()
        run.send.close()
        run.done.set()

    def applied_policy(self, request: StartRequest) -> AppliedPolicy:
        return AppliedPolicy(
            mode=request.tool_policy.mode,
            native=(),
            can_ask_permission=False,
            note=(
                f"run on the OpenClaw Gateway at {self.url}: its own tool policy, exec approvals "
                "and workspace apply; Atrium's tool policy is not enforced per run"
            ),
        )


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (task groups wrap what their tasks raise)."""
    if isinstance(exc, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", exc)
        if group.exceptions:
            return _leaf(group.exceptions[0])
    return cast(BaseException, exc)


def _as_error(exc: BaseException) -> NormalizedError:
    """A run's error for what ended its Gateway turn."""
    if isinstance(exc, GatewayUnavailableError):
        return exc.error
    if isinstance(exc, GatewayRequestError):
        message = f"OpenClaw Gateway: {exc.message}"
        return NormalizedError(code=classify_error(exc.message), message=message)
    if isinstance(exc, ConnectionError):
        return NormalizedError(code=ErrorCode.PROCESS_EXITED, message=f"OpenClaw Gateway: {exc}")
    return NormalizedError(code=ErrorCode.INTERNAL_ERROR, message=f"{type(exc).__name__}: {exc}")
