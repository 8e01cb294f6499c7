"""The transcript of the selected thread: messages, the streaming answer, compact tool calls.

Plain Python: `load` builds it from `thread/get`, `apply` advances it by one run event. Views
subscribe to `reset`, `inserted(row)` and `updated(row)`; entries are only appended, never moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from desktop.models.emitter import Emitter
from sidecar.protocol import (
    ApprovalInterrupt,
    InterruptEvent,
    InterruptInfo,
    MessageEvent,
    MessageInfo,
    RunCancelled,
    RunEventBody,
    RunFailed,
    RunFinished,
    RunStarted,
    Token,
    ToolCall,
    ToolProgress,
    ToolResult,
)

ToolCallState: TypeAlias = Literal["pending", "awaiting_approval", "succeeded", "failed"]


@dataclass
class MessageEntry:
    """An author or agent message. `streaming` while tokens still arrive; `local` for the
    author's own message until the sidecar echoes it back with an id."""

    role: Literal["user", "assistant"]
    text: str
    message_id: str | None = None
    streaming: bool = False
    local: bool = False


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


@dataclass
class NoticeEntry:
    """A turn that ended badly: failed (with the error) or cancelled."""

    kind: Literal["failed", "cancelled"]
    text: str


TranscriptEntry: TypeAlias = MessageEntry | ToolCallEntry | NoticeEntry


