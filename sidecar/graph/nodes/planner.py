"""planner: decide the next step — answer, call tools, or ask the author.

Direct commands (`/tools`, `/call`) and a thread with no model configured are decided here too,
without a model, so the app stays useful before it is configured.
"""

from __future__ import annotations

import functools
import uuid
from typing import Any, cast

from sidecar.context.budget import budget_for
from sidecar.context.taint import steered_untrusted, turn_untrusted
from sidecar.context.tool_search import ToolChoice, choose_tools
from sidecar.graph.commands import (
    CallCommand,
    CommandError,
    CompactCommand,
    DelegateCommand,
    PlanCommand,
    RoutineCommand,
    SkillCommand,
    ToolsCommand,
    is_call,
    parse_command,
)
from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.memory_calls import stage_memory_calls
from sidecar.graph.nodes.tool import agent_profile
from sidecar.graph.nodes.tool_offer import host_tools, load_named
from sidecar.llm.types import ChatTurn, Planner, PlannerDecision, ToolCallRequest, ToolSpec
from sidecar.plans.dag import PlanError
from sidecar.plans.planner_tools import (
    DELEGATE,
    DISPATCH_TOOLS,
    PLAN,
    delegate_arguments,
    dispatch_specs,
    plan_arguments,
)
from sidecar.plans.roster import roster
from sidecar.plans.routines import RoutineError, instantiate
from sidecar.plans.routines import load as load_routine
from sidecar.plans.skill_composer import material_for, skill_task
from sidecar.plans.skill_draft import DraftError, Job
from sidecar.plans.task_messages import note_spec, take_messages
from sidecar.plans.team_tools import team_specs
from sidecar.plans.thread_budget import check_turn
from sidecar.turn.events import TokenStreamed, UsageCounted, emit
from sidecar.turn.state import ChatEntry, Role, TurnState

ASK_AUTHOR = "atrium__ask_author"
ASK_AUTHOR_SPEC = ToolSpec(
    name=ASK_AUTHOR,
    description=(
        "Ask the author a question and wait for the answer. Use it when you need a decision or "
        "information only the author has. Give `choices` for a multiple-choice question."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["question"],
    },
)


def to_chat_turn(entry: ChatEntry) -> ChatTurn:
    """The entry as the planner's turn. A plain message (a role and its text, as every message
    of the context is) is made once and reused turn after turn: a window of thousands of
    messages is converted again only where it changed."""
    if len(entry) == 2:
        return _plain_turn(entry["role"], entry["content"])
    calls = tuple(
        ToolCallRequest(id=c["id"], name=c["name"], arguments=c["arguments"])
        for c in entry.get("tool_calls", ())
    )
    # Tool output is marked as untrusted data by the planner when it renders the history.
    return ChatTurn(
        role=entry["role"],
        content=entry.get("content", ""),
        tool_calls=calls,
        tool_call_id=entry.get("tool_call_id"),
        name=entry.get("name"),
    )


@functools.lru_cache(maxsize=32_768)
def _plain_turn(role: Role, content: str) -> ChatTurn:
    return ChatTurn(role=role, content=content)


def _answer(text: str) -> dict[str, Any]:
    emit(TokenStreamed(text))
    return {"answer": text, "route": "persist"}


def make_planner(deps: GraphDeps):
    async def planner(state: TurnState) -> dict[str, Any]:
        if state.get("dispatch_phase") == "start":
            return {"route": "dispatch"}
        if state.get("pending"):
            return {"route": "tool"}
        await deps.host.check_required()
        if state.get("direct"):
            return stage_memory_calls(deps, state, _direct(state, deps))
        planner_impl = _model_for(deps, state)
        if planner_impl is None:
            return _answer(deps.how_to_configure())
        steps = int(state.get("steps") or 0) + 1
        if state.get("agent") and steps > deps.coordinator.timings.max_steps:
            text = f"Stopped after {steps - 1} steps with work left."
            return {**_answer(text), "incomplete": True, "steps": 0}
        stopped = check_turn(deps, state)
        if stopped is not None:
            return stopped
        steered = _steering(deps, state)
        history = [
            to_chat_turn(e)
            for e in [*state.get("context", []), *state.get("scratch", []), *steered]
        ]

        async def on_token(text: str) -> None:
            emit(TokenStreamed(text))

        # A subagent's tokens reach nobody (its answer is its result): no streaming for it.
        sink = None if state.get("agent") else on_token
        tools = request_tools(deps, state, state.get("window")).tools
        decision = await planner_impl.decide(history, tools, sink)
        load_named(deps, state["thread_id"], decision.tool_calls)
        if decision.usage:
            emit(UsageCounted(decision.usage))
        untrusted = turn_untrusted(state) or steered_untrusted(steered)
        routed = stage_memory_calls(deps, state, _route(decision), untrusted)
        if steered:
            routed["scratch"] = [*steered, *routed.get("scratch", [])]
        if untrusted is not None and not state.get("untrusted"):
            routed["untrusted"] = untrusted
        return {**routed, "steps": steps, "usage": dict(decision.usage)}

    return planner


