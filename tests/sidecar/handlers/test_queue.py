"""`queue/set_mode` sets a thread's default queue mode: each mode is kept and read back by
`queue/list`, a mode that does not exist and an unknown thread are clear errors, and a later
`run/start` without a mode on a busy thread is queued in the thread's default. Real services
over a real SQLite file, the real graph and checkpoints, a scripted planner."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.handlers.services import Services
from sidecar.protocol import (
    ErrorCode,
    QueuedMessageInfo,
    QueueEmpty,
    QueueListParams,
    QueueListResult,
    QueueMode,
    QueueModeParams,
    RpcError,
    RunEventParams,
    RunRef,
    RunStartParams,
)
from tests.sidecar.handlers.conftest import call
from tests.sidecar.rpc.peer import (
    Peer,
    build_services,
    close_services,
    error_code,
    registry_routes,
)
from tests.sidecar.rpc.streams import capture_writer
from tests.sidecar.runtime.scripted import Gate, ScriptedPlanner, answer

pytestmark = pytest.mark.anyio

MODES: tuple[QueueMode, ...] = ("steer", "collect", "followup", "interrupt")


@dataclasses.dataclass
class QueueServices:
    svc: Services
    planner: ScriptedPlanner
    receipts: list[QueuedMessageInfo]
    changed: asyncio.Event

    async def wait_for(self, message_id: str, status: str) -> None:
        async with asyncio.timeout(30):
            while not any(r.id == message_id and r.status == status for r in self.receipts):
                self.changed.clear()
                await self.changed.wait()


@pytest.fixture
async def qsvc(tmp_path: Path) -> AsyncIterator[QueueServices]:
    planner = ScriptedPlanner([])
    changed = asyncio.Event()
    receipts: list[QueuedMessageInfo] = []

    def on_event(_params: RunEventParams) -> None:
        changed.set()

    def on_receipt(info: QueuedMessageInfo) -> None:
        receipts.append(info)
        changed.set()

    svc = build_services(tmp_path, planner=lambda: planner, sink=on_event, notify_queue=on_receipt)
    yield QueueServices(svc, planner, receipts, changed)
    await close_services(svc)


async def set_mode(svc: Services, thread_id: str, mode: QueueMode) -> None:
    params = QueueModeParams(thread_id=thread_id, mode=mode)
    await call(svc, "queue/set_mode", params, QueueEmpty)


async def default_mode(svc: Services, thread_id: str) -> str:
    listing = await call(svc, "queue/list", QueueListParams(thread_id=thread_id), QueueListResult)
    return listing.default_mode


async def test_each_mode_is_kept_as_the_threads_default(qsvc: QueueServices) -> None:
    thread = qsvc.svc.store.create_thread("Chapter")
    other = qsvc.svc.store.create_thread("Notes")
    assert await default_mode(qsvc.svc, thread.id) == "steer"
    for mode in MODES:
        await set_mode(qsvc.svc, thread.id, mode)
        assert await default_mode(qsvc.svc, thread.id) == mode
    assert await default_mode(qsvc.svc, other.id) == "steer"  # per thread


async def test_a_mode_that_does_not_exist_is_invalid_params(
    qsvc: QueueServices, tmp_path: Path
) -> None:
    thread = qsvc.svc.store.create_thread("Chapter")
    forged = QueueModeParams.model_construct(thread_id=thread.id, mode="shout")  # past the model
    with pytest.raises(RpcError) as refused:
        await call(qsvc.svc, "queue/set_mode", forged, QueueEmpty)
    assert refused.value.code == ErrorCode.INVALID_PARAMS
    capture = capture_writer()
    peer = Peer(registry_routes(qsvc.svc, ("queue/set_mode",)), capture)
    try:  # on the wire, the params model refuses it before the handler
        reply = await peer.call("queue/set_mode", {"thread_id": thread.id, "mode": "shout"})
        assert error_code(reply) == ErrorCode.INVALID_PARAMS
    finally:
        await peer.close()
        capture.transport.close()
    assert await default_mode(qsvc.svc, thread.id) == "steer"


async def test_an_unknown_thread_is_thread_not_found(qsvc: QueueServices) -> None:
    with pytest.raises(RpcError) as refused:
        await set_mode(qsvc.svc, "no-such-thread", "collect")
    assert refused.value.code == ErrorCode.THREAD_NOT_FOUND


async def test_run_start_without_a_mode_on_a_busy_thread_uses_the_threads_default(
    qsvc: QueueServices,
) -> None:
    thread = qsvc.svc.store.create_thread("Chapter")
    await set_mode(qsvc.svc, thread.id, "followup")
    gate = Gate()
    qsvc.planner.script += [gate, answer("The first answer."), answer("The second answer.")]
    first = await call(
        qsvc.svc, "run/start", RunStartParams(thread_id=thread.id, text="one"), RunRef
    )
    assert first.queued_id is None
    await gate.entered.wait()  # the turn runs: the thread is busy

    queued = await call(
        qsvc.svc, "run/start", RunStartParams(thread_id=thread.id, text="two"), RunRef
    )

    assert queued.run_id == first.run_id and queued.queued_id is not None
    listing = await call(
        qsvc.svc, "queue/list", QueueListParams(thread_id=thread.id), QueueListResult
    )
    assert [(m.id, m.mode, m.text) for m in listing.messages] == [
        (queued.queued_id, "followup", "two")
    ]
    gate.release.set()
    await qsvc.wait_for(queued.queued_id, "answered")  # a turn of its own, after the first
    texts = [m.content for m in qsvc.svc.store.recent_messages(thread.id, 10) if m.role == "user"]
    assert texts == ["one", "two"]
