"""One tool call on a supervised connection, with a hard cap and an idle timeout.

The call always carries a progress callback, so the SDK always sends a progress token; each
progress notification pushes the idle deadline back (`sidecar.binding.deadline.IdleDeadline`, which
also pauses while the server waits on the author), while the hard cap (`timeout`) still holds.
The call races the session's end: when the server dies mid-call the call fails at once instead
of waiting for a reply that cannot come.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import Any, cast

from sidecar.binding.deadline import CallTimeoutError, IdleDeadline
from sidecar.host.call_failures import failed_call, one_line
from sidecar.host.connection import Connection
from sidecar.host.redaction import redact_outcome
from sidecar.host.spec import ServerUnavailableError
from sidecar.host.types import HostTool, ProgressSink, ToolOutcome


async def call_tool(
    conn: Connection,
    tool: HostTool,
    arguments: dict[str, Any],
    on_progress: ProgressSink | None = None,
) -> ToolOutcome:
    """Run `tool` on `conn`. Server-side failures (a reply the client refuses, a JSON-RPC
    error) and time-outs come back as `is_error` outcomes with a one-line reason.

    Raises:
        ServerUnavailableError: the server is not connected, or died during the call.
    """
    client = await _live_client(conn)
    spec = conn.spec
    deadline = IdleDeadline(spec.idle_timeout_s, spec.timeout_s)
    call = asyncio.ensure_future(
        client.call_tool(
            tool.tool,
            arguments,
            read_timeout_seconds=spec.timeout_s + 1,
            progress_callback=deadline.progress_sink(on_progress),
        )
    )
    try:
        with deadline:
            await _race(call, conn.closed)
    except CallTimeoutError as exc:
        return _timed_out(conn, str(exc))
    finally:
        if not call.done():
            call.cancel()
    if not call.done():
        raise ServerUnavailableError(_died(conn))
    return _outcome(conn, tool, call)


async def _race(call: asyncio.Future[Any], closed: asyncio.Event) -> None:
    """Wait for the call or the end of the session, whichever comes first; a call still
    running when this returns or is cancelled (timeout, run cancelled) is cancelled."""
    ended = asyncio.ensure_future(closed.wait())
    try:
        await asyncio.wait({call, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ended.cancel()
        if not call.done():
            call.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await call


async def _live_client(conn: Connection) -> Any:
    if conn.state == "starting":
        with suppress(TimeoutError):
            await asyncio.wait_for(conn.attempt_done.wait(), conn.policy.start_timeout_s)
    client = conn.client
    if client is None or conn.state not in ("ready", "degraded") or conn.closed.is_set():
        detail = f": {one_line(conn.error)}" if conn.error else ""
        raise ServerUnavailableError(f"server {conn.spec.name!r} is {conn.state}{detail}")
    return client


def _died(conn: Connection) -> str:
    last = conn.stderr.last_line()
    suffix = f" (stderr: {one_line(last)})" if last else ""
    return f"server {conn.spec.name!r} died during the call{suffix}; it is being restarted"


def _timed_out(conn: Connection, why: str) -> ToolOutcome:
    conn.set_state("degraded", f"a call {why}")
    return ToolOutcome(is_error=True, text=f"{conn.spec.name} did not answer in time ({why}).")


def _outcome(conn: Connection, tool: HostTool, call: asyncio.Future[Any]) -> ToolOutcome:
    """The call's result as an outcome; a reply the client refused is an `is_error` outcome
    (see `call_failures`).

    Raises:
        ServerUnavailableError: the connection closed before the reply.
    """
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    try:
        result = call.result()
    except MCPError as exc:
        if exc.error.code == CONNECTION_CLOSED:
            raise ServerUnavailableError(_died(conn)) from exc
        if exc.error.code == REQUEST_TIMEOUT:
            return _timed_out(conn, f"ran past its {conn.spec.timeout_s:g} s limit")
        return _redacted(conn, failed_call(conn.spec.name, tool.tool, exc))
    except Exception as exc:  # the server boundary: whatever its reply made the client raise
        return _redacted(conn, failed_call(conn.spec.name, tool.tool, exc))
    if conn.state == "degraded" and conn.tools:
        conn.set_state("ready")
    texts = [getattr(block, "text", f"[{block.type} content]") for block in result.content]
    structured = result.structured_content
    outcome = ToolOutcome(
        is_error=bool(result.is_error),
        text="\n".join(texts),
        structured=cast(dict[str, Any], structured) if isinstance(structured, dict) else None,
    )
    return _redacted(conn, outcome)


def _redacted(conn: Connection, outcome: ToolOutcome) -> ToolOutcome:
    """Before anything stores it (the conversation, the journal, run events), with the
    server's secrets masked: a server's error message may echo one as well as its result."""
    return redact_outcome(outcome, conn.stderr.redact.secrets)
