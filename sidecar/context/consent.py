"""The author's consent to memory changes made by a turn that read untrusted content.

Such a turn (`sidecar.context.taint`) may be carrying instructions someone else wrote, so its
memory writes, still staged until the turn ends, are sorted when staged:

- a change the author must see first waits for their answer in the approval dialog, with the
  memory before and after: one that changes or forgets a memory the author wrote or a pinned
  one (a pinned memory is in front of the model on every turn), pins or unpins a memory, or
  touches the account tier (a new memory there, a change of one there, a move there: it
  reaches every workspace). Yes stages it, marked approved; no drops it, and the model's call
  is answered with the refusal.
- any other is staged at once, saved with provenance `agent_after_untrusted` and left for the
  author's review in the Memory panel.

Persist checks each again against the memories as they are then (`needs_consent`), so a change
staged before the author pinned its memory, or staged by an earlier release, is never saved
unasked. The author's own edits (the Memory panel, a `/call` they typed) are never asked about.
"""

from __future__ import annotations

import difflib

from mcp_servers.memory import (
    PROVENANCE_LABELS,
    Memory,
    MemoryRefusal,
    MemoryStore,
    Provenance,
    check_text,
)
from sidecar.json_value import JsonObject
from sidecar.turn.questions import ApprovalQuestion, MemoryChangeEntry, MemorySideEntry
from sidecar.turn.state import StagedWrite, ToolCallEntry

ACCOUNT = "account"
ALLOWED = frozenset({"allow_once", "allow_thread", "allow_always"})
"""Answers that say yes. A memory change is allowed once whatever the button: no grant is kept,
so the next change is asked about too."""


def provenance_for(*, by_author: bool, untrusted: str | None) -> Provenance:
    """The provenance of what a turn saves: the author's own command, the agent from the
    author's words, or the agent after untrusted content."""
    if by_author:
        return "author"
    return "agent_after_untrusted" if untrusted else "agent_from_author"


def _current(memory: MemoryStore, key: str) -> Memory | None:
    try:
        return memory.read(key)
    except MemoryRefusal:
        return None


def needs_consent(memory: MemoryStore, op: StagedWrite) -> bool:
    """Whether this change, made after untrusted content, waits for the author's yes (see the
    module docstring), judged against the memory as it is now."""
    arguments = op["arguments"]
    kind = op["op"]
    if kind == "write":
        return str(arguments.get("tier") or "workspace") == ACCOUNT or bool(arguments.get("pinned"))
    if kind == "pin":
        return True
    before = _current(memory, op["key"])
    if before is None:
        return False  # nothing to change: applying it fails on its own
    if before.provenance == "author" or before.pinned or before.tier == ACCOUNT:
        return True
    return kind == "update" and arguments.get("tier") == ACCOUNT


def held(op: StagedWrite) -> str:
    """The error of a change persist would not save unasked."""
    return (
        f"[needs_approval] {op['op']} of memory {op['key']} was not saved: it was made after "
        "reading untrusted content and needs the author's yes"
    )


def _side(memory: Memory) -> MemorySideEntry:
    return {
        "tier": memory.tier,
        "text": memory.text,
        "pinned": memory.pinned,
        "provenance": memory.provenance,
    }


def _after(before: Memory | None, op: StagedWrite) -> MemorySideEntry | None:
    arguments = op["arguments"]
    kind = op["op"]
    provenance = op.get("provenance", "agent_after_untrusted")
    if kind == "forget":
        return None
    if kind == "write" or before is None:
        return {
            "tier": str(arguments.get("tier") or "workspace"),
            "text": check_text(str(arguments.get("text") or "")),
            "pinned": bool(arguments.get("pinned")),
            "provenance": provenance,
        }
    text = arguments.get("text")
    tier = arguments.get("tier")
    return {
        "tier": str(tier) if tier is not None and kind == "update" else before.tier,
        "text": check_text(str(text)) if text is not None and kind == "update" else before.text,
        "pinned": bool(arguments.get("pinned", True)) if kind == "pin" else before.pinned,
        "provenance": provenance,
    }


def memory_change(memory: MemoryStore, op: StagedWrite, untrusted: str) -> MemoryChangeEntry:
    """The change `op` would make, before and after.

    Raises:
        MemoryRefusal: the new text is empty or too long (`check_write` refused it already).
    """
    before = None if op["op"] == "write" else _current(memory, op["key"])
    return {
        "key": op["key"],
        "op": op["op"],
        "before": None if before is None else _side(before),
        "after": _after(before, op),
        "untrusted": untrusted,
    }


def _lines(side: MemorySideEntry | None) -> list[str]:
    if side is None:
        return []
    label = PROVENANCE_LABELS.get(side["provenance"], side["provenance"])
    pinned = "yes" if side["pinned"] else "no"
    head = [f"tier: {side['tier']}", f"pinned: {pinned}", f"written: {label}", ""]
    return head + side["text"].splitlines()


def change_diff(change: MemoryChangeEntry) -> str:
    """A unified diff of the memory, as it is against as it would be."""
    lines = difflib.unified_diff(
        _lines(change["before"]),
        _lines(change["after"]),
        fromfile=f"memory {change['key']} (now)" if change["before"] else "/dev/null",
        tofile=f"memory {change['key']} (after)" if change["after"] else "/dev/null",
        lineterm="",
    )
    return "\n".join(lines)


_TITLES = {
    "write": "Save a memory?",
    "update": "Change a memory?",
    "forget": "Forget a memory?",
    "pin": "Pin or unpin a memory?",
}


def _what(change: MemoryChangeEntry) -> str:
    before, after = change["before"], change["after"]
    if before is None and after is not None:
        pin = " pinned" if after["pinned"] else ""
        return f"save a new{pin} memory in the {after['tier']} tier"
    if before is None:
        return f"change memory {change['key']}"
    whose = "your" if before["provenance"] == "author" else "a"
    pinned = " pinned" if before["pinned"] else ""
    target = f"{whose}{pinned} {before['tier']} memory"
    if after is None:
        return f"forget {target}"
    if after["pinned"] != before["pinned"]:
        return f"{'pin' if after['pinned'] else 'unpin'} {target}"
    if after["tier"] != before["tier"] and after["text"] == before["text"]:
        return f"move {target} to the {after['tier']} tier"
    return f"change {target}"


def memory_question(
    call: ToolCallEntry, change: MemoryChangeEntry, arguments: JsonObject
) -> ApprovalQuestion:
    """The approval the author answers for `change`, asked by the model's `call` (its
    `arguments` as the model sent them, without the scope the host fills in)."""
    body = (
        f"The agent wants to {_what(change)}. This turn read content you did not write "
        f"({change['untrusted']}), so the request may come from that content rather than "
        "from you. Yes saves the change when the turn ends; no drops it and tells the agent."
    )
    return {
        "kind": "approval",
        "title": _TITLES.get(change["op"], "Change a memory?"),
        "body": body,
        "server": "memory",
        "tool": change["op"],
        "arguments": dict(arguments),
        "call_id": call["id"],
        "diff": change_diff(change),
        "memory": change,
    }
