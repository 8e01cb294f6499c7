"""A DSPy engine that streams Anthropic's Messages API cheaply, through DSPy's own lm15 client.

Why: measured with `python -m bench stream_anthropic` (20,000 five-character tokens from the
scripted Anthropic server at about 1,600 tokens/s, each consumer alone in its own process, the
2-core development machine idle), CPU per streamed token:

| consumer | CPU / token |
|---|---|
| LiteLLM 1.106 `acompletion(stream=True)`, streaming logging off (DSPy's LiteLLM engine) | 344 µs |
| the official `anthropic` SDK 2.14, `messages.create(stream=True)` | 89 µs |
| httpx lines + one `json.loads` per event | 68 µs |
| DSPy 3.4's native lm15 engine (lm15's Anthropic door, its stdlib async transport) | 53 µs |
| this engine | 39 µs |

LiteLLM's wrapper was the floor, as it was for OpenAI-compatible models. lm15, which comes with
DSPy, reads the stream for less than the official SDK or httpx do, and its Anthropic dialect
already maps a DSPy request (system prompt, history, tools, tool results) to the Messages API
and HTTP errors to the classes DSPy maps for every engine. So this engine is built on lm15; the
SDK (a new dependency that would still need both mappings) is not used. In the real sidecar
(`BENCH_STREAM_MODEL=anthropic/... python -m bench stream`, 20,000 tokens at 2,000 tokens/s):
49 µs per token and an 8 ms last-token lag, against 493 µs and 116 ms through DSPy's LiteLLM
engine; four such streams at once: 24 µs and 18 ms, against 467 µs and 16.8 s. The runs are in
bench/NOTES-stream.md.

What: `CoalescingAnthropicEngine` (an `AsyncEngine` in DSPy 3.4's terms) builds the request with
lm15's `AnthropicLM` dialect, sends it with lm15's `StdlibAsyncTransport`, and reads the reply's
server-sent events itself, the way `CoalescingOpenAIEngine` does (`_coalescing`). The request is
the one LiteLLM would send: the same address for an API base, LiteLLM's `max_tokens` for the
model when DSPy sets none, consecutive turns of one role sent as one.

- every event is decoded once with `json.loads`; text, thinking and tool-argument deltas of one
  content block that arrive in the same read window are joined into one lm15 delta event (the
  deltas lm15 would make, joined), so DSPy, LangGraph and the wire see one chunk per window;
- every other event (`message_start`, a `tool_use` block's start, `message_delta` with the stop
  reason and usage, errors) goes through lm15's own `parse_stream_events`, and lm15's stream
  coalescer merges the end events into one. DSPy assembles the response from these events as
  it does for its native engine: text, tool calls with their arguments, stop reason, usage.
- Anthropic counts the prompt's tokens in `message_start` and the answer's in `message_delta`;
  lm15 reads usage from `message_delta` only, so the prompt's counts are carried into it (as
  LiteLLM does).

Non-streamed calls (a subagent's turn) and every provider other than `anthropic/` and `openai/`
go through DSPy's LiteLLM engine unchanged.
"""

# DSPy ships no type information (no py.typed); its API is narrowed to typed values right here.
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Any, cast

import anyio
from dspy import lm15
from dspy._vendor.lm15.result import acoalesce_stream
from dspy._vendor.lm15.sse import SSEEvent
from dspy._vendor.lm15.transports import (
    ConnectTimeout,
    ReadTimeout,
    StdlibAsyncTransport,
    WriteTimeout,
)
from dspy._vendor.lm15.transports import TransportError as NetworkError
from dspy.clients._litellm import get_litellm
from dspy.clients.engines.litellm_engine import AsyncLiteLLMEngine

from sidecar.llm import _prefix
from sidecar.llm._coalescing import sse_data, track, windows

ANTHROPIC_PREFIX = "anthropic/"
_DEFAULT_BASE = "https://api.anthropic.com"
_MESSAGES_PATH = "/v1/messages"  # LiteLLM's suffix; lm15 appends "/messages" to its base URL

