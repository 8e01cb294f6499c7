"""Map DSPy / LiteLLM failures to `PlannerError` codes (imported lazily: uses DSPy).

Stable codes the graph may branch on:

- `unreachable`: no answer from the server (connection refused, DNS, dropped connection)
- `timeout`: the request or the whole decision took too long
- `no_key`: no API key is set for a provider that needs one
- `auth`: the key is wrong, or has no quota
- `rate_limited`: the provider asks to slow down
- `context_window`: the conversation is too long for the model
- `model_error`: the provider failed or rejected the request (5xx, bad request, unknown model)
- `bad_output`: the model answered with something the planner cannot use
- `cut_off`: the answer stopped partway (the stream ended, or the connection dropped, before
  the model finished)

Each headline names the cause the author can act on: a stream that ended early is not the
model's fault (no "more capable model"), a missing key is not a wrong model name.
"""

# DSPy ships no type information (no py.typed).
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import socket
from collections.abc import Sequence

from dspy.utils.exceptions import (
    AdapterParseError,
    ContextWindowExceededError,
    LMAuthError,
    LMBillingError,
    LMError,
    LMNotConfiguredError,
    LMRateLimitError,
    LMStreamAssemblyError,
    LMTimeoutError,
    LMTransportError,
)

from sidecar.llm._step import NoPredictionError
from sidecar.llm.types import PlannerError

UNREACHABLE = "unreachable"
TIMEOUT = "timeout"
AUTH = "auth"
NO_KEY = "no_key"
RATE_LIMITED = "rate_limited"
CONTEXT_WINDOW = "context_window"
MODEL_ERROR = "model_error"
BAD_OUTPUT = "bad_output"
CUT_OFF = "cut_off"

DETAIL_LIMIT = 4000  # characters of the underlying error kept for "Details"

# What `DspyPlanner.decide` turns into a `PlannerError` (anything else is a bug and propagates).
MODEL_FAILURES: tuple[type[Exception], ...] = (LMError, AdapterParseError, NoPredictionError)

_CODES: tuple[tuple[type[BaseException], str], ...] = (
    (AdapterParseError, BAD_OUTPUT),
    (NoPredictionError, CUT_OFF),
    (LMStreamAssemblyError, CUT_OFF),
    (LMTimeoutError, TIMEOUT),
    (LMTransportError, UNREACHABLE),
    (LMAuthError, AUTH),
    (LMBillingError, AUTH),
    (LMNotConfiguredError, AUTH),
    (LMRateLimitError, RATE_LIMITED),
    (ContextWindowExceededError, CONTEXT_WINDOW),
)

# Transport errors of the clients LiteLLM drives (openai SDK, httpx, aiohttp), matched by class
# name so this module needs none of them imported (or even installed).
_CONNECTION_ERROR_NAMES = frozenset(
    {"APIConnectionError", "ConnectError", "RemoteProtocolError", "ClientConnectionError"}
)

# How providers (through LiteLLM and the SDKs) say that no key was given at all, as opposed to a
# key they refused; only consulted when Atrium indeed sent none.
_MISSING_KEY_WORDS = (
    "missing credentials",
    "no credential",
    "api key is missing",
    "missing anthropic api key",
    "api_key client option must be set",
)

# What the author reads: what is wrong, then what to do (the raw text goes to `details`).
_SUMMARIES = {
    UNREACHABLE: "The model server could not be reached",
    TIMEOUT: "The model took too long to answer",
    AUTH: "The model provider rejected the API key",
    NO_KEY: "No API key is set for the model",
    RATE_LIMITED: "The model provider is rate limiting requests",
    CONTEXT_WINDOW: "The conversation is too long for the model",
    MODEL_ERROR: "The model provider reported an error",
    BAD_OUTPUT: "The model's answer could not be understood",
    CUT_OFF: "The model's answer was cut off before it was complete",
}

_HINTS = {
    UNREACHABLE: "check the API base in Settings → Model and that the server runs, then Retry",
    TIMEOUT: "Retry, or choose a faster model in Settings → Model",
    AUTH: "check the key in Settings → Model",
    NO_KEY: "add one in Settings → Model",
    RATE_LIMITED: "wait a minute, then Retry",
    CONTEXT_WINDOW: (
        "start a new thread, or choose a model with a larger context in Settings → Model"
    ),
    MODEL_ERROR: "check the model name in Settings → Model, then Retry",
    BAD_OUTPUT: "Retry, or choose a more capable model in Settings → Model",
    CUT_OFF: "Retry; if it keeps happening, check the network or the model server",
}


def summary_line(code: str) -> str:
    """One line for the author: what is wrong and what to do."""
    message = _SUMMARIES.get(code, "The model failed")
    hint = _HINTS.get(code)
    return f"{message}: {hint}" if hint else message


def classify(
    exc: BaseException,
    lm_chain: Sequence[BaseException] = (),
    *,
    streamed: bool = False,
    has_key: bool = True,
) -> str:
    """The stable code for `exc`; `lm_chain` is the LM error's cause chain, if captured.

    `streamed`: part of the answer had already arrived, so a dropped connection cut the answer
    off (the server was reached). `has_key`: whether a key was sent; without one, a refusal
    or a provider's "missing credentials" is the missing key, not the key or the model name."""
    code = _base_code(exc, lm_chain)
    if streamed and code == UNREACHABLE:
        return CUT_OFF
    if not has_key and (code == AUTH or _names_missing_key([exc, *lm_chain])):
        return NO_KEY
    return code


def _base_code(exc: BaseException, lm_chain: Sequence[BaseException]) -> str:
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    if isinstance(exc, LMError) and _connection_failed([exc, *lm_chain]):
        # LiteLLM reports a refused or dropped connection as a 500 InternalServerError.
        return UNREACHABLE
    return MODEL_ERROR


def to_planner_error(
    exc: BaseException,
    lm_chain: Sequence[BaseException] = (),
    secret: str | None = None,
    *,
    streamed: bool = False,
) -> PlannerError:
    """A `PlannerError` with a stable code and a short message that never contains `secret`
    (no `secret`: no key was sent)."""
    code = classify(exc, lm_chain, streamed=streamed, has_key=bool(secret))
    return planner_error(code, _detail(exc), secret)


def planner_error(code: str, detail: str, secret: str | None = None) -> PlannerError:
    """A `PlannerError` whose message is the code's one-line summary and hint; `detail` (made
    secret-free) goes to `details`."""
    if secret:
        detail = detail.replace(secret, "***")
    return PlannerError(code, summary_line(code), detail or None)


def _detail(exc: BaseException) -> str:
    """The error's own text (bounded), for "Details"."""
    if isinstance(exc, AdapterParseError):
        return "the reply did not follow the expected format"
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"


def _names_missing_key(chain: Sequence[BaseException]) -> bool:
    text = " ".join(str(exc) for exc in chain).lower()
    return any(words in text for words in _MISSING_KEY_WORDS)


def _connection_failed(chain: Sequence[BaseException]) -> bool:
    for exc in chain:
        if isinstance(exc, ConnectionError | socket.gaierror):
            return True
        names = {cls.__name__ for cls in type(exc).__mro__}
        if names & _CONNECTION_ERROR_NAMES:
            return True
    return False