def _steering(deps: GraphDeps, state: TurnState) -> list[ChatEntry]:
    """What reached this turn since its last step: on the author's thread, the author's steer
    messages, each marked with its queue id so a retried step knows which ones the turn already
    holds; on a subagent's, the main agent's messages to its task."""
    agent = state.get("agent")
    if agent is not None:
        return take_messages(deps, agent["parent_thread_id"], agent["task_id"], state["thread_id"])
    seen = {e["queued_id"] for e in state.get("scratch", []) if "queued_id" in e}
    taken = deps.steering(state["thread_id"], state.get("turn_id"), seen)
    return [{"role": "user", "content": text, "queued_id": qid} for qid, text in taken]


def _model_for(deps: GraphDeps, state: TurnState) -> Planner | None:
    profile = agent_profile(deps, state)
    if profile is not None and profile.model:
        return deps.planner_for(profile.model)
    return deps.planner()


def _tools_for(deps: GraphDeps, state: TurnState) -> list[ToolSpec]:
    """The author's agent sees every tool but the agents server's; a subagent only its
    profile's, and may hand work on only if its profile may spawn and the depth allows."""
    profile = agent_profile(deps, state)
    tools = host_tools(deps, profile)
    tools.append(ASK_AUTHOR_SPEC)
    if profile is None:
        tools.extend(team_specs())
    elif (agent := state.get("agent")) is not None and len(deps.store.tasks(agent["plan_id"])) > 1:
        tools.append(note_spec())  # it has sibling tasks to tell or ask
    depth = int((state.get("agent") or {}).get("depth", 0))
    profiles = deps.profiles()
    if profile is None or (profile.may_spawn and depth < profile.max_depth):
        entries = roster(profiles, deps.coordinator)
        usable = {e.profile.id: e.line() for e in entries if e.profile.max_depth > depth}
        if usable:
            tools.extend(dispatch_specs(usable))
    return tools


def request_tools(deps: GraphDeps, state: TurnState, window: int | None) -> ToolChoice:
    """The tools of the turn's next request for a model of `window` tokens (None: unknown):
    every one, or past the tool share of the window the core, the thread's loaded tools and
    `atrium__tool_search` (`sidecar.context.tool_search`)."""
    loaded = deps.store.loaded_tools.loaded_tools(state["thread_id"])
    return choose_tools(_tools_for(deps, state), loaded, window=budget_for(window).window)


def _route(decision: PlannerDecision) -> dict[str, Any]:
    if decision.kind == "answer":
        return {"answer": decision.text, "route": "persist"}
    calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in decision.tool_calls]
    assistant = {"role": "assistant", "content": decision.text, "tool_calls": calls}
    dispatches = [c for c in calls if c["name"] in DISPATCH_TOOLS]
    if dispatches:
        return {
            "scratch": [assistant],
            "plan_call": dispatches[0],
            "dispatch_phase": "plan",
            "route": "dispatch",
            "pending": [c for c in calls if c["name"] not in DISPATCH_TOOLS],
        }
    asks = [c for c in calls if c["name"] == ASK_AUTHOR]
    if asks:
        return {
            "scratch": [assistant],
            "question": asks[0],
            "route": "interrupt",
            "pending": [c for c in calls if c["name"] != ASK_AUTHOR],
        }
    return {"scratch": [assistant], "pending": calls, "route": "tool"}


