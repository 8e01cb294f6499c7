"""tool: run the next pending call through the host: permission → approval → journal → call.

One call per pass, so a pass raises at most one interrupt and re-running it on resume repeats
no side effect: the journal answers for a call that already ran. A call that may have run
before a crash (an intent with no result) never runs again on its own, not even on an approval
LangGraph replays from before the crash: it raises `CallUncertainError`, and the turn waits on
the author's decision (mark as done / run again / skip, see `sidecar.store.uncertain`).

A memory change the planner left here (made after untrusted content, see
`sidecar.graph.nodes.memory_consent`) is asked about instead of run. A result that is untrusted
content (`sidecar.context.taint`) marks the turn. `atrium__tool_search` is answered here too:
what it finds is loaded for the thread's next requests (`sidecar.graph.nodes.tool_offer`).
"""

from __future__ import annotations

import contextvars
from typing import Any, cast

from langgraph.types import interrupt

from sidecar.binding.calls import in_flight
from sidecar.context.staging import is_memory_change
from sidecar.context.taint import untrusted_result
from sidecar.context.tool_search import TOOL_SEARCH
from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.memory_consent import ask_memory_change
from sidecar.graph.nodes.tool_offer import answer_search
from sidecar.host import drift, permissions
from sidecar.host.host import ServerUnavailableError, ToolHost
from sidecar.host.types import HostTool, ToolOutcome, UnknownToolError, split_name
from sidecar.plans.profiles import Profile
from sidecar.plans.task_messages import NOTE_TOOL, post_note
from sidecar.plans.team_tools import TEAM_TOOLS, team_call
from sidecar.store import Store
from sidecar.store.records import JournalRecord, StoredToolCall
from sidecar.store.uncertain import AGAIN, CallUncertainError, journal_key
from sidecar.store.undo_watch import watch_tool_call
from sidecar.turn.events import MessageWritten, ToolCalled, ToolFinished, ToolProgressed, emit
from sidecar.turn.questions import ApprovalQuestion
from sidecar.turn.state import AgentIdentity, StagedWrite, ToolCallEntry, TurnState


def agent_profile(deps: GraphDeps, state: TurnState) -> Profile | None:
    """The profile of the subagent whose turn this is; None on the author's own thread."""
    agent = state.get("agent")
    if not agent:
        return None
    profile = deps.profiles().get(str(agent.get("profile")))
    if profile is None:
        # A profile removed mid-run leaves the subagent nothing rather than everything.
        return Profile(id="removed", name="removed", tools_allowed=("-",))
    return profile


def make_tool(deps: GraphDeps):
    async def tool(state: TurnState) -> dict[str, Any]:
        pending = list(state.get("pending", []))
        if not pending:
            return {"route": "planner"}
        call = pending[0]
        profile = agent_profile(deps, state)
        staged: list[StagedWrite] = []
        if call["name"] == TOOL_SEARCH:  # Atrium's own: searches only what the agent may call
            outcome = await _tool_search(deps, state["thread_id"], profile, call)
        elif call["name"] == NOTE_TOOL and (agent := state.get("agent")) is not None:
            outcome = _team_note(deps, state["thread_id"], agent, call)
        elif profile is not None and not profile.allows_tool(call["name"]):
            text = f"{call['name']} is not among this subagent's tools."
            record_call(deps.store, state["thread_id"], call)
            outcome = ToolOutcome(is_error=True, text=text)
            record_result(deps.store, state["thread_id"], call["id"], outcome)
        elif is_memory_change(call["name"]):
            outcome, staged = _memory_change(deps, state, call)
        elif call["name"] in TEAM_TOOLS:
            outcome = await _team_call(deps, state["thread_id"], call)
        else:
            outcome = await run_call(deps, state["thread_id"], call)
        entry = {
            "role": "tool",
            "tool_call_id": call["id"],
            "name": call["name"],
            "content": outcome.text,
        }
        update: dict[str, Any] = {"scratch": [entry], "pending": pending[1:]}
        if staged:
            update["memory_writes"] = staged
        untrusted = untrusted_result(call["name"], outcome.structured)
        if untrusted is not None and not state.get("untrusted"):
            update["untrusted"] = untrusted
        return update

    return tool


def _memory_change(
    deps: GraphDeps, state: TurnState, call: ToolCallEntry
) -> tuple[ToolOutcome, list[StagedWrite]]:
    """A memory change made after untrusted content: the author says yes (staged) or no."""
    thread_id = state["thread_id"]
    record_call(deps.store, thread_id, call)
    emit(ToolCalled(call["id"], "memory", call["name"].partition("__")[2], call["arguments"]))
    outcome, staged = ask_memory_change(deps, state, call)
    record_result(deps.store, thread_id, call["id"], outcome)
    return outcome, staged


