"""The window driving the real sidecar's coordinator and servers, with a scripted model: an
author edits and approves a plan, answers two subagents' approvals from the inbox out of order,
and plugs in mcp-server-time through the servers panel to call it from the composer.

An approved plan runs in the background of its thread: the turn that proposed it ends once it is
handed off (its call's result says so), the run tree follows the plan's background run, the
subagents' questions come to the inbox from that run, and when the plan ends its report is
announced into the transcript and the main agent answers it in a turn of its own."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QTableWidget
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.models.transcript_entries import AnnouncementEntry, MessageEntry, ToolCallEntry
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.main_window import MainWindow
from desktop.views.plan_dialog import ID, TITLE, PlanApprovalDialog
from desktop.views.run_tree import STATUS, RunTreePanel
from sidecar.protocol import InterruptInfo
from tests.e2e.test_sidecar_model import model_env
from tests.e2e.test_subagents import (
    ANNOUNCED,
    FAST,
    _answers,
    _is_announcement,
    _task,
    _task_of,
    _writes_then_answers,
)
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.slow

COLD = 60_000
"""A cold sidecar loads DSPy and LiteLLM before its first turn."""

TOLD = "The team's work is done."
"""What the main agent answers when a plan's announcement comes in (once the script is out)."""


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        server.fallback = Reply.text(answer_text(TOLD))
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def app(
    qtbot: QtBot, tmp_path: Path, workspace: Path, model: ScriptedModelServer
) -> Iterator[DesktopApp]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        **model_env(model),
        **FAST,
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    desktop.window.show()
    with qtbot.waitSignal(desktop.client.initialized, timeout=COLD):
        desktop.start()
    yield desktop
    desktop.shutdown()


def _click(qtbot: QtBot, button: QAbstractButton) -> None:
    assert button.isEnabled(), f"{button.text()!r} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _click_cell(qtbot: QtBot, table: QTableWidget, row: int, column: int) -> None:
    item = table.item(row, column)
    assert item is not None
    position = table.visualItemRect(item).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=position)
    assert table.currentRow() == row


def _type_and_send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    """Type into the composer as an author would, then press Enter."""
    editor = window.composer.editor
    qtbot.waitUntil(editor.isEnabled, timeout=COLD)
    editor.setFocus()
    qtbot.keyClicks(editor, text)
    assert editor.toPlainText() == text
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def _send_for_dialog(qtbot: QtBot, window: MainWindow, text: str) -> object:
    """Send `text` and return the interrupt dialog the window opens for it."""
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=COLD) as opened:
        _type_and_send(qtbot, window, text)
    assert opened.args is not None
    return opened.args[0]


def _new_thread(qtbot: QtBot, app: DesktopApp) -> str:
    """Click "New" in the thread list and wait until the new thread is shown."""
    _click(qtbot, app.window.thread_list.new_button)
    qtbot.waitUntil(lambda: app.state.selected_thread_id is not None, timeout=COLD)
    thread_id = app.state.selected_thread_id
    assert thread_id is not None
    return thread_id


def _run_tree(window: MainWindow) -> RunTreePanel:
    assert window.run_tree is not None
    return window.run_tree


def _shown_plan(panel: RunTreePanel) -> tuple[str, str, dict[str, str]]:
    """The shown thread's newest plan in the tree: (plan id, the status its row shows, task id
    → status shown)."""
    plans = panel.model.plans
    if not plans:
        return "", "", {}
    plan = plans[-1]
    row = panel.plan_item(plan.id)
    shown = row.text(STATUS) if row is not None else ""
    statuses: dict[str, str] = {}
    for node in panel.model.tasks(plan.id):
        item = panel.task_item(plan.id, node.info.id)
        statuses[node.info.id] = item.text(STATUS) if item is not None else ""
    return plan.id, shown, statuses


def _last_assistant(app: DesktopApp) -> str:
    entries = app.state.transcript.entries
    messages = [e for e in entries if isinstance(e, MessageEntry) and e.role == "assistant"]
    return messages[-1].text if messages else ""


def _desktop_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the desktop complained about (a frame it could not read, a refused request…)."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.name.startswith("desktop") and record.levelno >= logging.WARNING
    ]


def _run_done(app: DesktopApp) -> bool:
    return app.state.run_state().status == "idle"


def _announcements(app: DesktopApp) -> list[AnnouncementEntry]:
    """The plans' announcements in the transcript: rows of their own kind (the message its
    turn took, as sent), each shown as "Plan <id> finished: <status>" over its report."""
    entries = app.state.transcript.entries
    found = [e for e in entries if isinstance(e, AnnouncementEntry)]
    assert all(e.text.startswith(ANNOUNCED) for e in found)
    view = app.window.transcript
    for entry in found:
        row = app.state.transcript.row_of_entry(entry)
        assert row is not None
        assert view.shown_text(row).startswith(entry.plans[0].header + "\n")
    return found


