"""Agents review each other, through the real sidecar with a scripted model: the built-in
write → review → revise routine runs a writer and a reviewer (two internal subagents); the
reviewer rejects once with a comment, the writer revises in its own session, the reviewer
approves; every draft and comment is kept as an envelope answering the one before it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Sidecar
from tests.e2e.test_sidecar_model import model_env
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.fakes.script import RecordedRequest

pytestmark = pytest.mark.anyio

COMMENT = "Name the bridge: the reader cannot tell which one."


def _text(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"])


class Pair:
    """The writer drafts, then revises; the reviewer rejects once, then approves."""

    def __init__(self) -> None:
        self.writer: list[RecordedRequest] = []
        self.reviewer: list[RecordedRequest] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        text = _text(request)
        if "Review a draft another agent wrote" in text:
            self.reviewer.append(request)
            if len(self.reviewer) == 1:
                return Reply.text(answer_text(f"REJECT\n{COMMENT}"))
            return Reply.text(answer_text("APPROVE\nThe bridge is named; ready."))
        if "Task: Write a note on the river" in text:
            self.writer.append(request)
            if len(self.writer) == 1:
                return Reply.text(answer_text("The river runs under the old bridge."))
            return Reply.text(answer_text("The river runs under the Stone Bridge of 1820."))
        return Reply.text(answer_text("The note is written and approved."))


@pytest.fixture
def pair() -> Pair:
    return Pair()


@pytest.fixture
def model(pair: Pair) -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        server.fallback = pair
        yield server


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(
        sidecar_data, workspace, **model_env(model), ATRIUM_COORD_BACKOFF="0.01"
    )
    yield process
    await process.kill()


async def test_a_writer_and_a_reviewer_loop_until_approval_and_every_comment_is_kept(
    agent: Sidecar, pair: Pair
):
    listed = await agent.call("routine/list")
    assert "write-review-revise" in {r["name"] for r in listed["routines"]}
    thread_id = (await agent.call("thread/create", {}))["id"]
    await agent.call("thread/set_autonomous", {"thread_id": thread_id, "autonomous": True})
    run = await agent.call(
        "run/start",
        {
            "thread_id": thread_id,
            "text": '/routine write-review-revise piece="a note on the river"',
        },
    )
    await agent.run_to_end(run["run_id"])
    await agent.plan_to_end(thread_id)
    plan = (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]
    [task] = plan["tasks"]
    assert (plan["status"], task["status"], task["profile"]) == ("completed", "succeeded", "writer")
    assert task["attempt"] == 2
    assert task["summary"] == "The river runs under the Stone Bridge of 1820."

    # The revision happened in the writer's own session, with the reviewer's comment.
    assert len(pair.writer) == 2 and len(pair.reviewer) == 2
    assert COMMENT in _text(pair.writer[1])
    assert "The river runs under the old bridge." in _text(pair.writer[1])
    assert "The river runs under the Stone Bridge of 1820." in _text(pair.reviewer[1])

    got = await agent.call(
        "task/envelopes", {"thread_id": thread_id, "plan_id": plan["id"], "task_id": "write"}
    )
    envelopes: list[dict[str, Any]] = got["envelopes"]
    assert [(e["kind"], e["payload"].get("round")) for e in envelopes] == [
        ("artifact", 1),
        ("review", 1),
        ("artifact", 2),
        ("review", 2),
        ("final", None),
    ]
    draft1, review1, draft2, review2, final = envelopes
    assert draft1["reply_to"] is None
    assert review1["reply_to"] == draft1["id"] and review1["payload"]["verdict"] == "reject"
    assert review1["payload"]["comments"] == COMMENT
    assert draft2["reply_to"] == review1["id"]
    assert review2["reply_to"] == draft2["id"] and review2["payload"]["verdict"] == "approve"
    assert review1["sender"] == draft1["receiver"] == review2["sender"]
    assert final["payload"]["findings"] == "The river runs under the Stone Bridge of 1820."
