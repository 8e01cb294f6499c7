"""The runtime wired with its automation (schedule book, scheduler, heartbeat, unattended-run
policy) on a real store file, the workspace server and a form-asking server in memory, a
planner that reacts to what it sees, and a clock the test moves (nobody sleeps)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_servers.schedule import Fire, Schedule
from sidecar.host.features.client import HostFeatures
from sidecar.host.host import ServerSpec, ToolHost
from sidecar.llm.types import ChatTurn, PlannerDecision, TokenSink, ToolCallRequest, ToolSpec
from sidecar.protocol import (
    TERMINAL_EVENT_TYPES,
    InterruptEvent,
    NotifyParams,
    RunEventParams,
    RunFinished,
)
from sidecar.runtime.automation import Automation
from sidecar.runtime.clock import ManualClock
from sidecar.runtime.live import LiveInterrupts
from sidecar.store import Store, open_database
from tests.sidecar.runtime.desk_server import build_desk_server
from tests.sidecar.runtime.wiring import Runtime, wire_runtime

NOON = datetime(2026, 11, 27, 12, 0, tzinfo=UTC).timestamp()
WRITE = ("workspace__write", {"path": "report.md", "content": "written\n"})
FORM = ("desk__ask_name", {})


@dataclass
class ReactivePlanner:
    """Calls `tool` once per turn, then answers with what the tool said (so any number of
    turns may interleave). Records each history it saw."""

    tool: tuple[str, dict[str, Any]] = WRITE
    seen: list[list[ChatTurn]] = field(default_factory=list[list[ChatTurn]])

    async def decide(
        self,
        history: Sequence[ChatTurn],
        tools: Sequence[ToolSpec],
        on_token: TokenSink | None = None,
    ) -> PlannerDecision:
        del tools
        self.seen.append(list(history))
        last = history[-1] if history else None
        if last is not None and last.role == "tool":
            text = f"after: {last.content}"
            if on_token is not None:
                await on_token(text)
            return PlannerDecision(kind="answer", text=text)
        name, arguments = self.tool
        call = ToolCallRequest(f"c{len(self.seen)}", name, dict(arguments))
        return PlannerDecision(kind="tool_calls", tool_calls=(call,))

    def tool_results(self) -> list[str]:
        """The tool results the planner was shown, in order."""
        return [h[-1].content for h in self.seen if h and h[-1].role == "tool"]


@dataclass
class AutoRig:
    store: Store
    runtime: Runtime
    auto: Automation
    clock: ManualClock
    planner: ReactivePlanner
    workspace: Path
    notes: list[NotifyParams] = field(default_factory=list[NotifyParams])
    events: list[RunEventParams] = field(default_factory=list[RunEventParams])
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def sink(self, params: RunEventParams) -> None:
        self.events.append(params)
        self.changed.set()

    async def until(self, done: Callable[[], bool], within: float = 30) -> None:
        """Wait (on events, never a sleep) until `done()` holds."""
        async with asyncio.timeout(within):
            while not done():
                self.changed.clear()
                await self.changed.wait()

    def ended(self, run_id: str) -> bool:
        return any(e.run_id == run_id and e.event.type in TERMINAL_EVENT_TYPES for e in self.events)

    async def run_to_end(self, run_id: str) -> list[RunEventParams]:
        await self.until(lambda: self.ended(run_id))
        return [e for e in self.events if e.run_id == run_id]

    def thread_completed(self, thread_id: str) -> bool:
        return any(
            e.thread_id == thread_id
            and isinstance(e.event, RunFinished)
            and e.event.outcome == "completed"
            for e in self.events
        )

    def asked(self, run_id: str) -> list[str]:
        return [
            e.event.interrupt.id
            for e in self.events
            if e.run_id == run_id and isinstance(e.event, InterruptEvent)
        ]

    def schedule(self, action: str, minutes: int = 10, **extra: Any) -> Schedule:
        return self.auto.book.create(
            kind="cron",
            spec="0 3 * * *",
            prompt="file the night report",
            name="Night report",
            unattended=action,
            deny_after_minutes=minutes,
            **extra,
        )

    async def run_now(self, schedule: Schedule) -> Fire:
        """Fire `schedule` now (as `schedule/run_now` does); its started fire."""
        requested = self.auto.book.request_run(schedule.id)
        await self.auto.scheduler.tick()
        fire = self.auto.book.fire(schedule.id, requested.scheduled_for)
        assert fire.run_id is not None, fire
        return fire

    def fire(self, fire: Fire) -> Fire:
        return self.auto.book.fire(fire.schedule_id, fire.scheduled_for)


@asynccontextmanager
async def auto_rig(
    data: Path, clock: ManualClock, planner: ReactivePlanner | None = None
) -> AsyncIterator[AutoRig]:
    """One sidecar's runtime and automation over the store file in `data` (a second one on
    the same folder, after the first closed, is a restart)."""
    workspace = data / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    db = open_database(data / "atrium.db")
    store = Store(db)
    features = HostFeatures(workspace)
    from mcp_servers.workspace import build_server

    host = ToolHost(
        [
            ServerSpec("workspace", lambda: build_server(workspace)),
            ServerSpec("desk", build_desk_server),
        ],
        features=features,
    )
    host.start()
    await host.wait_ready()
    the_planner = planner or ReactivePlanner()
    box: list[AutoRig] = []
    runtime = wire_runtime(
        store,
        host,
        lambda: the_planner,
        lambda p: box[0].sink(p),  # noqa: PLW0108 - late bound
        data,
        workspace=workspace,
        live=LiveInterrupts(store, features.calls),
    )
    notes: list[NotifyParams] = []
    auto = Automation(
        store,
        runtime.runs,
        runtime.queue,
        runtime.automation_settings,
        lambda: workspace,
        notes.append,
        clock,
        "UTC",
    )
    rig = AutoRig(store, runtime, auto, clock, the_planner, workspace, notes)
    box.append(rig)
    try:
        yield rig
    finally:
        await auto.aclose()
        await runtime.aclose()
        await host.aclose()
        db.close()
