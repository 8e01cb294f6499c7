"""No tool can stall the sidecar: nested-quantifier regexes against their worst inputs through
the real sidecar's workspace search, while the window keeps pinging.

No speed target is asserted (the machines are shared). The bounds are the ones a stalled sidecar
breaks: each search comes back within the search's own time budget plus slack for the run around
it (Python's backtracking `re` takes minutes on these), with a complete answer, an answer that
says it stopped at that budget, or an error with a workspace error code; a ping is out while
every search is in flight, and none waits as long as a search may run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from mcp_servers.workspace.errors import ErrorCode
from mcp_servers.workspace.matching import line_matcher
from mcp_servers.workspace.ops import Limits
from mcp_servers.workspace.server import TIME_LIMIT_NOTE
from sidecar.protocol import ToolResult
from tests.e2e.harness import Sidecar
from tests.mcp_servers.workspace.test_matching import REDOS_INPUTS, REDOS_PATTERNS

pytestmark = pytest.mark.anyio

LINES_PER_FILE = 200
SEARCH_BUDGET_S = Limits().max_search_seconds
"""The workspace search's own time budget: past it, a search returns what it found."""
RUN_SLACK_S = 20.0
"""The turn around the call (a first run waits for the graph to compile) on a loaded machine."""
_CODE = re.compile(r"\[([a-z_]+)\]")


@dataclass(frozen=True)
class Span:
    start: float
    end: float


async def test_redos_searches_all_return_while_ping_keeps_answering(
    sidecar: Sidecar, workspace: Path
) -> None:
    for index, text in enumerate(REDOS_INPUTS):
        (workspace / f"evil{index}.txt").write_text((text + "\n") * LINES_PER_FILE)
    thread = await sidecar.call("thread/create", {})
    pings: list[Span] = []
    searches: list[Span] = []
    searched = anyio.Event()

    async def pinger() -> None:
        """One ping always in flight until the last search ended (that one is answered too)."""
        while not searched.is_set():
            sent = anyio.current_time()
            # No ping may wait as long as one search may run: a stalled loop holds it for minutes.
            with anyio.fail_after(SEARCH_BUDGET_S):
                await sidecar.call("ping")
            pings.append(Span(sent, anyio.current_time()))

    async def search(pattern: str, index: int) -> None:
        arguments = {
            "query": pattern,
            "regex": True,
            "path": f"evil{index}.txt",
            "max_results": LINES_PER_FILE,
        }
        text = f"/call workspace__search {json.dumps(arguments)}"
        began = anyio.current_time()
        with anyio.fail_after(SEARCH_BUDGET_S + RUN_SLACK_S):
            run = await sidecar.call("run/start", {"thread_id": thread["id"], "text": text})
            events = await sidecar.run_to_end(run["run_id"])
        searches.append(Span(began, anyio.current_time()))
        assert events[-1].event.type == "run_finished", (pattern, index)
        [result] = [e.event for e in events if isinstance(e.event, ToolResult)]
        check_search(result, pattern, index)

    async with anyio.create_task_group() as group:
        group.start_soon(pinger)
        for pattern in REDOS_PATTERNS:
            for index in range(len(REDOS_INPUTS)):
                await search(pattern, index)
        searched.set()

    assert len(searches) == len(REDOS_PATTERNS) * len(REDOS_INPUTS)
    # Pings interleave with the searches: while each one was in flight a ping was out, and it
    # came back within the bound above.
    unpinged = [s for s in searches if not any(p.start < s.end and s.start < p.end for p in pings)]
    assert unpinged == []


def check_search(result: ToolResult, pattern: str, index: int) -> None:
    """A complete answer, an answer that says it stopped at the time budget, or a clear error."""
    where = (pattern, index, result.content[:300])
    if result.is_error:
        code = _CODE.search(result.content)
        assert code is not None and code.group(1) in set(ErrorCode), where
        return
    lines = result.content.splitlines()
    found = [line for line in lines if line.startswith(f"evil{index}.txt:")]
    matcher = line_matcher(pattern, regex=True, case_sensitive=True)
    expected = LINES_PER_FILE if matcher(REDOS_INPUTS[index]) else 0
    if TIME_LIMIT_NOTE in lines:
        assert len(found) <= expected, where
    else:
        assert len(found) == expected, where
