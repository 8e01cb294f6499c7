"""One planner step through DSPy: a streamed prediction, read back into plain values.

Imported lazily (uses DSPy). Everything DSPy returns is narrowed here, so `planner.py` handles
only Atrium's own types.
"""

# DSPy ships no type information (no py.typed); its API is narrowed to typed values right here.
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, cast

import dspy
from dspy.streaming import StreamListener, StreamResponse
from dspy.utils.callback import BaseCallback

from sidecar.llm._history import Event, PlannerInputs
from sidecar.llm._prefix import Settled, SplicingChatAdapter, settling
from sidecar.llm._program import Program, step_signature, to_dspy_tool
from sidecar.llm.types import TokenSink, ToolCallRequest, ToolSpec

_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class NoPredictionError(Exception):
    """The stream ended without a prediction (DSPy broke its contract)."""


class LMObserver(BaseCallback):
    """Keeps what the LM call returned or raised, for salvage and error classification.

    Streamify re-raises an LM failure `from None`, dropping its cause chain (where a refused
    connection hides), so the chain is captured here, at the LM boundary, while it is intact.
    """

    def __init__(self) -> None:
        self.text = ""
        self.chain: list[BaseException] = []

    def on_lm_end(
        self, call_id: str, outputs: Any | None, exception: BaseException | None = None
    ) -> None:
        if exception is not None:
            self.chain = _cause_chain(exception)
        for output in cast(list[object], outputs or []):
            text = (
                cast(dict[str, object], output).get("text") if isinstance(output, dict) else output
            )
            if isinstance(text, str):
                self.text = text


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What the model produced, as plain values; `streamed` is what `on_token` already got."""

    answer: str
    tool_calls: tuple[ToolCallRequest, ...]
    usage: dict[str, int]
    streamed: tuple[str, ...] = field(default=())


async def predict_step(
    program: Program,
    inputs: PlannerInputs,
    tools: Sequence[ToolSpec],
    on_token: TokenSink | None,
    observer: LMObserver,
) -> StepOutcome:
    """Run one prediction; answer text goes to `on_token` as it arrives (streamed), or, with
    no `on_token`, the reply comes whole.

    The LM, adapter and callbacks are set with `dspy.context` for this call only, so planners
    with different models run side by side. `observer` records the raw reply and, on failure,
    the LM error's cause chain.

    Raises:
        dspy.utils.exceptions.LMError, dspy.utils.exceptions.AdapterParseError: the call failed.
        NoPredictionError: DSPy's stream ended without a prediction.
    """
    signature = step_signature(program.native, tools, inputs.system_notes)
    settled, live = _split(program, inputs)
    kwargs: dict[str, Any] = {"history": dspy.History(messages=live)}
    if tools:
        kwargs["tools"] = [to_dspy_tool(t) for t in tools]
    if inputs.request is not None:
        kwargs["request"] = inputs.request
    streamed: list[str] = []
    prediction: dspy.Prediction | None = None
    with (
        dspy.context(  # pyright: ignore[reportUnknownMemberType]
            lm=program.lm,
            adapter=program.adapter,
            callbacks=[observer],
            track_usage=True,
            disable_history=True,  # the LM keeps no copy of prompts (or of anything key-bearing)
        ),
        settling(settled),
    ):
        if on_token is None:
            # Nobody watches the tokens (a subagent's turn): one plain request costs less
            # than a stream of chunks, and fifty subagents share one event loop.
            predictor = dspy.Predict(signature)
            prediction = await predictor.acall(**kwargs)  # pyright: ignore[reportUnknownMemberType]
        else:
            run = _streamify(dspy.Predict(signature))
            guard = AnswerStream()
            async with aclosing(run(**kwargs)) as items:
                async for item in items:
                    if isinstance(item, StreamResponse) and item.chunk:
                        if text := guard.push(item.chunk):
                            streamed.append(text)
                            await on_token(text)
                    elif isinstance(item, dspy.Prediction):
                        prediction = item
    if prediction is None:
        raise NoPredictionError("the model stream ended without a prediction")
    if on_token is not None:
        rest = _unstreamed_rest(prediction, streamed)
        if rest:
            streamed.append(rest)
            await on_token(rest)
    return _outcome(prediction, tuple(streamed))


def _split(program: Program, inputs: PlannerInputs) -> tuple[Settled | None, list[Event]]:
    """The settled events the engine renders and splices in (`sidecar.llm._prefix`), and the
    events DSPy formats itself: all of them for an engine that does not splice."""
    if not program.splices or not inputs.settled:
        return None, inputs.events
    events = inputs.events
    settled = Settled(events[: inputs.settled], program.adapter)
    return settled, events[inputs.settled :]


_MARKER = "[[ ##"
_MARKER_PREFIXES = tuple(_MARKER[:n] for n in range(len(_MARKER) - 1, 0, -1))


class AnswerStream:
    """DSPy's listener output made into exactly the text the parsed answer will hold.

    The parsed answer has LF line ends, no surrounding whitespace and no field markers, while
    the listener passes CRLF through and, when a model streams a few characters at a time,
    leaks the start of the `[[ ## completed ## ]]` marker. So CRLF becomes LF, and whatever
    might still turn out to be a line end, trailing whitespace or a marker is held until more
    text shows what it is; from a marker on nothing is passed. What is held at the end is
    covered by the parsed answer (`_unstreamed_rest`).
    """

    def __init__(self) -> None:
        self._held = ""
        self._ended = False

    def push(self, chunk: str) -> str:
        """Take the listener's next chunk; return the text that may be shown now."""
        if self._ended:
            return ""
        text = (self._held + chunk).replace("\r\n", "\n")
        marker = text.find(_MARKER)
        if marker >= 0:
            text = text[:marker]
            self._ended = True
        cut = len(text.rstrip())
        for prefix in _MARKER_PREFIXES:
            if text.endswith(prefix, 0, cut):
                cut = len(text[: cut - len(prefix)].rstrip())
                break
        self._held = text[cut:]
        return text[:cut]


