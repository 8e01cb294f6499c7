"""The rows of a transcript: messages (the streaming answer among them), compact tool calls,
notices of turns that ended badly, and the marks put in between them (`transcript_marks`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from desktop.models.transcript_marks import MarkEntry

ToolCallState: TypeAlias = Literal["pending", "awaiting_approval", "succeeded", "failed"]


@dataclass
class MessageEntry:
    """An author or agent message. `streaming` while tokens still arrive; `local` for the
    author's own message until the sidecar echoes it back with an id; `seq` its place in the
    thread when known (messages from `thread/messages`).

    Streamed text is kept as chunks and joined only when `text` is read through the transcript
    (`Transcript.entry`/`entries`), so a long answer costs linear time, not quadratic."""

    role: Literal["user", "assistant"]
    text: str
    message_id: str | None = None
    streaming: bool = False
    local: bool = False
    seq: int | None = field(default=None, compare=False)
    chunks: list[str] = field(default_factory=list, compare=False, repr=False)
    chunk_chars: int = field(default=0, compare=False, repr=False)
    rewritten: bool = field(default=False, compare=False, repr=False)
    """The final message replaced the streamed text with different text."""

    def append(self, text: str) -> None:
        self.chunks.append(text)
        self.chunk_chars += len(text)

    @property
    def length(self) -> int:
        """Characters of text, appended chunks included (without joining them)."""
        return len(self.text) + self.chunk_chars

    def settle(self) -> MessageEntry:
        """Join the appended chunks into `text`."""
        if self.chunks:
            self.text = self.text + "".join(self.chunks)
            self.chunks.clear()
            self.chunk_chars = 0
        return self


@dataclass
class ToolCallEntry:
    """One tool call, shown as a single line that expands to its arguments and result."""

    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    state: ToolCallState = "pending"
    result: str | None = None
    progress: float | None = None
    total: float | None = None
    progress_message: str | None = None
    result_message_id: str | None = field(default=None, compare=False)


@dataclass
class NoticeEntry:
    """A turn that ended badly: failed (with the error) or cancelled."""

    kind: Literal["failed", "cancelled"]
    text: str


TranscriptEntry: TypeAlias = MessageEntry | ToolCallEntry | NoticeEntry | MarkEntry
