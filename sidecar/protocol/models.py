"""Records shared by several areas of the wire: messages and their tool calls, errors, and the
params or result with no fields.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from sidecar.protocol.models_base import WireModel


class Empty(WireModel):
    """Params or result with no fields."""


class ToolCallInfo(WireModel):
    id: str
    server: str
    tool: str
    arguments: dict[str, Any]


ANNOUNCEMENT_PREFIX = "[Background plan "
"""How an announcement's text starts: a delegated plan's report, delivered into its thread."""


class MessageInfo(WireModel):
    """One entry of the conversation of record.

    Roles: `user`, `assistant` (text and/or tool calls), `tool` (a result; `tool_call_id` names
    the call, `is_error` marks failures and denials). `announcement`: a `user` entry that is a
    delegated plan's report, delivered into the thread by itself (not typed by the author).
    """

    id: str
    thread_id: str
    role: Literal["user", "assistant", "tool"]
    content: str
    created_at: float
    tool_calls: tuple[ToolCallInfo, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    announcement: bool = False


class ErrorInfo(WireModel):
    code: str
    message: str = Field(
        description="One line for the author: what is wrong and, when known, what to do."
    )
    details: str | None = Field(
        default=None,
        description="The underlying error text (e.g. the provider's), shown behind 'Details'.",
    )