async def _tool_search(
    deps: GraphDeps, thread_id: str, profile: Profile | None, call: ToolCallEntry
) -> ToolOutcome:
    """`atrium__tool_search`: what it finds is loaded for the thread's next requests; answered
    once per call (a re-run after a crash finds the recorded result)."""
    record_call(deps.store, thread_id, call)
    emit(ToolCalled(call["id"], "atrium", TOOL_SEARCH[len("atrium__") :], call["arguments"]))
    recorded = deps.store.message(f"{call['id']}:result")
    if recorded is not None:
        outcome = ToolOutcome(is_error=recorded.is_error, text=recorded.content)
    else:
        outcome = await answer_search(deps, thread_id, profile, call)
    record_result(deps.store, thread_id, call["id"], outcome)
    return outcome


def _team_note(
    deps: GraphDeps, thread_id: str, agent: AgentIdentity, call: ToolCallEntry
) -> ToolOutcome:
    """A subagent's note to a sibling task of its plan, posted once per call (a re-run after a
    crash finds the recorded result)."""
    record_call(deps.store, thread_id, call)
    emit(ToolCalled(call["id"], "atrium", NOTE_TOOL[len("atrium__") :], call["arguments"]))
    recorded = deps.store.message(f"{call['id']}:result")
    if recorded is not None:
        outcome = ToolOutcome(is_error=recorded.is_error, text=recorded.content)
    else:
        outcome = post_note(deps, agent, call["id"], dict(call["arguments"]))
    record_result(deps.store, thread_id, call["id"], outcome)
    return outcome


async def _team_call(deps: GraphDeps, thread_id: str, call: ToolCallEntry) -> ToolOutcome:
    """The main agent's team tools: answered from the plans, once per call (a re-run after a
    crash finds the recorded result)."""
    record_call(deps.store, thread_id, call)
    emit(ToolCalled(call["id"], "atrium", call["name"][len("atrium__") :], call["arguments"]))
    recorded = deps.store.message(f"{call['id']}:result")
    if recorded is not None:
        outcome = ToolOutcome(is_error=recorded.is_error, text=recorded.content)
    else:
        try:
            outcome = await team_call(deps, thread_id, call)
        except (UnknownToolError, ServerUnavailableError) as exc:  # the agents server is down
            outcome = ToolOutcome(is_error=True, text=str(exc))
    record_result(deps.store, thread_id, call["id"], outcome)
    return outcome


def record_call(store: Store, thread_id: str, call: ToolCallEntry) -> None:
    server, _, tool = call["name"].partition("__")
    if store.has_message(call["id"]):
        return
    stored = StoredToolCall(id=call["id"], server=server, tool=tool, arguments=call["arguments"])
    record = store.add_message(
        thread_id, "assistant", "", message_id=call["id"], tool_calls=[stored]
    )
    emit(MessageWritten(record))


def record_result(store: Store, thread_id: str, call_id: str, outcome: ToolOutcome) -> None:
    """Write the call's result to the conversation (once) and stream it."""
    emit(ToolFinished(call_id, outcome.is_error, outcome.text))
    message_id = f"{call_id}:result"
    if not store.has_message(message_id):
        record = store.add_message(
            thread_id,
            "tool",
            outcome.text,
            message_id=message_id,
            tool_call_id=call_id,
            is_error=outcome.is_error,
        )
        emit(MessageWritten(record))


async def run_call(deps: GraphDeps, thread_id: str, call: ToolCallEntry) -> ToolOutcome:
    store = deps.store
    name, arguments = call["name"], call["arguments"]
    record_call(store, thread_id, call)
    server, tool_name = _split(name)
    emit(ToolCalled(call["id"], server, tool_name, arguments))
    key = journal_key(thread_id, call["id"])
    entry = store.journal_entry(key)
    if entry is not None and entry.result is not None:
        outcome = ToolOutcome.from_json(entry.result)
    elif entry is not None:
        outcome = await _run_again(deps, thread_id, call, entry)
    else:
        outcome = await _permitted_call(deps, thread_id, call)
    record_result(store, thread_id, call["id"], outcome)
    return outcome


def _split(name: str) -> tuple[str, str]:
    try:
        return split_name(name)
    except UnknownToolError:
        return "", name


async def _run_again(
    deps: GraphDeps, thread_id: str, call: ToolCallEntry, entry: JournalRecord
) -> ToolOutcome:
    """A call with an intent and no result runs only on the author's "run again"."""
    if entry.status != AGAIN:
        raise CallUncertainError(entry.key)
    await deps.host.wait_ready()
    await deps.host.wait_for_tool(call["name"])
    try:
        tool = deps.host.find(call["name"])
    except UnknownToolError as exc:
        return ToolOutcome(is_error=True, text=f"Unknown tool: {exc}")
    deps.store.rearm_intent(entry.key)
    return await _execute(deps, thread_id, tool, call)


