"""The memory MCP server: search, read, list, write, update, forget and pin memories by tier.

`build_server(store, scope)` serves one `MemoryStore`. Every tool takes optional `thread`,
`channel` and `workspace` arguments naming the conversation it works for; a host that serves
several conversations (Atrium) fills them in itself, a standalone server uses its own `scope`.
Refusals are `isError` results reading `[<code>] <message>`. The tools are coroutines, so the
SDK runs them on the event loop rather than in worker threads: inside Atrium they share the
sidecar's one SQLite connection, whose transactions must not interleave across threads.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from mcp_servers.serving import build_mcp_server

from .errors import MemoryRefusal
from .store import Author, Memory, MemoryStore, Provenance, Scope, Tier

SERVER_NAME = "atrium-memory"
SCOPE_ARGUMENTS = ("thread", "channel", "workspace")
WRITE_TOOLS = frozenset({"write", "update", "forget", "pin"})

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

TierArg = Annotated[
    str,
    Field(
        description=(
            "Where the memory lives: 'thread' (this conversation only), 'channel' (the threads "
            "of this channel), 'workspace' (all work in this workspace folder) or 'account' "
            "(the author, in every workspace)."
        )
    ),
]
ScopeArg = Annotated[
    str | None, Field(description="Set by the host; leave empty.", json_schema_extra={"x-host": 1})
]
KeyArg = Annotated[str, Field(description="The memory's key, as a listing shows it.")]


class MemoryEntry(BaseModel):
    """One memory as a tool returns it (`Memory.to_dict()`)."""

    key: str = Field(description="Its key, for read, update, forget and pin.")
    tier: Tier
    text: str
    by: Author = Field(description="Who wrote it.")
    created_at: float = Field(description="Seconds since the epoch.")
    updated_at: float = Field(description="Seconds since the epoch.")
    pinned: bool
    source_thread: str | None = None
    source_message: str | None = None
    scope_label: str | None = None
    provenance: Provenance = Field(description="Where its text came from.")
    reviewed: bool = Field(description="Whether the author has reviewed it.")


class MemoryList(BaseModel):
    """What every memory tool returns as structured content: the memories it found or
    changed."""

    memories: list[MemoryEntry]


MemoryResult = Annotated[CallToolResult, MemoryList]

WRITE_GUIDE = (
    "Save a memory when the author states a lasting fact about themselves or the work (names, "
    "dates, decisions, preferences, constraints), or asks you to remember something. Do not "
    "save small talk, things that only matter for this message, guesses or your own "
    "hypotheses, secrets (keys, passwords), or whole documents (save the fact, not the text). "
    "One fact per memory, in a sentence that reads well on its own. Prefer 'account' for facts "
    "about the author, 'workspace' for facts about this work, 'thread' for this conversation."
)


@contextmanager
def _refusals() -> Generator[None]:
    try:
        yield
    except MemoryRefusal as exc:
        raise ToolError(str(exc)) from exc


PROVENANCE_LABELS: dict[str, str] = {
    "author": "by the author",
    "agent_from_author": "by the agent, from the author's words",
    "agent_after_untrusted": "by the agent, after reading untrusted content",
}


def describe(memory: Memory) -> str:
    pin = ", pinned" if memory.pinned else ""
    review = ", not reviewed" if memory.unreviewed else ""
    who = PROVENANCE_LABELS[memory.provenance]
    return f"- [{memory.key}] ({memory.tier}{pin}, {who}{review}) {memory.text}"


def _result(memories: Sequence[Memory], text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"memories": [m.to_dict() for m in memories]},
    )


def _listing(memories: Sequence[Memory], empty: str) -> CallToolResult:
    return _result(memories, "\n".join(describe(m) for m in memories) or empty)


class _Scopes:
    def __init__(self, default: Scope) -> None:
        self.default = default

    def __call__(self, thread: str | None, channel: str | None, workspace: str | None) -> Scope:
        if thread is None and channel is None and workspace is None:
            return self.default
        return Scope(thread=thread, channel=channel, workspace=workspace)


def build_server(store: MemoryStore, scope: Scope | None = None) -> MCPServer:
    """Serve `store`; `scope` is the conversation assumed when a call names none."""
    server = build_mcp_server(
        SERVER_NAME,
        title="Atrium memory",
        instructions=(
            "Long-term memory in four tiers (thread, channel, workspace, account). Search before "
            "asking the author something they may have told you already. " + WRITE_GUIDE
        ),
    )
    scopes = _Scopes(scope or Scope())
    _add_reads(server, store, scopes)
    _add_write(server, store, scopes)
    _add_changes(server, store, scopes)
    return server


def _add_reads(server: MCPServer, store: MemoryStore, scopes: _Scopes) -> None:
    @server.tool(name="search", title="Search memories", annotations=_READ_ONLY)
    async def search(
        query: Annotated[str, Field(description="Words to look for (plain text).")],
        tiers: Annotated[list[str] | None, Field(description="Only these tiers.")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Most memories to return.")] = 10,
        *,
        thread: ScopeArg = None,
        channel: ScopeArg = None,
        workspace: ScopeArg = None,
    ) -> MemoryResult:
        """Find memories by their words, best match first. Use it before asking the author
        something they may already have told you."""
        with _refusals():
            scope = scopes(thread, channel, workspace)
            found = store.search(scope, query, tiers=tiers, limit=limit)
        return _listing(found, "No memory matches.")

    @server.tool(name="read", title="Read a memory", annotations=_READ_ONLY)
    async def read(
        key: KeyArg, thread: ScopeArg = None, channel: ScopeArg = None, workspace: ScopeArg = None
    ) -> MemoryResult:
        """Read one memory by its key, with where it came from."""
        with _refusals():
            memory = store.visible(key, scopes(thread, channel, workspace))
        source = f" (source: thread {memory.source_thread}, message {memory.source_message})"
        return _result([memory], describe(memory) + (source if memory.source_message else ""))

    @server.tool(name="list", title="List memories", annotations=_READ_ONLY)
    async def list_(
        tier: Annotated[str | None, Field(description="Only this tier.")] = None,
        pinned_only: Annotated[bool, Field(description="Only pinned memories.")] = False,
        limit: Annotated[int, Field(ge=1, le=500, description="Most memories to return.")] = 50,
        *,
        thread: ScopeArg = None,
        channel: ScopeArg = None,
        workspace: ScopeArg = None,
    ) -> MemoryResult:
        """List memories, newest first."""
        with _refusals():
            found = store.recent(
                scopes(thread, channel, workspace),
                None if tier is None else [tier],
                limit=limit,
                pinned_only=pinned_only,
            )
        return _listing(found, "No memories yet.")


def _add_write(server: MCPServer, store: MemoryStore, scopes: _Scopes) -> None:
    @server.tool(name="write", title="Save a memory", annotations=_WRITES, description=WRITE_GUIDE)
    async def write(
        text: Annotated[str, Field(description="The fact, as one sentence that stands alone.")],
        tier: TierArg = "workspace",
        pinned: Annotated[
            bool, Field(description="Keep it in front of you on every turn (use sparingly).")
        ] = False,
        source_message: Annotated[
            str | None, Field(description="The id of the message this fact comes from.")
        ] = None,
        *,
        thread: ScopeArg = None,
        channel: ScopeArg = None,
        workspace: ScopeArg = None,
    ) -> MemoryResult:
        # A server cannot tell what its caller had read: the agent's memory counts as saved after
        # untrusted content (Atrium stages the model's writes itself and says better).
        with _refusals():
            memory = store.write(
                scopes(thread, channel, workspace),
                tier,
                text,
                provenance="agent_after_untrusted",
                source_message=source_message,
                pinned=pinned,
            )
        return _result([memory], f"Saved {describe(memory)}")


def _add_changes(server: MCPServer, store: MemoryStore, scopes: _Scopes) -> None:
    @server.tool(name="update", title="Change a memory", annotations=_WRITES)
    async def update(
        key: KeyArg,
        text: Annotated[str | None, Field(description="The corrected fact.")] = None,
        tier: Annotated[str | None, Field(description="Move it to this tier.")] = None,
        *,
        thread: ScopeArg = None,
        channel: ScopeArg = None,
        workspace: ScopeArg = None,
    ) -> MemoryResult:
        """Correct a memory that is wrong or out of date (rather than saving a second one)."""
        with _refusals():
            scope = scopes(thread, channel, workspace)
            store.visible(key, scope)
            memory = store.update(
                key, text=text, tier=tier, scope=scope, provenance="agent_after_untrusted"
            )
        return _result([memory], f"Updated {describe(memory)}")

    @server.tool(name="forget", title="Forget a memory", annotations=_WRITES)
    async def forget(
        key: KeyArg, thread: ScopeArg = None, channel: ScopeArg = None, workspace: ScopeArg = None
    ) -> MemoryResult:
        """Delete a memory that is wrong or that the author asks you to forget."""
        with _refusals():
            store.visible(key, scopes(thread, channel, workspace))
            memory = store.forget(key)
        return _result([memory], f"Forgot {describe(memory)}")

    @server.tool(name="pin", title="Pin a memory", annotations=_WRITES)
    async def pin(
        key: KeyArg,
        pinned: Annotated[bool, Field(description="True pins it, false unpins it.")] = True,
        thread: ScopeArg = None,
        channel: ScopeArg = None,
        workspace: ScopeArg = None,
    ) -> MemoryResult:
        """Pin a memory (always in context, never summarized away) or unpin it."""
        with _refusals():
            store.visible(key, scopes(thread, channel, workspace))
            memory = store.update(key, pinned=pinned)
        verb = "Pinned" if pinned else "Unpinned"
        return _result([memory], f"{verb} {describe(memory)}")


def public_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without the host-filled scope arguments (what a model sees)."""
    properties = {
        k: v for k, v in dict(schema.get("properties") or {}).items() if k not in SCOPE_ARGUMENTS
    }
    required: list[str] = [
        str(r) for r in cast(list[object], schema.get("required") or []) if r not in SCOPE_ARGUMENTS
    ]
    return {**schema, "properties": properties, "required": required}