def _direct(state: TurnState, deps: GraphDeps) -> dict[str, Any]:
    """A direct command: the first pass parses it, the pass after its tool call reports."""
    results = [e for e in state.get("scratch", []) if e["role"] == "tool"]
    if results:
        if is_call(state["text"]) and _failed(deps, results[-1]):
            return {"answer": "", "route": "persist"}  # the failed call is the report
        return _answer(results[-1]["content"])
    try:
        command = parse_command(state["text"])
    except CommandError as exc:
        return _answer(str(exc))
    if isinstance(command, ToolsCommand):
        return _answer(_format_tools(deps))
    if isinstance(command, CompactCommand):
        return _answer(state.get("notice") or "Nothing was summarized.")
    if isinstance(command, DelegateCommand | PlanCommand):
        return _direct_dispatch(command)
    if isinstance(command, RoutineCommand):
        return _routine_dispatch(deps, command)
    if isinstance(command, SkillCommand):
        return _skill_dispatch(deps, state, command)
    assert isinstance(command, CallCommand)
    call = {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "name": command.name,
        "arguments": command.arguments,
    }
    assistant = {"role": "assistant", "content": "", "tool_calls": [call]}
    return {"scratch": [assistant], "pending": [call], "route": "tool"}


def _failed(deps: GraphDeps, result: ChatEntry) -> bool:
    """Whether the tool result in the scratch was stored as a failure (`is_error`)."""
    record = deps.store.message(f"{result.get('tool_call_id')}:result")
    return record is not None and record.is_error


def _format_tools(deps: GraphDeps) -> str:
    tools = deps.host.tools()
    if not tools:
        return "No tools are available: no MCP server is connected."
    lines = [f"{len(tools)} tools:"]
    for t in sorted(tools, key=lambda t: t.name):
        kind = "read-only" if t.read_only else "asks first"
        params = ", ".join(cast(dict[str, Any], t.input_schema.get("properties", {})))
        summary = t.description.strip().splitlines()[0] if t.description.strip() else ""
        lines.append(f"- {t.name}({params}) [{kind}]: {summary}")
    return "\n".join(lines)


def _routine_dispatch(deps: GraphDeps, command: RoutineCommand) -> dict[str, Any]:
    """`/routine`: the saved plan with the author's values, dispatched with no planning call."""
    try:
        routine = load_routine(deps.workspace(), command.name)
        goal, tasks = instantiate(routine, command.args)
    except RoutineError as exc:
        return _answer(str(exc))
    arguments = {
        "goal": goal,
        "tasks": [t.to_json() for t in tasks],
        "routine": {"name": routine.name, "args": command.args},
    }
    return _dispatch_call(PLAN, arguments)


def _skill_dispatch(deps: GraphDeps, state: TurnState, command: SkillCommand) -> dict[str, Any]:
    """`/skill new`: one task for the Skill Composer, with no planning call."""
    try:
        material = material_for(deps, state["thread_id"], command.plan_id)
    except DraftError as exc:
        return _answer(str(exc))
    return _dispatch_call(DELEGATE, skill_task(Job(command.name, command.target), material))


def _direct_dispatch(command: DelegateCommand | PlanCommand) -> dict[str, Any]:
    """`/delegate` and `/plan` start the same machinery as the planner's dispatch tools."""
    try:
        if isinstance(command, DelegateCommand) and command.raw is not None:
            name, arguments = DELEGATE, plan_arguments(command.raw)
        elif isinstance(command, DelegateCommand):
            name, arguments = DELEGATE, delegate_arguments(command.profile, command.task)
        else:
            name, arguments = PLAN, plan_arguments(command.raw)
    except PlanError as exc:
        return _answer(str(exc))
    return _dispatch_call(name, arguments)


def _dispatch_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{uuid.uuid4().hex[:12]}", "name": name, "arguments": arguments}
    assistant = {"role": "assistant", "content": "", "tool_calls": [call]}
    return {
        "scratch": [assistant],
        "plan_call": call,
        "dispatch_phase": "plan",
        "route": "dispatch",
    }
