"""A thread exported from the window: the thread list's menu (Markdown or JSON) or File → Export
thread… asks where to save it, `thread/export` renders it, and the window writes the reply's
text to the chosen file; a refusal or a failed write is reported and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.views.main_window import MainWindow
from desktop.views.thread_export import ThreadExporter, file_name_for
from sidecar.protocol import ErrorCode, ErrorObject, ThreadExportParams, ThreadExportResult
from tests.desktop.support import FakeSender, thread_info
from tests.desktop.views.test_thread_list_options import entry, open_menu, window

__all__ = ["window"]

JSON_TEXT = '{"thread": {"title": "One"}, "messages": [{"content": "naïve — café"}]}\n'
MARKDOWN_TEXT = "# One\n\n**You:** the river\r\n\n**Agent:** is wide\n"


@pytest.fixture
def exporter(window: MainWindow, tmp_path: Path) -> ThreadExporter:
    assert window.exporter is not None
    window.exporter.folder = str(tmp_path)  # the dialog lists this folder, nothing outside
    return window.exporter


def test_export_as_json_from_the_thread_menu_writes_the_reply_to_the_chosen_file(
    qtbot: QtBot, window: MainWindow, exporter: ThreadExporter, fake_sender: FakeSender,
    tmp_path: Path,
):  # fmt: skip
    entry(open_menu(window.thread_list, "t2"), "Export as JSON…").trigger()
    dialog = exporter.file_dialog
    assert dialog is not None
    assert dialog.selectedNameFilter() == "JSON (*.json)"
    target = tmp_path / "two.json"
    dialog.selectFile(str(target))
    dialog.accept()
    params, pending = fake_sender.last("thread/export")
    assert params == ThreadExportParams(thread_id="t2", format="json")
    with qtbot.waitSignal(exporter.exported) as exported:
        pending.resolve(ThreadExportResult(format="json", content=JSON_TEXT))
    assert exported.args == [str(target)]
    assert target.read_bytes() == JSON_TEXT.encode()
    assert str(target) in window.statusBar().currentMessage()


def test_file_export_thread_saves_the_selected_thread_as_markdown_by_default(
    window: MainWindow, exporter: ThreadExporter, fake_sender: FakeSender, tmp_path: Path
):
    assert window.menu_actions.export_thread.isEnabled()
    window.menu_actions.export_thread.trigger()
    dialog = exporter.file_dialog
    assert dialog is not None
    assert dialog.selectedNameFilter() == "Markdown (*.md)"
    dialog.selectFile(str(tmp_path / "chapter one"))
    dialog.accept()
    params, pending = fake_sender.last("thread/export")
    assert params == ThreadExportParams(thread_id="t1", format="markdown")
    pending.resolve(ThreadExportResult(format="markdown", content=MARKDOWN_TEXT))
    written = tmp_path / "chapter one.md"  # the format's suffix added
    assert written.read_bytes() == MARKDOWN_TEXT.encode()


def test_the_file_name_says_the_format_whatever_the_filter(
    window: MainWindow, exporter: ThreadExporter, fake_sender: FakeSender, tmp_path: Path
):
    entry(open_menu(window.thread_list, "t1"), "Export as Markdown…").trigger()
    dialog = exporter.file_dialog
    assert dialog is not None
    dialog.selectFile(str(tmp_path / "one.json"))
    dialog.accept()
    params, _ = fake_sender.last("thread/export")
    assert params == ThreadExportParams(thread_id="t1", format="json")


def test_a_refused_export_is_reported_and_writes_nothing(
    qtbot: QtBot, window: MainWindow, exporter: ThreadExporter, fake_sender: FakeSender,
    tmp_path: Path,
):  # fmt: skip
    target = tmp_path / "one.md"
    exporter.save("t1", "markdown", str(target))
    with qtbot.waitSignal(exporter.failed):
        fake_sender.last("thread/export")[1].reject(
            ErrorObject(code=ErrorCode.THREAD_NOT_FOUND, message="thread not found")
        )
    assert not target.exists()
    assert window.statusBar().currentMessage() != ""


def test_a_file_that_cannot_be_written_is_reported(
    qtbot: QtBot, window: MainWindow, exporter: ThreadExporter, fake_sender: FakeSender,
    tmp_path: Path,
):  # fmt: skip
    target = tmp_path / "gone" / "one.md"
    exporter.save("t1", "markdown", str(target))
    with qtbot.waitSignal(exporter.failed):
        fake_sender.last("thread/export")[1].resolve(
            ThreadExportResult(format="markdown", content=MARKDOWN_TEXT)
        )
    assert not target.exists()
    assert window.statusBar().currentMessage() != ""


def test_without_a_memory_controller_there_is_no_export(qtbot: QtBot, fake_sender: FakeSender):
    state = SessionState()
    window = MainWindow(state, SessionController(fake_sender.api, state))
    qtbot.addWidget(window)
    state.set_threads((thread_info("t1", "One"),))
    state.select("t1", loaded=True)
    assert window.exporter is None
    assert not window.menu_actions.export_thread.isEnabled()
    assert window.export_thread("t1") is None
    texts = [a.text() for a in open_menu(window.thread_list, "t1").actions()]
    assert not any(text.startswith("Export") for text in texts)


def test_a_file_name_is_made_from_the_title():
    assert file_name_for('Chapter 1: "The Sea" / draft', "markdown") == "Chapter 1 The Sea draft.md"
    assert file_name_for("...", "json") == "thread.json"
