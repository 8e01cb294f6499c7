"""What the agent saw in a turn, as the `context` run event reports it: every part of the
context, its tokens, what was left out and why, and whether the turn compacted the history.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sidecar.protocol.models_base import WireModel


class ContextItemInfo(WireModel):
    """One part of a turn's context: `kind` is identity, pinned_memory, memory, summary,
    recent_messages, older_message or left_out."""

    kind: str
    label: str
    tokens: int
    included: bool
    reason: str
    ref: str | None = None


class CompactionInfo(WireModel):
    performed: bool
    reason: str
    from_seq: int | None = None
    to_seq: int | None = None
    messages: int | None = None
    memories_saved: int = 0


class ContextEvent(WireModel):
    """What the agent saw this turn: every part, its tokens, what was left out and why."""

    type: Literal["context"] = "context"
    model: str | None = None
    window: int
    budget: int = Field(description="The input budget: the window minus the answer's reserve.")
    used: int
    tokenizer: str
    items: tuple[ContextItemInfo, ...] = ()
    left_out_messages: int = 0
    warnings: tuple[str, ...] = ()
    compaction: CompactionInfo | None = None
    message_id: str | None = Field(
        default=None, description="The author's message the turn answers, when it has one."
    )
    tools_sent: int = Field(default=0, description="Tool definitions the model was sent.")
    tools_deferred: int = Field(
        default=0,
        description="Tools left out of the request past the tool share of the window; the "
        "model finds them with atrium__tool_search.",
    )