# The deltas joined within a window: their type, the field carrying the text, and the lm15
# delta lm15's dialect makes of one.
_JOINED: dict[str, tuple[str, Callable[[str, int], Any]]] = {
    "text_delta": ("text", lambda text, index: lm15.TextDelta(text=text, part_index=index)),
    "thinking_delta": (
        "thinking",
        lambda text, index: lm15.ThinkingDelta(text=text, part_index=index),
    ),
    "input_json_delta": (
        "partial_json",
        lambda text, index: lm15.ToolCallDelta(input=text, part_index=index),
    ),
}


def messages_base_url(api_base: str | None) -> str:
    """lm15's base URL (it appends `/messages`) for LiteLLM's `api_base` (it appends
    `/v1/messages` unless the address already ends with it), so both reach the same address.
    Without one, LiteLLM's environment variables, then Anthropic's own address."""
    base = (
        api_base
        or os.environ.get("ANTHROPIC_API_BASE")
        or os.environ.get("ANTHROPIC_BASE_URL")
        or _DEFAULT_BASE
    ).rstrip("/")
    return base.removesuffix(_MESSAGES_PATH) + "/v1"


class _Run:
    """Consecutive deltas of one kind for one content block, joined."""

    def __init__(self) -> None:
        self._key: tuple[str, int] | None = None
        self._parts: list[str] = []

    def add(self, kind: str, index: int, text: str) -> Any | None:
        """Add a delta; the previous run's event when this delta starts another run."""
        previous = self.take() if self._key != (kind, index) else None
        self._key = (kind, index)
        self._parts.append(text)
        return previous

    def take(self) -> Any | None:
        """The run as one lm15 delta event (None when empty); the run is emptied."""
        if self._key is None:
            return None
        kind, index = self._key
        text = "".join(self._parts)
        self._key = None
        self._parts.clear()
        return lm15.StreamDeltaEvent(delta=_JOINED[kind][1](text, index))


class _Dialect(lm15.AnthropicLM):
    """lm15's Anthropic dialect, sending consecutive turns of one role as one turn, as LiteLLM
    does (DSPy's tool results and its next prompt are two user turns in a row), with the
    settled history rendered once per exchange in front (`sidecar.llm._prefix`)."""

    def _payload(self, request: lm15.Request, stream: bool) -> dict[str, Any]:
        payload: dict[str, Any] = super()._payload(request, stream)
        written: list[dict[str, Any]] = payload["messages"]
        settled = _prefix.current()
        if settled is not None:
            plain = replace(
                request, system=None, tools=(), config=replace(request.config, cache=None)
            )

            def render(messages: tuple[lm15.Message, ...]) -> list[dict[str, Any]]:
                return super(_Dialect, self)._payload(replace(plain, messages=messages), stream)[
                    "messages"
                ]

            written = [*_prefix.anthropic_turns(settled, request.model, render), *written]
        turns: list[dict[str, Any]] = []
        for turn in written:
            if turns and turns[-1]["role"] == turn["role"]:
                turns[-1] = {**turns[-1], "content": [*turns[-1]["content"], *turn["content"]]}
            else:
                turns.append(turn)
        payload["messages"] = turns
        return payload


