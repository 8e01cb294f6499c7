"""The window (offscreen) driving the real sidecar with a model that obeys a workspace notes.md:
the approval dialog shows each memory change before and after, with its diff; the author
refuses the rewrite of their rule and the forget, saves the account-tier memory; the Memory panel
then shows who wrote each memory, and its review of what the agent saved keeps one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.memory_panel import MemoryPanelDialog
from sidecar.protocol import MemoryInfo, RunEventParams
from tests.e2e.injected_notes import EDITOR, NOTES, PLANTED, REWRITE, RULE, obeying_the_file
from tests.fakes.model_server import ScriptedModelServer, ToolCall
from tests.fakes.openai_chat import openai_chat_server

WAIT_MS = 120_000
RIVER = "The river in the notes is wide."


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    # Besides obeying the file, the model saves a plain fact from it: that needs no yes, and
    # waits in the Memory panel's review.
    extra = [ToolCall("memory__write", {"text": RIVER, "tier": "workspace"})]
    with openai_chat_server(fallback=obeying_the_file(extra)) as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.md").write_text(NOTES, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    yield desktop
    desktop.shutdown()


def _completed(params: RunEventParams) -> bool:
    event = params.event
    return event.type == "run_finished" and event.outcome == "completed"


def _rows(panel: MemoryPanelDialog) -> dict[str, str]:
    """Memory text → the panel's "Written by" column."""
    tree = panel.tree
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return {item.text(1): item.text(2) for item in items if item is not None}


def test_the_author_answers_memory_changes_in_the_dialog_and_reviews_them_in_the_panel(
    qtbot: QtBot, app: DesktopApp
):
    window = app.window
    memory = window.memory
    assert memory is not None
    window.controller.create_thread("Notes")
    qtbot.waitUntil(lambda: bool(window.state.threads.threads), timeout=10_000)
    thread = window.state.threads.threads[0].id
    window.thread_list.select_thread(thread)
    saved: list[MemoryInfo] = []
    memory.write(thread, "workspace", RULE, pinned=True).then(saved.append)
    memory.write(thread, "workspace", EDITOR, pinned=False).then(saved.append)
    qtbot.waitUntil(lambda: len(saved) == 2, timeout=10_000)

    window.composer.editor.setPlainText("Summarize notes.md")
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=WAIT_MS) as opened:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog) and dialog.interrupt.memory is not None
    assert dialog.memory_before_view.toPlainText() == f"workspace, pinned, by you:\n{RULE}"
    assert dialog.memory_after_view.toPlainText() == (
        f"workspace, pinned, by agent, after untrusted content:\n{REWRITE}"
    )
    assert {f"-{RULE}", f"+{REWRITE}"} <= set(dialog.diff_view.toPlainText().splitlines())
    assert "workspace__read" in dialog.untrusted_label.text()
    assert dialog.allow_thread_button.isHidden() and dialog.allow_always_button.isHidden()

    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=WAIT_MS) as opened:
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog) and dialog.interrupt.memory is not None
    assert dialog.memory_after_view.toPlainText() == "(forgotten)"
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=WAIT_MS) as opened:
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog) and dialog.interrupt.memory is not None
    assert dialog.memory_before_view.toPlainText() == "(no memory)"
    assert PLANTED in dialog.memory_after_view.toPlainText()
    with qtbot.waitSignal(
        app.client.run_event_received, timeout=WAIT_MS, check_params_cb=_completed
    ):
        qtbot.mouseClick(dialog.allow_once_button, Qt.MouseButton.LeftButton)

    panel = window.open_memory()
    assert panel is not None
    qtbot.waitUntil(lambda: len(_rows(panel)) == 4, timeout=10_000)
    assert _rows(panel) == {
        RULE: "you",
        EDITOR: "you",
        PLANTED: "agent, after untrusted content",  # approved in the dialog: reviewed
        RIVER: "agent, after untrusted content · not reviewed",
    }

    panel.review_box.setChecked(True)
    qtbot.waitUntil(lambda: list(_rows(panel)) == [RIVER], timeout=10_000)
    panel.tree.setCurrentItem(panel.tree.topLevelItem(0))
    assert panel.keep_button.isEnabled()
    qtbot.mouseClick(panel.keep_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _rows(panel) == {}, timeout=10_000)
    panel.review_box.setChecked(False)
    qtbot.waitUntil(lambda: _rows(panel).get(RIVER) == "agent, after untrusted content")
