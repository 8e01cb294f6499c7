"""A conversation's settled exchanges, rendered for the wire once and reused on every request.

Why: DSPy renders every event of the history on every model request (its adapter formats each
field through a fresh pydantic `TypeAdapter`, lm15 then ingests every message and validates it,
and the engine writes each out again), about 0.2 ms per message. A thread whose window holds
3,000 messages spent 0.75 s of CPU per turn on that before the model saw a byte (`python -m
bench long_thread`, 2,000 turns). Earlier exchanges never change, so each is rendered once, by
DSPy's own adapter and lm15's own dialects (so the bytes are those DSPy would send:
tests/sidecar/llm/test_prefix.py compares whole request bodies), cached by its text, and put
into the request body by the engine, while DSPy formats only the live part of the history (the
author's pending message, the turn's tool calls and results).

How: `predict_step` hands the settled events to `settling(...)` (a context variable: the engine
runs under DSPy's stream, in the same context); `SplicingChatAdapter.format` records the
signature DSPy renders with (the one its tool-calling path prepared); the coalescing engines
put the rendered exchanges right after the system prompt (`openai_messages`,
`anthropic_turns`), or, for a non-streamed request, in front of lm15's messages
(`lm15_messages`).
"""

# DSPy ships no type information (no py.typed); its API is narrowed to typed values right here.
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

import dspy
from dspy import lm15
from dspy.adapters._legacy_type_markers import (
    _expand_legacy_custom_type_markers_in_chat_message as expand_markers,  # pyright: ignore[reportPrivateUsage]
)
from dspy.clients.lm15_boundary import request_kwargs
from dspy.lm15 import request_from_openai_chat

Event: TypeAlias = dict[str, Any]
Wire: TypeAlias = dict[str, Any]

CACHE_SIZE = 20_000
"""Rendered exchanges kept (about 1 KB each): a 128k-token model's window holds up to about
700 exchanges of short messages, so the windows of many long threads fit."""


@dataclass(slots=True)
class Settled:
    """The settled events of one planner step, and how DSPy renders the rest of it."""

    events: Sequence[Event]
    adapter: dspy.ChatAdapter
    signature: Any = None
    """The signature DSPy formats the history with, set by `SplicingChatAdapter.format`."""
    _shape: tuple[Any, ...] | None = field(default=None, repr=False)

    def shape(self) -> tuple[Any, ...]:
        """What an exchange's rendering depends on besides its text: the adapter's path and the
        fields of the signature (names and types).

        Raises:
            RuntimeError: DSPy did not format this step's messages (no signature recorded).
        """
        if self._shape is None:
            signature = self.signature
            if signature is None:
                raise RuntimeError("the settled history was not bound to DSPy's signature")
            inputs = tuple((k, str(v.annotation)) for k, v in signature.input_fields.items())
            outputs = tuple((k, str(v.annotation)) for k, v in signature.output_fields.items())
            native = bool(self.adapter.use_native_function_calling)
            self._shape = (type(self.adapter), native, inputs, outputs)
        return self._shape

    def chat_messages(self, event: Event) -> list[Wire]:
        """One event as DSPy's adapter writes it into its chat messages."""
        history = dspy.History(messages=[event])
        messages = self.adapter.format_conversation_history(
            self.signature, "history", {"history": history}
        )
        return [expand_markers(m) for m in messages]


_SETTLED: ContextVar[Settled | None] = ContextVar("atrium_settled_history", default=None)


@contextmanager
def settling(settled: Settled | None) -> Generator[None]:
    """Make `settled` the settled history of the model request made inside."""
    token = _SETTLED.set(settled)
    try:
        yield
    finally:
        _SETTLED.reset(token)


def current() -> Settled | None:
    """The settled history of the request being made, if it has one."""
    return _SETTLED.get()


class SplicingChatAdapter(dspy.ChatAdapter):
    """DSPy's chat adapter, recording the signature it renders with for the settled history."""

    def format(
        self, signature: type[dspy.Signature], demos: list[dict[str, Any]], inputs: dict[str, Any]
    ) -> list[dict[str, Any]]:
        settled = _SETTLED.get()
        if settled is not None:
            settled.signature = signature
        return super().format(signature, demos, inputs)


class _Rendered:
    """Rendered exchanges by (form, model, shape, text), least recently used dropped first."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._items: OrderedDict[tuple[Any, ...], Sequence[Any]] = OrderedDict()
        self._size = size
        self.renders = 0
        """How many exchanges were rendered (cache misses), for tests."""

    def each(
        self, form: str, model: str, settled: Settled, render: Callable[[Event], Sequence[Any]]
    ) -> list[Any]:
        """The settled exchanges in `form`, each rendered once (`render`) and then reused.
        Runs for every message of the window on every request: a lookup per exchange."""
        shape = settled.shape()
        items = self._items
        out: list[Any] = []
        for event in settled.events:
            key = (form, model, shape, event.get("request"), event.get("answer"))
            value = items.get(key)
            if value is None:
                value = items[key] = render(event)
                self.renders += 1
                if len(items) > self._size:
                    items.popitem(last=False)
            else:
                items.move_to_end(key)
            out.extend(value)
        return out

    def clear(self) -> None:
        self._items.clear()


RENDERED = _Rendered()


def _ingest(model: str, settled: Settled, event: Event) -> lm15.Request:
    """One exchange as DSPy's execution layer ingests its chat messages."""
    return request_from_openai_chat({"model": model, "messages": settled.chat_messages(event)})


def lm15_messages(settled: Settled, model: str) -> tuple[lm15.Message, ...]:
    """The settled exchanges as lm15 messages (what DSPy's ingest makes of them)."""

    def render(event: Event) -> Sequence[lm15.Message]:
        messages: tuple[lm15.Message, ...] = _ingest(model, settled, event).messages
        return messages

    return tuple(RENDERED.each("lm15", model, settled, render))


def with_settled(request: lm15.Request) -> lm15.Request:
    """`request` with the settled exchanges in front of its messages, for an engine that hands
    lm15's request on (a non-streamed request) rather than writing the body itself."""
    settled = _SETTLED.get()
    if settled is None:
        return request
    messages = lm15_messages(settled, request.model)
    return replace(request, messages=(*messages, *request.messages))


def openai_messages(settled: Settled, model: str) -> list[Wire]:
    """The settled exchanges as Chat Completions messages, as `request_kwargs` writes them."""

    def render(event: Event) -> Sequence[Wire]:
        messages: list[Wire] = request_kwargs(_ingest(model, settled, event), "chat")["messages"]
        return messages

    return RENDERED.each("openai", model, settled, render)


def splice_openai(messages: list[Wire], settled: Settled, model: str) -> list[Wire]:
    """`messages` (a request body's) with the settled exchanges after its system prompt."""
    at = 0
    while at < len(messages) and messages[at].get("role") in ("system", "developer"):
        at += 1
    return [*messages[:at], *openai_messages(settled, model), *messages[at:]]


def anthropic_turns(
    settled: Settled, model: str, write: Callable[[tuple[lm15.Message, ...]], list[Wire]]
) -> list[Wire]:
    """The settled exchanges as Messages API turns; `write` is the dialect's own writer of a
    request's `messages` (turns of one role in a row are joined by the caller, as ever)."""

    def render(event: Event) -> Sequence[Wire]:
        return write(_ingest(model, settled, event).messages)

    return RENDERED.each("anthropic", model, settled, render)