def _decode(data: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise lm15.ProviderError(f"the stream sent a malformed event: {exc}") from exc
    if not isinstance(value, dict):
        raise lm15.ProviderError(f"the stream sent an event that is not an object: {value!r}")
    return value  # pyright: ignore[reportUnknownVariableType]


class _StreamReader:
    """One stream's events, read once each: deltas joined into runs, the rest through lm15."""

    def __init__(self, dialect: _Dialect, request: lm15.Request) -> None:
        self._dialect = dialect
        self._request = request
        self._prompt_usage: dict[str, Any] = {}
        self.run = _Run()

    def read(self, data: str) -> Iterator[Any]:
        """The lm15 events one server-sent event's data makes (none while a run grows).

        Raises:
            lm15.ProviderError: the data is not a JSON object.
        """
        event = _decode(data)
        kind = event.get("type")
        delta = event.get("delta") if kind == "content_block_delta" else None
        delta_kind = delta.get("type") if isinstance(delta, dict) else None
        joined = _JOINED.get(delta_kind) if isinstance(delta_kind, str) else None
        if delta is not None and delta_kind is not None and joined is not None:
            text = delta.get(joined[0])
            index = event.get("index") or 0
            ended = self.run.add(delta_kind, index, text if isinstance(text, str) else "")
        else:
            ended = self.run.take()
        if ended is not None:
            yield ended
        if joined is not None or kind == "ping":
            return
        if kind == "message_start":
            self._prompt_usage = (event.get("message") or {}).get("usage") or {}
        elif kind == "message_delta" and self._prompt_usage:
            event["usage"] = {**self._prompt_usage, **(event.get("usage") or {})}
            data = json.dumps(event)
        yield from self._dialect.parse_stream_events(self._request, SSEEvent(None, data))


class CoalescingAnthropicEngine:
    """See the module docstring. `complete` is DSPy's LiteLLM engine's."""

    def __init__(self, *, api_key: str | None, api_base: str | None, timeout_s: float) -> None:
        options: dict[str, Any] = {"timeout": timeout_s}
        if api_key:
            options["api_key"] = api_key
        if api_base:
            options["api_base"] = api_base
        self._fallback = AsyncLiteLLMEngine(**options)
        self._api_key = api_key
        self._base_url = messages_base_url(api_base)
        self._transport = StdlibAsyncTransport(
            read_timeout=timeout_s, write_timeout=timeout_s, pool_timeout=timeout_s
        )
        self._dialect: _Dialect | None = None
        self._max_tokens: dict[str, int] = {}
        track(self)

    async def complete(self, request: lm15.Request) -> lm15.Response:
        return await self._fallback.complete(_prefix.with_settled(request))

    def _anthropic(self) -> _Dialect:
        """lm15's dialect, built on first use: without a key it reads `ANTHROPIC_API_KEY`, and
        raises `lm15.NotConfiguredError` (an authentication failure to DSPy) when that is unset."""
        if self._dialect is None:
            # No transport: the dialect only builds the request and reads events.
            self._dialect = _Dialect(
                api_key=self._api_key or None,
                base_url=self._base_url,
                transport=None,  # pyright: ignore[reportArgumentType]
            )
        return self._dialect

    def _wire_request(self, request: lm15.Request) -> lm15.Request:
        """`request` for the Messages API: the bare model name, and LiteLLM's `max_tokens` for
        the model when DSPy set none (the API requires one; lm15's default is lower)."""
        model = request.model.removeprefix(ANTHROPIC_PREFIX)
        config = request.config
        if config.max_tokens is None:
            limit = self._max_tokens.get(model)
            if limit is None:
                litellm = get_litellm(feature="Anthropic max_tokens")
                limit = self._max_tokens[model] = litellm.AnthropicConfig.get_max_tokens_for_model(
                    model
                )
            config = replace(config, max_tokens=limit)
        return replace(request, model=model, config=config)

    async def stream(self, request: lm15.Request) -> AsyncIterator[Any]:
        track(self)  # again after an `aclose`
        try:
            wire = self._wire_request(request)
            dialect = self._anthropic()
            async with self._transport.stream(dialect.build_request(wire, stream=True)) as response:
                try:
                    if response.status >= 400:
                        body = await response.read()
                        raise dialect.normalize_error(
                            response.status, body.decode(errors="replace")
                        )
                    events = cast(
                        "AsyncGenerator[Any]",
                        acoalesce_stream(self._events(wire, response), model=wire.model),
                    )
                    async with contextlib.aclosing(events):
                        async for event in events:
                            yield event
                finally:
                    # Hang up even under a cancelled scope, so a cancelled turn stops the model.
                    with anyio.CancelScope(shield=True):
                        await response.aclose()
        except (ConnectTimeout, ReadTimeout, WriteTimeout) as exc:  # LiteLLM's `Timeout` too
            raise lm15.TimeoutError(str(exc)) from exc
        except NetworkError as exc:
            raise lm15.TransportError(str(exc)) from exc

    async def _events(self, request: lm15.Request, body: Any) -> AsyncIterator[Any]:
        reader = _StreamReader(self._anthropic(), request)
        async with contextlib.aclosing(windows(aiter(body))) as reads:
            async for lines in reads:
                for data in sse_data(lines):
                    for event in reader.read(data.decode()):
                        yield event
                ended = reader.run.take()
                if ended is not None:
                    yield ended
                await asyncio.sleep(0)  # DSPy's consumer passes this window's text on now

    async def aclose(self) -> None:
        """Close the transport's connections (on the loop that used them); the engine stays
        usable: the next request opens a new transport."""
        transport, self._transport = self._transport, self._transport.copy()
        await transport.aclose()
