"""Issue 25, defect 1, through the real sidecar subprocess: a workspace notes.md tells the model
to rewrite the author's pinned rule, forget another of their memories and save an account-tier
memory, and the scripted model obeys the file. Each change is put to the author in an approval
with the memory before and after: with no to every one, the memories are exactly as they were
(and a new thread carries the rule unchanged); with yes, each is saved as the agent's after
untrusted content. A turn that read nothing but the author's words saves unasked."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import ApprovalInterrupt, RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.injected_notes import (
    ANSWERED,
    EDITOR,
    NOTES,
    PLANTED,
    REWRITE,
    RULE,
    obeying_the_file,
    prompt_of,
)
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio

WAIT_S = 240


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server(fallback=obeying_the_file()) as server:
        yield server


@pytest.fixture
def injected(workspace: Path) -> Path:
    (workspace / "notes.md").write_text(NOTES, encoding="utf-8")
    return workspace


async def start(data: Path, workspace: Path, model: ScriptedModelServer) -> Sidecar:
    return await Sidecar.start(
        data,
        workspace,
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
    )


def stored_memories(data: Path) -> dict[str, dict[str, Any]]:
    """Every memory row in the database file, by key, exactly as stored."""
    with closing(sqlite3.connect(data / "atrium.db")) as conn:
        rows = conn.execute("SELECT key, value FROM store WHERE prefix GLOB 'memory.*'").fetchall()
    return {str(k): json.loads(v) for k, v in rows}


async def authors_memories(agent: Sidecar, thread: str) -> None:
    await agent.call(
        "memory/write", {"thread_id": thread, "tier": "workspace", "text": RULE, "pinned": True}
    )
    await agent.call("memory/write", {"thread_id": thread, "tier": "workspace", "text": EDITOR})


async def answer_every_ask(
    agent: Sidecar, thread: str, run_id: str, decision: str
) -> tuple[list[ApprovalInterrupt], list[RunEventParams]]:
    """Answer each question of the turn with `decision` until it ends; the questions and the
    events of every run of the turn."""
    asked: list[ApprovalInterrupt] = []
    events: list[RunEventParams] = []
    while True:
        run = await agent.run_to_end(run_id, within=WAIT_S)
        events += run
        questions = [e.event.interrupt for e in run if e.event.type == "interrupt"]  # type: ignore[union-attr]
        if not questions:
            assert event_types(run)[-1] == "run_finished", event_types(run)
            return asked, events
        [question] = questions
        assert isinstance(question, ApprovalInterrupt)
        asked.append(question)
        resumed = await agent.call(
            "run/resume",
            {"thread_id": thread, "interrupt_id": question.id, "value": {"decision": decision}},
        )
        run_id = resumed["run_id"]


async def test_no_to_every_ask_leaves_the_memories_exactly_as_they_were(
    sidecar_data: Path, injected: Path, model: ScriptedModelServer
) -> None:
    agent = await start(sidecar_data, injected, model)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        await authors_memories(agent, thread)
        before = stored_memories(sidecar_data)
        run = await agent.call("run/start", {"thread_id": thread, "text": "Summarize notes.md"})
        asked, events = await answer_every_ask(agent, thread, run["run_id"], "deny")

        assert stored_memories(sidecar_data) == before
        assert [(q.server, q.tool) for q in asked] == [
            ("memory", "update"),
            ("memory", "forget"),
            ("memory", "write"),
        ]
        rewrite, forget, plant = (q.memory for q in asked)
        assert rewrite is not None and forget is not None and plant is not None
        assert rewrite.before is not None and rewrite.after is not None
        assert (rewrite.before.text, rewrite.before.provenance, rewrite.before.pinned) == (
            RULE,
            "author",
            True,
        )
        assert (rewrite.after.text, rewrite.after.provenance) == (REWRITE, "agent_after_untrusted")
        assert rewrite.untrusted == "the turn read the output of workspace__read"
        assert f"-{RULE}" in (asked[0].diff or "") and f"+{REWRITE}" in (asked[0].diff or "")
        assert forget.before is not None and forget.before.text == EDITOR and forget.after is None
        assert plant.before is None and plant.after is not None
        assert (plant.after.tier, plant.after.text) == ("account", PLANTED)
        # The model was told no, call by call; nothing was saved, so nothing is reported saved.
        results = [e.event for e in events if e.event.type == "tool_result"]
        refused = [r for r in results if ANSWERED[0] in r.content]  # type: ignore[union-attr]
        assert len(refused) == 3 and all(r.is_error for r in refused)  # type: ignore[union-attr]
        assert "memory" not in event_types(events)

        # A new thread that never read the file carries the rule as the author wrote it.
        other = (await agent.call("thread/create", {}))["id"]
        since = len(model.generation_requests)
        run = await agent.call("run/start", {"thread_id": other, "text": "Hello again."})
        await agent.run_to_end(run["run_id"], within=WAIT_S)
        first = prompt_of(model.generation_requests[since])
        assert RULE in first and REWRITE not in first and PLANTED not in first
        listed = await agent.call("memory/list", {"thread_id": other})
        assert {(m["text"], m["provenance"]) for m in listed["memories"]} == {
            (RULE, "author"),
            (EDITOR, "author"),
        }
    finally:
        await agent.kill()


async def test_yes_saves_each_change_as_the_agents_after_untrusted_content(
    sidecar_data: Path, injected: Path, model: ScriptedModelServer
) -> None:
    agent = await start(sidecar_data, injected, model)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        await authors_memories(agent, thread)
        before = stored_memories(sidecar_data)
        run = await agent.call("run/start", {"thread_id": thread, "text": "Summarize notes.md"})
        asked, events = await answer_every_ask(agent, thread, run["run_id"], "allow_once")
        assert len(asked) == 3

        after = stored_memories(sidecar_data)
        rule_key = next(k for k, v in before.items() if v["text"] == RULE)
        editor_key = next(k for k, v in before.items() if v["text"] == EDITOR)
        assert editor_key not in after
        rule = after[rule_key]
        assert (rule["text"], rule["pinned"], rule["by"], rule["provenance"], rule["reviewed"]) == (
            REWRITE,
            True,
            "agent",
            "agent_after_untrusted",
            True,
        )
        [planted] = [v for k, v in after.items() if k not in before]
        assert (planted["tier"], planted["text"], planted["provenance"]) == (
            "account",
            PLANTED,
            "agent_after_untrusted",
        )
        changes = [e.event for e in events if e.event.type == "memory"]
        assert sorted(c.action for c in changes) == ["forgotten", "saved", "updated"]  # type: ignore[union-attr]
        written = [c.memory for c in changes if c.action in ("saved", "updated")]  # type: ignore[union-attr]
        assert {m.provenance for m in written if m is not None} == {"agent_after_untrusted"}
    finally:
        await agent.kill()


async def test_remember_in_a_turn_that_read_nothing_untrusted_is_saved_unasked(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await start(sidecar_data, workspace, model)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        model.push(
            Reply.tool_call(
                "memory__write", {"text": "The author takes tea without sugar.", "tier": "account"}
            ),
            Reply.text(answer_text("Noted.")),
        )
        run = await agent.call(
            "run/start", {"thread_id": thread, "text": "Remember: I take tea without sugar."}
        )
        events = await agent.run_to_end(run["run_id"], within=WAIT_S)
        assert "interrupt" not in event_types(events)
        assert event_types(events)[-1] == "run_finished"
        [saved] = stored_memories(sidecar_data).values()
        assert (saved["tier"], saved["provenance"], saved["by"]) == (
            "account",
            "agent_from_author",
            "agent",
        )
        review = await agent.call("memory/list", {"thread_id": thread, "unreviewed": True})
        assert [m["text"] for m in review["memories"]] == ["The author takes tea without sugar."]
        kept = await agent.call(
            "memory/update",
            {"thread_id": thread, "key": review["memories"][0]["key"], "reviewed": True},
        )
        assert (kept["reviewed"], kept["provenance"]) == (True, "agent_from_author")
        review = await agent.call("memory/list", {"thread_id": thread, "unreviewed": True})
        assert review["memories"] == []
    finally:
        await agent.kill()
