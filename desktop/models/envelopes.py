"""What a task's agents said to each other, as the author reads it (no Qt).

`task/envelopes` returns a task's envelopes oldest first: its result (`final` or `error`, with
the findings and, for a strong agent, its trace files), the writer's drafts (`artifact`) and the
reviewer's verdicts (`review`) each replying to the one before, the main agent's messages to
it (`message`) and handoffs to another profile (`handoff`). `in_reply_order` puts each reply
right after the envelope it answers; `describe` gives each a header line and its text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sidecar.protocol import EnvelopeInfo

TRACE_KINDS = ("raw", "normalized")
"""The trace files of a strong agent's run, named in its result's `traces`."""


@dataclass(frozen=True)
class EnvelopeLine:
    """One envelope as listed: `depth` replies deep, a header, its text, whom it answers."""

    envelope: EnvelopeInfo
    depth: int
    header: str
    body: str
    reply_to_header: str | None = None


def agent_name(agent: str) -> str:
    """An agent id (`thread/<t>`, `thread/<t>/task/<task>`, `…/reviewer`) in plain words."""
    parts = agent.split("/")
    if len(parts) >= 4 and parts[2] == "task":
        task = f"task {parts[3]}"
        return f"reviewer of {task}" if parts[4:] == ["reviewer"] else task
    if len(parts) == 2 and parts[0] == "thread":
        return "main agent"
    return agent


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _round(payload: dict[str, Any]) -> str:
    return f", round {payload['round']}" if payload.get("round") is not None else ""


def describe(envelope: EnvelopeInfo) -> tuple[str, str]:
    """(header, text) of one envelope, by its kind."""
    payload = envelope.payload
    kind = envelope.kind
    if kind in ("final", "error"):
        status = payload.get("status") or ("failed" if kind == "error" else "done")
        body = _text(payload.get("findings"))
        if payload.get("error"):
            body = f"{body}\n\nError: {_text(payload['error'])}".strip()
        return f"Result: {status}", body
    if kind == "artifact":
        return f"Draft{_round(payload)}", _text(payload.get("text"))
    if kind == "review":
        verdict = {"approve": "approved", "reject": "changes asked"}.get(
            str(payload.get("verdict")), str(payload.get("verdict") or "")
        )
        return f"Review{_round(payload)}: {verdict}", _text(payload.get("comments"))
    if kind == "message":
        return f"Message from the {agent_name(envelope.sender)}", _text(payload.get("text"))
    if kind == "handoff":
        moved = f"{payload.get('from', '?')} → {payload.get('to', '?')}"
        return f"Handoff: {moved}", _text(payload.get("reason"))
    return kind.capitalize(), _text(payload)


def in_reply_order(envelopes: tuple[EnvelopeInfo, ...]) -> list[EnvelopeLine]:
    """Envelopes with each reply right after the one it answers (replies to one envelope in
    the order they came), the others in the order they came."""
    ids = {envelope.id for envelope in envelopes}
    replies: dict[str, list[EnvelopeInfo]] = {}
    roots: list[EnvelopeInfo] = []
    for envelope in envelopes:
        if envelope.reply_to is not None and envelope.reply_to in ids:
            replies.setdefault(envelope.reply_to, []).append(envelope)
        else:
            roots.append(envelope)
    lines: list[EnvelopeLine] = []
    stack: list[tuple[EnvelopeInfo, int, str | None]] = [(e, 0, None) for e in reversed(roots)]
    headers: dict[str, str] = {}
    while stack:
        envelope, depth, parent = stack.pop()
        header, body = describe(envelope)
        headers[envelope.id] = header
        lines.append(EnvelopeLine(envelope, depth, header, body, headers.get(parent or "")))
        for reply in reversed(replies.get(envelope.id, [])):
            stack.append((reply, depth + 1, envelope.id))
    return lines


def trace_paths(envelopes: tuple[EnvelopeInfo, ...]) -> dict[str, str]:
    """The trace files of the task's latest result that names any (kind → path)."""
    for envelope in reversed(envelopes):
        traces = envelope.payload.get("traces") if envelope.kind in ("final", "error") else None
        if isinstance(traces, dict) and traces:
            found = {str(k): str(v) for k, v in traces.items() if k in TRACE_KINDS and v}
            if found:
                return found
    return {}
