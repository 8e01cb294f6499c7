"""Memory chips outlive the sidecar: a turn saves a memory (the scripted model on 127.0.0.1 asks
for it, or the author's direct call does), the sidecar is restarted on the same data folder, and
`memory/events` gives the events back with the messages their chips follow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import (
    ContextEvent,
    MemoryEvent,
    MemoryEventsResult,
    MessageEvent,
    RunEventParams,
)
from tests.e2e.test_memory import model, start, turn
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer

pytestmark = pytest.mark.anyio

__all__ = ["model"]  # the fixture, shared with the memory tests

FACT = "The author's editor is Zofia Quintanilla-Brandt."


def live_chips(events: list[RunEventParams]) -> list[tuple[str, int, str | None, MemoryEvent]]:
    """(run, seq, the message the chip follows, the event), by the desktop's live rule: the last
    message with a row of its own seen before it."""
    chips: list[tuple[str, int, str | None, MemoryEvent]] = []
    last: str | None = None
    for params in events:
        event = params.event
        if isinstance(event, MessageEvent) and event.message.role == "assistant":
            last = event.message.id if event.message.content else last
        elif isinstance(event, MemoryEvent):
            chips.append((params.run_id, params.seq, last, event))
    return chips


async def test_memory_events_come_back_after_a_restart_with_their_messages(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await start(sidecar_data, workspace, model)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        model.push(
            Reply.tool_call("memory__write", {"text": FACT, "tier": "workspace"}),
            Reply.text(answer_text("Noted.")),
        )
        first = await turn(agent, thread, "Remember: my editor is Zofia Quintanilla-Brandt.")
        direct = await turn(
            agent, thread, '/call memory__write {"text": "Tea, no sugar.", "tier": "thread"}'
        )
        thanks = await turn(agent, thread, "Thanks.")
        saved = live_chips(first)
        assert [(c[3].action, c[3].memory.text) for c in saved] == [("saved", FACT)]  # type: ignore[union-attr]
        assert saved[0][2] is not None and saved[0][2].endswith(":answer")
        by_hand = live_chips(direct)
        assert [c[3].memory.text for c in by_hand] == ["Tea, no sugar."]  # type: ignore[union-attr]
    finally:
        assert await agent.shutdown() == 0

    agent = await start(sidecar_data, workspace, model)
    try:
        reply: Any = await agent.call("memory/events", {"thread_id": thread})
        result = MemoryEventsResult.model_validate(reply)
        history = await agent.call("thread/get", {"thread_id": thread, "limit": 200})
    finally:
        assert await agent.shutdown() == 0

    got = [
        (e.run_id, e.seq, e.after_message, e.event)
        for e in result.events
        if e.event.type == "memory"
    ]
    assert got == saved + by_hand
    assert not result.has_older
    shown = {m["id"]: m for m in history["messages"]}
    for _run, _seq, anchor, _event in got:
        assert anchor is not None and shown[anchor]["role"] == "assistant"
        assert shown[anchor]["content"]

    # Each turn that assembled a context (not the direct call) left its report, which follows
    # the author's message of that turn, as it did live.
    reports = [(e.after_message, e.event) for e in result.events if e.event.type == "context"]
    live = [p.event for p in [*first, *thanks] if isinstance(p.event, ContextEvent)]
    assert [event for _anchor, event in reports] == live and len(live) == 2
    questions = [m for m in history["messages"] if m["role"] == "user"]
    assert [anchor for anchor, _event in reports] == [questions[0]["id"], questions[2]["id"]]
    assert questions[2]["content"] == "Thanks."
    assert all(isinstance(event, ContextEvent) and event.used > 0 for _a, event in reports)
