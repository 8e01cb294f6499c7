"""Plain data the graph and the planner exchange; no DSPy, LiteLLM or MCP types leak past here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
TokenSink: TypeAlias = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call. `name` is `<server>__<tool>`; the schema is JSON Schema."""

    name: str
    description: str
    input_schema: JsonObject


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One call the model asked for; `id` is the provider's call id (or a generated one)."""

    id: str
    name: str
    arguments: JsonObject


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """One entry of the conversation as the model sees it.

    `role="tool"` entries carry `tool_call_id` and the tool's (untrusted) output as `content`;
    `role="assistant"` entries may carry the tool calls that model made.
    """

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class PlannerDecision:
    """What the planner decided: a final answer, or tool calls to run before asking again."""

    kind: Literal["answer", "tool_calls"]
    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    usage: dict[str, int] = field(default_factory=dict[str, int])


@dataclass(frozen=True, slots=True)
class LMConfig:
    """A resolved model configuration. `api_key` never leaves memory (no DB, no logs, no trace)."""

    model: str
    api_base: str | None = None
    api_key: str | None = None

    def __repr__(self) -> str:
        return f"LMConfig(model={self.model!r}, api_base={self.api_base!r}, api_key=***)"


class PlannerError(Exception):
    """The model could not be reached or answered with something unusable."""

    def __init__(self, code: str, message: str, details: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = details  # the underlying error text, behind "Details" in the window


class Planner(Protocol):
    """The one seam between the graph and a model."""

    async def decide(
        self,
        history: Sequence[ChatTurn],
        tools: Sequence[ToolSpec],
        on_token: TokenSink | None = None,
    ) -> PlannerDecision:
        """Decide the next step. Final-answer text is streamed to `on_token` as it arrives.

        Raises:
            PlannerError: the model failed (network, auth, unparsable output).
        """
        ...
