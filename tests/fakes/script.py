"""The per-test script of a scripted model server: replies, tool calls, recorded requests.

Dialect-neutral: `Reply.text("...")`, `Reply.tool_call(name, args)`, `Reply.error(status)`,
`Reply.hang(event)` and friends describe what the fake model does; each dialect module renders
them in its own wire format. `RecordedRequest` is what the server saw, for assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool/function call the scripted model makes. `arguments` may be pre-encoded JSON."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    namespace: str | None = None  # Responses API MCP form: {"namespace": "mcp__x", "name": "t"}

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Reply:
    """What the scripted model answers to one generation request.

    Build with the class methods; gate with `.after(event)` / `.delayed(seconds)`.
    """

    content: str | None = None  # assistant text
    calls: tuple[ToolCall, ...] = ()  # tool calls, after the text
    reasoning: str | None = None  # rendered only by dialects that support it
    finish_reason: str | None = None  # dialect default when None (stop / tool_calls / end_turn)
    usage: dict[str, int] | None = None  # {"input_tokens": n, "output_tokens": m} overrides
    chunk_size: int = 8  # streaming: characters per text / arguments delta
    chunk_delay: float = 0.0  # streaming: seconds to pause after each SSE event (pacing)
    error_status: int | None = None
    error_body: Any = None  # dict (JSON) or None for the dialect's default error body
    error_headers: tuple[tuple[str, str], ...] = ()
    raw_body: bytes | None = None  # sent verbatim as the body (with error_status or 200)
    raw_content_type: str = "application/json"
    disconnect: bool = False  # close the socket without any response
    cut_off: bool = False  # streaming: close after the last text, with no finish (Chat only)
    gate: threading.Event | None = None
    gate_mid_stream: bool = False  # streaming: pause after the stream preamble, not before
    gate_before_finish: bool = False  # streaming: pause after the last text, before it ends
    delay: float = 0.0

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        """A plain assistant text answer."""
        return cls(content=text, **kw)

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        id: str | None = None,
        namespace: str | None = None,
        text: str | None = None,
        **kw: Any,
    ) -> Reply:
        """One tool call (optionally preceded by assistant text)."""
        call = ToolCall(name, {} if arguments is None else arguments, id, namespace)
        return cls(content=text, calls=(call,), **kw)

    @classmethod
    def tool_calls(cls, calls: Iterable[ToolCall], *, text: str | None = None) -> Reply:
        """Several parallel tool calls in one turn."""
        return cls(content=text, calls=tuple(calls))

    @classmethod
    def error(
        cls, status: int, body: Any = None, *, headers: dict[str, str] | None = None
    ) -> Reply:
        """An HTTP error; body None means the dialect's real error envelope."""
        return cls(
            error_status=status, error_body=body, error_headers=tuple((headers or {}).items())
        )

    @classmethod
    def raw(
        cls, body: bytes, *, status: int = 200, content_type: str = "application/json"
    ) -> Reply:
        """Verbatim bytes (malformed payloads, truncated streams)."""
        return cls(raw_body=body, error_status=status, raw_content_type=content_type)

    def cut(self) -> Reply:
        """This reply's stream ends after its text and tool calls, without a finish reason or
        `[DONE]`: a connection that dropped mid-answer (Chat Completions only)."""
        return replace(self, cut_off=True)

    @classmethod
    def drop(cls) -> Reply:
        """Close the connection without answering."""
        return cls(disconnect=True)

    @classmethod
    def hang(cls, release: threading.Event, then: Reply | None = None) -> Reply:
        """Block until `release` is set (or the server stops), then send `then` or disconnect.

        For cancel tests: the server notices when the client gives up (see `client_disconnected`).
        """
        return (then or cls.drop()).after(release)

    def after(
        self, release: threading.Event, *, mid_stream: bool = False, before_finish: bool = False
    ) -> Reply:
        """Hold this reply until `release` is set; mid_stream pauses after the stream starts,
        before_finish after its last text and tool call, before the finish reason (Chat
        Completions only)."""
        return replace(
            self,
            gate=release,
            gate_mid_stream=mid_stream or before_finish,
            gate_before_finish=before_finish,
        )

    def delayed(self, seconds: float) -> Reply:
        return replace(self, delay=seconds)


Responder = Reply | Callable[["RecordedRequest"], Reply]


@dataclass
class RecordedRequest:
    """One HTTP request as the fake saw it (body parsed as JSON when possible)."""

    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    raw: bytes
    body: Any  # parsed JSON, or None
    is_generation: bool = False
    client_disconnected: threading.Event = field(default_factory=threading.Event)

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("stream"))


def split_chunks(text: str, size: int) -> list[str]:
    """Split text into streaming deltas of `size` characters (at least one, possibly empty)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def estimate_tokens(value: Any) -> int:
    """A deterministic, rough token count (chars / 4) for usage fields."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return max(1, len(text) // 4)
