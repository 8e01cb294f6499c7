"""A DSPy engine that streams OpenAI-compatible chat completions cheaply, by the openai SDK;
and the choice, per model, between it, `CoalescingAnthropicEngine` and DSPy's LiteLLM engine.

Why: measured with `python -m bench stream` on the 2-core development machine, the sidecar spent
about 580 µs of CPU per streamed token through DSPy's LiteLLM engine (LiteLLM's stream wrapper,
then DSPy's listener, LangGraph's stream and the wire, once per token), where the openai SDK
alone spends about 100 µs per chunk of the same stream. `litellm.disable_streaming_logging`
and coalescing on the wire do not move that floor: LiteLLM's own per-chunk work stays.
After: 104 µs per token at 2,000 tokens/s, 100,000 tokens (0.61x the SDK's own per-chunk cost
in the same run), 41 µs at 5,000/s and 24 µs at 10,000/s, as each window's fixed cost is shared
by more tokens (2026-11-25, load average 1-2). The figures before and after, with profiles, are
in bench/NOTES-stream.md. Anthropic's endpoint has an engine of its own, `_anthropic_engine`.

What: `CoalescingOpenAIEngine` (an `AsyncEngine` in DSPy 3.4's terms) sends the request through
the official openai SDK (its client, authentication, base URL, timeouts and HTTP errors) but reads
the reply's server-sent events itself:

- every `data:` line is decoded once with `json.loads`; a chunk that carries only answer text is
  not turned into any object: its text is joined with the text of the chunks read with it;
- what was read is passed on at most once every `_coalescing.READ_WINDOW_S`: the first read
  after a quiet spell at once, later ones with what arrived meanwhile. So DSPy's stream listener,
  LangGraph and the wire see one chunk per window, however fast the model streams, and nothing
  is held back longer than one window;
- any other chunk (tool-call fragments, the finish reason, usage) first releases the joined
  text, then goes through DSPy's own chunk mapping (`_ChatStream` of its LiteLLM engine), so the
  assembled response is exactly what DSPy's LiteLLM engine would assemble.

Non-streamed calls (a subagent's turn) and every provider other than `openai/` and `anthropic/`
go through DSPy's LiteLLM engine unchanged.
"""

# DSPy ships no type information (no py.typed); its API is narrowed to typed values right here.
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import openai
from dspy import lm15
from dspy.clients._litellm import get_litellm
from dspy.clients.engines import litellm_engine
from dspy.clients.engines.litellm_engine import AsyncLiteLLMEngine, LiteLLMEngine
from dspy.clients.engines.litellm_errors import to_lm15_error
from dspy.clients.lm15_boundary import request_kwargs

from sidecar.llm import _prefix
from sidecar.llm._anthropic_engine import ANTHROPIC_PREFIX, CoalescingAnthropicEngine
from sidecar.llm._coalescing import Lines, sse_data, track, windows

# DSPy's own mapping of OpenAI chunks to its stream events (private, but it is what its LiteLLM
# engine assembles responses with; reusing it keeps the two engines' responses identical).
_ChatStream: Any = getattr(litellm_engine, "_ChatStream")  # noqa: B009

_OPENAI_PREFIX = "openai/"
_TEXT_DELTA_KEYS = frozenset({"content", "role"})


def streams_natively(model: str) -> bool:
    """True for models a coalescing engine streams (LiteLLM's `openai/` and `anthropic/`)."""
    return model.startswith((_OPENAI_PREFIX, ANTHROPIC_PREFIX))


class DeclaredLiteLLMEngine(LiteLLMEngine):
    """DSPy's sync LiteLLM engine (required beside an async one, unused by the planner) carrying
    the model's capabilities: DSPy reads them from a custom engine, not from LiteLLM's model map,
    and the adapter sends native tools only to a model said to support function calling."""

    def __init__(self, capabilities: Capabilities, **options: Any) -> None:
        super().__init__(**options)
        self.supports_function_calling = capabilities.function_calling
        self.supports_reasoning = capabilities.reasoning
        self.supports_response_schema = capabilities.response_schema
        self.supported_params = capabilities.supported_params


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What LiteLLM's model map says of a model (read from a LiteLLM-backed `dspy.LM`)."""

    function_calling: bool = False
    reasoning: bool = False
    response_schema: bool = False
    supported_params: frozenset[str] = frozenset()


