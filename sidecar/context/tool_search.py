"""Tool search: past a share of the model's window, a request carries only some tool definitions.

While every definition fits in `share` of the model's input window (10% by default; the
environment's `ATRIUM_TOOL_SEARCH_SHARE`, a fraction, changes it), every request carries every
tool. Past it, a request carries:

- the core (`is_core`): Atrium's own tools (`atrium__*`: asking the author, the team tools,
  plan and delegate, and the search itself) and the built-in servers' essentials in
  `CORE_TOOLS`: reading, searching and changing the workspace, running Python in the sandbox,
  searching, reading and saving memories, listing and loading skills; what most turns do. The
  rest of the built-ins (the workspace's preview, listing, changing, pinning and forgetting
  memories, the schedule server, a skill's files and scripts) are one search away;
- the thread's loaded tools (`sidecar.store.loaded_tools`: found by a search, or named by the
  model), newest first while they fit in the share; the `NEWEST_ALWAYS` newest even past it,
  so that what a search found always reaches the model;
- `atrium__tool_search`, which finds tools by BM25 over their names, descriptions and
  parameter names (`sidecar.store.tool_index`), a server's name narrowing it (a facet), and
  loads what it found for the next request.

Every other tool is deferred: the context report counts them. A call naming a deferred tool
is not refused: it runs as any other (with the author's approval where one is needed) and
loads the tool.

Sizes are of a definition as OpenAI's `tools` array carries it, in JSON; tokens are estimated
at `BYTES_PER_TOKEN`, fewer bytes a token than prose has, so the share is a ceiling (OpenAI's
o200k encoding takes 3.7 bytes a token of the 301-tool test server's definitions).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sidecar.llm.types import ToolSpec
from sidecar.store.tool_index import IndexResult, ToolDocument, ToolIndex

TOOL_SEARCH = "atrium__tool_search"
ATRIUM_PREFIX = "atrium__"
SHARE_ENV = "ATRIUM_TOOL_SEARCH_SHARE"
DEFAULT_SHARE = 0.10
BYTES_PER_TOKEN = 3
NEWEST_ALWAYS = 5
DEFAULT_RESULTS = 5
MAX_RESULTS = 20
SUMMARY_CHARS = 160
INDEXES_KEPT = 4

CORE_TOOLS = frozenset(
    {
        "workspace__list",
        "workspace__read",
        "workspace__search",
        "workspace__write",
        "workspace__edit",
        "sandbox__run_python",
        "memory__search",
        "memory__read",
        "memory__write",
        "skills__list",
        "skills__load",
    }
)
"""The built-in servers' essentials, sent whatever the share (see the module's docstring)."""


def is_core(name: str) -> bool:
    """Whether tool `name` is in every request: Atrium's own or a built-in essential."""
    return name.startswith(ATRIUM_PREFIX) or name in CORE_TOOLS


def configured_share() -> float:
    """The share of the window tool definitions may take before some are deferred."""
    raw = os.environ.get(SHARE_ENV, "").strip()
    try:
        share = float(raw)
    except ValueError:
        return DEFAULT_SHARE
    return share if 0 < share <= 1 else DEFAULT_SHARE


def definition_bytes(spec: ToolSpec) -> int:
    """The bytes of the tool's definition in a request (OpenAI's function form, JSON)."""
    definition = {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input_schema,
        },
    }
    return len(json.dumps(definition).encode())


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """The tools one request carries, and the names of those it leaves out (deferred)."""

    tools: tuple[ToolSpec, ...]
    deferred: tuple[str, ...]
    sent_bytes: int
    offered_bytes: int
    budget_bytes: int


def choose_tools(
    offered: Sequence[ToolSpec],
    loaded: Sequence[str],
    *,
    window: int,
    share: float | None = None,
) -> ToolChoice:
    """The tools of one request out of `offered` (in their order, the search last), given the
    thread's `loaded` tools newest first and the model's input `window` in tokens."""
    share = configured_share() if share is None else share
    budget = int(window * share * BYTES_PER_TOKEN)
    sizes = {t.name: definition_bytes(t) for t in offered}
    total = sum(sizes.values())
    if total <= budget:
        return ToolChoice(tuple(offered), (), total, total, budget)
    search = tool_search_spec(offered)
    chosen = {t.name for t in offered if is_core(t.name)}
    used = sum(sizes[name] for name in chosen) + definition_bytes(search)
    newest = (n for n in dict.fromkeys(loaded) if n in sizes and n not in chosen)
    for rank, name in enumerate(newest):
        if rank < NEWEST_ALWAYS or used + sizes[name] <= budget:
            chosen.add(name)
            used += sizes[name]
    deferred = tuple(t.name for t in offered if t.name not in chosen)
    if not deferred:  # the core alone passes the share: nothing is left to search for
        return ToolChoice(tuple(offered), (), total, total, budget)
    tools = (*(t for t in offered if t.name in chosen), search)
    return ToolChoice(tools, deferred, used, total, budget)


def _servers(offered: Sequence[ToolSpec]) -> dict[str, int]:
    """Each server of the searchable tools, with its number of tools."""
    counts: dict[str, int] = {}
    for spec in offered:
        if not spec.name.startswith(ATRIUM_PREFIX):
            server = spec.name.partition("__")[0]
            counts[server] = counts.get(server, 0) + 1
    return counts


