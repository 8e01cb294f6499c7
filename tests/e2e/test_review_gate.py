"""The review gate through the real sidecar: a stand-in Codex (tests/fakes/standin_codex.py)
writes into the folder it is given. Dispatching it asks the author first; it works in an
isolated copy (a git worktree for a repository), and nothing reaches the workspace until the
author accepts a file in the changeset; the copy is removed afterwards. A plan's grant covers
the dispatch and accepts changes inside the paths the author named.

Delegation does not block: the turn that delegates ends at once (its call's result says the plan
runs in the background), the plan's questions (the dispatch, the changeset) are live interrupts
of the thread's background plan run, and the plan's report comes back as an announcement that a
turn nobody started takes. No model is configured here: that turn answers with its no-model
note, which is all these tests need of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import InterruptInfo, RunEventParams
from tests.e2e.harness import RpcFailure, Sidecar, event_types

pytestmark = pytest.mark.anyio
STANDIN = Path(__file__).parents[1] / "fakes" / "standin_codex.py"
ANNOUNCED = "[Background plan "


def _standin(tmp_path: Path, writes: dict[str, str | None], **extra: str) -> dict[str, str]:
    script = tmp_path / "codex"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    script.chmod(0o755)
    return {
        "ATRIUM_CODEX_BIN": str(script),
        "STANDIN_WRITES": json.dumps(writes),
        "STANDIN_LOG": str(tmp_path / "standin.log"),
        **extra,
    }


def _runs(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "standin.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def _asked(events: list[RunEventParams], kind: str) -> list[InterruptInfo]:
    return [
        e.event.interrupt  # type: ignore[union-attr]
        for e in events
        if e.event.type == "interrupt" and e.event.interrupt.kind == kind  # type: ignore[union-attr]
    ]


async def _wait_asked(agent: Sidecar, kind: str, count: int = 1) -> InterruptInfo:
    await agent.wait_for(lambda evs: len(_asked(evs, kind)) >= count, within=180)
    return _asked(agent.events, kind)[count - 1]


async def _answer(agent: Sidecar, thread_id: str, asked: InterruptInfo, value: dict[str, Any]):
    params = {"thread_id": thread_id, "interrupt_id": asked.id, "value": value}
    return await agent.call("run/resume", params)


async def _start(data: Path, workspace: Path, env: dict[str, str]) -> Sidecar:
    agent = await Sidecar.start(data, workspace, **env)
    await agent.call("initialize", {"client_name": "tests"})
    return agent


async def _delegate(agent: Sidecar, text: str) -> tuple[str, str]:
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": text})
    return thread["id"], run["run_id"]


async def _plan(agent: Sidecar, thread_id: str) -> dict[str, Any]:
    return (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]


async def _task(agent: Sidecar, thread_id: str) -> dict[str, Any]:
    [task] = (await _plan(agent, thread_id))["tasks"]
    return task


async def _handed_off(agent: Sidecar, thread_id: str, run_id: str, task_id: str = "task") -> str:
    """The turn that delegated ends by itself while its plan still runs: its call's result
    says the plan runs in the background and names its task. Returns the plan's id."""
    events = await agent.run_to_end(run_id, within=180)
    assert event_types(events)[-1] == "run_finished"
    assert not any(e.background for e in events)
    [result] = [e.event for e in events if e.event.type == "tool_result"]
    plan = await _plan(agent, thread_id)
    assert plan["status"] == "running"
    assert result.content.startswith(f"Plan {plan['id']} is running in the background")  # type: ignore[union-attr]
    assert f"\n- {task_id} (" in result.content  # type: ignore[union-attr]
    return plan["id"]


def _plan_run(agent: Sidecar, thread_id: str) -> str:
    """The thread's only background plan run."""
    [run_id] = agent.background_runs(thread_id)
    return run_id


def _finished(events: list[RunEventParams], run_id: str) -> bool:
    return any(e.run_id == run_id and e.event.type == "run_finished" for e in events)


