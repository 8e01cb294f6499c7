"""The questions an MCP server puts to the author during a tool call: a form (elicitation) and
a request to use the author's model (sampling). Stored and sent as JSON, so they are typed
dicts; `sidecar.turn.questions` gathers them with the turn's own questions into one union."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from sidecar.json_value import JsonObject


class FormQuestion(TypedDict):
    """An elicitation: a form built from `requested_schema`, or a link to open (`url`)."""

    kind: Literal["form"]
    title: str
    body: str
    server: str
    message: str
    requested_schema: JsonObject
    url: NotRequired[str]


class SamplingMessage(TypedDict):
    role: str
    text: str


class SamplingQuestion(TypedDict):
    """A server asks to use the configured model for this request."""

    kind: Literal["sampling"]
    title: str
    body: str
    server: str
    messages: list[SamplingMessage]
    system_prompt: str | None
    max_tokens: int
    temperature: float | None
    stop_sequences: list[str]
    model_hints: list[str]
