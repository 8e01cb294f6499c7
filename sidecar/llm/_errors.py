"""Map DSPy / LiteLLM failures to `PlannerError` codes (imported lazily: uses DSPy).

Stable codes the graph may branch on:

- `unreachable`: no answer from the server (connection refused, DNS, dropped connection)
- `timeout`: the request or the whole decision took too long
- `auth`: the key is missing, wrong, or has no quota
- `rate_limited`: the provider asks to slow down
- `context_window`: the conversation is too long for the model
- `model_error`: the provider failed or rejected the request (5xx, bad request, unknown model)
- `bad_output`: the model answered with something the planner cannot use
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
RATE_LIMITED = "rate_limited"
CONTEXT_WINDOW = "context_window"
MODEL_ERROR = "model_error"
BAD_OUTPUT = "bad_output"

DETAIL_LIMIT = 4000  # characters of the underlying error kept for "Details"

# What `DspyPlanner.decide` turns into a `PlannerError` (anything else is a bug and propagates).
MODEL_FAILURES: tuple[type[Exception], ...] = (LMError, AdapterParseError, NoPredictionError)

_CODES: tuple[tuple[type[BaseException], str], ...] = (
    (AdapterParseError, BAD_OUTPUT),
    (NoPredictionError, BAD_OUTPUT),
    (LMStreamAssemblyError, BAD_OUTPUT),
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

# What the author reads: what is wrong, then what to do (the raw text goes to `details`).
_SUMMARIES = {
    UNREACHABLE: "The model server could not be reached",
    TIMEOUT: "The model took too long to answer",
    AUTH: "The model provider rejected the API key",
    RATE_LIMITED: "The model provider is rate limiting requests",
    CONTEXT_WINDOW: "The conversation is too long for the model",
    MODEL_ERROR: "The model provider reported an error",
    BAD_OUTPUT: "The model's answer could not be understood",
}

_HINTS = {
    UNREACHABLE: "check the API base in Settings → Model and that the server runs, then Retry",
    TIMEOUT: "Retry, or choose a faster model in Settings → Model",
    AUTH: "check the key in Settings → Model",
    RATE_LIMITED: "wait a minute, then Retry",
    CONTEXT_WINDOW: (
        "start a new thread, or choose a model with a larger context in Settings → Model"
    ),
    MODEL_ERROR: "check the model name in Settings → Model, then Retry",
    BAD_OUTPUT: "Retry, or choose a more capable model in Settings → Model",
}


def summary_line(code: str) -> str:
    """One line for the author: what is wrong and what to do."""
    message = _SUMMARIES.get(code, "The model failed")
    hint = _HINTS.get(code)
    return f"{message}: {hint}" if hint else message


def classify(exc: BaseException, lm_chain: Sequence[BaseException] = ()) -> str:
    """The stable code for `exc`; `lm_chain` is the LM error's cause chain, if captured."""
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    if isinstance(exc, LMError) and _connection_failed([exc, *lm_chain]):
        # LiteLLM reports a refused or dropped connection as a 500 InternalServerError.
        return UNREACHABLE
    return MODEL_ERROR


def to_planner_error(
    exc: BaseException, lm_chain: Sequence[BaseException] = (), secret: str | None = None
) -> PlannerError:
    """A `PlannerError` with a stable code and a short message that never contains `secret`."""
    code = classify(exc, lm_chain)
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


def _connection_failed(chain: Sequence[BaseException]) -> bool:
    for exc in chain:
        if isinstance(exc, ConnectionError | socket.gaierror):
            return True
        names = {cls.__name__ for cls in type(exc).__mro__}
        if names & _CONNECTION_ERROR_NAMES:
            return True
    return False
