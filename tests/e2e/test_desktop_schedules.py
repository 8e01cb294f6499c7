"""The Schedules panel driving the real sidecar: an author's bad cron is refused by the field it
is about, the corrected one is created from the dialog and `schedule/list` has it; the choice
for a question asked while the author is away is saved and shown again."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolBar
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.views.schedules_panel import COLUMNS, SchedulesPanelDialog
from sidecar.protocol import QueueEmpty, ScheduleListResult, UnattendedPolicy
from tests.fakes.model_server import ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        TZ="UTC",
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    yield desktop
    desktop.shutdown()


def _open_panel(qtbot: QtBot, app: DesktopApp) -> SchedulesPanelDialog:
    toolbar = app.window.findChild(QToolBar, "main_toolbar")
    assert toolbar is not None
    (action,) = [a for a in toolbar.actions() if a.text() == "Schedules"]
    action.trigger()
    panel = app.window.findChild(SchedulesPanelDialog)
    assert panel is not None
    qtbot.waitUntil(lambda: panel.controller.default_timezone != "", timeout=30_000)
    return panel


def test_an_author_creates_a_schedule_from_the_dialog_after_a_refused_cron(
    qtbot: QtBot, app: DesktopApp
):
    panel = _open_panel(qtbot, app)
    qtbot.mouseClick(panel.new_button, Qt.MouseButton.LeftButton)
    dialog = panel.edit_dialog
    assert dialog is not None
    assert dialog.timezone_combo.currentText() == panel.controller.default_timezone
    dialog.name_edit.setText("Standup")
    dialog.cron_edit.setText("61 * * * *")
    dialog.prompt_edit.setPlainText("standup notes")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "when" in dialog.visible_errors(), timeout=30_000)
    assert dialog.isVisible() and dialog.cron_edit.text() == "61 * * * *"

    dialog.cron_edit.setText("0 9 * * 1-5")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.editing, timeout=30_000)
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1, timeout=30_000)
    assert dialog.visible_errors() == {} and "Next runs (" in dialog.preview_label.text()

    listed = app.client.request("schedule/list", QueueEmpty())
    qtbot.waitUntil(lambda: listed.done, timeout=30_000)
    assert isinstance(listed.result, ScheduleListResult)
    assert [(s.name, s.kind, s.spec, s.prompt, s.thread_id) for s in listed.result.schedules] == [
        ("Standup", "cron", "0 9 * * 1-5", "standup notes", None)
    ]
    assert len(listed.result.schedules[0].next_fires_local) == 3


def test_the_away_policy_chosen_in_the_form_is_saved_and_shown_again(qtbot: QtBot, app: DesktopApp):
    """ "If it needs an answer while you're away": Deny after 45 minutes, saved through the real
    sidecar; the panel's row and the form opened again show it; changed to Skip, it is saved."""
    panel = _open_panel(qtbot, app)
    qtbot.mouseClick(panel.new_button, Qt.MouseButton.LeftButton)
    dialog = panel.edit_dialog
    assert dialog is not None and dialog.unattended_buttons["wait"].isChecked()
    dialog.name_edit.setText("Night report")
    dialog.cron_edit.setText("0 3 * * *")
    dialog.prompt_edit.setPlainText("file the night report")
    qtbot.mouseClick(dialog.unattended_buttons["deny_after"], Qt.MouseButton.LeftButton)
    dialog.deny_minutes_spin.setValue(45)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1, timeout=30_000)
    qtbot.waitUntil(lambda: dialog.editing, timeout=30_000)

    def away() -> str:
        row = panel.tree.topLevelItem(0)
        return row.text(COLUMNS.index("If you're away")) if row is not None else ""

    assert away() == "denies after 45 min"
    dialog.close()
    row = panel.tree.topLevelItem(0)
    assert row is not None
    row.setSelected(True)
    qtbot.mouseClick(panel.edit_button, Qt.MouseButton.LeftButton)
    again = panel.edit_dialog
    assert again is not None and again is not dialog
    assert again.unattended_buttons["deny_after"].isChecked()
    assert again.deny_minutes_spin.value() == 45

    qtbot.mouseClick(again.unattended_buttons["skip"], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(again.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: away() == "skips the run", timeout=30_000)
    listed = app.client.request("schedule/list", QueueEmpty())
    qtbot.waitUntil(lambda: listed.done, timeout=30_000)
    assert isinstance(listed.result, ScheduleListResult)
    assert [s.unattended for s in listed.result.schedules] == [
        UnattendedPolicy(action="skip", minutes=45)
    ]
