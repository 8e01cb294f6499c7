"""Plans, tasks, escalations, subagent interrupts and profiles through the whole desktop
(`build_desktop`) against the scripted fake sidecar process (see `fake_coord.py`), and what a
task did, read back from the run tree after the sidecar restarted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.controllers.plans import CoordController
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.escalation_dialog import EscalationDialog
from desktop.views.plan_dialog import TITLE, PlanApprovalDialog
from desktop.views.question_dialog import QuestionDialog
from desktop.views.run_tree import (
    ELAPSED,
    SHOW_ACTIVITY,
    SHOW_MESSAGES,
    STALLED_BADGE,
    STATUS,
    RunTreePanel,
)
from desktop.views.settings_dialog import SettingsDialog
from desktop.views.task_activity_dialog import TaskActivityDialog
from desktop.views.task_messages_dialog import TaskMessagesDialog
from sidecar.protocol import CoordErrorCode
from tests.desktop.test_app import send

pytestmark = pytest.mark.slow
TIMEOUT_MS = 10_000
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def desktop(qtbot: QtBot, fake_process_factory) -> Iterator[DesktopApp]:
    app = build_desktop(process=fake_process_factory())
    qtbot.addWidget(app.window)
    app.window.show()
    with qtbot.waitSignal(app.client.initialized, timeout=TIMEOUT_MS):
        app.start()
    yield app
    app.shutdown(timeout_ms=3000)


def tree_of(app: DesktopApp) -> RunTreePanel:
    assert app.window.run_tree is not None
    return app.window.run_tree


def coord_of(app: DesktopApp) -> CoordController:
    assert app.window.coord is not None
    return app.window.coord


def open_dialog(qtbot: QtBot, app: DesktopApp, text: str) -> object:
    with qtbot.waitSignal(app.window.interrupt_dialog_opened, timeout=TIMEOUT_MS) as opened:
        send(qtbot, app, text)
    return (opened.args or [None])[0]


def task_status(app: DesktopApp, task_id: str) -> str | None:
    tree = coord_of(app).tree
    plans = tree.plans
    node = tree.task(plans[-1].id, task_id) if plans else None
    return node.info.status if node is not None else None


def test_an_edited_plan_is_approved_and_its_tasks_run_to_success(qtbot: QtBot, desktop: DesktopApp):
    dialog = open_dialog(qtbot, desktop, "plan")
    assert isinstance(dialog, PlanApprovalDialog)
    qtbot.waitUntil(lambda: task_status(desktop, "a") == "pending", timeout=TIMEOUT_MS)
    dialog.table.setCurrentCell(2, TITLE)
    qtbot.mouseClick(dialog.drop_button, LEFT)
    qtbot.mouseClick(dialog.approve_button, LEFT)
    qtbot.waitUntil(lambda: "Plan completed." in desktop.window.transcript.plain_text(),
                    timeout=TIMEOUT_MS)  # fmt: skip
    tree = coord_of(desktop).tree
    plan_id = tree.plans[-1].id
    assert tree.plans[-1].status == "completed"
    assert [(n.info.id, n.info.status) for n in tree.tasks(plan_id)] == [
        ("a", "succeeded"), ("b", "succeeded"),
    ]  # fmt: skip
    item = tree_of(desktop).task_item(plan_id, "b")
    assert item is not None and item.text(ELAPSED) == "0:05" and item.childCount() == 3
    children = [item.child(i) for i in range(item.childCount())]
    assert [child.text(0) for child in children if child is not None][1:] == [
        "writing b", "Done with b",
    ]  # fmt: skip
    assert desktop.window.dialogs == {}


def _dialog_for(qtbot: QtBot, desktop: DesktopApp, interrupt_id: str) -> object:
    """The open dialog of a pending interrupt, opened from the inbox if it is not open."""
    window = desktop.window
    if interrupt_id in window.dialogs:
        return window.dialogs[interrupt_id]
    inbox = window.inbox_panel
    inbox.list.setCurrentRow(inbox.interrupt_ids().index(interrupt_id))
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=TIMEOUT_MS) as opened:
        qtbot.mouseClick(inbox.open_button, LEFT)
    return (opened.args or [None])[0]


def test_two_subagent_interrupts_are_answered_newest_first(qtbot: QtBot, desktop: DesktopApp):
    """Two subagents ask at once; the newer question is answered first, then the older.

    Which dialog opens by itself depends on whether both arrive in one batch (then the newest)
    or apart (then the first, the other waiting in the inbox): the test answers by the inbox.
    """
    open_dialog(qtbot, desktop, "two")
    inbox = desktop.window.inbox_panel
    qtbot.waitUntil(lambda: len(inbox.interrupt_ids()) == 2, timeout=TIMEOUT_MS)
    newest_id, older_id = inbox.interrupt_ids()
    newest = _dialog_for(qtbot, desktop, newest_id)
    assert isinstance(newest, ApprovalDialog) and newest.interrupt.task_id == "b"
    qtbot.mouseClick(newest.allow_once_button, LEFT)
    qtbot.waitUntil(lambda: inbox.interrupt_ids() == [older_id], timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: desktop.state.run_state().status == "interrupted", timeout=TIMEOUT_MS)
    older = _dialog_for(qtbot, desktop, older_id)
    assert isinstance(older, QuestionDialog) and older.interrupt.id == older_id
    older.choice_buttons[0].setChecked(True)
    qtbot.mouseClick(older.answer_button, LEFT)
    qtbot.waitUntil(lambda: "Both answered." in desktop.window.transcript.plain_text(),
                    timeout=TIMEOUT_MS)  # fmt: skip
    assert len(desktop.state.inbox) == 0


def test_a_stalled_task_escalates_and_reassigning_runs_it_again(qtbot: QtBot, desktop: DesktopApp):
    dialog = open_dialog(qtbot, desktop, "stall")
    assert isinstance(dialog, EscalationDialog)
    qtbot.waitUntil(lambda: task_status(desktop, "a") == "running", timeout=TIMEOUT_MS)
    tree = coord_of(desktop).tree
    item = tree_of(desktop).task_item(tree.plans[-1].id, "a")
    assert item is not None and STALLED_BADGE in item.text(STATUS)
    assert dialog.task_label.text() == "Outline (a)"
    dialog.profile_combo.setCurrentText("coder")
    qtbot.mouseClick(dialog.reassign_button, LEFT)
    qtbot.waitUntil(lambda: task_status(desktop, "a") == "succeeded", timeout=TIMEOUT_MS)
    node = tree.task(tree.plans[-1].id, "a")
    assert node is not None and node.info.profile == "coder" and node.info.attempt == 3


def test_a_skipped_task_is_retried_from_the_run_tree(qtbot: QtBot, desktop: DesktopApp):
    dialog = open_dialog(qtbot, desktop, "stall")
    assert isinstance(dialog, EscalationDialog)
    qtbot.mouseClick(dialog.skip_button, LEFT)
    qtbot.waitUntil(lambda: task_status(desktop, "a") == "skipped", timeout=TIMEOUT_MS)
    tree = coord_of(desktop).tree
    actions = tree_of(desktop).task_actions(tree.plans[-1].id, "a")
    assert actions is not None and actions.retry_button.isEnabled()
    qtbot.mouseClick(actions.retry_button, LEFT)
    qtbot.waitUntil(lambda: task_status(desktop, "a") == "succeeded", timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: "Retried a." in desktop.window.transcript.plain_text(),
                    timeout=TIMEOUT_MS)  # fmt: skip


def test_a_running_task_is_cancelled_and_a_finished_one_refuses(qtbot: QtBot, desktop: DesktopApp):
    open_dialog(qtbot, desktop, "stall")
    qtbot.waitUntil(lambda: task_status(desktop, "a") == "running", timeout=TIMEOUT_MS)
    tree = coord_of(desktop).tree
    plan_id = tree.plans[-1].id
    actions = tree_of(desktop).task_actions(plan_id, "a")
    assert actions is not None
    qtbot.mouseClick(actions.cancel_button, LEFT)
    qtbot.waitUntil(lambda: task_status(desktop, "a") == "cancelled", timeout=TIMEOUT_MS)
    coord_of(desktop).cancel_task(plan_id, "a")

    def refused() -> bool:
        node = tree.task(plan_id, "a")
        return node is not None and node.error_code == CoordErrorCode.TASK_NOT_RUNNING

    qtbot.waitUntil(refused, timeout=TIMEOUT_MS)


def test_an_autonomous_thread_runs_its_plan_without_asking(qtbot: QtBot, desktop: DesktopApp):
    send(qtbot, desktop, "hello")
    qtbot.waitUntil(lambda: desktop.state.run_state().status == "idle", timeout=TIMEOUT_MS)
    panel = tree_of(desktop)
    qtbot.waitUntil(panel.autonomous_check.isEnabled, timeout=TIMEOUT_MS)
    qtbot.mouseClick(panel.autonomous_check, LEFT)
    qtbot.waitUntil(panel.autonomous_check.isChecked, timeout=TIMEOUT_MS)
    send(qtbot, desktop, "plan")
    qtbot.waitUntil(lambda: "Plan completed." in desktop.window.transcript.plain_text(),
                    timeout=TIMEOUT_MS)  # fmt: skip
    assert desktop.window.dialogs == {} and task_status(desktop, "c") == "succeeded"


def test_profiles_round_trip_through_the_settings_dialog(qtbot: QtBot, desktop: DesktopApp):
    with qtbot.waitSignal(desktop.window.settings_dialog_opened, timeout=TIMEOUT_MS) as opened:
        desktop.window.settings_action.trigger()
    dialog = (opened.args or [None])[0]
    assert isinstance(dialog, SettingsDialog) and dialog.profiles_tab is not None
    tab = dialog.profiles_tab
    dialog.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.list.count() == 2, timeout=TIMEOUT_MS)
    tab.name_edit.clear()
    qtbot.keyClicks(tab.name_edit, "Prose writer")
    tab.concurrency_spin.setValue(2)
    qtbot.mouseClick(tab.save_button, LEFT)
    tab.list.clear()
    tab.refresh()  # answered after the save: the fake takes requests in order
    qtbot.waitUntil(lambda: tab.list.count() == 2, timeout=TIMEOUT_MS)
    assert tab.list.item(0).text() == "Prose writer (writer) · internal"
    assert tab.concurrency_spin.value() == 2
    tab.id_edit.clear()
    qtbot.keyClicks(tab.id_edit, "invalid-writer")
    qtbot.mouseClick(tab.save_button, LEFT)
    qtbot.waitUntil(tab.error_label.isVisible, timeout=TIMEOUT_MS)
    assert "invalid-writer" in tab.error_label.text()


def _open(qtbot: QtBot, panel: RunTreePanel, plan_id: str, task_id: str, text: str) -> object:
    item = panel.task_item(plan_id, task_id)
    assert item is not None
    menu = panel.task_menu(item)
    assert menu is not None
    [action] = [a for a in menu.actions() if a.text() == text]
    with qtbot.waitSignal(panel.task_dialog_opened, timeout=TIMEOUT_MS) as opened:
        action.trigger()
    return (opened.args or [None])[0]


def test_what_a_task_did_comes_back_from_the_run_tree_after_the_sidecar_restarts(
    qtbot: QtBot, desktop: DesktopApp
):
    dialog = open_dialog(qtbot, desktop, "plan")
    assert isinstance(dialog, PlanApprovalDialog)
    qtbot.mouseClick(dialog.approve_button, LEFT)
    qtbot.waitUntil(lambda: task_status(desktop, "c") == "succeeded", timeout=TIMEOUT_MS)
    with qtbot.waitSignal(desktop.process.restarted, timeout=TIMEOUT_MS):
        desktop.controller.send_message("crash")
    tree = coord_of(desktop).tree
    qtbot.waitUntil(lambda: not tree.loading and not tree.loading_all, timeout=TIMEOUT_MS)
    assert tree.error is None
    plan_id = tree.plans[-1].id
    panel = tree_of(desktop)

    activity = _open(qtbot, panel, plan_id, "b", SHOW_ACTIVITY)
    assert isinstance(activity, TaskActivityDialog)
    qtbot.waitUntil(lambda: len(activity.lines()) == 3, timeout=TIMEOUT_MS)
    assert activity.lines() == [
        ('workspace/write {"path": "b.md"}', "ok"),
        ("writing b", ""),
        ("Done with b", ""),
    ]
    messages = _open(qtbot, panel, plan_id, "b", SHOW_MESSAGES)
    assert isinstance(messages, TaskMessagesDialog)
    qtbot.waitUntil(lambda: len(messages.lines) == 1, timeout=TIMEOUT_MS)
    [result] = messages.lines
    assert (result.header, result.body) == ("Result: succeeded", "b done")
