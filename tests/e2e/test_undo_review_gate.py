"""Undo of a changeset accepted through the review gate: a stand-in Codex (the review gate's own
end-to-end rig, `tests/e2e/test_review_gate.py`) writes in turn 2, the author accepts, and
rewinding to turn 1 takes the accepted files back out of the workspace; a restart finishes a
rewind whose intent was recorded but whose files were only partly written."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.runtime import rewind as rewinding
from sidecar.store import Store, open_database
from sidecar.store.blobs import replace_atomically
from sidecar.store.undo import RewindIntent
from sidecar.store.undo_watch import undo_log
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_review_gate import (
    _announced,
    _answer,
    _delegate,
    _files,
    _handed_off,
    _standin,
    _start,
    _wait_asked,
)

pytestmark = pytest.mark.anyio


async def _plain_turn(agent: Sidecar, thread_id: str, text: str) -> None:
    run = await agent.call("run/start", {"thread_id": thread_id, "text": text})
    assert event_types(await agent.run_to_end(run["run_id"]))[-1] == "run_finished"


async def _accepted_changeset_in_turn_two(agent: Sidecar) -> str:
    thread_id, _ = await _delegate(agent, "first: just talk")
    await agent.wait_for(lambda evs: any(e.event.type == "run_finished" for e in evs), within=60)
    run = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/delegate codex Write two files"}
    )
    delegation = await _wait_asked(agent, "approval")
    plan_id = await _handed_off(agent, thread_id, run["run_id"])
    await _answer(agent, thread_id, delegation, {"decision": "allow_once"})
    review = await _wait_asked(agent, "changeset")
    await _answer(agent, thread_id, review, {"accepted": ["new.txt", "notes.md"]})
    await _announced(agent, thread_id, plan_id, "completed")
    return thread_id


async def test_a_changeset_accepted_in_turn_two_is_rewound_with_turn_two(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    before = _files(workspace)
    writes: dict[str, str | None] = {
        "new.txt": "from the agent\n",
        "notes.md": "# Notes\nrewritten by the agent\n",
    }
    agent = await _start(sidecar_data, workspace, _standin(tmp_path, writes))
    try:
        thread_id = await _accepted_changeset_in_turn_two(agent)
        assert _files(workspace) == {**before, **writes}
        marks = (await agent.call("thread/checkpoints", {"thread_id": thread_id}))["checkpoints"]
        assert [m["text"] for m in marks][:2] == [
            "first: just talk",
            "/delegate codex Write two files",
        ]
        assert sorted(marks[1]["files"]) == ["new.txt", "notes.md"]
        rewound = await agent.call(
            "thread/rewind", {"thread_id": thread_id, "checkpoint_id": marks[0]["checkpoint_id"]}
        )
        assert sorted((f["path"], f["status"]) for f in rewound["files"]) == [
            ("new.txt", "restored"),
            ("notes.md", "restored"),
        ]
        assert _files(workspace) == before
        # The strong agent's own run stays done: it is told, not pretended away.
        assert {(e["server"], e["tool"]) for e in rewound["effects"]} >= {("agents", "agent_run")}
    finally:
        await agent.kill()


async def test_a_rewind_cut_short_is_finished_by_the_restarted_sidecar(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    before = _files(workspace)
    writes: dict[str, str | None] = {
        "new.txt": "from the agent\n",
        "notes.md": "# Notes\nrewritten by the agent\n",
    }
    agent = await _start(sidecar_data, workspace, _standin(tmp_path, writes))
    try:
        thread_id = await _accepted_changeset_in_turn_two(agent)
    finally:
        await agent.kill()  # SIGKILL

    # What a kill mid-rewind leaves: the intent recorded, one file of two rewound.
    db = open_database(sidecar_data / "atrium.db")
    try:
        store = Store(db)
        first = rewinding.checkpoints(store, thread_id)[0].checkpoint_id
        plan = rewinding.plan_rewind(store, thread_id, first, force=False)
        repo, blobs = undo_log(db)
        with store.transaction():
            repo.begin_rewind(RewindIntent("cut-short", thread_id, first, plan.to_json()))
        step = next(s for s in plan.steps if s.path == "notes.md")
        assert step.target is not None
        replace_atomically(workspace / "notes.md", blobs.read(step.target))
    finally:
        db.close()
    assert (workspace / "new.txt").exists()

    agent = await _start(sidecar_data, workspace, _standin(tmp_path, writes))
    try:
        marks = (await agent.call("thread/checkpoints", {"thread_id": thread_id}))["checkpoints"]
        assert [m["undone"] for m in marks][:2] == [False, True]
        assert _files(workspace) == before
        got = await agent.call("thread/get", {"thread_id": thread_id})
        assert [m["content"] for m in got["messages"] if m["role"] == "user"] == [
            "first: just talk"
        ]
    finally:
        await agent.kill()
