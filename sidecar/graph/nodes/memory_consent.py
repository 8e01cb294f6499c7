"""A memory change made after untrusted content, put to the author before it is staged.

The planner's memory calls leave such a change a call to run (`sidecar.context.staging`); the
tool node hands it here instead of to a server. The question is an `approval` like any tool's,
carrying the memory before and after (`sidecar.context.consent`).
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.types import interrupt

from sidecar.context.consent import ALLOWED, memory_change, memory_question
from sidecar.context.staging import (
    PREFIX,
    check_write,
    scope_for,
    scoped,
    source_message,
    staged_op,
)
from sidecar.context.taint import turn_untrusted
from sidecar.graph.deps import GraphDeps
from sidecar.host.types import ToolOutcome
from sidecar.turn.state import StagedWrite, ToolCallEntry, TurnState

UNTRUSTED_UNKNOWN = "the turn read content the author did not write"


def ask_memory_change(
    deps: GraphDeps, state: TurnState, call: ToolCallEntry
) -> tuple[ToolOutcome, list[StagedWrite]]:
    """Ask the author about a memory change made after untrusted content (an `approval`
    interrupt with the memory before and after): yes stages it, approved; no answers the
    model's call with the refusal and stages nothing.

    Nothing before the interrupt has an effect, so the pass re-run on resume asks the same."""
    mem = deps.memory
    thread_id = state["thread_id"]
    scope = scope_for(thread_id, mem.contexts.settings(thread_id).channel, deps.workspace())
    tool = str(call["name"])[len(PREFIX) :]
    arguments = scoped(cast(dict[str, Any], call.get("arguments") or {}), scope)
    problem = check_write(mem.memory, scope, tool, arguments)
    if problem is not None:
        return ToolOutcome(is_error=True, text=problem), []
    op = staged_op(
        call,
        arguments,
        scope=scope,
        turn_id=state["turn_id"],
        source_message=source_message(deps.store, state),
        provenance="agent_after_untrusted",
    )
    change = memory_change(mem.memory, op, turn_untrusted(state) or UNTRUSTED_UNKNOWN)
    answer = interrupt(memory_question(call, change, op["arguments"]))
    decision = cast(dict[str, Any], answer) if isinstance(answer, dict) else {}
    if decision.get("decision") in ALLOWED:
        approved: StagedWrite = {**op, "approved": True}
        text = (
            f"The author approved this change ({tool} {op['key']}): it is saved when this "
            "turn ends."
        )
        return ToolOutcome(is_error=False, text=text), [approved]
    reason = decision.get("reason")
    text = (
        f"The author said no to this memory change ({tool} {op['key']}): nothing was saved. "
        "Do not try it again in this turn."
    )
    return ToolOutcome(is_error=True, text=text + (f" Reason: {reason}" if reason else "")), []
