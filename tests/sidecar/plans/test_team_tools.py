"""The main agent's team tools on a real database: status of its plans, a task's whole result
paged (never cut), messages to a running subagent delivered once, a strong agent's refusal with
the way on, and cancelling a task or a plan."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

import pytest

from sidecar.host.types import ToolOutcome
from sidecar.plans.dag import TaskSpec
from sidecar.plans.deps import PlanDeps
from sidecar.plans.envelope import agent_id
from sidecar.plans.profiles import DEFAULT_PROFILES
from sidecar.plans.records import post_envelope, task_prompt
from sidecar.plans.task_messages import take_messages
from sidecar.plans.team_tools import (
    PAGE,
    TASK_CANCEL_TOOL,
    TASK_MESSAGE_TOOL,
    TASK_RESULT_TOOL,
    TEAM_STATUS_TOOL,
    team_call,
)
from sidecar.store import Store, TaskRecord, open_database
from sidecar.turn.state import ToolCallEntry

pytestmark = pytest.mark.anyio

LONG = "".join(f"line {n:05d} of the findings\n" for n in range(1000))  # 26,000 characters


@pytest.fixture
def deps(tmp_path: Path) -> PlanDeps:
    store = Store(open_database(tmp_path / "atrium.db"))
    thread = store.create_thread("t", thread_id="parent")
    store.create_plan("p", thread.id, "write the report", None)
    write = TaskSpec("write", "Write", "Write it.", "general").to_json()
    check = {**write, "id": "check", "title": "Check", "depends_on": ["write"]}
    code = {**write, "id": "code", "title": "Code", "profile": "claude"}
    store.replace_open_tasks("p", "write the report", [write, check, code])
    profiles = {p.id: p for p in DEFAULT_PROFILES}
    return PlanDeps(
        store,
        cast(Any, None),
        lambda: None,
        lambda: "",
        profiles=lambda: profiles,
        planner_for=lambda _m: None,
    )


def _call(name: str, **arguments: Any) -> ToolCallEntry:
    return {"id": f"call-{name}-{len(arguments)}", "name": name, "arguments": arguments}


def _task(deps: PlanDeps, task_id: str) -> TaskRecord:
    task = deps.store.get_task("p", task_id)
    assert task is not None
    return task


def _finish_with(deps: PlanDeps, task_id: str, findings: str) -> None:
    task = _task(deps, task_id)
    post_envelope(deps.store, task, "parent", kind="final", payload={"findings": findings})
    deps.store.update_task("p", task_id, task.version, status="succeeded", summary=findings[:4000])


async def test_status_lists_the_threads_plans_and_refuses_another_threads(deps: PlanDeps):
    outcome = await team_call(deps, "parent", _call(TEAM_STATUS_TOOL))
    assert not outcome.is_error
    assert "Plan p (" in outcome.text and "write [pending] Write (general)" in outcome.text
    deps.store.create_thread("other", thread_id="other")
    refused = await team_call(deps, "other", _call(TEAM_STATUS_TOOL, plan_id="p"))
    assert refused.is_error and "no plan 'p'" in refused.text


async def test_a_long_result_comes_whole_page_by_page(deps: PlanDeps):
    _finish_with(deps, "write", LONG)
    pages: list[str] = []
    offset = 0
    while True:
        outcome = await team_call(
            deps, "parent", _call(TASK_RESULT_TOOL, plan_id="p", task_id="write", offset=offset)
        )
        assert not outcome.is_error
        page, _, tail = outcome.text.rpartition("\n")
        pages.append(page)
        if "the end" in tail:
            break
        offset += PAGE
    assert "".join(pages) == LONG
    assert len(pages) == -(-len(LONG) // PAGE)


async def test_a_dependent_task_is_given_the_whole_result_it_depends_on(deps: PlanDeps):
    _finish_with(deps, "write", LONG)
    assert LONG in task_prompt(deps.store, _task(deps, "check"))


async def test_a_message_reaches_a_running_subagent_once_before_its_next_step(deps: PlanDeps):
    task = _task(deps, "write")
    deps.store.update_task("p", "write", task.version, status="running")
    sub = deps.store.create_thread("write", parent_id="parent").id
    sent = await team_call(
        deps,
        "parent",
        _call(TASK_MESSAGE_TOOL, plan_id="p", task_id="write", text="Use British spelling."),
    )
    assert not sent.is_error
    [envelope] = deps.store.envelopes_for(agent_id("parent", "write"))
    assert (envelope.kind, envelope.reply_to) == ("message", "call-atrium__task_message-3")
    taken = take_messages(deps, "parent", "write", sub)
    assert [e["content"] for e in taken] == ["[Message from the main agent] Use British spelling."]
    assert take_messages(deps, "parent", "write", sub) == []
    [message] = deps.store.recent_messages(sub, 5)
    assert message.content == taken[0]["content"]


async def test_a_codex_task_cannot_be_messaged_mid_run_and_is_told_the_way_on(deps: PlanDeps):
    spec = TaskSpec("fix", "Fix", "Fix it.", "codex").to_json()
    deps.store.replace_open_tasks("p", "write the report", [spec])
    task = _task(deps, "fix")
    deps.store.update_task("p", "fix", task.version, status="running")
    refused = await team_call(
        deps, "parent", _call(TASK_MESSAGE_TOOL, plan_id="p", task_id="fix", text="Stop.")
    )
    assert refused.is_error and "takes no input while it works" in refused.text
    assert TASK_CANCEL_TOOL in refused.text and "plan_id='p'" in refused.text
    assert deps.store.envelopes_for(agent_id("parent", "fix")) == []


class _AgentsHost:
    """The agents server's `agent_message`, as the host reaches it."""

    def __init__(self, outcome: ToolOutcome) -> None:
        self.outcome = outcome
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, name: str, arguments: dict[str, Any], on_progress: object) -> ToolOutcome:
        del on_progress
        self.calls.append((name, arguments))
        return self.outcome


