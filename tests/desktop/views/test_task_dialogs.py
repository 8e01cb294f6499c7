"""From a task in the run tree: "Open transcript" shows its sub-thread read-only, "Show activity"
its stored events, "Show messages" its envelopes in reply order, from where a strong agent's
trace files open in a read-only viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QMenu
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.views.composer import ComposerWidget
from desktop.views.main_window import MainWindow
from desktop.views.run_tree import OPEN_TRANSCRIPT, SHOW_ACTIVITY, SHOW_MESSAGES, RunTreePanel
from desktop.views.run_tree_menus import SEND_MESSAGE
from desktop.views.sub_thread_dialog import SubThreadDialog
from desktop.views.task_activity_dialog import TaskActivityDialog
from desktop.views.task_messages_dialog import TaskMessagesDialog
from desktop.views.trace_viewer import TraceViewerDialog
from sidecar.protocol import (
    EnvelopeInfo,
    ErrorObject,
    MessageEvent,
    PlanGetResult,
    SubagentEvent,
    TaskEnvelopesResult,
    TaskEventsParams,
    TaskEventsResult,
    TaskRef,
    ThreadGetParams,
    ThreadGetResult,
    ThreadListResult,
    ToolCall,
    ToolResult,
    WireModel,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import FakeSender, message, thread_info

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """t1 shown, its plan p1 done: task a by an internal subagent (sub-thread s-a), task b by
    Claude Code (no sub-thread)."""
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    window = MainWindow(state, controller, coord=CoordController(fake_sender.api))
    qtbot.addWidget(window)
    window.show()
    controller.refresh()
    fake_sender.last("thread/list")[1].resolve(ThreadListResult(threads=(thread_info("t1"),)))
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(thread=thread_info("t1"), messages=(), interrupts=(), status="idle")
    )
    tasks = (
        task("a", "succeeded", sub_thread_id="s-a"),
        task("b", "succeeded", profile="coder"),
    )
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=False, plans=(plan(*tasks, status="completed"),))
    )
    return window


def panel_of(window: MainWindow) -> RunTreePanel:
    assert window.run_tree is not None
    return window.run_tree


def open_from_menu(qtbot: QtBot, panel: RunTreePanel, task_id: str, text: str) -> QDialog:
    """Choose `text` in the task's menu; returns the dialog it shows."""
    item = panel.task_item("p1", task_id)
    assert item is not None
    menu = panel.task_menu(item)
    assert menu is not None
    [action] = [a for a in menu.actions() if a.text() == text]
    assert action.isEnabled()
    with qtbot.waitSignal(panel.task_dialog_opened) as opened:
        action.trigger()
    dialog = (opened.args or [None])[0]
    assert isinstance(dialog, QDialog) and dialog.isVisible()
    return dialog


def test_the_tasks_button_offers_what_it_did(qtbot: QtBot, window: MainWindow):
    actions = panel_of(window).task_actions("p1", "b")
    assert actions is not None
    qtbot.mouseClick(actions.more_button, LEFT)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    texts = {a.text(): a.isEnabled() for a in menu.actions() if a.text()}
    assert texts == {
        OPEN_TRANSCRIPT: False, SHOW_ACTIVITY: True, SHOW_MESSAGES: True,
        SEND_MESSAGE: False, "Cancel": False, "Retry": False,
    }  # fmt: skip
    menu.close()