def _told(app: DesktopApp) -> bool:
    """The main agent answered a plan's announcement, and its turn is over."""
    said = [e for e in app.state.transcript.entries if isinstance(e, MessageEntry)]
    answered = [(e.role, isinstance(e, AnnouncementEntry) or e.text) for e in said[-2:]]
    return answered == [("user", True), ("assistant", TOLD)] and _run_done(app)


def _handed_off(app: DesktopApp, plan_id: str) -> None:
    """The transcript's only tool call is the plan call, answered: the plan went to the
    background."""
    calls = [e for e in app.state.transcript.entries if isinstance(e, ToolCallEntry)]
    assert [(c.server, c.tool, c.state) for c in calls] == [("atrium", "plan", "succeeded")]
    assert (calls[0].result or "").startswith(f"Plan {plan_id} is running in the background")


def test_an_author_drops_a_leaf_reorders_and_approves_a_plan_and_the_run_tree_shows_it_done(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer, caplog: pytest.LogCaptureFixture
):
    model.push(*[_answers] * 3)
    window = app.window
    plan = {
        "goal": "diamond",
        "tasks": [_task("a"), _task("b", ("a",)), _task("c", ("a",)), _task("d", ("b", "c"))],
    }
    dialog = _send_for_dialog(qtbot, window, "/plan " + json.dumps(plan))
    assert isinstance(dialog, PlanApprovalDialog)
    assert _table_ids(dialog) == ["a", "b", "c", "d"]
    assert model.generation_requests == []  # nothing runs before the author approves

    _click_cell(qtbot, dialog.table, 3, TITLE)
    _click(qtbot, dialog.drop_button)  # d: nothing depends on it
    _click_cell(qtbot, dialog.table, 2, TITLE)
    _click(qtbot, dialog.up_button)  # c before b
    assert _table_ids(dialog) == ["a", "c", "b"]
    assert dialog.approve_button.text() == "Approve with changes"
    _click(qtbot, dialog.approve_button)

    panel = _run_tree(window)
    expected = {"a": "succeeded", "c": "succeeded", "b": "succeeded"}
    qtbot.waitUntil(lambda: _shown_plan(panel)[1:] == ("completed", expected), timeout=COLD)
    assert list(_shown_plan(panel)[2]) == ["a", "c", "b"]  # the author's order
    qtbot.waitUntil(lambda: _told(app), timeout=COLD)
    assert dialog.interrupt.id not in window.dialogs  # it closed once the sidecar took it
    requests = model.generation_requests
    assert sorted(_task_of(r) for r in requests[:-1]) == ["a", "b", "c"]
    assert [_is_announcement(r) for r in requests] == [False] * 3 + [True]
    plan_id = _shown_plan(panel)[0]
    _handed_off(app, plan_id)
    # The plan's report came back by itself, as its announcement, once.
    [announced] = _announcements(app)
    [(announced_plan, report)] = [(p.header, p.report) for p in announced.plans]
    assert announced_plan == "Plan “diamond” finished: completed"  # by its goal, not its id
    assert report.startswith(f"Plan {plan_id}: completed.\nGoal: diamond\n")
    assert all(f"[succeeded] {task}" in report for task in ("a", "b", "c"))
    assert "] d (" not in report
    assert _desktop_warnings(caplog) == []


def _table_ids(dialog: PlanApprovalDialog) -> list[str]:
    items = [dialog.table.item(row, ID) for row in range(dialog.table.rowCount())]
    return [item.text() if item is not None else "" for item in items]