async def _permitted_call(deps: GraphDeps, thread_id: str, call: ToolCallEntry) -> ToolOutcome:
    store, host = deps.store, deps.host
    await host.wait_ready()
    await host.wait_for_tool(call["name"])
    try:
        tool = host.find(call["name"])
    except UnknownToolError as exc:
        return ToolOutcome(is_error=True, text=f"Unknown tool: {exc}")
    changed = _definition_change(store, tool)
    granted = store.has_grant(thread_id, tool.server, tool.tool)
    verdict = permissions.decide(tool, thread_granted=granted, drifted=changed is not None)
    if verdict == "ask":
        payload = await _approval_payload(host, tool, call, changed=changed)
        answer = _as_dict(interrupt(payload))
        decision = answer.get("decision")
        if decision in ("allow_once", "allow_thread", "allow_always"):
            store.approve_tool(
                tool.server, tool.tool, drift.tool_hash(tool), drift.definition(tool)
            )
        if decision == "allow_thread":
            store.add_grant(thread_id, tool.server, tool.tool)
        elif decision == "allow_always":
            store.add_standing_grant(tool.server, tool.tool)
        elif decision != "allow_once":
            return _denied(tool, answer.get("reason"), held=changed is not None)
    return await _execute(deps, thread_id, tool, call)


def _definition_change(store: Store, tool: HostTool) -> str | None:
    """The diff of the tool's definition against the one the author approved, if it changed."""
    approved = store.tool_approval(tool.server, tool.tool)
    if approved is None or approved.hash == drift.tool_hash(tool):
        return None
    return drift.definition_diff(approved.definition, drift.definition(tool))


def _denied(tool: HostTool, reason: object, *, held: bool) -> ToolOutcome:
    suffix = f" Reason: {reason}" if reason else ""
    if held:
        text = (
            f"Held: the definition of {tool.name} changed since the author approved it, and it "
            f"needs the author's re-approval before it can run.{suffix}"
        )
        return ToolOutcome(is_error=True, text=text)
    return ToolOutcome(is_error=True, text=f"The author denied this call.{suffix}")


async def _execute(
    deps: GraphDeps, thread_id: str, tool: HostTool, call: ToolCallEntry
) -> ToolOutcome:
    key = journal_key(thread_id, call["id"])
    if not tool.read_only:
        deps.store.journal_intent(key, thread_id, tool.server, tool.tool, call["arguments"])

    # Progress arrives on the server session's task, outside this node's LangGraph context
    # (which the stream writer needs), so it is emitted in a copy of this node's context.
    node_context = contextvars.copy_context()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        node_context.run(emit, ToolProgressed(call["id"], progress, total, message))

    # Undo: the workspace files this write names, before and after (sidecar.store.undo_watch).
    watch = None
    if not tool.read_only:
        watch = await watch_tool_call(
            deps.store.db, thread_id, deps.workspace(), tool.server, call["arguments"]
        )
    try:
        # Registered while in flight, so the server's elicitation/sampling reaches this run.
        with in_flight(tool.server, call["id"]):
            outcome = await deps.host.call(call["name"], call["arguments"], on_progress)
    except (UnknownToolError, ServerUnavailableError) as exc:
        outcome = ToolOutcome(is_error=True, text=str(exc))
    if not tool.read_only:
        deps.store.journal_result(key, outcome.to_json())
    if watch is not None:
        await watch.done()
    return outcome


async def _approval_payload(
    host: ToolHost, tool: HostTool, call: ToolCallEntry, *, changed: str | None
) -> ApprovalQuestion:
    diff = await _preview(host, tool, call["arguments"])
    body = f"{tool.server} wants to run {tool.tool}."
    if changed is not None:
        body += " Its definition changed since you approved it; it is held until you approve again."
    return {
        "kind": "approval",
        "title": f"Allow {tool.name}?",
        "body": body,
        "server": tool.server,
        "tool": tool.tool,
        "arguments": call["arguments"],
        "call_id": call["id"],
        "diff": diff,
        "definition_changed": changed is not None,
        "definition_diff": changed,
    }


async def _preview(host: ToolHost, tool: HostTool, arguments: dict[str, Any]) -> str | None:
    """A server that offers a read-only `preview` tool, taking the same arguments as its writing
    tools, shows what the write would change."""
    try:
        preview = host.find(f"{tool.server}__preview")
    except UnknownToolError:
        return None
    if not preview.read_only:
        return None
    try:
        outcome = await host.call(preview.name, arguments)
    except (UnknownToolError, ServerUnavailableError):
        return None  # no preview: the approval is asked without one
    if outcome.is_error:
        return None
    if outcome.structured and isinstance(outcome.structured.get("diff"), str):
        return str(outcome.structured["diff"])
    return outcome.text


def _as_dict(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}