def build_engines(
    model: str,
    capabilities: Capabilities,
    *,
    api_key: str | None,
    api_base: str | None,
    timeout_s: float,
) -> tuple[DeclaredLiteLLMEngine, CoalescingOpenAIEngine | CoalescingAnthropicEngine]:
    """The sync engine DSPy requires and the async one the planner streams `model` through
    (a `streams_natively` model)."""
    options: dict[str, Any] = {"timeout": timeout_s}
    if api_key:
        options["api_key"] = api_key
    if api_base:
        options["api_base"] = api_base
    engine = (
        CoalescingAnthropicEngine if model.startswith(ANTHROPIC_PREFIX) else CoalescingOpenAIEngine
    )
    return DeclaredLiteLLMEngine(capabilities, **options), engine(
        api_key=api_key, api_base=api_base, timeout_s=timeout_s
    )


class _TextRun:
    """Answer text of consecutive text-only chunks, joined, and the first of them as a shape."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.shape: dict[str, Any] | None = None

    def add(self, chunk: dict[str, Any], text: str) -> None:
        if self.shape is None:
            self.shape = chunk
        self.parts.append(text)

    def take(self) -> dict[str, Any] | None:
        """One chunk with all the text, or None when there is none; the run is emptied."""
        shape = self.shape
        if shape is None:
            return None
        text = "".join(self.parts)
        self.parts.clear()
        self.shape = None
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
        return {**shape, "choices": [choice]}


def _text_only(chunk: dict[str, Any]) -> str | None:
    """The text of a chunk that carries nothing but answer text, else None."""
    choices = chunk.get("choices")
    if chunk.get("usage") or not isinstance(choices, list) or len(choices) != 1:  # pyright: ignore[reportUnknownArgumentType]
        return None
    choice: Any = choices[0]
    if not isinstance(choice, dict) or choice.get("finish_reason") is not None:  # pyright: ignore[reportUnknownMemberType]
        return None
    delta: Any = choice.get("delta")  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(delta, dict) or not delta.keys() <= _TEXT_DELTA_KEYS:  # pyright: ignore[reportUnknownMemberType]
        return None
    text: Any = delta.get("content")  # pyright: ignore[reportUnknownMemberType]
    return text if isinstance(text, str) else None


class _Fed:
    """What the codec was fed, kept small: consecutive text-only chunks are held as one shape and
    their texts (strings, which the garbage collector does not track). A 100,000-token answer
    fed one chunk per window kept thousands of chunk dicts alive until the turn ended, and with
    four such streams the collector's full passes over them stalled the event loop for 100-360 ms
    each (measured with `python -m bench stream`)."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any] | _TextRun] = []

    def add(self, chunk: dict[str, Any]) -> None:
        self.items.append(chunk)

    def add_text(self, chunk: dict[str, Any], text: str) -> None:
        last = self.items[-1] if self.items else None
        if not isinstance(last, _TextRun):
            last = _TextRun()
            self.items.append(last)
        last.add(chunk, text)

    def chunks(self) -> list[dict[str, Any]]:
        """The stream's chunks, consecutive text-only ones joined into one."""
        out: list[dict[str, Any]] = []
        for item in self.items:
            chunk = item.take() if isinstance(item, _TextRun) else item
            if chunk is not None:
                out.append(chunk)
        return out


class _Counted(list[Any]):
    """Stands in for `_ChatStream.chunks` while the stream runs. DSPy's codec appends every chunk
    it is fed (as a LiteLLM object of a dozen tracked parts) and reads only the list's length
    (to number citations); this engine rebuilds the chunks from `_Fed` for the final response,
    so keeping them would only feed the garbage collector (see `_Fed`).
    tests/sidecar/llm/test_stream_engine.py fails when the codec stops appending to `chunks`."""

    def __init__(self) -> None:
        super().__init__()
        self._count = 0

    def append(self, item: Any) -> None:
        self._count += 1

    def __len__(self) -> int:
        return self._count


def _sse_chunks(lines: Lines) -> Iterator[dict[str, Any] | None]:
    """The JSON chunks of `data:` lines; None for `[DONE]`."""
    for data in sse_data(lines):
        if data == b"[DONE]":
            yield None
            continue
        try:
            value = json.loads(data.decode())  # str: json skips its encoding detection
        except ValueError as exc:
            raise lm15.ProviderError(f"the stream sent a malformed event: {exc}") from exc
        if isinstance(value, dict):
            if "error" in value:
                raise lm15.ProviderError(f"the stream reported an error: {value['error']}")
            yield value