def test_an_author_answers_two_subagents_approvals_from_the_inbox_in_reverse_order(
    qtbot: QtBot,
    app: DesktopApp,
    model: ScriptedModelServer,
    workspace: Path,
    caplog: pytest.LogCaptureFixture,
):
    model.push(*[_writes_then_answers] * 4)
    window = app.window
    _new_thread(qtbot, app)
    panel = _run_tree(window)
    qtbot.waitUntil(lambda: not panel.model.loading and panel.autonomous_check.isEnabled())
    _click(qtbot, panel.autonomous_check)
    qtbot.waitUntil(panel.autonomous_check.isChecked, timeout=COLD)

    plan = {"goal": "two writers", "tasks": [_task("a"), _task("b")]}
    _type_and_send(qtbot, window, "/plan " + json.dumps(plan))
    inbox = window.inbox_panel
    qtbot.waitUntil(lambda: inbox.list.count() == 2, timeout=COLD)
    pending = [app.state.inbox.get(i) for i in inbox.interrupt_ids()]
    interrupts: list[InterruptInfo] = [found[1] for found in pending if found is not None]
    assert [i.kind for i in interrupts] == ["approval", "approval"]
    assert {i.task_id for i in interrupts} == {"a", "b"}
    newest = inbox.list.item(0).text()
    assert newest.startswith("Approval") and f"from task “Task {interrupts[0].task_id}”" in newest

    second, first = interrupts  # the inbox lists the newest first
    for interrupt in (second, first):
        item = inbox.list.item(inbox.interrupt_ids().index(interrupt.id))
        qtbot.mouseClick(
            inbox.list.viewport(),
            Qt.MouseButton.LeftButton,
            pos=inbox.list.visualItemRect(item).center(),
        )
        assert inbox.list.currentItem() is item
        _click(qtbot, inbox.open_button)
        qtbot.waitUntil(lambda i=interrupt: i.id in window.dialogs)
        dialog = window.dialogs[interrupt.id]
        assert isinstance(dialog, ApprovalDialog) and dialog.isVisible()
        assert f"{interrupt.task_id}.md" in dialog.arguments_view.toPlainText()
        _click(qtbot, dialog.allow_once_button)
        qtbot.waitUntil(lambda i=interrupt: i.id not in inbox.interrupt_ids(), timeout=COLD)

    expected = {"a": "succeeded", "b": "succeeded"}
    qtbot.waitUntil(lambda: _shown_plan(panel)[1:] == ("completed", expected), timeout=COLD)
    qtbot.waitUntil(lambda: _told(app), timeout=COLD)
    assert (workspace / "a.md").read_text() == "a" and (workspace / "b.md").read_text() == "b"
    assert inbox.list.count() == 0 and not window.dialogs
    # The subagents' calls are theirs: the thread's transcript holds only the plan call (handed
    # off to the background), with no approval left waiting, then the plan's announcement;
    # each task's activity shows its write once, done.
    plan_id = _shown_plan(panel)[0]
    _handed_off(app, plan_id)
    [announced] = _announcements(app)
    [(announced_plan, report)] = [(p.header, p.report) for p in announced.plans]
    assert announced_plan == "Plan “two writers” finished: completed"
    assert "Files: a.md" in report and "Files: b.md" in report
    for task in ("a", "b"):
        writes = [line for line in _activity(panel, plan_id, task) if "write" in line[0]]
        assert writes == [(f'workspace/write {{"content": "{task}", "path": "{task}.md"}}', "ok")]
    assert _desktop_warnings(caplog) == []


def _activity(panel: RunTreePanel, plan_id: str, task_id: str) -> list[tuple[str, str]]:
    """A task's activity lines in the run tree: (text, state)."""
    item = panel.task_item(plan_id, task_id)
    assert item is not None
    children = [item.child(row) for row in range(item.childCount())]
    return [(child.text(0), child.text(STATUS)) for child in children if child is not None]


def test_an_author_adds_mcp_server_time_in_the_panel_and_calls_it_from_the_composer(
    qtbot: QtBot, app: DesktopApp, caplog: pytest.LogCaptureFixture
):
    window = app.window
    window.servers_action.trigger()
    panel = window.servers_panel
    assert panel is not None and panel.isVisible()
    _click(qtbot, panel.add_button)
    editor = panel.edit_dialog
    assert editor is not None
    qtbot.keyClicks(editor.name_edit, "time")
    qtbot.keyClicks(editor.command_edit, "mcp-server-time")
    _click(qtbot, editor.save_button)
    qtbot.waitUntil(lambda: panel.edit_dialog is None, timeout=COLD)
    qtbot.waitUntil(lambda: panel.light_of("time") == "green", timeout=COLD)
    item = panel.item_for("time")
    assert item is not None and item.text(2) == "2"  # get_current_time, convert_time
    panel.close()

    call = '/call time__get_current_time {"timezone": "UTC"}'
    dialog = _send_for_dialog(qtbot, window, call)
    assert isinstance(dialog, ApprovalDialog)
    assert (dialog.interrupt.server, dialog.interrupt.tool) == ("time", "get_current_time")
    _click(qtbot, dialog.allow_once_button)
    qtbot.waitUntil(lambda: _run_done(app), timeout=COLD)

    [entry] = [e for e in app.state.transcript.entries if isinstance(e, ToolCallEntry)]
    assert (entry.server, entry.tool, entry.state) == ("time", "get_current_time", "succeeded")
    [row] = [r for r, e in enumerate(app.state.transcript.entries) if isinstance(e, ToolCallEntry)]
    view = window.transcript
    rect = view.list_view.visualRect(view.model.index(row))
    qtbot.mouseClick(view.list_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert "result:\n" in view.shown_text(row)  # expanded by the click
    result = view.tool_details(entry.call_id).split("result:\n", 1)[1]
    assert json.loads(result)["timezone"] == "UTC"
    assert _desktop_warnings(caplog) == []
