"""`RunTreePanel` both ways: run events → rows and badges, clicks → task requests."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QMessageBox
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.views.run_tree import (
    ACTIVITY,
    ATTEMPT,
    COST,
    ELAPSED,
    STALLED_BADGE,
    STATUS,
    TOKENS,
    RunTreePanel,
)
from desktop.views.run_tree_menus import CANCEL_PLAN, PAUSE_PLAN, RESUME_PLAN, SEND_MESSAGE
from sidecar.protocol import (
    AutonomousParams,
    CoordEmpty,
    CoordErrorCode,
    ErrorObject,
    PlanControlResult,
    PlanGetResult,
    PlanRef,
    ReplacedTaskInfo,
    SubagentEvent,
    TaskMessageParams,
    TaskMessageResult,
    TaskRef,
    TaskUpdate,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import FakeSender, RunScript

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def panel(qtbot: QtBot, fake_sender: FakeSender) -> RunTreePanel:
    coord = CoordController(fake_sender.api)
    panel = RunTreePanel(coord)
    qtbot.addWidget(panel)
    panel.show()
    coord.show_thread("t1")
    plans = (plan(task("a"), task("b", depends_on=("a",))),)
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=False, plans=plans)
    )
    return panel


def update(panel: RunTreePanel, run: RunScript, task_id: str, status: str, **fields: object):
    panel.controller.handle_run_event(run(TaskUpdate(task=task(task_id, status, **fields))))


def test_a_task_runs_with_a_ticking_clock_then_succeeds_with_usage(panel: RunTreePanel):
    run = RunScript()
    item = panel.task_item("p1", "a")
    assert item is not None and item.text(STATUS) == "pending" and item.text(ELAPSED) == ""
    update(panel, run, "a", "running", attempt=1, started_at=time.time() - 65, activity="outlining")
    assert item.text(STATUS) == "running" and item.text(ACTIVITY) == "outlining"
    assert item.text(ELAPSED) == "1:05" and item.text(ATTEMPT) == "1"
    node = panel.model.task("p1", "a")
    assert node is not None
    node.info = node.info.model_copy(update={"started_at": time.time() - 125})
    panel.tick()
    assert item.text(ELAPSED) == "2:05"
    update(panel, run, "a", "succeeded", attempt=1, started_at=100.0, finished_at=130.0,
           tokens_in=1200, tokens_out=80, cost=0.0125, summary="outlined")  # fmt: skip
    assert item.text(STATUS) == "succeeded" and item.text(ELAPSED) == "0:30"
    assert item.text(TOKENS) == "1,200 / 80" and item.text(COST) == "$0.0125"
    assert item.text(ACTIVITY) == "outlined"


def test_a_stalled_task_shows_the_badge(panel: RunTreePanel):
    update(panel, RunScript(), "a", "running", stalled=True, started_at=time.time())
    item = panel.task_item("p1", "a")
    assert item is not None and STALLED_BADGE in item.text(STATUS)
    update(panel, RunScript(run_id="r2"), "a", "running", started_at=time.time())
    assert STALLED_BADGE not in item.text(STATUS)


def test_cancel_is_enabled_while_running_and_sends_task_cancel(
    qtbot: QtBot, panel: RunTreePanel, fake_sender: FakeSender
):
    actions = panel.task_actions("p1", "a")
    assert actions is not None and not actions.cancel_button.isEnabled()
    update(panel, RunScript(), "a", "waiting", started_at=time.time())
    assert actions.cancel_button.isEnabled() and not actions.retry_button.isEnabled()
    qtbot.mouseClick(actions.cancel_button, LEFT)
    assert fake_sender.last("task/cancel")[0] == TaskRef(thread_id="t1", task_id="a", plan_id="p1")


def test_retry_is_enabled_after_a_failure_and_sends_task_retry(
    qtbot: QtBot, panel: RunTreePanel, fake_sender: FakeSender
):
    update(panel, RunScript(), "b", "skipped")
    actions = panel.task_actions("p1", "b")
    assert actions is not None and actions.retry_button.isEnabled()
    qtbot.mouseClick(actions.retry_button, LEFT)
    assert fake_sender.last("task/retry")[0] == TaskRef(thread_id="t1", task_id="b", plan_id="p1")


def test_a_refused_action_is_shown_on_the_task_row(
    qtbot: QtBot, panel: RunTreePanel, fake_sender: FakeSender
):
    update(panel, RunScript(), "a", "running", started_at=time.time())
    actions = panel.task_actions("p1", "a")
    assert actions is not None
    qtbot.mouseClick(actions.cancel_button, LEFT)
    error = ErrorObject(code=CoordErrorCode.TASK_NOT_RUNNING, message="a just finished")
    fake_sender.last("task/cancel")[1].reject(error)
    item = panel.task_item("p1", "a")
    assert item is not None and "a just finished" in item.text(ACTIVITY)
    node = panel.model.task("p1", "a")
    assert node is not None and node.error_code == CoordErrorCode.TASK_NOT_RUNNING


def test_subagent_activity_appears_under_its_task(panel: RunTreePanel):
    run = RunScript()
    call = {"type": "tool_call", "call_id": "c1", "server": "workspace", "tool": "read",
            "arguments": {"path": "a.md"}}  # fmt: skip
    progress = {"type": "tool_progress", "call_id": "c1", "progress": 1, "message": "reading"}
    for event in (call, progress):
        panel.controller.handle_run_event(run(SubagentEvent(task_id="a", event=event)))
    item = panel.task_item("p1", "a")
    assert item is not None and item.childCount() == 2
    first, second = item.child(0), item.child(1)
    assert first is not None and second is not None
    assert first.text(0).startswith("workspace/read") and first.text(STATUS) == "1"
    assert second.text(0) == "reading"


def test_the_autonomous_switch_sends_the_request_and_follows_the_reply(
    qtbot: QtBot, panel: RunTreePanel, fake_sender: FakeSender
):
    assert not panel.autonomous_check.isChecked()
    qtbot.mouseClick(panel.autonomous_check, LEFT)
    params, pending = fake_sender.last("thread/set_autonomous")
    assert params == AutonomousParams(thread_id="t1", autonomous=True)
    assert not panel.autonomous_check.isChecked()
    pending.resolve(CoordEmpty())
    assert panel.autonomous_check.isChecked()


def test_a_failed_switch_is_said_in_the_header(
    qtbot: QtBot, panel: RunTreePanel, fake_sender: FakeSender
):
    qtbot.mouseClick(panel.autonomous_check, LEFT)
    fake_sender.last("thread/set_autonomous")[1].reject(ErrorObject(code=-32001, message="gone"))
    assert panel.error_label.isVisible() and "gone" in panel.error_label.text()
    assert not panel.autonomous_check.isChecked()


def test_a_thread_without_plans_says_so(qtbot: QtBot, fake_sender: FakeSender):
    coord = CoordController(fake_sender.api)
    panel = RunTreePanel(coord)
    qtbot.addWidget(panel)
    coord.show_thread("t1")
    group = panel.thread_item("t1")
    first = group.child(0) if group is not None else None
    assert first is not None and first.text(0) == "Loading…"
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=True, plans=())
    )
    group = panel.thread_item("t1")
    first = group.child(0) if group is not None else None
    assert first is not None and first.text(0) == "No plan in this thread yet"
    assert panel.autonomous_check.isChecked()


def _plan_action(panel: RunTreePanel, text: str) -> QAction:
    item = panel.plan_item("p1")
    assert item is not None
    menu = panel.plan_menu(item)
    assert menu is not None
    [action] = [a for a in menu.actions() if a.text() == text]
    return action


def test_a_running_plan_is_paused_resumed_and_cancelled_from_its_menu(
    panel: RunTreePanel, fake_sender: FakeSender, monkeypatch: pytest.MonkeyPatch
):
    """The plan row's menu offers what its status allows; each reply shows at once."""
    assert not _plan_action(panel, RESUME_PLAN).isEnabled()
    _plan_action(panel, PAUSE_PLAN).trigger()
    params, pending = fake_sender.last("plan/pause")
    assert params == PlanRef(thread_id="t1", plan_id="p1")
    paused = plan(task("a", "running", activity="paused by the author"), status="paused")
    pending.resolve(PlanControlResult(plan=paused))
    item = panel.plan_item("p1")
    assert item is not None and item.text(STATUS) == "paused"
    assert not _plan_action(panel, PAUSE_PLAN).isEnabled()
    _plan_action(panel, RESUME_PLAN).trigger()
    params, pending = fake_sender.last("plan/resume")
    assert params == PlanRef(thread_id="t1", plan_id="p1")
    pending.resolve(PlanControlResult(plan=plan(task("a", "running")), run_id="r9"))
    assert item.text(STATUS) == "running"
    asked: list[str] = []

    def answer(_parent: object, _title: str, text: str) -> QMessageBox.StandardButton:
        asked.append(text)
        return QMessageBox.StandardButton.No if len(asked) == 1 else QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    _plan_action(panel, CANCEL_PLAN).trigger()  # the author says No: nothing is sent
    assert "plan/cancel" not in fake_sender.methods()
    _plan_action(panel, CANCEL_PLAN).trigger()
    assert asked[-1].startswith("Cancel “Write”? 1 unfinished task(s) stop")
    _params, pending = fake_sender.last("plan/cancel")
    pending.reject(ErrorObject(code=CoordErrorCode.PLAN_NOT_RUNNING, message="it ended"))
    assert panel.model.error == "Cancel failed: The plan is not running (it ended)"