class Transcript:
    """Entries of one thread, in display order."""

    def __init__(self) -> None:
        self.thread_id: str | None = None
        self._entries: list[TranscriptEntry] = []
        self.reset: Emitter[[]] = Emitter()
        self.inserted: Emitter[[int]] = Emitter()
        self.updated: Emitter[[int]] = Emitter()

    @property
    def entries(self) -> tuple[TranscriptEntry, ...]:
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, row: int) -> TranscriptEntry:
        return self._entries[row]

    def clear(self, thread_id: str | None = None) -> None:
        self.thread_id = thread_id
        self._entries = []
        self.reset.emit()

    def load(
        self,
        thread_id: str,
        messages: tuple[MessageInfo, ...],
        interrupts: tuple[InterruptInfo, ...] = (),
        last_error: str | None = None,
    ) -> None:
        """Rebuild from the conversation of record (and the thread's pending interrupts)."""
        self.thread_id = thread_id
        self._entries = []
        for message in messages:
            self._apply_message(message, notify=False)
        for interrupt in interrupts:
            if isinstance(interrupt, ApprovalInterrupt):
                self._await_approval(interrupt, notify=False)
        if last_error:
            self._entries.append(NoticeEntry("failed", last_error))
        self.reset.emit()

    def add_local_message(self, text: str) -> None:
        """Show the author's message at once, before the sidecar confirms it."""
        self._append(MessageEntry("user", text, local=True))

    def apply(self, event: RunEventBody) -> None:
        """Advance by one run event of this thread."""
        match event:
            case Token(text=text):
                self._append_token(text)
            case MessageEvent(message=message):
                self._apply_message(message)
            case ToolCall():
                self._apply_tool_call(event)
            case ToolProgress():
                self._apply_progress(event)
            case ToolResult(call_id=call_id, is_error=is_error, content=content):
                self._apply_result(call_id, is_error, content)
            case InterruptEvent(interrupt=ApprovalInterrupt() as interrupt):
                self._await_approval(interrupt)
            case RunStarted():
                self._resume_awaiting_calls()
            case RunFinished():
                self._finish_streaming()
            case RunFailed(error=error):
                self._finish_streaming()
                self._append(NoticeEntry("failed", error.message))
            case RunCancelled():
                self._finish_streaming()
                self._append(NoticeEntry("cancelled", "Cancelled"))
            case _:
                pass

    def _append(self, entry: TranscriptEntry) -> None:
        self._entries.append(entry)
        self.inserted.emit(len(self._entries) - 1)

    def _changed(self, row: int, notify: bool = True) -> None:
        if notify:
            self.updated.emit(row)

    def _streaming_row(self) -> int | None:
        for row in range(len(self._entries) - 1, -1, -1):
            entry = self._entries[row]
            if isinstance(entry, MessageEntry) and entry.streaming:
                return row
        return None

    def _append_token(self, text: str) -> None:
        last = self._entries[-1] if self._entries else None
        if isinstance(last, MessageEntry) and last.streaming:
            last.text += text
            self.updated.emit(len(self._entries) - 1)
        else:
            self._append(MessageEntry("assistant", text, streaming=True))

    def _finish_streaming(self) -> None:
        row = self._streaming_row()
        if row is not None:
            entry = self._entries[row]
            assert isinstance(entry, MessageEntry)
            entry.streaming = False
            self.updated.emit(row)

    def _message_row(self, message_id: str) -> int | None:
        for row, entry in enumerate(self._entries):
            if isinstance(entry, MessageEntry) and entry.message_id == message_id:
                return row
        return None

    def _apply_message(self, message: MessageInfo, notify: bool = True) -> None:
        if message.role == "tool":
            if message.tool_call_id is not None:
                self._apply_result(message.tool_call_id, message.is_error, message.content, notify)
            return
        if self._message_row(message.id) is None:
            if message.role == "user":
                self._adopt_user_message(message, notify)
            else:
                self._adopt_assistant_message(message, notify)
        for call in message.tool_calls:
            self._ensure_call(call.id, call.server, call.tool, call.arguments, notify)

    def _adopt_user_message(self, message: MessageInfo, notify: bool) -> None:
        for row, entry in enumerate(self._entries):
            if isinstance(entry, MessageEntry) and entry.local and entry.text == message.content:
                entry.local, entry.message_id = False, message.id
                self._changed(row, notify)
                return
        self._add(MessageEntry("user", message.content, message.id), notify)

    def _adopt_assistant_message(self, message: MessageInfo, notify: bool) -> None:
        row = self._streaming_row()
        if row is not None:
            entry = self._entries[row]
            assert isinstance(entry, MessageEntry)
            entry.text = message.content or entry.text
            entry.message_id, entry.streaming = message.id, False
            self._changed(row, notify)
        elif message.content:
            self._add(MessageEntry("assistant", message.content, message.id), notify)

    def _add(self, entry: TranscriptEntry, notify: bool) -> None:
        if notify:
            self._append(entry)
        else:
            self._entries.append(entry)

    def _call_row(self, call_id: str) -> int | None:
        for row, entry in enumerate(self._entries):
            if isinstance(entry, ToolCallEntry) and entry.call_id == call_id:
                return row
        return None

    def _ensure_call(
        self, call_id: str, server: str, tool: str, arguments: dict[str, Any], notify: bool = True
    ) -> tuple[int, ToolCallEntry]:
        row = self._call_row(call_id)
        if row is None:
            self._add(ToolCallEntry(call_id, server, tool, dict(arguments)), notify)
            row = len(self._entries) - 1
        entry = self._entries[row]
        assert isinstance(entry, ToolCallEntry)
        return row, entry

    def _apply_tool_call(self, event: ToolCall) -> None:
        row, entry = self._ensure_call(event.call_id, event.server, event.tool, event.arguments)
        entry.server, entry.tool, entry.arguments = event.server, event.tool, dict(event.arguments)
        self.updated.emit(row)

    def _apply_progress(self, event: ToolProgress) -> None:
        row = self._call_row(event.call_id)
        if row is None:
            return
        entry = self._entries[row]
        assert isinstance(entry, ToolCallEntry)
        entry.progress, entry.total = event.progress, event.total
        entry.progress_message = event.message
        self.updated.emit(row)

    def _apply_result(
        self, call_id: str, is_error: bool, content: str, notify: bool = True
    ) -> None:
        row, entry = self._ensure_call(call_id, "", call_id, {}, notify)
        entry.state = "failed" if is_error else "succeeded"
        entry.result = content
        self._changed(row, notify)

    def _await_approval(self, interrupt: ApprovalInterrupt, notify: bool = True) -> None:
        if interrupt.task_id is not None:
            return  # a subagent's call: its result reaches the run tree, never this transcript
        row, entry = self._ensure_call(
            interrupt.call_id, interrupt.server, interrupt.tool, interrupt.arguments, notify
        )
        if entry.result is None:
            entry.state = "awaiting_approval"
            self._changed(row, notify)

    def _resume_awaiting_calls(self) -> None:
        for row, entry in enumerate(self._entries):
            if isinstance(entry, ToolCallEntry) and entry.state == "awaiting_approval":
                entry.state = "pending"
                self.updated.emit(row)
