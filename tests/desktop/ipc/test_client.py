"""`RpcClient` and `SidecarProcess` against the scripted fake sidecar (a real subprocess)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytestqt.qtbot import QtBot

from desktop.ipc.client import RpcClient
from desktop.ipc.errors import ClientErrorCode
from desktop.ipc.pending import PendingRequest
from desktop.ipc.process import SidecarProcess
from sidecar.protocol import (
    Empty,
    ErrorCode,
    ErrorObject,
    InitializeResult,
    RunEventParams,
    RunStartParams,
    ThreadCreateParams,
    ThreadGetParams,
    ThreadInfo,
    ThreadListResult,
)

pytestmark = pytest.mark.slow
TIMEOUT_MS = 10_000


def wait_done(qtbot: QtBot, pending: PendingRequest) -> PendingRequest:
    qtbot.waitUntil(lambda: pending.done, timeout=TIMEOUT_MS)
    return pending


def start(qtbot: QtBot, process: SidecarProcess) -> RpcClient:
    client = RpcClient(process)
    with qtbot.waitSignal(client.initialized, timeout=TIMEOUT_MS) as blocker:
        process.start()
    assert isinstance((blocker.args or [])[0], InitializeResult)
    return client


def collect_events(client: RpcClient) -> list[RunEventParams]:
    events: list[RunEventParams] = []
    client.run_event_received.connect(events.append)
    return events


def finished(events: list[RunEventParams]) -> Callable[[], bool]:
    terminal = {"run_finished", "run_failed", "run_cancelled"}
    return lambda: any(params.event.type in terminal for params in events)


def test_requests_complete_with_typed_results(qtbot: QtBot, fake_process_factory):
    client = start(qtbot, fake_process_factory())
    created = wait_done(qtbot, client.request("thread/create", ThreadCreateParams(title="One")))
    assert isinstance(created.result, ThreadInfo) and created.result.title == "One"
    listed = wait_done(qtbot, client.request("thread/list"))
    assert isinstance(listed.result, ThreadListResult)
    assert [t.id for t in listed.result.threads] == [created.result.id]


def test_requests_made_before_start_wait_for_initialize(qtbot: QtBot, fake_process_factory):
    process = fake_process_factory()
    client = RpcClient(process)
    early = client.request("thread/list")
    assert not early.done
    process.start()
    wait_done(qtbot, early)
    assert isinstance(early.result, ThreadListResult)
    assert client.is_ready


def test_error_replies_complete_with_the_error_object(qtbot: QtBot, fake_process_factory):
    client = start(qtbot, fake_process_factory())
    pending = wait_done(qtbot, client.request("thread/get", ThreadGetParams(thread_id="nope")))
    assert isinstance(pending.error, ErrorObject)
    assert pending.error.code == ErrorCode.THREAD_NOT_FOUND


def test_results_that_do_not_match_the_model_fail_as_invalid(qtbot: QtBot, fake_process_factory):
    client = start(qtbot, fake_process_factory({"FAKE_SIDECAR_BAD_PING": "1"}))
    pending = wait_done(qtbot, client.request("ping", Empty()))
    assert pending.error is not None and pending.error.code == ClientErrorCode.INVALID_RESULT


def test_wrong_params_type_is_a_programming_error(qtbot: QtBot, fake_process_factory):
    client = RpcClient(fake_process_factory())
    with pytest.raises(TypeError):
        client.request("thread/get", Empty())
    with pytest.raises(KeyError):
        client.request("no/such/method")


def test_run_events_arrive_typed_and_in_order(qtbot: QtBot, fake_process_factory):
    client = start(qtbot, fake_process_factory())
    thread = wait_done(qtbot, client.request("thread/create", ThreadCreateParams())).result
    assert isinstance(thread, ThreadInfo)
    events = collect_events(client)
    client.request("run/start", RunStartParams(thread_id=thread.id, text="hi there"))
    qtbot.waitUntil(finished(events), timeout=TIMEOUT_MS)
    assert [params.seq for params in events] == list(range(len(events)))
    assert events[0].event.type == "run_started"
    tokens = "".join(p.event.text for p in events if p.event.type == "token")  # type: ignore[union-attr]
    assert tokens.split() == ["You", "said:", "hi", "there"]


def test_malformed_lines_are_skipped_and_later_frames_still_arrive(
    qtbot: QtBot, fake_process_factory
):
    client = start(qtbot, fake_process_factory())
    thread = wait_done(qtbot, client.request("thread/create", ThreadCreateParams())).result
    assert isinstance(thread, ThreadInfo)
    events = collect_events(client)
    reasons: list[str] = []
    client.malformed_frame_received.connect(reasons.append)
    client.request("run/start", RunStartParams(thread_id=thread.id, text="garbage"))
    qtbot.waitUntil(finished(events), timeout=TIMEOUT_MS)
    assert len(reasons) == 3
    assert events[-1].event.type == "run_finished"


def test_a_crash_fails_the_request_in_flight_and_the_sidecar_restarts(
    qtbot: QtBot, fake_process_factory
):
    process = fake_process_factory()
    client = start(qtbot, process)
    thread = wait_done(qtbot, client.request("thread/create", ThreadCreateParams())).result
    assert isinstance(thread, ThreadInfo)
    with (
        qtbot.waitSignal(process.died, timeout=TIMEOUT_MS) as died,
        qtbot.waitSignal(process.restarted, timeout=TIMEOUT_MS),
        qtbot.waitSignal(client.initialized, timeout=TIMEOUT_MS),
    ):
        doomed = client.request("run/start", RunStartParams(thread_id=thread.id, text="crash"))
    assert (died.args or [])[0] == 3
    assert "crashing as asked" in (died.args or [])[1]
    assert doomed.error is not None and doomed.error.code == ClientErrorCode.SIDECAR_EXITED
    listed = wait_done(qtbot, client.request("thread/list")).result
    assert isinstance(listed, ThreadListResult)
    assert [t.id for t in listed.threads] == [thread.id]


def test_a_sidecar_that_keeps_dying_is_given_up_on(qtbot: QtBot, fake_process_factory):
    process = fake_process_factory({"FAKE_SIDECAR_EXIT_AT_START": "7"}, max_restarts=2)
    client = RpcClient(process)
    deaths: list[int] = []
    process.died.connect(lambda code, _tail: deaths.append(code))
    queued = client.request("thread/list")
    with qtbot.waitSignal(process.gave_up, timeout=TIMEOUT_MS):
        process.start()
    assert deaths == [7, 7, 7]
    assert process.has_given_up
    assert queued.error is not None and queued.error.code == ClientErrorCode.NOT_CONNECTED
    later = client.request("thread/list")
    assert later.error is not None and later.error.code == ClientErrorCode.NOT_CONNECTED


def test_a_program_that_cannot_start_counts_as_a_death(qtbot: QtBot, tmp_path):
    process = SidecarProcess(str(tmp_path / "missing"), [], policy=None, restart_delay_ms=0)
    with qtbot.waitSignal(process.gave_up, timeout=TIMEOUT_MS):
        process.start()
    assert "failed to start" in process.stderr_tail()


def test_stop_after_shutdown_ends_the_process_without_a_restart(qtbot: QtBot, fake_process_factory):
    process = fake_process_factory()
    client = start(qtbot, process)
    restarts: list[object] = []
    process.restarted.connect(lambda: restarts.append(True))
    shutdown = client.request("shutdown", Empty())
    with qtbot.waitSignal(process.stopped, timeout=TIMEOUT_MS):
        process.stop(timeout_ms=5000)
    wait_done(qtbot, shutdown)  # the reply was written before the exit: it still completes
    assert shutdown.error is None
    assert not process.is_running and not process.is_restart_pending and restarts == []
    refused = client.request("thread/list")
    assert refused.error is not None and refused.error.code == ClientErrorCode.NOT_CONNECTED
