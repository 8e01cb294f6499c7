"""`ThreadListWidget` with channels: folders, moving a thread, a channel that goes away, and a
list the size an author reaches (2,000 threads in 50 channels)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.models.transcript import INITIAL_PAGE
from desktop.views.main_window import MainWindow
from desktop.views.thread_list import ThreadListWidget
from desktop.views.thread_list_model import CHANNEL_ROLE, STATUS_ROLE, THREAD_ID_ROLE
from sidecar.protocol import (
    CompactionParams,
    CompactionResult,
    ErrorCode,
    ErrorObject,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadRenameParams,
)
from tests.desktop.support import FakeSender, thread_info


def filed(thread_id: str, title: str, channel: str | None, status: str = "idle") -> ThreadInfo:
    return thread_info(thread_id, title, status).model_copy(update={"channel": channel})


class Harness:
    """The widget wired to a controller over a recording sender, as the window wires it."""

    def __init__(self, qtbot: QtBot, sender: FakeSender) -> None:
        self.sender = sender
        self.state = SessionState()
        self.controller = SessionController(sender.api, self.state)
        self.widget = ThreadListWidget(self.state)
        self.widget.thread_selected.connect(self.controller.select_thread)
        self.widget.rename_requested.connect(self.controller.rename_thread)
        self.widget.move_requested.connect(self.controller.move_thread)
        qtbot.addWidget(self.widget)
        self.widget.resize(320, 600)
        self.widget.show()

    def list(self, *threads: ThreadInfo) -> None:
        self.controller.refresh()
        self.sender.last("thread/list")[1].resolve(ThreadListResult(threads=threads))
        selected = self.state.selected_thread_id
        if selected is not None:
            self.load(selected)

    def load(self, thread_id: str) -> None:
        params, pending = self.sender.last("thread/get")
        assert isinstance(params, ThreadGetParams) and params.thread_id == thread_id
        thread = self.state.threads.get(thread_id)
        assert thread is not None
        pending.resolve(
            ThreadGetResult(thread=thread, messages=(), interrupts=(), status=thread.status)
        )

    def top_level(self) -> list[str]:
        model = self.widget.model
        return [
            model.index(row, 0).data(THREAD_ID_ROLE)
            or f"[{model.index(row, 0).data(CHANNEL_ROLE)}]"
            for row in range(model.rowCount())
        ]

    def folder(self, channel: str) -> list[str]:
        model = self.widget.model
        folder = model.folder_index(channel)
        assert folder is not None, f"no folder {channel}"
        return [
            model.index(row, 0, folder).data(THREAD_ID_ROLE)
            for row in range(model.rowCount(folder))
        ]

    def current_thread(self) -> str | None:
        return self.widget.view.currentIndex().data(THREAD_ID_ROLE)

    def menu_for(self, thread_id: str) -> QMenu:
        if self.widget.context_menu is not None:
            self.widget.context_menu.close()
        index = self.widget.model.index_of(thread_id)
        assert index is not None
        self.widget.select_thread(thread_id)
        pos = self.widget.view.visualRect(index).center()
        self.widget.view.customContextMenuRequested.emit(pos)
        menu = self.widget.context_menu
        assert menu is not None
        return menu

    def move_action(self, thread_id: str, text: str) -> QAction:
        move = self.menu_for(thread_id).actions()[0].menu()
        assert isinstance(move, QMenu) and move.title() == "Move to channel"
        found = [a for a in move.actions() if a.text() == text]
        assert found, f"no {text!r} in {[a.text() for a in move.actions()]}"
        return found[0]

    def move(self, thread_id: str, text: str) -> CompactionParams:
        action = self.move_action(thread_id, text)
        action.trigger()
        menu = self.widget.context_menu
        assert menu is not None
        menu.close()
        params, pending = self.sender.last("thread/compaction")
        assert isinstance(params, CompactionParams)
        pending.resolve(CompactionResult(mode="auto", compact_next=False, channel=params.channel))
        return params


@pytest.fixture
def harness(qtbot: QtBot, fake_sender: FakeSender) -> Harness:
    return Harness(qtbot, fake_sender)


def test_channels_are_folders_sorted_by_name_above_the_threads_of_no_channel(harness: Harness):
    harness.list(
        filed("t1", "Loose newest", None),
        filed("t2", "Chapter 2", "Writing"),
        filed("t3", "Sources", "research"),
        filed("t4", "Chapter 1", "Writing"),
        filed("t5", "Loose oldest", None),
    )
    assert harness.top_level() == ["[research]", "[Writing]", "t1", "t5"]
    assert harness.folder("Writing") == ["t2", "t4"]
    assert harness.folder("research") == ["t3"]
    writing = harness.widget.model.folder_index("Writing")
    assert writing is not None
    assert writing.data(Qt.ItemDataRole.DisplayRole) == "Writing  (2)"
    assert not writing.flags() & Qt.ItemFlag.ItemIsEditable
    assert harness.state.selected_thread_id == "t1" and harness.current_thread() == "t1"
    assert harness.widget.open_channels() == set()


def test_the_selected_thread_opens_its_folder_and_a_folder_selects_no_thread(
    qtbot: QtBot, harness: Harness
):
    harness.list(filed("t1", "Chapter 1", "Writing"), filed("t2", "Loose", None))
    assert harness.state.selected_thread_id == "t1"
    assert harness.widget.open_channels() == {"Writing"}
    assert harness.current_thread() == "t1"

    with qtbot.assertNotEmitted(harness.widget.thread_selected):
        harness.widget.select_row(0)  # the folder
    assert harness.state.selected_thread_id == "t1"
    assert not harness.widget.delete_button.isEnabled()
    assert not harness.widget.rename_button.isEnabled()

    qtbot.keyClick(harness.widget.view, Qt.Key.Key_Down)  # into the folder
    assert harness.current_thread() == "t1"
    assert harness.widget.delete_button.isEnabled()
    qtbot.keyClick(harness.widget.view, Qt.Key.Key_Down)
    assert harness.current_thread() == "t2"
    assert harness.state.selected_thread_id == "t2"
    assert harness.sender.last("thread/get")[0] == ThreadGetParams(
        thread_id="t2", limit=INITIAL_PAGE
    )


def test_moving_a_thread_to_an_existing_channel_files_it_there_and_keeps_it_selected(
    harness: Harness,
):
    harness.list(filed("t1", "Chapter 3", None), filed("t2", "Chapter 1", "Writing"))
    assert harness.move_action("t1", "Writing").isEnabled()

    params = harness.move("t1", "Writing")

    assert params == CompactionParams(thread_id="t1", channel="Writing", set_channel=True)
    assert harness.top_level() == ["[Writing]"]
    assert harness.folder("Writing") == ["t1", "t2"]
    assert harness.state.selected_thread_id == "t1" and harness.current_thread() == "t1"
    assert harness.widget.open_channels() == {"Writing"}


def test_the_current_channel_is_checked_and_cannot_be_chosen_again(harness: Harness):
    harness.list(filed("t1", "Chapter 1", "Writing"), filed("t2", "Notes", "Research"))
    current = harness.move_action("t1", "Writing")
    assert current.isChecked() and not current.isEnabled()
    assert harness.move_action("t1", "Research").isEnabled()
    assert harness.move_action("t1", "No channel").isEnabled()
    assert harness.move_action("t2", "No channel").isEnabled()


def test_a_new_channel_is_named_in_a_dialog_and_becomes_a_folder(qtbot: QtBot, harness: Harness):
    harness.list(filed("t1", "Chapter 1", None))
    harness.move_action("t1", "New channel…").trigger()
    dialog = harness.widget.channel_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.setTextValue("  Drafts  ")
    dialog.accept()
    params, pending = harness.sender.last("thread/compaction")
    assert params == CompactionParams(thread_id="t1", channel="Drafts", set_channel=True)
    pending.resolve(CompactionResult(mode="auto", compact_next=False, channel="Drafts"))
    assert harness.top_level() == ["[Drafts]"]
    assert harness.folder("Drafts") == ["t1"]
    assert harness.widget.channel_dialog is None


def test_a_blank_or_cancelled_new_channel_sends_nothing(harness: Harness):
    harness.list(filed("t1", "Chapter 1", None))
    harness.move_action("t1", "New channel…").trigger()
    dialog = harness.widget.channel_dialog
    assert dialog is not None
    dialog.setTextValue("   ")
    dialog.accept()
    harness.move_action("t1", "New channel…").trigger()
    dialog = harness.widget.channel_dialog
    assert dialog is not None
    dialog.setTextValue("Drafts")
    dialog.reject()
    assert "thread/compaction" not in harness.sender.methods()


def test_moving_the_last_thread_out_of_a_channel_removes_its_folder(harness: Harness):
    harness.list(filed("t1", "Chapter 1", "Writing"), filed("t2", "Loose", None))
    assert harness.widget.open_channels() == {"Writing"}

    params = harness.move("t1", "No channel")

    assert params == CompactionParams(thread_id="t1", channel=None, set_channel=True)
    assert harness.top_level() == ["t1", "t2"]
    assert harness.widget.model.folder_index("Writing") is None
    assert harness.widget.open_channels() == set()
    assert harness.current_thread() == "t1"
    assert harness.move_action("t1", "No channel").isEnabled() is False


def test_a_channel_gone_from_a_refreshed_list_leaves_its_threads_at_the_top_level(
    harness: Harness,
):
    harness.list(
        filed("t1", "Chapter 1", "Writing"),
        filed("t2", "Chapter 2", "Writing"),
        filed("t3", "Notes", "Research"),
    )
    harness.list(
        filed("t1", "Chapter 1", None),
        filed("t2", "Chapter 2", None),
        filed("t3", "Notes", "Research"),
    )
    assert harness.top_level() == ["[Research]", "t1", "t2"]
    assert harness.state.selected_thread_id == "t1" and harness.current_thread() == "t1"
    assert harness.widget.open_channels() == set()


def test_an_open_folder_stays_open_when_the_list_changes(harness: Harness):
    harness.list(filed("t1", "Loose", None), filed("t2", "Notes", "Research"))
    research = harness.widget.model.folder_index("Research")
    assert research is not None
    harness.widget.view.expand(research)
    harness.state.add_thread(filed("t9", "Fresh", None))
    research = harness.widget.model.folder_index("Research")
    assert research is not None and harness.widget.view.isExpanded(research)
    harness.widget.view.collapse(research)
    harness.state.remove_thread("t9")
    research = harness.widget.model.folder_index("Research")
    assert research is not None and not harness.widget.view.isExpanded(research)


def test_a_closed_folder_shows_that_a_thread_inside_runs(qtbot: QtBot, harness: Harness):
    harness.list(filed("t1", "Loose", None), filed("t2", "Notes", "Research"))
    model = harness.widget.model
    with qtbot.waitSignal(model.dataChanged):
        harness.state.threads.set_status("t2", "running")
    folder = model.folder_index("Research")
    assert folder is not None and folder.data(Qt.ItemDataRole.DisplayRole).endswith("⟳")
    index = model.index_of("t2")
    assert index is not None and index.data(STATUS_ROLE) == "running"
    assert harness.top_level() == ["[Research]", "t1"]


def test_renaming_a_thread_in_a_folder_keeps_it_there(harness: Harness):
    harness.list(filed("t1", "Chapter 1", "Writing"))
    model = harness.widget.model
    index = model.index_of("t1")
    assert index is not None
    assert model.setData(index, "Prologue", Qt.ItemDataRole.EditRole)
    params, pending = harness.sender.last("thread/rename")
    assert params == ThreadRenameParams(thread_id="t1", title="Prologue")
    pending.resolve(filed("t1", "Prologue", "Writing"))
    assert harness.folder("Writing") == ["t1"]
    index = model.index_of("t1")
    assert index is not None and index.data(Qt.ItemDataRole.EditRole) == "Prologue"
    assert harness.current_thread() == "t1"


def test_deleting_a_thread_in_a_folder_selects_another(qtbot: QtBot, harness: Harness):
    harness.list(filed("t1", "Chapter 1", "Writing"), filed("t2", "Chapter 2", "Writing"))
    harness.state.remove_thread("t1")
    assert harness.folder("Writing") == ["t2"]
    assert harness.state.selected_thread_id == "t2" and harness.current_thread() == "t2"


def _all_threads(harness: Harness) -> dict[str, str | None]:
    """thread id → the folder it is shown in, walking the tree as a view would."""
    model = harness.widget.model
    shown: dict[str, str | None] = {}

    def walk(parent: QModelIndex, channel: str | None) -> None:
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            thread_id = index.data(THREAD_ID_ROLE)
            if thread_id is None:
                walk(index, index.data(CHANNEL_ROLE))
            else:
                assert thread_id not in shown
                shown[thread_id] = channel

    walk(QModelIndex(), None)
    return shown


def test_two_thousand_threads_in_fifty_channels_list_and_select_correctly(
    qtbot: QtBot, harness: Harness
):
    channels = [f"Channel {n:02d}" for n in range(50)]
    threads = [
        filed(f"t{n:04d}", f"Thread {n}", channels[n % 50] if n % 40 else None) for n in range(2000)
    ]
    expected = {t.id: t.channel for t in threads}
    harness.list(*threads)

    assert _all_threads(harness) == expected
    assert harness.widget.model.channels() == channels
    assert harness.widget.model.rowCount() == 50 + sum(1 for t in threads if t.channel is None)
    for channel in channels:
        members = [t.id for t in threads if t.channel == channel]
        assert harness.folder(channel) == members

    for n in range(1, 2000, 97):
        thread_id = f"t{n:04d}"
        harness.widget.select_thread(thread_id)
        assert harness.state.selected_thread_id == thread_id
        assert harness.current_thread() == thread_id
        harness.load(thread_id)
    opened = {expected[f"t{n:04d}"] for n in range(1, 2000, 97)} - {None}
    assert opened <= harness.widget.open_channels()

    harness.move("t0001", "Channel 49")
    expected["t0001"] = "Channel 49"
    assert _all_threads(harness) == expected
    assert harness.current_thread() == "t0001"
    with qtbot.waitSignal(harness.widget.model.dataChanged):
        harness.state.threads.set_status("t1999", "running")
    index = harness.widget.model.index_of("t1999")
    assert index is not None and index.data(STATUS_ROLE) == "running"


def test_the_window_sends_a_move_from_its_thread_list(qtbot: QtBot, fake_sender: FakeSender):
    state = SessionState()
    window = MainWindow(state, SessionController(fake_sender.api, state))
    qtbot.addWidget(window)
    state.set_threads((filed("t1", "Chapter 1", None), filed("t2", "Notes", "Research")))
    window.thread_list.move_requested.emit("t1", "Research")
    params, pending = fake_sender.last("thread/compaction")
    assert params == CompactionParams(thread_id="t1", channel="Research", set_channel=True)
    pending.resolve(CompactionResult(mode="auto", compact_next=False, channel="Research"))
    assert window.thread_list.model.channels() == ["Research"]
    assert window.thread_list.model.rowCount() == 1


def test_a_refused_move_leaves_the_thread_where_it_was(harness: Harness):
    harness.list(filed("t1", "Chapter 1", None), filed("t2", "Notes", "Research"))
    reported: list[str] = []
    harness.controller.error_reported.connect(reported.append)
    harness.move_action("t1", "Research").trigger()
    harness.sender.last("thread/compaction")[1].reject(
        ErrorObject(code=ErrorCode.THREAD_NOT_FOUND, message="no such thread")
    )
    assert harness.top_level() == ["[Research]", "t1"]
    assert len(reported) == 1
