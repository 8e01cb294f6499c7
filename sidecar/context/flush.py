"""persist's half of staged memory writes: apply them at the end of the turn, once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from mcp_servers.memory import Memory, MemoryErrorCode, MemoryRefusal, MemoryStore, Scope
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


def apply_staged(memory: MemoryStore, ops: list[StagedWrite]) -> list[Applied]:
    """Apply staged writes in order. Each is idempotent: a write replaces its own key, and a
    memory already forgotten by an earlier flush of the same turn counts as forgotten."""
    done: list[Applied] = []
    for op in ops:
        key = str(op["key"])
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
    kind = op["op"]
    if kind == "write":
        saved = memory.write(
            scope,
            str(arguments.get("tier") or "workspace"),
            str(arguments.get("text") or ""),
            by="agent",
            source_message=arguments.get("source_message") or op.get("source_message"),
            pinned=bool(arguments.get("pinned")),
            key=key,
        )
        return Applied("saved", key, saved)
    if kind == "forget":
        return Applied("forgotten", key, memory.forget(key))
    if kind == "pin":
        pinned = bool(arguments.get("pinned", True))
        return Applied("pinned" if pinned else "unpinned", key, memory.update(key, pinned=pinned))
    updated = memory.update(
        key, text=arguments.get("text"), tier=arguments.get("tier"), scope=scope
    )
    return Applied("updated", key, updated)