def tool_search_spec(offered: Sequence[ToolSpec]) -> ToolSpec:
    """`atrium__tool_search`, naming the servers it searches (the same while the tools are)."""
    servers = _servers(offered)
    listed = ", ".join(f"{name} ({count})" for name, count in servers.items())
    return ToolSpec(
        name=TOOL_SEARCH,
        description=(
            "Find tools that are not in your tool list yet and load them: the best matches are "
            "in your tools from your next step on. Searches tool names, descriptions and "
            "parameter names for any of the query's words. Many tools are left out of the "
            "list to keep requests small; search before concluding that no tool can do "
            "something. A tool you know by its full name can also be called directly. "
            f"Servers (tools each): {listed}."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool should do, in a few words (e.g. 'create "
                    "invoice'), or names of its parameters.",
                },
                "server": {
                    "type": "string",
                    **({"enum": list(servers)} if servers else {}),
                    "description": "Only this server's tools; without a query, lists them.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS,
                    "description": f"How many tools to load ({DEFAULT_RESULTS} if not given).",
                },
            },
        },
    )


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A validated `atrium__tool_search` call."""

    query: str
    server: str | None
    limit: int


def search_request(arguments: Mapping[str, object]) -> SearchRequest | str:
    """The call's arguments as a request, or what is wrong with them (for the model)."""
    query, server, limit = (
        arguments.get("query", ""),
        arguments.get("server"),
        arguments.get("limit", DEFAULT_RESULTS),
    )
    if not isinstance(query, str):
        return "`query` must be a string."
    if server is not None and not isinstance(server, str):
        return "`server` must be a server's name."
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        return "`limit` must be a number."
    if not query.strip() and not server:
        return "Give a `query`, a `server`, or both."
    return SearchRequest(query.strip(), server or None, max(1, min(int(limit), MAX_RESULTS)))


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """The tools a search found, best first, and every server's number of matches."""

    request: SearchRequest
    found: tuple[ToolSpec, ...]
    facets: tuple[tuple[str, int], ...]
    servers: Mapping[str, int]

    @property
    def unknown_server(self) -> bool:
        """The search kept to a server that offers no tool here."""
        return self.request.server is not None and self.request.server not in self.servers

    def text(self) -> str:
        """What the model reads: the loaded tools, then the matches by server."""
        request = self.request
        asked = f'"{request.query}"' if request.query else "tools"
        where = f" on {request.server}" if request.server else ""
        if self.unknown_server:
            known = ", ".join(self.servers)
            return f"No server is named {request.server!r}. Servers: {known}."
        if not self.found:
            return f"No tool matches {asked}{where}. Try other words, or another server."
        lines = [f"Loaded {len(self.found)} tools for {asked}{where}, best match first:"]
        lines += [f"- {_summary(spec)}" for spec in self.found]
        if self.facets:
            lines.append(
                "Matches by server: " + ", ".join(f"{s} {n}" for s, n in self.facets) + "."
            )
        return "\n".join(lines)


def _summary(spec: ToolSpec) -> str:
    """`name(param, ...)`: the description's first line, shortened."""
    properties = cast(dict[str, Any], spec.input_schema.get("properties") or {})
    line = spec.description.strip().split("\n", 1)[0]
    if len(line) > SUMMARY_CHARS:
        line = line[: SUMMARY_CHARS - 1].rstrip() + "…"
    return f"{spec.name}({', '.join(properties)}): {line}"


async def search_tools(offered: Sequence[ToolSpec], request: SearchRequest) -> SearchOutcome:
    """Search the tools of `offered` but Atrium's own (off the event loop)."""
    searchable = [t for t in offered if not t.name.startswith(ATRIUM_PREFIX)]
    servers = _servers(searchable)
    if request.server is not None and request.server not in servers:
        return SearchOutcome(request, (), (), servers)
    index = await _index(searchable)
    keep = (request.server,) if request.server else ()
    result: IndexResult = await asyncio.to_thread(index.search, request.query, keep, request.limit)
    by_name = {t.name: t for t in searchable}
    found = tuple(by_name[h.name] for h in result.hits if h.name in by_name)
    return SearchOutcome(request, found, result.facets, servers)


Fingerprint = tuple[tuple[str, str, tuple[str, ...]], ...]
_INDEXES: OrderedDict[Fingerprint, ToolIndex] = OrderedDict()


def _parameters(spec: ToolSpec) -> tuple[str, ...]:
    return tuple(cast(dict[str, Any], spec.input_schema.get("properties") or {}))


async def _index(tools: Sequence[ToolSpec]) -> ToolIndex:
    """The index of exactly these tools, built in a worker thread the first time (the last
    `INDEXES_KEPT` are kept: subagents' profiles offer sets of their own)."""
    key: Fingerprint = tuple((t.name, t.description, _parameters(t)) for t in tools)
    index = _INDEXES.get(key)
    if index is not None:
        _INDEXES.move_to_end(key)
        return index
    documents = [
        ToolDocument(t.name, t.name.partition("__")[0], t.description, _parameters(t))
        for t in tools
    ]
    index = await asyncio.to_thread(ToolIndex, documents)
    _INDEXES[key] = index
    while len(_INDEXES) > INDEXES_KEPT:
        _INDEXES.popitem(last=False)
    return index
