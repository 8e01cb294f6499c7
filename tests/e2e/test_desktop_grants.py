"""The window (offscreen) driving the real sidecar with a scripted model: "Allow in every thread"
on a write is a standing approval for every thread, the Grants panel revokes it, and the next write
is asked about again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp
from desktop.models.servers import grant_notice, grant_scope
from desktop.views.approval_dialog import ApprovalDialog
from sidecar.protocol import ApprovalValue
from tests.e2e.desktop_rig import completed, window_over_sidecar
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

WAIT_MS = 60_000


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    with window_over_sidecar(qtbot, tmp_path, model, shown=False) as desktop:
        yield desktop


def _write(model: ScriptedModelServer, path: str) -> None:
    model.push(
        Reply.tool_call("workspace__write", {"path": path, "content": "text\n"}),
        Reply.text(answer_text(f"{path} is written.")),
    )


def test_always_allow_is_revoked_from_the_grants_panel_and_the_next_write_is_asked(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer, tmp_path: Path
):
    window = app.window
    _write(model, "a.md")
    window.composer.editor.setPlainText("Write a.md")
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=WAIT_MS) as opened:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog)
    with qtbot.waitSignal(
        app.client.run_event_received, timeout=WAIT_MS, check_params_cb=completed
    ):
        qtbot.mouseClick(dialog.allow_always_button, Qt.MouseButton.LeftButton)
    assert (tmp_path / "workspace" / "a.md").is_file()
    qtbot.waitUntil(lambda: bool(window.statusBar().currentMessage()), timeout=WAIT_MS)
    assert window.statusBar().currentMessage() == grant_notice(
        dialog.interrupt, ApprovalValue(decision="allow_always")
    )

    panel = window.open_grants()
    assert panel is not None
    qtbot.waitUntil(lambda: len(panel.state) == 1, timeout=WAIT_MS)
    [grant] = panel.state.grants
    assert (grant.thread_id, grant.server, grant.tool) == (None, "workspace", "write")
    assert grant_scope(grant) == "every thread, until revoked"
    panel.select_row(0)
    qtbot.mouseClick(panel.revoke_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: len(panel.state) == 0 or not panel.error_label.isHidden(), timeout=WAIT_MS
    )
    assert (panel.error_label.isHidden(), panel.state.grants) == (True, ())
    listed = app.servers.refresh_grants()  # what the sidecar holds, not what the panel dropped
    qtbot.waitUntil(lambda: listed.done, timeout=WAIT_MS)
    assert panel.state.grants == ()

    _write(model, "b.md")
    window.composer.editor.setPlainText("Write b.md")
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=WAIT_MS) as opened:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    again = (opened.args or [])[0]
    assert isinstance(again, ApprovalDialog)
    assert (again.interrupt.server, again.interrupt.tool) == ("workspace", "write")
    assert not (tmp_path / "workspace" / "b.md").exists()