def test_open_transcript_shows_the_sub_thread_read_only(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    dialog = open_from_menu(qtbot, panel_of(window), "a", OPEN_TRANSCRIPT)
    assert isinstance(dialog, SubThreadDialog)
    params, pending = fake_sender.last("thread/get")
    assert params == ThreadGetParams(thread_id="s-a", limit=200)
    said = (
        message("user", "Task: Write the outline", "s1", "s-a"),
        message("assistant", "Outline written.", "s2", "s-a"),
    )
    pending.resolve(
        ThreadGetResult(thread=thread_info("s-a"), messages=said, interrupts=(), status="idle")
    )
    assert dialog.transcript.plain_text() == "Task: Write the outline\nOutline written."
    assert dialog.findChildren(ComposerWidget) == []  # nothing is sent from here
    assert window.state.transcript.thread_id == "t1"  # the author's transcript is untouched
    qtbot.mouseClick(dialog.refresh_button, LEFT)
    assert fake_sender.last("thread/get")[0] == params


def stored(*events: WireModel) -> tuple[SubagentEvent, ...]:
    """Task a's events as the sidecar stored them."""
    return tuple(
        SubagentEvent(task_id="a", plan_id="p1", sub_thread_id="s-a", event=e.model_dump())
        for e in events
    )


def test_show_activity_lists_what_the_task_did_from_its_stored_events(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    panel = panel_of(window)
    dialog = open_from_menu(qtbot, panel, "a", SHOW_ACTIVITY)
    assert isinstance(dialog, TaskActivityDialog)
    params, pending = fake_sender.last("task/events")
    assert params == TaskEventsParams(thread_id="t1", plan_id="p1", task_id="a", limit=2000)
    events = stored(
        ToolCall(call_id="c1", server="workspace", tool="write", arguments={"path": "a.md"}),
        ToolResult(call_id="c1", is_error=False, content="wrote"),
        MessageEvent(message=message("assistant", "Outline written.", "s2", "s-a")),
    )
    pending.resolve(TaskEventsResult(events=events, has_older=True))
    assert dialog.lines() == [
        ('workspace/write {"path": "a.md"}', "ok"),
        ("assistant: Outline written.", ""),
    ]
    assert "older events were left out" in dialog.summary_label.text()
    again = open_from_menu(qtbot, panel, "a", SHOW_ACTIVITY)
    assert again is dialog  # one per task, raised and read again
    fake_sender.last("task/events")[1].reject(ErrorObject(code=-32041, message="no task a"))
    assert dialog.error_label.isVisible() and "no task a" in dialog.error_label.text()


def envelope(envelope_id: str, kind: str, payload: dict[str, Any], **fields: Any) -> EnvelopeInfo:
    base: dict[str, Any] = {
        "id": envelope_id, "sender": "thread/t1/task/a", "receiver": "thread/t1/task/a/reviewer",
        "kind": kind, "payload": payload, "created_at": 1_700_000_000.0,
    }  # fmt: skip
    return EnvelopeInfo.model_validate(base | fields)


def test_show_messages_lists_drafts_and_reviews_in_reply_order(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    dialog = open_from_menu(qtbot, panel_of(window), "a", SHOW_MESSAGES)
    assert isinstance(dialog, TaskMessagesDialog)
    assert fake_sender.last("task/envelopes")[0] == TaskRef(
        thread_id="t1", task_id="a", plan_id="p1"
    )
    reviewer = {"sender": "thread/t1/task/a/reviewer", "receiver": "thread/t1/task/a"}
    envelopes = (
        envelope("d1", "artifact", {"round": 1, "text": "Draft one"}),
        envelope("f", "final", {"status": "succeeded", "findings": "Draft two"},
                 receiver="thread/t1"),
        envelope("r1", "review", {"round": 1, "verdict": "reject", "comments": "Shorter"},
                 reply_to="d1", **reviewer),
        envelope("d2", "artifact", {"round": 2, "text": "Draft two"}, reply_to="r1"),
        envelope("r2", "review", {"round": 2, "verdict": "approve", "comments": "Good"},
                 reply_to="d2", **reviewer),
    )  # fmt: skip
    fake_sender.last("task/envelopes")[1].resolve(TaskEnvelopesResult(envelopes=envelopes))
    rows = [dialog.list.topLevelItem(r) for r in range(dialog.list.topLevelItemCount())]
    assert [row.text(0) for row in rows if row is not None] == [
        "Draft, round 1",
        "↳ Review, round 1: changes asked",
        "    ↳ Draft, round 2",
        "        ↳ Review, round 2: approved",
        "Result: succeeded",
    ]
    assert rows[1] is not None and rows[1].text(1) == "reviewer of task a → task a"
    dialog.select(1)
    assert dialog.details_view.toPlainText() == (
        "Review, round 1: changes asked\nFrom reviewer of task a to task a\n"
        "In reply to: Draft, round 1\n\nShorter"
    )
    assert not any(button.isEnabled() for button in dialog.trace_buttons.values())


def test_a_strong_agents_trace_files_open_in_a_read_only_viewer(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender, tmp_path: Path
):
    panel = panel_of(window)
    raw = tmp_path / "raw.txt"
    raw.write_text('{"type":"system"}\n{"type":"result"}\n', encoding="utf-8")
    traces = {"raw": str(raw), "normalized": str(tmp_path / "gone.jsonl")}
    dialog = open_from_menu(qtbot, panel, "b", SHOW_MESSAGES)
    assert isinstance(dialog, TaskMessagesDialog)
    final = envelope("f", "final", {"status": "succeeded", "findings": "ok", "traces": traces})
    fake_sender.last("task/envelopes")[1].resolve(TaskEnvelopesResult(envelopes=(final,)))
    assert dialog.traces == traces

    with qtbot.waitSignal(panel.task_dialog_opened) as opened:
        qtbot.mouseClick(dialog.trace_buttons["raw"], LEFT)
    viewer = (opened.args or [None])[0]
    assert isinstance(viewer, TraceViewerDialog)
    qtbot.waitUntil(lambda: viewer.size_label.text() != "Reading…")  # read off the GUI thread
    assert viewer.text_view.toPlainText() == raw.read_text() and viewer.text_view.isReadOnly()
    assert viewer.size_label.text() == f"{raw.stat().st_size} bytes"

    with qtbot.waitSignal(panel.task_dialog_opened) as opened:
        qtbot.mouseClick(dialog.trace_buttons["normalized"], LEFT)
    missing = (opened.args or [None])[0]
    assert isinstance(missing, TraceViewerDialog)
    qtbot.waitUntil(missing.error_label.isVisible)
    assert missing.error_label.isVisible() and "gone.jsonl" in missing.error_label.text()
