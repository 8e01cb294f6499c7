"""`/compact` on a thread too short to summarize says so in the author's words, in the answer and
in what the turn reports about its context (not "compaction failed: nothing to compact")."""

from __future__ import annotations

import pytest

from sidecar.context.compaction import NOTHING_TO_COMPACT
from sidecar.protocol import ContextEvent
from tests.sidecar.runtime.conftest import Rig
from tests.sidecar.runtime.scripted import answer

pytestmark = pytest.mark.anyio


async def test_compact_on_a_short_thread_says_there_is_nothing_to_compact_yet(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.planner.script.append(answer("Hello."))
    await rig.finish(await rig.runs.start(thread.id, "hi"))

    events = await rig.finish(await rig.runs.start(thread.id, "/compact"))

    [report] = [e.event for e in events if isinstance(e.event, ContextEvent)]
    assert report.compaction is not None
    assert (report.compaction.performed, report.compaction.reason) == (False, NOTHING_TO_COMPACT)
    reply = rig.store.recent_messages(thread.id, 10)[-1]
    assert reply.role == "assistant" and reply.content.startswith(NOTHING_TO_COMPACT + ":")
    assert "failed" not in reply.content
