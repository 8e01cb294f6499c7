"""Numbering, persisting and publishing one run's events; streamed text is coalesced.

A model streams hundreds to thousands of tokens a second, and one `run/event` per token costs
the sidecar and the window far more than the text itself. `RunEmitter.token` coalesces: the
first token after a quiet spell goes out at once; tokens arriving within `TOKEN_WINDOW_S` of the
last sent token event are joined into the next one, which leaves when the window closes or when
the pending text reaches `TOKEN_MAX_CHARS`. Any other event sends the pending text first, so the
order of events is kept, and nothing already handed to `token` is ever dropped: a cancelled run
sends its pending text before `run_cancelled`.

A subagent's streamed text relayed under its task (its own `token`s, or a strong agent's
`message_delta` events, which arrive as `tool_progress`) coalesces the same way, into one event
of the same shape per window; text of another stream first sends what is pending.

Back-pressure: when the sink reports that the wire is congested (a `FlowGate`, e.g. the stdio
writer while the window is not reading), pending text is held and keeps growing by its own size
only (not by one frame per token) until the gate calls back; then it leaves as one event.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast, runtime_checkable

from sidecar.protocol import MessageEvent, RunEventBody, RunEventParams, SubagentEvent, Token
from sidecar.store import Store

EventSink = Callable[[RunEventParams], None]

TOKEN_WINDOW_S = 0.012
TOKEN_MAX_CHARS = 16 * 1024

# Token events are the stream of the answer, which persist writes whole; storing each token
# would make a turn's storage grow with its length for nothing.
# A subagent's own events are in its sub-thread's conversation already.
_EPHEMERAL = frozenset({"token", "tool_progress", "subagent_event"})
MAX_STORED_PER_TASK = 2000
"""A run keeps at most this many of a task's own events (`subagent_event`, streamed text not
counted): what the team did comes back after a reopen or a restart, within a bound."""


@runtime_checkable
class FlowGate(Protocol):
    """A wire that can say it is full, and call back once it has room again."""

    def congested(self) -> bool: ...

    def when_ready(self, callback: Callable[[], None]) -> None: ...


@runtime_checkable
class GatedSink(FlowGate, Protocol):
    """An event sink that is also the flow gate of the wire it writes to."""

    def __call__(self, params: RunEventParams) -> None: ...


class GatedEventSink:
    """An event sink paired with the flow gate of the wire it ends on."""

    def __init__(self, sink: EventSink, gate: FlowGate) -> None:
        self._sink = sink
        self._gate = gate

    def __call__(self, params: RunEventParams) -> None:
        self._sink(params)

    def congested(self) -> bool:
        return self._gate.congested()

    def when_ready(self, callback: Callable[[], None]) -> None:
        self._gate.when_ready(callback)


@dataclass(frozen=True, slots=True)
class _Stream:
    """One stream of text that coalesces: the run's answer, or one subagent's (its own tokens,
    or a strong agent's `message_delta`s relayed as progress)."""

    key: tuple[object, ...]
    template: SubagentEvent | None = None

    def event(self, text: str) -> RunEventBody:
        template = self.template
        if template is None:
            return Token.model_construct(text=text)
        inner = dict(template.event)
        if inner.get("type") == "token":
            inner["text"] = text
        else:
            delta = {"type": "message_delta", "text": text, "channel": self.key[-1]}
            inner["message"] = json.dumps(delta, ensure_ascii=False)
        return SubagentEvent.model_construct(
            task_id=template.task_id,
            plan_id=template.plan_id,
            sub_thread_id=template.sub_thread_id,
            event=inner,
        )


_ANSWER = _Stream(("answer",))
_DELTA_KEYS = frozenset({"type", "text", "channel"})


def _subagent_piece(event: SubagentEvent) -> tuple[_Stream, str] | None:
    """The stream and text of a subagent event that only carries streamed text, else None."""
    inner = event.event
    where = (event.task_id, event.sub_thread_id)
    text = inner.get("text")
    if inner.get("type") == "token" and isinstance(text, str):
        return _Stream(("token", *where), event), text
    message = inner.get("message")
    if inner.get("type") != "tool_progress" or not isinstance(message, str):
        return None
    if '"message_delta"' not in message:  # cheap refusal before parsing
        return None
    try:
        delta: object = json.loads(message)
    except ValueError:
        return None
    if not isinstance(delta, dict):
        return None
    fields = cast(dict[str, object], delta)
    text, channel = fields.get("text"), fields.get("channel", "text")
    if fields.get("type") != "message_delta" or not fields.keys() <= _DELTA_KEYS:
        return None
    if not isinstance(text, str) or not isinstance(channel, str):
        return None
    return _Stream(("delta", *where, inner.get("call_id"), channel), event), text


class RunEmitter:
    def __init__(
        self,
        store: Store,
        sink: EventSink,
        run_id: str,
        thread_id: str,
        *,
        gate: FlowGate | None = None,
        window_s: float = TOKEN_WINDOW_S,
        max_chars: int = TOKEN_MAX_CHARS,
        background: bool = False,
    ) -> None:
        self._store = store
        self._sink = sink
        self.run_id = run_id
        self.thread_id = thread_id
        self.background = background
        self._seq = 0
        self._gate = gate if gate is not None else (sink if isinstance(sink, GatedSink) else None)
        self._window_s = window_s
        self._max_chars = max_chars
        self._pending: list[str] = []
        self._pending_chars = 0
        self._stream: _Stream = _ANSWER  # whose text is pending
        self._next_send = 0.0  # monotonic time before which a token waits for company
        self._timer: asyncio.TimerHandle | None = None
        self._waiting_on_gate = False
        self._unrecorded: list[str] = []  # answer text no `message` event has recorded yet
        self._kept: dict[str, int] = {}  # stored events per task (see MAX_STORED_PER_TASK)

    def __call__(self, event: RunEventBody) -> None:
        if isinstance(event, Token):
            self.token(event.text)
            return
        if isinstance(event, SubagentEvent) and (piece := _subagent_piece(event)) is not None:
            self._add(*piece)
            return
        self.flush()
        self._publish(event)

    def token(self, text: str) -> None:
        """Stream answer text: sent now when the wire is idle, else joined to the next event."""
        self._unrecorded.append(text)
        self._add(_ANSWER, text)

    def unrecorded_answer(self) -> str:
        """The answer text streamed (or about to be) since the last assistant message was
        recorded: what the author saw of an answer that a stop cut short."""
        return "".join(self._unrecorded)

    def _add(self, stream: _Stream, text: str) -> None:
        if not text:
            return
        if self._pending and stream.key != self._stream.key:
            self.flush()  # another stream's text: what is pending goes first, order is kept
        self._stream = stream
        self._pending.append(text)
        self._pending_chars += len(text)
        if self._waiting_on_gate:
            return
        full = self._pending_chars >= self._max_chars
        if self._timer is not None and not full:
            return
        now = time.monotonic()
        if now >= self._next_send or full:
            if not self._held_by_gate():
                self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(
                self._next_send - now, self._on_window_closed
            )

    def flush(self) -> None:
        """Send the pending text now (before another event, or at the end of the run)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            self._send_pending(time.monotonic())

    def _on_window_closed(self) -> None:
        self._timer = None
        if self._held_by_gate():
            return
        if self._pending:
            self._send_pending(time.monotonic())

    def _held_by_gate(self) -> bool:
        """True (and a callback registered) while the wire is congested."""
        gate = self._gate
        if gate is None or not gate.congested():
            return False
        if not self._waiting_on_gate:
            self._waiting_on_gate = True
            gate.when_ready(self._on_gate_ready)
        return True

    def _on_gate_ready(self) -> None:
        self._waiting_on_gate = False
        if self._timer is None and self._pending:
            self._send_pending(time.monotonic())

    def _send_pending(self, now: float) -> None:
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        self._next_send = now + self._window_s
        self._publish(self._stream.event(text))

    def _publish(self, event: RunEventBody) -> None:
        # Built without validation: every event here is already a typed wire model.
        params = RunEventParams.model_construct(
            run_id=self.run_id,
            thread_id=self.thread_id,
            seq=self._seq,
            event=event,
            background=self.background,
        )
        self._seq += 1
        if (
            isinstance(event, MessageEvent)
            and event.message.role == "assistant"
            and event.message.content
        ):
            self._unrecorded.clear()
        if event.type not in _EPHEMERAL or self._keeps(event):
            self._store.add_run_event(self.run_id, params.seq, event.type, event.model_dump_json())
        self._sink(params)

    def _keeps(self, event: RunEventBody) -> bool:
        """A task's event is stored (within its bound); its streamed text is not."""
        if not isinstance(event, SubagentEvent) or event.event.get("type") == "token":
            return False
        kept = self._kept.get(event.task_id, 0)
        if kept >= MAX_STORED_PER_TASK:
            return False
        self._kept[event.task_id] = kept + 1
        return True