class CoalescingOpenAIEngine:
    """See the module docstring. `complete` is DSPy's LiteLLM engine's."""

    def __init__(self, *, api_key: str | None, api_base: str | None, timeout_s: float) -> None:
        options: dict[str, Any] = {"timeout": timeout_s}
        if api_key:
            options["api_key"] = api_key
        if api_base:
            options["api_base"] = api_base
        self._fallback = AsyncLiteLLMEngine(**options)
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "none", base_url=api_base or None, timeout=timeout_s, max_retries=0
        )
        track(self)

    async def complete(self, request: lm15.Request) -> lm15.Response:
        return await self._fallback.complete(_prefix.with_settled(request))

    async def stream(self, request: lm15.Request) -> AsyncIterator[Any]:
        body = request_kwargs(request, "chat")
        settled = _prefix.current()
        if settled is not None:
            body["messages"] = _prefix.splice_openai(body["messages"], settled, request.model)
        body["stream_options"] = {"include_usage": True}
        model = request.model.removeprefix(_OPENAI_PREFIX)
        codec = _ChatStream(request)
        codec.chunks = _Counted()
        fed = _Fed()  # what the codec got, as dicts
        try:
            # The body goes as `extra_body`: the SDK would otherwise walk every message against
            # its TypedDict annotations (most of a long thread's CPU per turn), and it is
            # already in the provider's wire format.
            async with self._client.chat.completions.with_streaming_response.create(
                model=model, messages=[], stream=True, extra_body=body
            ) as response:
                try:
                    raw = response.http_response.aiter_raw()
                    async for event in self._events(raw, codec, fed):
                        yield event
                finally:
                    # Close the connection even under a cancelled scope, so a cancelled turn
                    # hangs up on the model at once.
                    with anyio.CancelScope(shield=True):
                        await response.close()
        except (lm15.LM15Error, asyncio.CancelledError):
            raise
        except openai.APITimeoutError as exc:
            raise lm15.TimeoutError(str(exc)) from exc
        except openai.APIConnectionError as exc:
            raise lm15.TransportError(str(exc)) from exc
        except openai.APIError as exc:
            raise to_lm15_error(exc, model=request.model, provider="openai") from exc
        # Let DSPy's listener pass the last text on before the response is assembled.
        await asyncio.sleep(0)
        litellm = get_litellm(feature="LiteLLM engine streaming")
        # LiteLLM's chunk builder costs about half a millisecond per chunk: it gets the text
        # chunks joined into one (the other chunks as they came), not one per window.
        codec.chunks = [litellm.ModelResponseStream(**chunk) for chunk in fed.chunks()]
        yield codec.finish(litellm)

    async def _events(self, raw: AsyncIterator[bytes], codec: Any, fed: _Fed) -> AsyncIterator[Any]:
        litellm = get_litellm(feature="LiteLLM engine streaming")
        text = _TextRun()
        async with contextlib.aclosing(windows(raw)) as reads:
            async for lines in reads:
                done = False
                for chunk in _sse_chunks(lines):
                    if chunk is None:
                        done = True
                        break
                    piece = _text_only(chunk)
                    if piece is not None:
                        text.add(chunk, piece)
                        continue
                    joined = text.take()
                    if joined is not None:
                        for event in self._feed_text(codec, fed, joined, litellm):
                            yield event
                    fed.add(chunk)
                    for event in codec.feed(litellm.ModelResponseStream(**chunk)):
                        yield event
                joined = text.take()
                if joined is not None:
                    for event in self._feed_text(codec, fed, joined, litellm):
                        yield event
                if done:
                    break
                await asyncio.sleep(0)  # DSPy's consumer passes this window's text on now

    @staticmethod
    def _feed_text(codec: Any, fed: _Fed, joined: dict[str, Any], litellm: Any) -> Iterator[Any]:
        fed.add_text(joined, joined["choices"][0]["delta"]["content"])
        yield from codec.feed(litellm.ModelResponseStream(**joined))

    async def aclose(self) -> None:
        """Close the SDK's connections (on the loop that used them); the engine stays usable."""
        await self._client.close()
