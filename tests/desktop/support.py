"""Helpers for the desktop tests: a recording request sender and run-event builders."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from desktop.ipc.api import SidecarApi
from desktop.ipc.health import RestartPolicy
from desktop.ipc.pending import PendingRequest
from desktop.ipc.process import SidecarProcess
from sidecar.protocol import (
    ANNOUNCEMENT_PREFIX,
    METHODS,
    Empty,
    MessageInfo,
    RunEventBody,
    RunEventParams,
    ThreadInfo,
    ToolCallInfo,
    WireModel,
)

FAKE_SIDECAR = Path(__file__).with_name("fake_sidecar.py")


def build_fake_process(
    data_dir: Path, extra_env: Mapping[str, str] | None = None, max_restarts: int = 3
) -> SidecarProcess:
    """A `SidecarProcess` running the scripted fake sidecar, restarting without delay."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("FAKE_")}
    env["ATRIUM_DATA_DIR"] = str(data_dir)
    env.update(extra_env or {})
    return SidecarProcess(
        sys.executable,
        [str(FAKE_SIDECAR)],
        env,
        policy=RestartPolicy(max_restarts=max_restarts, window_s=60.0),
        restart_delay_ms=0,
    )


class FakeSender:
    """Records requests and hands out `PendingRequest`s that the test completes; `api` is the
    typed face over it that controllers take."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, WireModel, PendingRequest]] = []
        self._ids = itertools.count(1)
        self.api = SidecarApi(self)

    def request(self, method: str, params: WireModel | None = None) -> PendingRequest:
        assert method in METHODS
        params = params if params is not None else Empty()
        assert isinstance(params, METHODS[method].params)
        pending = PendingRequest(next(self._ids), method)
        self.sent.append((method, params, pending))
        return pending

    def methods(self) -> list[str]:
        return [method for method, _, _ in self.sent]

    def last(self, method: str) -> tuple[WireModel, PendingRequest]:
        for sent_method, params, pending in reversed(self.sent):
            if sent_method == method:
                return params, pending
        raise AssertionError(f"no {method} request among {self.methods()}")


def thread_info(thread_id: str = "t1", title: str = "Chapter", status: str = "idle") -> ThreadInfo:
    return ThreadInfo.model_validate(
        {"id": thread_id, "title": title, "status": status, "created_at": 1.0, "updated_at": 1.0}
    )


def message(  # noqa: PLR0917 (test builder mirroring MessageInfo)
    role: str,
    content: str,
    message_id: str,
    thread_id: str = "t1",
    tool_calls: tuple[ToolCallInfo, ...] = (),
    tool_call_id: str | None = None,
    is_error: bool = False,
    announcement: bool = False,
) -> MessageInfo:
    return MessageInfo.model_validate(
        {
            "id": message_id,
            "thread_id": thread_id,
            "role": role,
            "content": content,
            "created_at": 1.0,
            "tool_calls": [call.model_dump() for call in tool_calls],
            "tool_call_id": tool_call_id,
            "is_error": is_error,
            "announcement": announcement,
        }
    )


def announcement_text(plan_id: str = "p1", status: str = "completed", report: str = "") -> str:
    """A delegated plan's announcement, as the sidecar queues it into its thread."""
    report = report or f"Plan {plan_id}: {status}.\n[succeeded] a (writer): a done"
    return f"{ANNOUNCEMENT_PREFIX}{plan_id} ended: {status}]\n{report}"


class RunScript:
    """Builds `RunEventParams` for one run with increasing seq numbers (`background`: a
    delegated plan's run beside the thread's turns)."""

    def __init__(self, thread_id: str = "t1", run_id: str = "r1", background: bool = False):
        self.thread_id, self.run_id, self.background = thread_id, run_id, background
        self._seq = itertools.count()

    def __call__(self, event: RunEventBody) -> RunEventParams:
        return RunEventParams(
            run_id=self.run_id,
            thread_id=self.thread_id,
            seq=next(self._seq),
            event=event,
            background=self.background,
        )