async def _announced(agent: Sidecar, thread_id: str, plan_id: str, status: str) -> str:
    """The plan's background run ends by itself (`run_finished`), and its report comes back
    once, as the announcement a turn nobody started takes. Returns the announcement."""
    events = await agent.plan_to_end(thread_id, within=180)
    assert (events[0].event.type, events[-1].event.type) == ("run_started", "run_finished")
    assert all(e.background for e in events)
    since = next(i for i, e in enumerate(agent.events) if e.run_id == events[0].run_id)

    def new_turns() -> list[str]:
        return [
            e.run_id
            for e in agent.events[since:]
            if e.thread_id == thread_id and not e.background and e.event.type == "run_started"
        ]

    await agent.wait_for(lambda evs: any(_finished(evs, r) for r in new_turns()), within=180)
    assert len(new_turns()) == 1
    messages = (await agent.call("thread/get", {"thread_id": thread_id}))["messages"]
    [announcement] = [m for m in messages if str(m["content"] or "").startswith(ANNOUNCED)]
    assert announcement["role"] == "user"
    assert announcement["content"].startswith(f"[Background plan {plan_id} ended: {status}]\n")
    return str(announcement["content"])


async def test_the_workspace_is_unchanged_until_the_author_accepts_and_gets_exactly_that_file(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    writes = {"new.txt": "from the agent\n", "notes.md": "# Notes\nrewritten by the agent\n"}
    agent = await _start(sidecar_data, workspace, _standin(tmp_path, writes))
    before = _files(workspace)
    try:
        thread_id, run_id = await _delegate(agent, "/delegate codex Write two files")
        delegation = await _wait_asked(agent, "approval")
        assert (delegation.server, delegation.tool) == ("agents", "agent_run")  # type: ignore[union-attr]
        arguments = delegation.arguments  # type: ignore[union-attr]
        assert (arguments["agent"], arguments["folder"]) == ("Codex", str(workspace))
        assert arguments["objective"] == "Write two files"
        assert "isolated copy" in arguments["permissions"]
        # The turn ended while the question is open: it is the background plan run's.
        plan_id = await _handed_off(agent, thread_id, run_id)
        plan_run = _plan_run(agent, thread_id)
        assert (delegation.run_id, delegation.live) == (plan_run, True)
        assert (await _task(agent, thread_id))["status"] == "waiting"
        assert _runs(tmp_path) == []  # nothing was dispatched before the author's yes
        allowed = await _answer(agent, thread_id, delegation, {"decision": "allow_once"})
        assert allowed["run_id"] == plan_run

        review = await _wait_asked(agent, "changeset")
        assert (review.run_id, review.live) == (plan_run, True)
        files = {f.path: f for f in review.files}  # type: ignore[union-attr]
        assert {p: f.status for p, f in files.items()} == {
            "new.txt": "added",
            "notes.md": "changed",
        }
        assert "+rewritten by the agent\n" in files["notes.md"].diff
        assert _files(workspace) == before  # the agent wrote, the workspace did not change
        [run] = _runs(tmp_path)
        folder = Path(run["cwd"])
        assert folder != workspace and sidecar_data in folder.parents
        assert review.isolation == "snapshot"  # type: ignore[union-attr]
        accepted = await _answer(agent, thread_id, review, {"accepted": ["new.txt"]})
        assert accepted["run_id"] == plan_run
        announcement = await _announced(agent, thread_id, plan_id, "completed")
        task = await _task(agent, thread_id)
    finally:
        await agent.kill()
    assert _files(workspace) == {**before, "new.txt": "from the agent\n"}
    assert not folder.exists()  # the copy is removed
    assert task["status"] == "succeeded"
    assert "Applied to the workspace: new.txt." in task["summary"]
    assert "Rejected by the author (not applied): notes.md." in task["summary"]
    # The main agent hears it in the plan's report.
    assert "[succeeded] task (Write two files)" in announcement
    assert "Applied to the workspace: new.txt." in announcement
    assert "Rejected by the author (not applied): notes.md." in announcement


async def test_rejecting_every_file_leaves_the_workspace_unchanged(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    writes = {"new.txt": "x\n", "notes.md": None}
    agent = await _start(sidecar_data, workspace, _standin(tmp_path, writes))
    before = _files(workspace)
    try:
        thread_id, run_id = await _delegate(agent, "/delegate codex Tidy up")
        delegation = await _wait_asked(agent, "approval")
        plan_id = await _handed_off(agent, thread_id, run_id)
        await _answer(agent, thread_id, delegation, {"decision": "allow_once"})
        review = await _wait_asked(agent, "changeset")
        statuses = {f.path: f.status for f in review.files}  # type: ignore[union-attr]
        assert statuses == {"new.txt": "added", "notes.md": "deleted"}
        assert review.run_id == _plan_run(agent, thread_id)
        await _answer(agent, thread_id, review, {"accepted": []})
        announcement = await _announced(agent, thread_id, plan_id, "completed")
    finally:
        await agent.kill()
    assert _files(workspace) == before
    assert not Path(_runs(tmp_path)[0]["cwd"]).exists()
    assert "Rejected by the author (not applied): new.txt, notes.md." in announcement


async def test_a_file_the_author_changed_meanwhile_is_shown_as_a_conflict_and_kept(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    writes = {"notes.md": "agent's notes\n", "other.txt": "y\n"}
    authors = {str(workspace / "notes.md"): "the author's notes\n"}
    env = _standin(tmp_path, writes, STANDIN_ALSO=json.dumps(authors))
    agent = await _start(sidecar_data, workspace, env)
    try:
        thread_id, run_id = await _delegate(agent, "/delegate codex Rewrite the notes")
        delegation = await _wait_asked(agent, "approval")
        plan_id = await _handed_off(agent, thread_id, run_id)
        await _answer(agent, thread_id, delegation, {"decision": "allow_thread"})
        review = await _wait_asked(agent, "changeset")
        conflicts = {f.path: f.conflict for f in review.files}  # type: ignore[union-attr]
        assert conflicts == {"notes.md": True, "other.txt": False}
        # Accepting the conflict too: it is still not applied.
        await _answer(agent, thread_id, review, {"accepted": ["notes.md", "other.txt"]})
        announcement = await _announced(agent, thread_id, plan_id, "completed")
        task = await _task(agent, thread_id)
        grants = (await agent.call("grant/list", {}))["grants"]
    finally:
        await agent.kill()
    # "Allow for this thread" left a grant that covers the next dispatch in the thread.
    assert [(g["thread_id"], g["server"], g["tool"]) for g in grants] == [
        (thread_id, "agents", "agent_run")
    ]
    assert (workspace / "notes.md").read_text() == "the author's notes\n"
    assert (workspace / "other.txt").read_text() == "y\n"
    conflict = "Conflicts (changed in the workspace meanwhile; not applied): notes.md."
    assert conflict in task["summary"]
    assert conflict in announcement


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


async def test_a_plan_grant_covers_the_dispatch_and_accepts_changes_in_named_paths_of_a_repository(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "notes")
    writes = {"docs/guide.md": "# Guide\n", "notes.md": "# Notes\nchanged\n"}
    agent = await _start(sidecar_data, workspace, _standin(tmp_path, writes))
    plan = {
        "goal": "write the guide",
        "tasks": [{"id": "guide", "title": "Guide", "objective": "Write docs", "profile": "codex"}],
    }
    try:
        thread_id, run_id = await _delegate(agent, "/plan " + json.dumps(plan))
        approval = await _wait_asked(agent, "plan_approval")
        # The plan is approved inside the turn: nothing runs in the background before.
        await agent.run_to_end(run_id, within=180)
        assert [e.run_id for e in agent.events if e.event.type == "interrupt"] == [run_id]
        assert agent.background_runs(thread_id) == []
        value = {"decision": "approve", "accept_paths": ["docs"]}
        resumed = await _answer(agent, thread_id, approval, value)
        plan_id = await _handed_off(agent, thread_id, resumed["run_id"], "guide")
        assert plan_id == approval.plan_id  # type: ignore[union-attr]
        grants = (await agent.call("grant/list", {}))["grants"]
        review = await _wait_asked(agent, "changeset")
        assert review.run_id == _plan_run(agent, thread_id)
        assert _asked(agent.events, "approval") == []  # the plan's grant covered the dispatch
        assert review.isolation == "worktree"  # type: ignore[union-attr]
        assert review.accepted_by_grant == ("docs/guide.md",)  # type: ignore[union-attr]
        assert [f.path for f in review.files] == ["notes.md"]  # type: ignore[union-attr]
        assert (workspace / "docs" / "guide.md").read_text() == "# Guide\n"
        folder = Path(_runs(tmp_path)[0]["cwd"])
        assert str(folder) in _git(workspace, "worktree", "list")
        await _answer(agent, thread_id, review, {"accepted": []})
        await _announced(agent, thread_id, plan_id, "completed")
        after = (await agent.call("grant/list", {}))["grants"]
    finally:
        await agent.kill()
    assert [(g["plan_id"], g["task_id"], g["paths"]) for g in grants if g.get("plan_id")] == [
        (approval.plan_id, "guide", ["docs"])  # type: ignore[union-attr]
    ]
    assert not [g for g in after if g.get("plan_id")]  # the grant ended with the plan
    assert (workspace / "notes.md").read_text() == "# Notes\nthe river is wide\n"
    assert _git(workspace, "worktree", "list").count("\n") == 1  # the worktree is gone
    assert not folder.exists()


def _relayed(events: list[RunEventParams], name: str) -> bool:
    """A subagent event relayed from the agent mentions the file (its file_change)."""
    return any(e.event.type == "subagent_event" and name in e.model_dump_json() for e in events)


async def test_a_cancelled_task_applies_nothing_and_its_copy_is_removed(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    env = _standin(tmp_path, {"new.txt": "half done\n"}, STANDIN_HANG="1")
    agent = await _start(sidecar_data, workspace, env)
    before = _files(workspace)
    try:
        thread_id, run_id = await _delegate(agent, "/delegate codex Start something long")
        delegation = await _wait_asked(agent, "approval")
        plan_id = await _handed_off(agent, thread_id, run_id)
        await _answer(agent, thread_id, delegation, {"decision": "allow_once"})
        await agent.wait_for(lambda evs: _relayed(evs, "new.txt"), within=180)
        folder = Path(_runs(tmp_path)[0]["cwd"])
        assert (folder / "new.txt").exists()
        assert (await _task(agent, thread_id))["status"] == "running"
        await agent.call("task/cancel", {"thread_id": thread_id, "task_id": "task"})
        announcement = await _announced(agent, thread_id, plan_id, "failed")
        task = await _task(agent, thread_id)
    finally:
        await agent.kill()
    assert task["status"] == "cancelled"
    assert "[cancelled] task (Start something long)" in announcement
    assert not folder.exists()  # removed before the task ended
    assert _asked(agent.events, "changeset") == []
    assert _files(workspace) == before


async def test_a_changeset_shown_before_a_crash_is_asked_again_by_itself_without_rerunning(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    env = _standin(tmp_path, {"new.txt": "from the agent\n"})
    agent = await _start(sidecar_data, workspace, env)
    thread_id, run_id = await _delegate(agent, "/delegate codex Write a file")
    delegation = await _wait_asked(agent, "approval")
    plan_id = await _handed_off(agent, thread_id, run_id)
    await _answer(agent, thread_id, delegation, {"decision": "allow_once"})
    await _wait_asked(agent, "changeset")
    await agent.kill()  # the author saw the changeset; the sidecar dies before the answer

    agent = await _start(sidecar_data, workspace, env)
    try:
        assert (workspace / "new.txt").exists() is False
        # Nobody retries: the plan the crash left running is taken up at start-up, in a
        # background run of its own, and asks again.
        review = await _wait_asked(agent, "changeset")
        assert review.run_id == _plan_run(agent, thread_id)
        assert agent.turns(thread_id) == []
        assert [f.path for f in review.files] == ["new.txt"]  # type: ignore[union-attr]
        # The turn that delegated had ended before the crash: there is no turn to retry.
        with pytest.raises(RpcFailure, match="no unfinished turn"):
            await agent.call("run/retry", {"thread_id": thread_id})
        await _answer(agent, thread_id, review, {"accepted": ["new.txt"]})
        announcement = await _announced(agent, thread_id, plan_id, "completed")
        task = await _task(agent, thread_id)
    finally:
        await agent.kill()
    assert len(_runs(tmp_path)) == 1  # the agent did not run again
    assert (workspace / "new.txt").read_text() == "from the agent\n"
    assert task["status"] == "succeeded"
    assert "Applied to the workspace: new.txt." in announcement


async def test_a_refused_delegation_runs_nothing_and_cancels_the_task(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    agent = await _start(sidecar_data, workspace, _standin(tmp_path, {"new.txt": "x\n"}))
    before = _files(workspace)
    try:
        thread_id, run_id = await _delegate(agent, "/delegate codex Write a file")
        delegation = await _wait_asked(agent, "approval")
        plan_id = await _handed_off(agent, thread_id, run_id)
        refuse = {"decision": "deny", "reason": "not now"}
        await _answer(agent, thread_id, delegation, refuse)
        announcement = await _announced(agent, thread_id, plan_id, "failed")
        task = await _task(agent, thread_id)
        grants = (await agent.call("grant/list", {}))["grants"]
    finally:
        await agent.kill()
    assert task["status"] == "cancelled"
    assert "[cancelled] task (Write a file)" in announcement
    assert _runs(tmp_path) == []  # the agent never started
    assert _files(workspace) == before
    assert grants == []
