"""The window (offscreen) driving the real sidecar with a real 301-tool MCP server and a
scripted model: the context chip under the author's message says how many tools the turn's
request left out for the tool search."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from sidecar.protocol import ContextEvent, RunEventParams, ServerStatusParams
from tests.e2e.test_tool_search import add_suite
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.slow

QUESTION = "Which tools do you have for invoices?"
ANSWER = "A search away: the suite's invoice tools."


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    workspace, data = tmp_path / "workspace", tmp_path / "data"
    workspace.mkdir()
    data.mkdir()
    add_suite(data)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    desktop = build_desktop(data, env)
    qtbot.addWidget(desktop.window)
    ready: list[str] = []

    def on_status(params: ServerStatusParams) -> None:
        if params.server.state == "ready":
            ready.append(params.server.name)

    desktop.client.server_status_received.connect(on_status)
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    qtbot.waitUntil(lambda: "suite" in ready, timeout=60_000)
    yield desktop
    desktop.shutdown()


def _completed(params: RunEventParams) -> bool:
    event = params.event
    return event.type == "run_finished" and event.outcome == "completed"


def test_the_context_chip_says_how_many_tools_were_deferred(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer
):
    model.push(Reply.text(answer_text(ANSWER)))
    window = app.window
    reports: list[ContextEvent] = []

    def collect(params: RunEventParams) -> None:
        if isinstance(params.event, ContextEvent):
            reports.append(params.event)

    app.client.run_event_received.connect(collect)
    window.composer.editor.setPlainText(QUESTION)
    with qtbot.waitSignal(
        app.client.run_event_received, timeout=60_000, check_params_cb=_completed
    ):
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    [report] = reports
    assert report.tools_deferred >= 301
    sent = model.generation_requests[0].body["tools"]
    assert report.tools_sent == len(sent)
    qtbot.waitUntil(lambda: ANSWER in window.transcript.plain_text(), timeout=10_000)
    lines = window.transcript.plain_text().splitlines()
    chip = lines[lines.index(QUESTION) + 1]
    assert chip.startswith("◇ Context: ")
    assert f", {report.tools_deferred:,} tools deferred — show" in chip
