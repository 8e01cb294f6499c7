"""What the model saw that the author did not write: when a turn has read untrusted content.

A turn that has read untrusted content may be steered by whoever wrote it, so what it does to
the author's memories is asked about (`sidecar.context.consent`) and what it saves is labelled
(`agent_after_untrusted`). The line between the two kinds:

- Trusted: the author's own words (their messages, their answers to the agent's questions,
  their commands), Atrium's own answers to the model (a staged memory write, a plan's ids when
  it starts in the background, the tools a tool search found: definitions a request carries
  in its tool list below the tool share, `sidecar.context.tool_search`), and memories the
  author wrote or reviewed.
- Untrusted: the output of every other tool (workspace files, the sandbox, external MCP
  servers, the web), other agents' results (the team tools, a plan's report delivered into the
  thread, a subagent's task, which another agent wrote), memories the agent saved after reading
  such content that the author has not reviewed (read through the memory tools or carried in
  the context), and earlier turns of the thread that had read some and are still in the
  context (their answers may repeat what they read; `ContextRepo.untrusted_within`).

A turn is marked once, by the node that let such content in (`TurnState.untrusted`, a line
saying why); nothing unmarks it before the turn ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from sidecar.context.tool_search import TOOL_SEARCH
from sidecar.turn.state import ChatEntry, TurnState

ASK_AUTHOR = "atrium__ask_author"
PLAN_TOOLS = frozenset({"atrium__plan", "atrium__delegate"})
"""On the author's thread these answer with the plan's ids (the plan runs in the background);
a plan's report reaches that thread only as an announcement. Joined inside a subagent's turn,
they carry other agents' results, but such a turn is untrusted from its start."""
MEMORY_PREFIX = "memory__"
MEMORY_READS = frozenset({"memory__search", "memory__read", "memory__list"})
TRUSTED_RESULTS = frozenset({ASK_AUTHOR, *PLAN_TOOLS, TOOL_SEARCH})

ANNOUNCEMENT_MARK = "[Background plan "
"""How a plan's report delivered into the thread starts (`sidecar.protocol.ANNOUNCEMENT_PREFIX`;
the graph may not import the wire protocol, a test keeps the two equal)."""

SUBAGENT = "this is a subagent's turn: its task was written by another agent"
ANNOUNCED = "a background plan's report (other agents' results) came into the turn"
UNTRUSTED_MEMORY = "a memory the agent saved after reading untrusted content, not reviewed"


def untrusted_result(name: str, structured: Mapping[str, object] | None = None) -> str | None:
    """Why the result of tool `name` (`server__tool`) is untrusted content, or None.

    A memory read is untrusted when it returns a memory the agent saved after reading
    untrusted content that the author has not reviewed; a memory write's answer is Atrium's.
    """
    if name in TRUSTED_RESULTS:
        return None
    if name in MEMORY_READS:
        return UNTRUSTED_MEMORY if _has_untrusted_memory(structured) else None
    if name.startswith(MEMORY_PREFIX):
        return None
    return f"the turn read the output of {name}"


def _has_untrusted_memory(structured: Mapping[str, object] | None) -> bool:
    """Whether a memory tool's structured result (`{"memories": [...]}`) holds a memory saved
    after untrusted content and not reviewed (one with no provenance counts as such)."""
    memories = (structured or {}).get("memories")
    if not isinstance(memories, list):
        return False
    for memory in cast(list[object], memories):
        if not isinstance(memory, dict):
            continue
        fields = cast(dict[str, object], memory)
        provenance = fields.get("provenance", "agent_after_untrusted")
        if provenance == "agent_after_untrusted" and not fields.get("reviewed"):
            return True
    return False


def is_announcement(text: str) -> bool:
    """Whether an author-side message is a plan's report delivered into the thread."""
    return text.startswith(ANNOUNCEMENT_MARK)


def steered_untrusted(entries: Iterable[ChatEntry]) -> str | None:
    """Why messages steered into a running turn are untrusted (a plan's report), or None."""
    if any(is_announcement(e["content"]) for e in entries):
        return ANNOUNCED
    return None


def turn_untrusted(state: TurnState) -> str | None:
    """Why the turn counts as having read untrusted content, or None.

    The mark in the state says it; a turn checkpointed by an earlier release has none, so its
    scratch is read: every tool result in it but the trusted ones (a memory read of that
    release counts as trusted, as what it returned is no longer known)."""
    marked = state.get("untrusted")
    if marked:
        return marked
    if state.get("agent"):
        return SUBAGENT
    for entry in state.get("scratch", []):
        if entry["role"] == "tool":
            reason = untrusted_result(entry.get("name", ""))
            if reason is not None:
                return reason
        elif entry["role"] == "user" and is_announcement(entry["content"]):
            return ANNOUNCED
    return None
