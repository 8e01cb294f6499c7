"""A write that finds the disk full is a `DISK_FULL` error naming the folder, from any handler,
and nothing is lost: what the handler wrote is rolled back, a queued message stays queued, and
once there is room again the same request goes through. Real services over a real SQLite file
on a small real tmpfs, the real graph, a scripted planner."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.handlers.services import Services
from sidecar.protocol import (
    TERMINAL_EVENT_TYPES,
    ErrorCode,
    QueueListParams,
    QueueListResult,
    RpcError,
    RunEventParams,
    RunRef,
    RunStartParams,
    ThreadCreateParams,
    ThreadInfo,
    WireModel,
)
from tests.sidecar.handlers.conftest import call
from tests.sidecar.rpc.peer import build_services, close_services
from tests.sidecar.runtime.scripted import Gate, ScriptedPlanner, answer
from tests.tmpfs import fill, small_tmpfs

pytestmark = pytest.mark.anyio


@dataclasses.dataclass
class Ends:
    """The runs that ended, from the run events."""

    ended: set[str] = dataclasses.field(default_factory=set[str])
    changed: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    def on_event(self, params: RunEventParams) -> None:
        if params.event.type in TERMINAL_EVENT_TYPES:
            self.ended.add(params.run_id)
            self.changed.set()

    async def run_to_end(self, run_id: str) -> None:
        async with asyncio.timeout(30):
            while run_id not in self.ended:
                self.changed.clear()
                await self.changed.wait()


@dataclasses.dataclass
class OnTmpfs:
    svc: Services
    planner: ScriptedPlanner
    data: Path
    ends: Ends


@pytest.fixture
async def on_tmpfs(tmp_path: Path) -> AsyncIterator[OnTmpfs]:
    with small_tmpfs(tmp_path / "data") as data:
        planner = ScriptedPlanner([])
        ends = Ends()
        svc = build_services(data, planner=lambda: planner, sink=ends.on_event)
        try:
            yield OnTmpfs(svc, planner, data, ends)
        finally:
            await close_services(svc)


async def _refused(svc: Services, method: str, params: WireModel, data: Path) -> RpcError:
    with pytest.raises(RpcError) as refused:
        await call(svc, method, params, WireModel)
    assert refused.value.code == ErrorCode.DISK_FULL
    assert refused.value.data == {"folder": str(data)}
    assert str(data) in refused.value.message
    return refused.value


def _fill_the_disk(svc: Services, data: Path) -> Path:
    # Every later write must grow the log: none can reuse room a checkpoint freed in it.
    svc.store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return fill(data)


async def test_a_full_disk_refuses_writes_with_disk_full_and_keeps_everything(
    on_tmpfs: OnTmpfs,
) -> None:
    svc, planner, data = on_tmpfs.svc, on_tmpfs.planner, on_tmpfs.data
    thread = svc.store.create_thread("Chapter")
    gate = Gate()
    planner.script += [gate, answer("First."), answer("Second."), answer("Third.")]
    first = await call(svc, "run/start", RunStartParams(thread_id=thread.id, text="one"), RunRef)
    await gate.entered.wait()
    queued = await call(svc, "run/start", RunStartParams(thread_id=thread.id, text="two"), RunRef)
    filler = _fill_the_disk(svc, data)

    await _refused(svc, "run/start", RunStartParams(thread_id=thread.id, text="three"), data)
    await _refused(svc, "thread/create", ThreadCreateParams(title="Notes"), data)

    listing = await call(svc, "queue/list", QueueListParams(thread_id=thread.id), QueueListResult)
    assert [(m.id, m.text, m.status) for m in listing.messages] == [
        (queued.queued_id, "two", "queued")
    ]
    assert [t.id for t in svc.store.list_threads()] == [thread.id]
    assert [m.content for m in svc.store.recent_messages(thread.id, 10)] == ["one"]

    filler.unlink()
    again = await call(svc, "run/start", RunStartParams(thread_id=thread.id, text="three"), RunRef)
    assert again.run_id == first.run_id and again.queued_id is not None
    created = await call(svc, "thread/create", ThreadCreateParams(title="Notes"), ThreadInfo)
    assert created.title == "Notes"


async def test_a_turn_started_on_a_full_disk_writes_nothing(on_tmpfs: OnTmpfs) -> None:
    svc, planner, data = on_tmpfs.svc, on_tmpfs.planner, on_tmpfs.data
    planner.script += [answer("Warm."), answer("Done.")]
    thread = svc.store.create_thread("Chapter")
    started = await call(
        svc, "run/start", RunStartParams(thread_id=thread.id, text="warm up"), RunRef
    )
    await on_tmpfs.ends.run_to_end(started.run_id)
    before = [m.content for m in svc.store.recent_messages(thread.id, 10)]
    filler = _fill_the_disk(svc, data)

    await _refused(svc, "run/start", RunStartParams(thread_id=thread.id, text="lost?"), data)

    assert [m.content for m in svc.store.recent_messages(thread.id, 10)] == before
    assert svc.runs.current_run(thread.id) is None
    filler.unlink()
    resumed = await call(svc, "run/start", RunStartParams(thread_id=thread.id, text="kept"), RunRef)
    assert resumed.run_id != started.run_id
