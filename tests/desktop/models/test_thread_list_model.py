from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.models.thread_list_model import STATUS_ROLE, THREAD_ID_ROLE, ThreadListModel
from desktop.models.threads import ThreadsState
from tests.desktop.support import thread_info


def test_rows_show_titles_with_status_and_ids(qtbot: QtBot):
    threads = ThreadsState()
    model = ThreadListModel(threads)
    with qtbot.waitSignal(model.modelReset):
        threads.set_all([thread_info("a", "Alpha"), thread_info("b", "Beta", "running")])
    assert model.rowCount() == 2
    index = model.index(1, 0)
    assert index.data(Qt.ItemDataRole.EditRole) == "Beta"
    assert index.data(Qt.ItemDataRole.DisplayRole).startswith("Beta")
    assert index.data(THREAD_ID_ROLE) == "b"
    assert index.data(STATUS_ROLE) == "running"


def test_a_status_change_updates_one_row(qtbot: QtBot):
    threads = ThreadsState()
    threads.set_all([thread_info("a"), thread_info("b")])
    model = ThreadListModel(threads)
    with qtbot.waitSignal(model.dataChanged) as changed:
        threads.set_status("b", "failed")
    assert (changed.args or [])[0].row() == 1
    assert model.index(1, 0).data(STATUS_ROLE) == "failed"


def test_editing_a_title_requests_a_rename_without_changing_the_row(qtbot: QtBot):
    threads = ThreadsState()
    threads.set_all([thread_info("a", "Alpha")])
    model = ThreadListModel(threads)
    with qtbot.waitSignal(model.rename_requested) as renamed:
        assert model.setData(model.index(0, 0), "  Prologue ", Qt.ItemDataRole.EditRole)
    assert renamed.args == ["a", "Prologue"]
    assert model.index(0, 0).data(Qt.ItemDataRole.EditRole) == "Alpha"
    assert not model.setData(model.index(0, 0), "   ", Qt.ItemDataRole.EditRole)
