"""Memory calls of the planner: reads run through the memory server with this turn's scope;
writes are checked, staged in graph state and flushed by persist when the turn ends.

A staged write answers the model at once ("staged"), so the turn goes on; nothing reaches the
store until persist. A failed or cancelled turn therefore writes no memory, and a turn resumed
from its checkpoint flushes its staged writes once: each carries a key derived from its call id,
so writing it again replaces the same memory.

Each staged write carries its provenance, decided when it is staged
(`sidecar.context.consent.provenance_for`). One made after untrusted content that the author
must see first (`consent.needs_consent`) is not answered here: it stays a call to run, and the
tool node asks the author about it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from mcp_servers.memory import (
    SCOPE_ARGUMENTS,
    WRITE_TOOLS,
    MemoryRefusal,
    MemoryStore,
    Provenance,
    Scope,
    check_text,
    check_tier,
    public_schema,
)
from sidecar.context.consent import needs_consent
from sidecar.host.types import ToolOutcome
from sidecar.llm.types import ToolSpec
from sidecar.store import Store
from sidecar.store.records import question_id
from sidecar.turn.state import StagedWrite, ToolCallEntry, TurnState

MEMORY_SERVER = "memory"
PREFIX = f"{MEMORY_SERVER}__"


def scope_for(thread_id: str, channel: str | None, workspace: Path) -> Scope:
    return Scope(thread=thread_id, channel=channel, workspace=str(workspace))


def model_spec(spec: ToolSpec) -> ToolSpec:
    """What the model sees of a memory tool: no host-filled scope arguments."""
    if not spec.name.startswith(PREFIX):
        return spec
    return ToolSpec(spec.name, spec.description, public_schema(spec.input_schema))


def scoped(arguments: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """A memory call's arguments with this turn's scope filled in (the model cannot pick
    another thread's)."""
    plain = {k: v for k, v in arguments.items() if k not in SCOPE_ARGUMENTS}
    return {**plain, "thread": scope.thread, "channel": scope.channel, "workspace": scope.workspace}


def is_memory_change(name: str) -> bool:
    """Whether a `server__tool` name is a memory write (write, update, forget, pin)."""
    return name.startswith(PREFIX) and name[len(PREFIX) :] in WRITE_TOOLS


def source_message(store: Store, state: TurnState) -> str | None:
    """The author's message this turn answers: the source of the memories it saves."""
    own = question_id(state["turn_id"])
    if store.has_message(own):
        return own
    return store.last_user_message_id(state["thread_id"])


def staged_op(
    call: ToolCallEntry,
    arguments: dict[str, Any],
    *,
    scope: Scope,
    turn_id: str,
    source_message: str | None,
    provenance: Provenance,
) -> StagedWrite:
    """The staged form of memory write `call` (its `arguments` scoped)."""
    tool = str(call["name"])[len(PREFIX) :]
    return {
        "op": tool,
        "call_id": call["id"],
        "key": arguments.get("key") or stage_key(turn_id, str(call["id"])),
        "arguments": {k: v for k, v in arguments.items() if k not in SCOPE_ARGUMENTS},
        "scope": {"thread": scope.thread, "channel": scope.channel, "workspace": scope.workspace},
        "source_message": source_message,
        "provenance": provenance,
    }


def stage_key(turn_id: str, call_id: str) -> str:
    return f"m_{turn_id[:12]}_{call_id[-16:]}"


def check_write(
    memory: MemoryStore, scope: Scope, tool: str, arguments: dict[str, Any]
) -> str | None:
    """Why this write would be refused now, or None (checked again at flush)."""
    try:
        if tool == "write":
            check_tier(str(arguments.get("tier") or "workspace"))
            check_text(str(arguments.get("text") or ""))
            scope.prefix(check_tier(str(arguments.get("tier") or "workspace")))
            claimed = arguments.get("source_message")
            if claimed:
                memory.check_source(scope.thread, str(claimed), "agent")
        else:
            memory.visible(str(arguments.get("key") or ""), scope)
            if tool == "update" and arguments.get("text") is not None:
                check_text(str(arguments["text"]))
            if tool == "update" and arguments.get("tier") is not None:
                scope.prefix(check_tier(str(arguments["tier"])))
    except MemoryRefusal as exc:
        return str(exc)
    return None


def route_memory_calls(
    calls: list[ToolCallEntry],
    *,
    memory: MemoryStore,
    scope: Scope,
    turn_id: str,
    source_message: str | None,
    provenance: Provenance = "agent_from_author",
) -> tuple[list[ToolCallEntry], list[StagedWrite], list[tuple[ToolCallEntry, ToolOutcome]]]:
    """Split the planner's calls: (calls to run, staged writes, answered calls with outcomes).

    Memory reads stay calls to run, with this turn's scope filled in; memory writes are
    checked and either staged with `provenance` (answered "staged"), refused (answered with
    the error), or, made after untrusted content and needing the author's yes, left calls to
    run (scoped) for the tool node to ask about.
    """
    run: list[ToolCallEntry] = []
    staged: list[StagedWrite] = []
    answered: list[tuple[ToolCallEntry, ToolOutcome]] = []
    for call in calls:
        name = str(call["name"])
        if not name.startswith(PREFIX):
            run.append(call)
            continue
        tool = name[len(PREFIX) :]
        arguments = scoped(cast(dict[str, Any], call.get("arguments") or {}), scope)
        if tool not in WRITE_TOOLS:
            run.append({**call, "arguments": arguments})
            continue
        problem = check_write(memory, scope, tool, arguments)
        if problem is not None:
            answered.append((call, ToolOutcome(is_error=True, text=problem)))
            continue
        op = staged_op(
            call,
            arguments,
            scope=scope,
            turn_id=turn_id,
            source_message=source_message,
            provenance=provenance,
        )
        if provenance == "agent_after_untrusted" and needs_consent(memory, op):
            run.append({**call, "arguments": arguments})
            continue
        staged.append(op)
        text = (
            f"Staged ({tool} {op['key']}): it is saved when this turn ends, and the author "
            "sees it in the transcript."
        )
        answered.append((call, ToolOutcome(is_error=False, text=text)))
    return run, staged, answered
