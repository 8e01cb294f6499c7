"""The thread list's menu sets a thread's own options: what a message sent while it works is
queued as (`queue/set_mode`) and its compaction (`thread/compaction`: automatic or off, compact
now), each with the thread's current setting checked, read again when the menu opens."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from desktop.controllers.memory import MemoryController
from desktop.controllers.queue import QueueController
from desktop.controllers.session import SessionController
from desktop.ipc.pending import PendingRequest
from desktop.models.session import SessionState
from desktop.views.main_window import MainWindow
from desktop.views.thread_list import ThreadListWidget
from sidecar.protocol import (
    CompactionParams,
    CompactionResult,
    ErrorCode,
    ErrorObject,
    QueueEmpty,
    QueueListParams,
    QueueListResult,
    QueueModeParams,
    ThreadListResult,
    WireModel,
)
from tests.desktop.support import FakeSender, thread_info
from tests.desktop.views.test_main_window import thread_result


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """A window wired as the app wires it (memory and queue controllers), threads t1 and t2
    listed and t1 loaded (its summaries read: compaction automatic)."""
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    window = MainWindow(
        state,
        controller,
        memory=MemoryController(fake_sender.api),
        queue=QueueController(fake_sender.api),
    )
    qtbot.addWidget(window)
    window.show()
    controller.refresh()
    listing = ThreadListResult(threads=(thread_info("t1", "One"), thread_info("t2", "Two")))
    fake_sender.last("thread/list")[1].resolve(listing)
    fake_sender.last("thread/get")[1].resolve(thread_result("t1"))
    summaries, pending = fake_sender.last("thread/compaction")
    assert summaries == CompactionParams(thread_id="t1")
    pending.resolve(compaction_result("auto"))
    return window


def open_menu(widget: ThreadListWidget, thread_id: str) -> QMenu:
    if widget.context_menu is not None:
        widget.context_menu.close()
    index = widget.model.index_of(thread_id)
    assert index is not None
    widget.select_thread(thread_id)
    widget.view.customContextMenuRequested.emit(widget.view.visualRect(index).center())
    assert widget.context_menu is not None
    return widget.context_menu


def submenu(menu: QMenu, title: str) -> QMenu:
    found = [a.menu() for a in menu.actions() if a.menu() is not None and a.text() == title]
    assert found, f"no {title!r} in {[a.text() for a in menu.actions()]}"
    sub = found[0]
    assert isinstance(sub, QMenu)
    return sub


def entry(menu: QMenu, text: str) -> QAction:
    found = [a for a in menu.actions() if a.text() == text]
    assert found, f"no {text!r} in {[a.text() for a in menu.actions()]}"
    return found[0]


def checked(menu: QMenu) -> list[str]:
    return [a.text() for a in menu.actions() if a.isChecked()]


def sent_after(
    sender: FakeSender, mark: int, method: str
) -> list[tuple[WireModel, PendingRequest]]:
    return [(params, pending) for m, params, pending in sender.sent[mark:] if m == method]


def compaction_result(mode: str) -> CompactionResult:
    return CompactionResult.model_validate({"mode": mode, "compact_next": False})


def test_the_menu_offers_the_four_queue_modes_and_checks_the_threads(
    window: MainWindow, fake_sender: FakeSender
):
    mark = len(fake_sender.sent)
    modes = submenu(open_menu(window.thread_list, "t1"), "Queue mode while it works")
    assert [a.text() for a in modes.actions()] == ["Steer", "Collect", "Follow-up", "Interrupt"]
    assert checked(modes) == []  # not known until the sidecar says
    [(params, pending)] = sent_after(fake_sender, mark, "queue/list")
    assert params == QueueListParams(thread_id="t1")
    pending.resolve(QueueListResult(thread_id="t1", default_mode="collect", messages=()))
    assert checked(modes) == ["Collect"]


def test_choosing_a_queue_mode_sends_it_and_the_menu_remembers_it(
    window: MainWindow, fake_sender: FakeSender
):
    for label, mode in [
        ("Steer", "steer"), ("Collect", "collect"), ("Follow-up", "followup"),
        ("Interrupt", "interrupt"),
    ]:  # fmt: skip
        modes = submenu(open_menu(window.thread_list, "t2"), "Queue mode while it works")
        entry(modes, label).trigger()
        params, pending = fake_sender.last("queue/set_mode")
        assert params == QueueModeParams.model_validate({"thread_id": "t2", "mode": mode})
        pending.resolve(QueueEmpty())
        assert checked(modes) == [label]
    again = submenu(open_menu(window.thread_list, "t2"), "Queue mode while it works")
    assert checked(again) == ["Interrupt"]  # at once, before the fresh read answers


def test_a_refused_queue_mode_is_shown_and_the_check_goes_back(
    window: MainWindow, fake_sender: FakeSender
):
    modes = submenu(open_menu(window.thread_list, "t1"), "Queue mode while it works")
    fake_sender.last("queue/list")[1].resolve(
        QueueListResult(thread_id="t1", default_mode="steer", messages=())
    )
    entry(modes, "Interrupt").trigger()
    assert checked(modes) == ["Interrupt"]
    fake_sender.last("queue/set_mode")[1].reject(
        ErrorObject(code=ErrorCode.THREAD_NOT_FOUND, message="thread not found")
    )
    assert checked(modes) == ["Steer"]
    assert window.composer.error_label.isVisibleTo(window.composer)


def test_compaction_is_checked_from_the_thread_and_turned_off_or_run_now(
    window: MainWindow, fake_sender: FakeSender
):
    mark = len(fake_sender.sent)
    menu = open_menu(window.thread_list, "t1")
    compaction = submenu(menu, "Compaction")
    assert [a.text() for a in compaction.actions() if not a.isSeparator()] == [
        "Automatic", "Off", "Compact now",
    ]  # fmt: skip
    assert checked(compaction) == ["Automatic"]  # known from the summaries read at load
    [(params, pending)] = sent_after(fake_sender, mark, "thread/compaction")
    assert params == CompactionParams(thread_id="t1")  # a read: it changes nothing
    pending.resolve(compaction_result("off"))
    assert checked(compaction) == ["Off"]
    entry(compaction, "Automatic").trigger()
    params, pending = fake_sender.last("thread/compaction")
    assert params == CompactionParams(thread_id="t1", mode="auto")
    pending.resolve(compaction_result("auto"))
    assert checked(compaction) == ["Automatic"]
    entry(compaction, "Compact now").trigger()
    params, _ = fake_sender.last("thread/compaction")
    assert params == CompactionParams(thread_id="t1", compact_now=True)


def test_a_refused_compaction_change_is_reported_and_the_check_goes_back(
    window: MainWindow, fake_sender: FakeSender
):
    compaction = submenu(open_menu(window.thread_list, "t1"), "Compaction")
    entry(compaction, "Off").trigger()
    fake_sender.last("thread/compaction")[1].reject(
        ErrorObject(code=ErrorCode.THREAD_NOT_FOUND, message="thread not found")
    )
    assert checked(compaction) == ["Automatic"]
    assert window.statusBar().currentMessage() != ""


def test_a_reply_for_another_thread_leaves_the_open_menu_alone(
    window: MainWindow, fake_sender: FakeSender
):
    open_menu(window.thread_list, "t1")
    first = fake_sender.last("queue/list")[1]
    modes = submenu(open_menu(window.thread_list, "t2"), "Queue mode while it works")
    first.resolve(QueueListResult(thread_id="t1", default_mode="collect", messages=()))
    assert checked(modes) == []


def test_a_list_without_controllers_offers_only_moving(qtbot: QtBot):
    state = SessionState()
    widget = ThreadListWidget(state)
    qtbot.addWidget(widget)
    state.set_threads((thread_info("t1", "One"),))
    menu = open_menu(widget, "t1")
    assert [a.text() for a in menu.actions()] == ["Move to channel"]
