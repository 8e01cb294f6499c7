"""A coordinator you can leave alone: a strong agent that goes silent is stalled within its
profile's `stall_seconds`, however many heartbeats the agents server sends meanwhile (a heartbeat
says the process lives, not that the agent did anything), through the real sidecar, the real
agents server and a stand-in Codex CLI that prints a few lines and hangs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import RunEventParams
from tests.e2e.harness import Sidecar
from tests.e2e.test_review_gate import _answer, _handed_off, _standin, _wait_asked

pytestmark = pytest.mark.anyio

STALL_S = 4.0
TIMEOUT_S = 120.0


def _heartbeats(events: list[RunEventParams]) -> int:
    return sum(
        1
        for e in events
        if e.event.type == "subagent_event" and '\\"type\\":\\"heartbeat\\"' in e.model_dump_json()
    )


async def test_a_silent_strong_agent_is_stalled_despite_its_heartbeats(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    env = _standin(tmp_path, {"draft.md": "half\n"}, STANDIN_HANG="1")
    agent = await Sidecar.start(sidecar_data, workspace, ATRIUM_AGENTS_HEARTBEAT_S="0.5", **env)
    try:
        listed = await agent.call("profile/list")
        profiles: list[dict[str, Any]] = [
            {**p, "stall_seconds": STALL_S, "timeout": TIMEOUT_S, "max_attempts": 1}
            if p["id"] == "codex"
            else p
            for p in listed["profiles"]
        ]
        await agent.call("profile/set", {"profiles": profiles})
        thread_id = (await agent.call("thread/create", {}))["id"]
        await agent.call("thread/set_autonomous", {"thread_id": thread_id, "autonomous": True})
        text = "/delegate codex Draft the chapter"
        run_id = (await agent.call("run/start", {"thread_id": thread_id, "text": text}))["run_id"]
        delegation = await _wait_asked(agent, "approval")
        await _handed_off(agent, thread_id, run_id)
        await _answer(agent, thread_id, delegation, {"decision": "allow_once"})
        started = time.monotonic()
        [plan_run] = agent.background_runs(thread_id)
        events = await agent.run_to_end(plan_run, within=TIMEOUT_S)
        took = time.monotonic() - started
        plan = (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]
    finally:
        await agent.kill()
    [task] = plan["tasks"]
    assert (task["status"], task["stalled"]) == ("failed", True)
    assert _heartbeats(events) >= 3  # the server kept beating while the agent was silent
    assert took < TIMEOUT_S / 2, f"stopped after {took:.1f} s: the timeout, not the stall"


async def test_a_plan_naming_a_missing_cli_is_refused_before_approval_with_the_fix(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    agent = await Sidecar.start(
        sidecar_data, workspace, ATRIUM_CLAUDE_BIN=str(tmp_path / "no-such-claude")
    )
    try:
        thread_id = (await agent.call("thread/create", {}))["id"]
        text = "/delegate claude Write hello.txt"
        run_id = (await agent.call("run/start", {"thread_id": thread_id, "text": text}))["run_id"]
        events = await agent.run_to_end(run_id)
        got = await agent.call("thread/get", {"thread_id": thread_id})
        plans = (await agent.call("plan/get", {"thread_id": thread_id}))["plans"]
    finally:
        await agent.kill()
    assert not [e for e in events if e.event.type == "interrupt"]  # never put to approval
    assert plans == [] and agent.background_runs(thread_id) == []
    refusal = [m for m in got["messages"] if m["role"] == "tool"][-1]
    assert refusal["is_error"] and "Claude Code is not installed here" in refusal["content"]
    assert "another profile" in refusal["content"]


async def test_a_refused_key_is_not_retried_and_the_author_is_asked_at_once_with_the_fix(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    env = _standin(tmp_path, {}, STANDIN_FAIL="unexpected status 401 Unauthorized: bad key")
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        thread_id = (await agent.call("thread/create", {}))["id"]
        text = "/delegate codex Write hello.txt"
        run_id = (await agent.call("run/start", {"thread_id": thread_id, "text": text}))["run_id"]
        delegation = await _wait_asked(agent, "approval")
        await _handed_off(agent, thread_id, run_id)
        await _answer(agent, thread_id, delegation, {"decision": "allow_once"})
        escalation = await _wait_asked(agent, "escalation")
        plan = (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]
    finally:
        await agent.kill()
    [task] = plan["tasks"]
    assert task["attempt"] == 1  # once: a refused key is not retried with backoff
    assert escalation.attempts == 1  # type: ignore[union-attr]
    assert "not signed in" in escalation.error  # type: ignore[union-attr]
    assert "bad key" in escalation.error  # type: ignore[union-attr]