def _unstreamed_rest(prediction: dspy.Prediction, streamed: list[str]) -> str:
    """The end of the answer the listener never passed on (it does not stream an answer that
    arrived in one chunk with its field markers), so the streamed text is the whole answer."""
    answer = cast(object, prediction.get("answer"))  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(answer, str):
        return ""
    sent = "".join(streamed)
    return answer[len(sent) :] if answer.startswith(sent) else ""


def _streamify(predictor: dspy.Predict) -> Callable[..., AsyncGenerator[object, None]]:
    """DSPy's streaming wrapper with a listener on the `answer` field (fresh per call)."""
    listener = StreamListener(signature_field_name="answer")
    # The listener knows adapters by class name; the planner's is DSPy's chat adapter, extended.
    identifiers = cast(dict[str, Any], getattr(listener, "adapter_identifiers"))  # noqa: B009
    identifiers[SplicingChatAdapter.__name__] = identifiers["ChatAdapter"]
    run = dspy.streamify(predictor, stream_listeners=[listener], is_async_program=True)
    return cast(Callable[..., AsyncGenerator[object, None]], run)


def _outcome(prediction: dspy.Prediction, streamed: tuple[str, ...]) -> StepOutcome:
    values = dict(cast(list[tuple[str, object]], prediction.items()))
    answer = values.get("answer")
    calls = values.get("tool_calls")
    requests: tuple[ToolCallRequest, ...] = ()
    if isinstance(calls, dspy.ToolCalls):
        requests = tuple(
            ToolCallRequest(
                id=call.id or f"call_{uuid.uuid4().hex[:24]}",  # text tool calls carry no id
                name=call.name,
                arguments=dict(call.args),
            )
            for call in calls.tool_calls
        )
    lm_usage = cast(object, prediction.get_lm_usage())  # pyright: ignore[reportUnknownMemberType]
    usage = _usage(lm_usage)
    text = answer if isinstance(answer, str) else ""
    return StepOutcome(answer=text, tool_calls=requests, usage=usage, streamed=streamed)


def _usage(lm_usage: object) -> dict[str, int]:
    """Sum the token counts DSPy tracked for this call (one entry per model)."""
    totals: dict[str, int] = {}
    if not isinstance(lm_usage, dict):
        return totals
    for entry in cast(dict[str, object], lm_usage).values():
        if not isinstance(entry, dict):
            continue
        counts = cast(dict[str, object], entry)
        for key in _USAGE_KEYS:
            value = counts.get(key)
            if isinstance(value, int):
                totals[key] = totals.get(key, 0) + value
    return totals


def _cause_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 20:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain
