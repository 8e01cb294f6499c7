"""Through the real window and the real sidecar on a computer without a keyring (the `keyring`
package finds no backend): Settings says what is missing, saves every field, and keeps the key
where the author chooses, for this session or in the encrypted file across a restart."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.views.settings_dialog import SettingsDialog
from sidecar.protocol import RunEventParams
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

KEY = "sk-typed-in-settings-0123"
MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


def _start(qtbot: QtBot, tmp_path: Path) -> DesktopApp:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring"
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    desktop.window.show()
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    return desktop


def _open_settings(qtbot: QtBot, app: DesktopApp) -> SettingsDialog:
    with qtbot.waitSignal(app.window.settings_dialog_opened, timeout=10_000) as opened:
        app.window.settings_action.trigger()
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, SettingsDialog)
    return dialog


def _save(qtbot: QtBot, dialog: SettingsDialog) -> None:
    with qtbot.waitSignal(dialog.accepted, timeout=30_000):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)


def _finished(params: RunEventParams) -> bool:
    return params.event.type in ("run_finished", "run_failed")


def _send(qtbot: QtBot, app: DesktopApp, text: str) -> RunEventParams:
    app.window.composer.editor.setPlainText(text)
    with qtbot.waitSignal(
        app.client.run_event_received, timeout=60_000, check_params_cb=_finished
    ) as ended:
        qtbot.keyClick(app.window.composer.editor, Qt.Key.Key_Return)
    params = (ended.args or [])[0]
    assert isinstance(params, RunEventParams)
    return params


def test_without_a_keyring_settings_keep_every_field_and_the_key_where_the_author_chooses(
    qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer
):
    app = _start(qtbot, tmp_path)
    try:
        dialog = _open_settings(qtbot, app)
        assert dialog.place_box.isVisible()
        assert "keyrings.alt" not in dialog.keyring_label.text()  # not the library's own text
        assert dialog.chosen_place() == "session"
        dialog.model_edit.setText(MODEL)
        dialog.api_base_edit.setText(model.url + "/v1")
        qtbot.keyClicks(dialog.api_key_edit, KEY)
        _save(qtbot, dialog)

        saved = json.loads((tmp_path / "data" / "settings.json").read_text())
        assert (saved["model"], saved["api_base"]) == (MODEL, model.url + "/v1")
        assert KEY not in json.dumps(saved)
        model.push(Reply.text(answer_text("Hello from this session.")))
        assert _send(qtbot, app, "Hello").event.type == "run_finished"
        assert model.generation_requests[-1].headers["authorization"] == f"Bearer {KEY}"

        dialog = _open_settings(qtbot, app)
        assert dialog.key_status_label.text().startswith("A key is kept for this session only")
        dialog.file_radio.setChecked(True)  # keep the same key, in the encrypted file
        _save(qtbot, dialog)
    finally:
        app.shutdown()

    key_file = tmp_path / "data" / "keys" / "secrets.enc"
    assert KEY.encode() not in key_file.read_bytes()
    app = _start(qtbot, tmp_path)
    try:
        model.push(Reply.text(answer_text("Hello after a restart.")))
        assert _send(qtbot, app, "Still there?").event.type == "run_finished"
        assert model.generation_requests[-1].headers["authorization"] == f"Bearer {KEY}"
        dialog = _open_settings(qtbot, app)
        assert dialog.chosen_place() == "file"
        assert dialog.forget_key_check.isVisible()
        dialog.forget_key_check.setChecked(True)
        _save(qtbot, dialog)
        assert not key_file.exists()
    finally:
        app.shutdown()
