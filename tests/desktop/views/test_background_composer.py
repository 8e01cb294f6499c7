"""The composer stays usable while a delegated plan works in the background of the thread: the
plan's run (events marked `background`) never makes the thread busy, so the author types and
sends as to an idle thread, and the message starts a turn of its own beside the plan."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.views.main_window import MainWindow
from desktop.views.thread_list_model import STATUS_ROLE
from sidecar.protocol import (
    ApprovalInterrupt,
    InterruptEvent,
    PlanGetResult,
    PlanUpdate,
    RunEventBody,
    RunFinished,
    RunRef,
    RunStarted,
    RunStartParams,
    SubagentEvent,
    TaskUpdate,
    Token,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import FakeSender, RunScript
from tests.desktop.views.test_main_window import build_window

QUESTION = "How is the outline going?"


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    window = build_window(qtbot, fake_sender, coord=CoordController(fake_sender.api))
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=True, plans=(plan(task("a")),))
    )
    return window


def feed(window: MainWindow, run: RunScript, *events: RunEventBody) -> None:
    for event in events:
        params = run(event)
        window.controller.handle_run_event(params)
        assert window.coord is not None
        window.coord.handle_run_event(params)


def plan_running(window: MainWindow) -> RunScript:
    """t1's plan p1 runs in the background: its task works and asks to write a file."""
    background = RunScript(run_id="bg", background=True)
    asks = ApprovalInterrupt(
        id="i-a", title="Write a.md", body="", server="workspace", tool="write",
        arguments={"path": "a.md"}, call_id="ca", task_id="a", run_id="bg",
    )  # fmt: skip
    feed(
        window,
        background,
        RunStarted(),
        PlanUpdate(plan=plan(task("a", "running"))),
        TaskUpdate(task=task("a", "running", attempt=1)),
        SubagentEvent(task_id="a", plan_id="p1", event={"type": "token", "text": "Outlining"}),
        InterruptEvent(interrupt=asks),
    )
    return background


def assert_not_busy(window: MainWindow) -> None:
    composer = window.composer
    assert composer.editor.isEnabled() and not composer.editor.isReadOnly()
    assert composer.send_button.isEnabled() and composer.send_button.text() == "Send"
    assert not window.menu_actions.stop_run.isEnabled()
    assert not window.state.run_state("t1").is_running
    row = window.thread_list.model.index(0, 0)
    assert row.data(STATUS_ROLE) != "running"


def test_with_a_plan_running_in_the_background_the_author_types_and_sends(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    background = plan_running(window)
    assert window.state.inbox.count("t1") == 1  # the plan's question waits in the inbox
    assert_not_busy(window)
    node = window.coord.tree.task("p1", "a") if window.coord is not None else None
    assert node is not None and node.info.status == "running"

    window.composer.editor.setFocus()
    qtbot.keyClicks(window.composer.editor, QUESTION)
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    params, pending = fake_sender.last("run/start")
    assert params == RunStartParams(thread_id="t1", text=QUESTION)  # a turn, not queued
    assert window.composer.editor.toPlainText() == ""
    assert window.transcript.plain_text().endswith(QUESTION)  # shown at once, as sent
    pending.resolve(RunRef(run_id="r2"))

    turn = RunScript(run_id="r2")
    feed(window, turn, RunStarted(), Token(text="Halfway there."))
    feed(window, background, TaskUpdate(task=task("a", "running", activity="writing")))
    assert window.state.run_state("t1").is_running  # the author's own turn, not the plan
    feed(window, turn, RunFinished())
    assert window.transcript.plain_text().endswith("Halfway there.")
    assert_not_busy(window)
    assert window.state.inbox.count("t1") == 1  # the turn's end keeps the plan's question
