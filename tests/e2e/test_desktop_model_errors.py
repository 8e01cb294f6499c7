"""Through the real sidecar into the real window: a rejected key is one line that says what to do,
with the provider's own words behind Details; a window with no model says so first."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from sidecar.protocol import RunEventParams
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

KEY = "sk-wrong-key-123456"


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


def _start(qtbot: QtBot, tmp_path: Path, **extra: str) -> DesktopApp:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        **extra,
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    desktop.window.show()
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    return desktop


def _failed(params: RunEventParams) -> bool:
    return params.event.type == "run_failed"


def test_a_rejected_key_says_what_to_do_with_the_providers_text_behind_details(
    qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer
):
    body = {
        "error": {
            "message": f"Incorrect API key provided: {KEY}. Find your key at the dashboard.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    model.push(Reply.error(401, body))
    app = _start(
        qtbot,
        tmp_path,
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY=KEY,
    )
    try:
        window = app.window
        width = window.width()
        window.composer.editor.setPlainText("Hello")
        with qtbot.waitSignal(
            app.client.run_event_received, timeout=60_000, check_params_cb=_failed
        ):
            qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
        status = window.run_status
        assert status.status_label.text() == (
            "Failed: The model provider rejected the API key: check the key in Settings → Model"
        )
        assert status.details_button.isVisible()
        qtbot.mouseClick(status.details_button, Qt.MouseButton.LeftButton)
        details = status.details_view.toPlainText()
        assert "Incorrect API key provided" in details
        assert KEY not in details
        assert window.width() == width
    finally:
        app.shutdown()


def test_a_window_without_a_model_says_to_configure_one_first(qtbot: QtBot, tmp_path: Path):
    app = _start(qtbot, tmp_path)
    try:
        window = app.window
        qtbot.waitUntil(lambda: window.has_model is False, timeout=30_000)
        assert window.empty_state.isVisible()
        text = window.empty_state.text()
        assert "No model is configured" in text and "No thread yet" in text
    finally:
        app.shutdown()


def test_a_stream_cut_off_mid_answer_says_so_and_its_text_is_there_after_a_restart(
    qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer
):
    partial = "The first part of the chapter, written before the connection dropped. " * 8
    model.push(Reply.text(answer_text(partial), chunk_size=32, chunk_delay=0.02).cut())
    env = {"ATRIUM_MODEL": "openai/gpt-4o-mini", "ATRIUM_MODEL_API_BASE": model.url + "/v1"}
    app = _start(qtbot, tmp_path, ATRIUM_MODEL_API_KEY="sk-scripted", **env)
    try:
        window = app.window
        window.composer.editor.setPlainText("Write the chapter")
        with qtbot.waitSignal(
            app.client.run_event_received, timeout=60_000, check_params_cb=_failed
        ) as failed:
            qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
        event = (failed.args or [])[0].event
        assert event.type == "run_failed" and event.error.code == "cut_off"
        status = window.run_status.status_label.text()
        assert status.startswith("Failed: ") and "capable" not in status
        assert "The first part of the chapter" in window.transcript.plain_text()
    finally:
        app.shutdown()

    app = _start(qtbot, tmp_path, ATRIUM_MODEL_API_KEY="sk-scripted", **env)
    try:
        window = app.window
        qtbot.waitUntil(lambda: window.thread_list.model.rowCount() == 1, timeout=10_000)
        window.thread_list.select_row(0)
        qtbot.waitUntil(
            lambda: "The first part of the chapter" in window.transcript.plain_text(),
            timeout=10_000,
        )
    finally:
        app.shutdown()


def test_a_missing_key_says_to_add_one_not_to_check_the_model_name(
    qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer
):
    app = _start(qtbot, tmp_path, ATRIUM_MODEL="openai/gpt-4o-mini")
    try:
        window = app.window
        window.composer.editor.setPlainText("Hello")
        with qtbot.waitSignal(
            app.client.run_event_received, timeout=60_000, check_params_cb=_failed
        ) as failed:
            qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
        event = (failed.args or [])[0].event
        assert event.type == "run_failed" and event.error.code == "no_key"
        assert window.run_status.status_label.text() == (
            "Failed: No API key is set for the model: add one in Settings → Model"
        )
        assert model.generation_requests == []
    finally:
        app.shutdown()
