"""The window (offscreen) over the real sidecar with a scripted model: "Rewind to here" on a
turn's row opens a preview listing the files, and confirming it brings files and messages back
to that turn; "Redo" is offered afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp
from desktop.models.transcript import MessageEntry
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.rewind_dialog import RewindPreviewDialog, TurnActions
from tests.e2e.desktop_rig import completed, window_over_sidecar
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

WAIT_MS = 60_000


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    with window_over_sidecar(qtbot, tmp_path, model) as desktop:
        yield desktop


def _write_turn(qtbot: QtBot, app: DesktopApp, text: str) -> None:
    window = app.window
    window.composer.editor.setPlainText(text)
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=WAIT_MS) as opened:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog)
    with qtbot.waitSignal(
        app.client.run_event_received, timeout=WAIT_MS, check_params_cb=completed
    ):
        qtbot.mouseClick(dialog.allow_once_button, Qt.MouseButton.LeftButton)


def _author_rows(app: DesktopApp) -> list[tuple[int, str]]:
    return [
        (row, entry.text)
        for row, entry in enumerate(app.window.state.transcript.entries)
        if isinstance(entry, MessageEntry) and entry.role == "user"
    ]


def test_rewind_to_here_previews_the_files_and_confirming_rewinds_them(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer, tmp_path: Path
):
    a_file = tmp_path / "workspace" / "a.md"
    model.push(
        Reply.tool_call("workspace__write", {"path": "a.md", "content": "one\n"}),
        Reply.text("Wrote a."),
        Reply.tool_call("workspace__write", {"path": "a.md", "content": "two\n"}),
        Reply.text("Rewrote a."),
    )
    _write_turn(qtbot, app, "first")
    _write_turn(qtbot, app, "second")
    qtbot.waitUntil(
        lambda: [t for _r, t in _author_rows(app)] == ["first", "second"], timeout=WAIT_MS
    )
    assert a_file.read_text() == "two\n"

    actions = app.window.transcript.findChild(TurnActions)
    assert isinstance(actions, TurnActions)
    first_row = _author_rows(app)[0][0]
    menu = actions.menu_for(first_row + 1)  # a row of the first turn's answer
    labels = [a.text() for a in menu.actions()]
    assert labels == ["Rewind to here", "Fork from here"]
    menu.actions()[0].trigger()
    qtbot.waitUntil(
        lambda: actions.dialog is not None and actions.dialog.isVisible(), timeout=WAIT_MS
    )
    dialog = actions.dialog
    assert isinstance(dialog, RewindPreviewDialog)
    assert [dialog.files.item(i).text() for i in range(dialog.files.count())] == [
        "a.md: will be restored"
    ]
    assert a_file.read_text() == "two\n"  # nothing changes before the author confirms

    dialog.accept()
    qtbot.waitUntil(lambda: a_file.read_text() == "one\n", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: [t for _r, t in _author_rows(app)] == ["first"], timeout=WAIT_MS)
    assert [a.text() for a in actions.menu_for(first_row).actions()] == [
        "Rewind to here",
        "Fork from here",
        "Redo",
    ]

    # Redo, through the same preview.
    actions.dialog = None
    actions.menu_for(first_row).actions()[2].trigger()
    qtbot.waitUntil(
        lambda: actions.dialog is not None and actions.dialog.isVisible(), timeout=WAIT_MS
    )
    redo = actions.dialog
    assert isinstance(redo, RewindPreviewDialog)
    assert redo.windowTitle() == "Redo"
    redo.accept()
    qtbot.waitUntil(lambda: a_file.read_text() == "two\n", timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: [t for _r, t in _author_rows(app)] == ["first", "second"], timeout=WAIT_MS
    )

    # Fork from the first turn: a new thread, selected, with that turn only.
    original = app.window.state.selected_thread_id
    actions.menu_for(first_row).actions()[1].trigger()
    qtbot.waitUntil(lambda: app.window.state.selected_thread_id != original, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: [t for _r, t in _author_rows(app)] == ["first"], timeout=WAIT_MS)
    assert a_file.read_text() == "two\n"
