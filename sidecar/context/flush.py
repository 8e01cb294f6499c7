"""persist's half of staged memory writes: apply them at the end of the turn, once, each with
its provenance.

A write made after untrusted content that needs the author's yes and has none (the memory
changed since it was staged, or an earlier release staged it) is not applied: it fails with
`[needs_approval]` (`sidecar.context.consent`). What the author approved is saved as reviewed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from mcp_servers.memory import Memory, MemoryErrorCode, MemoryRefusal, MemoryStore, Scope
from sidecar.context.consent import held, needs_consent, provenance_for
from sidecar.turn.events import MemoryAction
from sidecar.turn.state import StagedWrite


@dataclass(frozen=True, slots=True)
class Applied:
    """What one staged write did: `action` is saved, updated, forgotten, pinned, unpinned or
    failed (with `error`)."""

    action: MemoryAction
    key: str
    memory: Memory | None = None
    error: str | None = None


def apply_staged(
    memory: MemoryStore, ops: list[StagedWrite], *, untrusted: str | None = None
) -> list[Applied]:
    """Apply staged writes in order. Each is idempotent: a write replaces its own key, and a
    memory already forgotten by an earlier flush of the same turn counts as forgotten.

    `untrusted` is why the turn counts as having read untrusted content (None: it has not);
    it decides the provenance of a write staged without one."""
    done: list[Applied] = []
    for staged in ops:
        key = str(staged["key"])
        op: StagedWrite = {
            **staged,
            "provenance": staged.get("provenance")
            or provenance_for(by_author=False, untrusted=untrusted),
        }
        if (
            op["provenance"] == "agent_after_untrusted"
            and not op.get("approved")
            and needs_consent(memory, op)
        ):
            done.append(Applied("failed", key, error=held(op)))
            continue
        try:
            done.append(_apply(memory, op, key))
        except MemoryRefusal as exc:
            if op["op"] == "forget" and exc.code is MemoryErrorCode.NOT_FOUND:
                done.append(Applied("forgotten", key))
            else:
                done.append(Applied("failed", key, error=str(exc)))
    return done


def _apply(memory: MemoryStore, op: StagedWrite, key: str) -> Applied:
    arguments = cast(dict[str, Any], op.get("arguments") or {})
    scope = Scope(**cast(dict[str, str | None], op["scope"]))
    provenance = op.get("provenance", "agent_after_untrusted")
    # The author saw and allowed this change: it needs no second review in the Memory panel.
    reviewed = bool(op.get("approved"))
    source = arguments.get("source_message") or op.get("source_message")
    kind = op["op"]
    if kind == "write":
        saved = memory.write(
            scope,
            str(arguments.get("tier") or "workspace"),
            str(arguments.get("text") or ""),
            provenance=provenance,
            reviewed=reviewed,
            source_message=source,
            pinned=bool(arguments.get("pinned")),
            key=key,
        )
        return Applied("saved", key, saved)
    if kind == "forget":
        return Applied("forgotten", key, memory.forget(key))
    if kind == "pin":
        pinned = bool(arguments.get("pinned", True))
        changed = memory.update(key, pinned=pinned, provenance=provenance, reviewed=reviewed)
        return Applied("pinned" if pinned else "unpinned", key, changed)
    text = arguments.get("text")
    updated = memory.update(
        key,
        text=text,
        tier=arguments.get("tier"),
        scope=scope,
        provenance=provenance,
        reviewed=reviewed,
        source_message=op.get("source_message") if text is not None else None,
    )
    return Applied("updated", key, updated)
