"""Through the real window and the real sidecar, where the author looks every turn: the status
line says what the agent does ("Thinking…", not the name of a graph node), the line under each
message carries no token count, `/compact` on a short thread says there is nothing to compact
yet, and the Profiles tab says how to install a missing CLI in plain words."""

from __future__ import annotations

import os
import threading
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
        ATRIUM_OPENCLAW_BIN=str(tmp_path / "no-such" / "openclaw"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    desktop.window.show()
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    yield desktop
    desktop.shutdown()


def _finished(params: RunEventParams) -> bool:
    return params.event.type in ("run_finished", "run_failed")


def _send(qtbot: QtBot, app: DesktopApp, text: str) -> None:
    app.window.composer.editor.setPlainText(text)
    qtbot.keyClick(app.window.composer.editor, Qt.Key.Key_Return)


def _line_after(app: DesktopApp, line: str) -> str:
    lines = app.window.transcript.plain_text().splitlines()
    return lines[lines.index(line) + 1]


def test_the_words_an_author_reads_every_turn_are_the_authors(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer
):
    release = threading.Event()
    model.push(Reply.text(answer_text("Hello there.")).after(release, mid_stream=True))
    window = app.window
    try:
        _send(qtbot, app, "Hello")
        qtbot.waitUntil(
            lambda: window.run_status.status_label.text() == "Thinking…", timeout=60_000
        )
    finally:
        release.set()
    qtbot.waitUntil(lambda: "Hello there." in window.transcript.plain_text(), timeout=10_000)
    chip = _line_after(app, "Hello")
    assert chip.startswith("◇ Context: ") and "token" not in chip

    with qtbot.waitSignal(app.client.run_event_received, timeout=60_000, check_params_cb=_finished):
        _send(qtbot, app, "/compact")
    qtbot.waitUntil(
        lambda: "Nothing to compact yet" in window.transcript.plain_text(), timeout=10_000
    )
    assert "compaction failed" not in window.transcript.plain_text()

    with qtbot.waitSignal(window.settings_dialog_opened, timeout=10_000) as opened:
        window.settings_action.trigger()
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, SettingsDialog) and dialog.profiles_tab is not None
    label = dialog.profiles_tab.agents_label
    qtbot.waitUntil(lambda: "OpenClaw" in label.text(), timeout=30_000)
    assert "npm install -g openclaw@" in label.text() and "make peers" not in label.text()
    dialog.close()
