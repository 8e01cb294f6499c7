"""Sampling → a `sampling` approval interrupt, then the author's model answers.

A server's `sampling/createMessage` request is shown to the author as it is (messages, system
prompt, token limit). Allowed, it goes unchanged to the configured model as a plain completion
(no tools, no Atrium instructions: the server asked for its own conversation); denied, the server
gets an error. The model is reached through `Sampler`, injected by the composition root, so this
layer never imports the planner.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

from sidecar.host.questions import SamplingQuestion

log = logging.getLogger(__name__)

USER_REJECTED = -1  # the spec's example code for "User rejected sampling request"
MAX_TOKENS_CAP = 16_384


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """A sampling request as text: `messages` are (role, text) pairs."""

    messages: tuple[tuple[Literal["user", "assistant"], str], ...]
    system_prompt: str | None
    max_tokens: int
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SamplingReply:
    text: str
    model: str
    stop_reason: str = "endTurn"


class SamplingFailedError(Exception):
    """The model could not answer (no model configured, network, provider error)."""


class Sampler(Protocol):
    """Answers an approved sampling request with the author's model.

    Raises:
        SamplingFailedError: no answer could be had.
    """

    async def __call__(self, request: SamplingRequest) -> SamplingReply: ...


class ModelSettings(Protocol):
    """What a sampler needs of a model configuration (the planner's `LMConfig` fits)."""

    @property
    def model(self) -> str: ...
    @property
    def api_base(self) -> str | None: ...
    @property
    def api_key(self) -> str | None: ...


def sampling_request(params: Any) -> SamplingRequest:
    """The text view of `CreateMessageRequestParams`; non-text content is named, not sent."""
    messages: list[tuple[Literal["user", "assistant"], str]] = []
    for message in params.messages:
        content: Any = message.content
        blocks = cast(list[Any], content if isinstance(content, list) else [content])
        text = "\n".join(_block_text(b) for b in blocks)
        role: Literal["user", "assistant"] = "assistant" if message.role == "assistant" else "user"
        messages.append((role, text))
    return SamplingRequest(
        messages=tuple(messages),
        system_prompt=params.system_prompt,
        max_tokens=max(1, min(int(params.max_tokens), MAX_TOKENS_CAP)),
        temperature=params.temperature,
        stop_sequences=tuple(params.stop_sequences or ()),
    )


def _block_text(block: Any) -> str:
    text = getattr(block, "text", None)
    return str(text) if text is not None else f"[{getattr(block, 'type', 'unknown')} content]"


def sampling_payload(server: str, request: SamplingRequest, params: Any) -> SamplingQuestion:
    """The `sampling` interrupt payload (without id/run) shown to the author."""
    hints: list[str] = []
    preferences = getattr(params, "model_preferences", None)
    if preferences is not None:
        hints = [str(h.name) for h in preferences.hints or () if getattr(h, "name", None)]
    return {
        "kind": "sampling",
        "title": f"{server} asks to use your model",
        "body": f"{server} wants the configured model to answer this request.",
        "server": server,
        "messages": [{"role": role, "text": text} for role, text in request.messages],
        "system_prompt": request.system_prompt,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "stop_sequences": list(request.stop_sequences),
        "model_hints": hints,
    }


def create_message_result(reply: SamplingReply) -> Any:
    from mcp import types

    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=reply.text),
        model=reply.model,
        stop_reason=reply.stop_reason,
    )


def error_data(code: int, message: str) -> Any:
    from mcp import types

    return types.ErrorData(code=code, message=message)


class LMSampler:
    """A `Sampler` on the current model configuration, through DSPy's LM (LiteLLM engine).

    `settings` is asked on every request, so a model changed in the settings is used at once;
    None means no model is configured.
    """

    def __init__(
        self, settings: Callable[[], ModelSettings | None], *, timeout_s: float = 120.0
    ) -> None:
        self._settings = settings
        self._timeout_s = timeout_s

    async def __call__(self, request: SamplingRequest) -> SamplingReply:
        config = self._settings()
        if config is None:
            raise SamplingFailedError("no model is configured")
        try:
            return await self._complete(config, request)
        except SamplingFailedError:
            raise
        except Exception as exc:  # the provider boundary: any failure becomes an error reply
            log.warning("sampling with %s failed: %s", config.model, type(exc).__name__)
            detail = str(exc)
            if config.api_key:
                detail = detail.replace(config.api_key, "***")
            raise SamplingFailedError(f"the model failed: {detail[:500]}") from exc

    async def _complete(self, config: ModelSettings, request: SamplingRequest) -> SamplingReply:
        import anyio.to_thread

        lm, lm15 = await anyio.to_thread.run_sync(self._build, config)
        build = lm15.Message.assistant
        messages = tuple(
            build(text) if role == "assistant" else lm15.Message.user(text)
            for role, text in request.messages
        )
        lm_request = lm15.Request(
            model=config.model,
            messages=messages,
            system=request.system_prompt or None,
            config=lm15.Config(
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                stop=request.stop_sequences,
            ),
        )
        response = await lm.acall(lm_request)
        text = response.text or ""
        stop = "maxTokens" if response.finish_reason == "length" else "endTurn"
        return SamplingReply(text=text, model=str(response.model or config.model), stop_reason=stop)

    def _build(self, config: ModelSettings) -> tuple[Any, Any]:
        """The LM for one request (worker thread: the first DSPy import takes seconds)."""
        import dspy  # pyright: ignore[reportMissingTypeStubs]
        from dspy import lm15  # pyright: ignore[reportMissingTypeStubs]

        client: dict[str, Any] = {}
        if config.api_base:
            client["api_base"] = config.api_base
        if config.api_key:
            client["api_key"] = config.api_key
        lm = dspy.LM(
            config.model,
            engine="litellm",
            cache=False,
            num_retries=0,
            timeout=self._timeout_s,
            **client,
        )
        return lm, lm15
