"""Tool output is redacted before anything stores it: the conversation, the journal, run events.

A tool's result may echo a secret (a program printing its environment, a file holding a key).
The host masks, in every result it returns, the secrets it knows (values read from or written to
the keyring, secret-named variables of this process's environment, the values a server's config
resolved from placeholders) and the shapes of well-known credentials
(`mcp_servers.redaction`). Whatever stores the result afterwards only ever sees the masked text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from mcp_servers.redaction import redact, secret_environment
from sidecar.host.types import ToolOutcome
from sidecar.keychain import KEYCHAIN


def known_secrets(extra: Iterable[str] = ()) -> list[str]:
    return [*KEYCHAIN.known_values(), *secret_environment(), *extra]


def redact_outcome(outcome: ToolOutcome, extra: Iterable[str] = ()) -> ToolOutcome:
    """The outcome with secrets masked in its text and in every string of its structured part."""
    known = known_secrets(extra)
    structured = outcome.structured
    return ToolOutcome(
        is_error=outcome.is_error,
        text=redact(outcome.text, known),
        structured=_redact_json(structured, known) if structured is not None else None,
    )


def _redact_json(value: dict[str, Any], known: list[str]) -> dict[str, Any]:
    return cast(dict[str, Any], _walk(value, known))


def _walk(value: object, known: list[str]) -> object:
    if isinstance(value, str):
        return redact(value, known)
    if isinstance(value, dict):
        items = cast(dict[object, object], value).items()
        return {k: _walk(v, known) for k, v in items}
    if isinstance(value, list):
        return [_walk(v, known) for v in cast(list[object], value)]
    return value