async def test_a_message_to_claude_code_goes_to_the_run_working_on_its_task(deps: PlanDeps):
    task = _task(deps, "code")
    deps.store.update_task("p", "code", task.version, status="running")
    call = _call(TASK_MESSAGE_TOOL, plan_id="p", task_id="code", text="Use British spelling.")
    idle = await team_call(deps, "parent", call)  # no run of its agent is going
    assert idle.is_error and "has no Claude Code run going right now" in idle.text
    host = _AgentsHost(ToolOutcome(is_error=False, text="{}"))
    deps = dataclasses.replace(deps, host=cast(Any, host))
    deps.coordinator.agent_run_started("p", "code", "run-7")
    sent = await team_call(deps, "parent", call)
    assert not sent.is_error and "takes the message as its next turn" in sent.text
    assert host.calls == [
        ("agents__agent_message", {"run_id": "run-7", "text": "Use British spelling."})
    ]
    [envelope] = deps.store.envelopes_of_task("p", "code")
    assert (envelope.kind, envelope.payload["text"], envelope.reply_to) == (
        "message",
        "Use British spelling.",
        call["id"],
    )
    assert envelope.acked_at is not None  # delivered: nobody reads it again
    host.outcome = ToolOutcome(is_error=True, text="[unknown_run] the run has finished")
    refused = await team_call(deps, "parent", {**call, "id": "again"})
    assert refused.is_error and "did not take the message: [unknown_run]" in refused.text


async def test_cancelling_a_waiting_task_and_then_the_plan(deps: PlanDeps):
    outcome = await team_call(deps, "parent", _call(TASK_CANCEL_TOOL, plan_id="p", task_id="check"))
    assert not outcome.is_error
    assert deps.coordinator.take_cancel("p", "check")
    outcome = await team_call(deps, "parent", _call(TASK_CANCEL_TOOL, plan_id="p"))
    assert not outcome.is_error and deps.coordinator.aborted("p")


async def test_bad_arguments_are_refused_in_words(deps: PlanDeps):
    missing = await team_call(deps, "parent", _call(TASK_RESULT_TOOL, plan_id="p"))
    assert missing.is_error and "task_id is required" in missing.text
    bad = await team_call(
        deps, "parent", _call(TASK_RESULT_TOOL, plan_id="p", task_id="write", offset=-1)
    )
    assert bad.is_error and "offset" in bad.text
    unknown = await team_call(deps, "parent", _call(TASK_RESULT_TOOL, plan_id="p", task_id="nope"))
    assert unknown.is_error and "no task 'nope'" in unknown.text
