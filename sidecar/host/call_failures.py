"""How a server's failure during a tool call is told: one line the model and the author read.

A tool call can fail on the server's side in four ways, and each becomes an `is_error` outcome
(the turn goes on, the model reads why) except a server that died, which the caller turns into
one (`ServerUnavailableError`, so that the plans can tell "not there" from "said no"):

- an invalid reply: the SDK refuses the server's result, either as MCP (a pydantic
  `ValidationError`, e.g. a text block without its text) or against the tool's own output schema
  (a `RuntimeError` from `ClientSession.validate_tool_result`);
- a protocol error: the server answered with a JSON-RPC error (`MCPError`);
- a time-out: `tool_call` says so itself;
- anything else the client raised while the call ran.

The wording never carries a library's raw text (pydantic's input echo and documentation link,
jsonschema's schema dump): each reason is one line, the problem in the field's own terms.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from mcp_servers.field_errors import describe
from sidecar.host.types import ToolOutcome

log = logging.getLogger(__name__)

MAX_REASON = 400
"""Characters of a server's own message kept in a reason (a reason is one line)."""


def one_line(text: str, limit: int = MAX_REASON) -> str:
    """`text` with its whitespace runs (newlines too) as single spaces, cut to `limit`."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def failed_call(server: str, tool: str, exc: Exception) -> ToolOutcome:
    """The `is_error` outcome of a call whose reply the client could not take."""
    return ToolOutcome(is_error=True, text=_reason(server, tool, exc))


def _reason(server: str, tool: str, exc: Exception) -> str:
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):
        code = exc.error.code
        return f"{server} refused the call to {tool} (error {code}): {one_line(exc.error.message)}"
    if isinstance(exc, ValidationError):
        return (
            f"{server} answered {tool} with a reply that is not valid MCP ({describe(exc)}); "
            "whether the tool did its work is unknown."
        )
    if isinstance(exc, RuntimeError) and (schema := _schema_problem(exc)) is not None:
        return (
            f"{server}'s {tool} returned structured content that breaks its own output schema "
            f"({schema}); whether the tool did its work is unknown."
        )
    # Any other failure inside the client: the call boundary, so it is logged whole here.
    log.warning("call to %s of %s failed in the client", tool, server, exc_info=exc)
    first = one_line(str(exc).splitlines()[0] if str(exc) else "")
    detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return f"the call to {tool} of {server} failed: {detail}."


def _schema_problem(exc: RuntimeError) -> str | None:
    """`where: problem` of an output-schema refusal from the SDK, else None."""
    cause: Any = exc.__cause__
    path = getattr(cause, "absolute_path", None)
    message = getattr(cause, "message", None)
    if isinstance(message, str) and path is not None:
        where = ".".join(str(part) for part in path)
        return f"{where}: {one_line(message)}" if where else one_line(message)
    text = str(exc)
    if "structured content" in text or "output schema" in text:
        return one_line(text.splitlines()[0])
    return None