def test_a_replanned_plan_shows_the_tasks_it_replaced_on_its_row(
    panel: RunTreePanel, fake_sender: FakeSender
):
    failed = task("a", "failed", error="the model refused", attempt=3)
    revised = plan(task("a", "pending")).model_copy(
        update={"version": 2, "replaced": (ReplacedTaskInfo(version=1, task=failed),)}
    )
    panel.controller.reload()
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=False, plans=(revised,))
    )
    item = panel.plan_item("p1")
    assert item is not None
    assert item.toolTip(0).endswith(
        "Replaced by a replan (kept for the record):\n  v1 [failed] Task a: the model refused"
    )


def test_the_author_sends_a_running_task_a_message_from_its_menu(
    panel: RunTreePanel, fake_sender: FakeSender, monkeypatch: pytest.MonkeyPatch
):
    update(panel, RunScript(), "a", "running", started_at=time.time())
    item = panel.task_item("p1", "a")
    assert item is not None
    menu = panel.task_menu(item)
    assert menu is not None
    [send] = [a for a in menu.actions() if a.text() == SEND_MESSAGE]
    assert send.isEnabled()
    monkeypatch.setattr(
        QInputDialog, "getMultiLineText", lambda *_args: ("Use British spelling.", True)
    )
    send.trigger()
    params, pending = fake_sender.last("task/message")
    assert params == TaskMessageParams(
        thread_id="t1", task_id="a", plan_id="p1", text="Use British spelling."
    )
    note = "Sent to task a: it reads the message before its next step."
    pending.resolve(TaskMessageResult(note=note))
    assert panel.error_label.text() == note
    send.trigger()
    _params, pending = fake_sender.last("task/message")
    refused = "task a runs Codex, whose CLI takes no input while it works."
    pending.reject(ErrorObject(code=CoordErrorCode.MESSAGE_REFUSED, message=refused))
    assert item.text(ACTIVITY) == f"Message not sent: {refused}"
    update(panel, RunScript(run_id="r2"), "a", "succeeded")
    menu = panel.task_menu(item)
    assert menu is not None
    assert not next(a for a in menu.actions() if a.text() == SEND_MESSAGE).isEnabled()
