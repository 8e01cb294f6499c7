"""The sidecar's graph in this process: the same parts `sidecar.app.serve` wires, minus JSON-RPC.

Same database code and checkpointer kind, the same MCP servers (workspace in memory, sandbox as a
subprocess, so the model sees the same tool list), and the real `DspyPlanner` against the scripted
model; the runtime around the graph (message queue, lanes, background desk, memory parts) as
`tests.sidecar.runtime.wiring` wires it. `bare_turn` runs the compiled graph directly;
`runtime_turn` goes through a `RunManager` as the sidecar does.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.builtin_servers import sandbox_spec, workspace_spec
from sidecar.host.host import ToolHost
from sidecar.llm import DspyPlanner, aclose_model_clients
from sidecar.llm.types import LMConfig
from sidecar.protocol import TERMINAL_EVENT_TYPES, RunEventParams
from sidecar.runtime.runs import RunManager
from sidecar.store import Database, Store, open_database
from tests.sidecar.runtime.wiring import wire_runtime


class TurnFailed(RuntimeError):
    """A benchmark turn did not end the way the script says it must; its timing is void."""


@dataclass
class InProcess:
    db: Database
    store: Store
    host: ToolHost
    graph: Any
    saver: Any
    runs: RunManager
    ended: defaultdict[str, asyncio.Event] = field(
        default_factory=lambda: defaultdict(asyncio.Event)
    )
    events: defaultdict[str, list[RunEventParams]] = field(
        default_factory=lambda: defaultdict(list[RunEventParams])
    )

    def sink(self, params: RunEventParams) -> None:
        self.events[params.run_id].append(params)
        if params.event.type in TERMINAL_EVENT_TYPES:
            self.ended[params.run_id].set()

    async def bare_turn(self, thread_id: str, text: str) -> float:
        """One turn of the compiled graph alone; returns its duration. The author's message is
        written before and the finished turn's checkpoints dropped after, untimed, as the
        sidecar's run manager does around its graph."""
        turn_id = uuid.uuid4().hex
        self.store.add_message(thread_id, "user", text, message_id=f"{turn_id}:user")
        graph_input = {"thread_id": thread_id, "turn_id": turn_id, "text": text, "direct": False}
        config = {"configurable": {"thread_id": thread_id}}
        started = time.perf_counter()
        async for _chunk in self.graph.astream(graph_input, config, stream_mode=["custom"]):
            pass
        elapsed = time.perf_counter() - started
        await self.saver.adelete_thread(thread_id)
        check_answer(self.store, thread_id)
        return elapsed

    async def runtime_turn(self, thread_id: str, text: str) -> float:
        """One turn through the run manager (start → terminal event); returns its duration."""
        started = time.perf_counter()
        run_id = await self.runs.start(thread_id, text)
        async with asyncio.timeout(120):
            await self.ended[run_id].wait()
        elapsed = time.perf_counter() - started
        events = [e.event for e in self.events.pop(run_id)]
        self.ended.pop(run_id)
        check_events([e.model_dump(mode="json") for e in events])
        return elapsed


@asynccontextmanager
async def in_process(
    root: Path, workspace: Path, api_base: str, model: str
) -> AsyncGenerator[InProcess]:
    """Open the database under `root`, connect the MCP servers and compile the graph."""
    db = open_database(root / "atrium.db")
    store = Store(db)
    host = ToolHost([workspace_spec(workspace), sandbox_spec(root / "sandbox")])
    host.start()
    await host.wait_ready()
    planner = DspyPlanner(LMConfig(model=model, api_base=api_base, api_key="x"))
    box: list[InProcess] = []
    wired = wire_runtime(
        store,
        host,
        lambda: planner,
        lambda p: box[0].sink(p),  # noqa: PLW0108 - late bound
        root,
        workspace=workspace,
    )
    compiled = await wired.runs.compiled()
    rig = InProcess(db, store, host, compiled.graph, compiled.saver, wired.runs)
    box.append(rig)
    try:
        yield rig
    finally:
        await wired.aclose()
        await host.aclose()
        await aclose_model_clients()
        db.close()


def check_events(events: list[dict[str, Any]]) -> None:
    """The scripted turn: one successful `workspace__read`, then a completed run.

    Raises:
        TurnFailed: anything else happened.
    """
    last = events[-1] if events else {}
    results = [e for e in events if e["type"] == "tool_result"]
    if last.get("type") != "run_finished" or last.get("outcome") != "completed":
        raise TurnFailed(f"the turn ended with {last}")
    if len(results) != 1 or results[0]["is_error"]:
        raise TurnFailed(f"expected one successful tool result, got {results}")


def check_answer(store: Store, thread_id: str) -> None:
    """Raises:
    TurnFailed: the turn did not end with the scripted answer after a tool result."""
    from bench.model_server import ANSWER

    last = store.recent_messages(thread_id, 3)
    roles = [m.role for m in last]
    if roles != ["assistant", "tool", "assistant"] or last[-1].content != ANSWER:
        raise TurnFailed(f"unexpected end of conversation: {[(m.role, m.content) for m in last]}")


def db_bytes(conn: sqlite3.Connection, path: Path) -> int:
    """The database's size on disk (main file + WAL) after folding the WAL into the main file."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
