from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from pytestqt.qtbot import QtBot

from desktop.models.threads import ThreadsState
from desktop.views.thread_list_model import (
    CHANNEL_ROLE,
    STATUS_ROLE,
    THREAD_ID_ROLE,
    ThreadListModel,
)
from sidecar.protocol import ThreadInfo
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


def _filed(thread_id: str, channel: str | None, status: str = "idle") -> ThreadInfo:
    return thread_info(thread_id, thread_id.upper(), status).model_copy(update={"channel": channel})


def test_channels_are_folders_holding_their_threads_above_the_threads_of_none(qtbot: QtBot):
    threads = ThreadsState()
    threads.set_all([_filed("a", None), _filed("b", "Zeta"), _filed("c", "alpha")])
    model = ThreadListModel(threads)
    assert model.channels() == ["alpha", "Zeta"]
    assert [model.index(r, 0).data(CHANNEL_ROLE) for r in range(3)] == ["alpha", "Zeta", None]
    assert model.index(2, 0).data(THREAD_ID_ROLE) == "a"
    zeta = model.folder_index("Zeta")
    assert zeta is not None and model.rowCount(zeta) == 1
    child = model.index(0, 0, zeta)
    assert child.data(THREAD_ID_ROLE) == "b" and child.parent() == zeta
    assert model.index_of("b") == child
    assert model.thread_of(zeta) is None and model.channel_of(child) is None


def test_a_thread_changing_channel_reshapes_the_tree(qtbot: QtBot):
    threads = ThreadsState()
    threads.set_all([_filed("a", None), _filed("b", "Zeta")])
    model = ThreadListModel(threads)
    with qtbot.waitSignal(model.modelReset):
        threads.set_channel("a", "Zeta")
    assert model.channels() == ["Zeta"] and model.rowCount() == 1
    with qtbot.waitSignal(model.modelReset):
        threads.set_channel("a", None)
        threads.set_channel("b", None)
    assert model.channels() == [] and model.rowCount() == 2


def test_a_status_change_in_a_folder_updates_the_thread_and_its_folder(qtbot: QtBot):
    threads = ThreadsState()
    threads.set_all([_filed("a", "Zeta"), _filed("b", "Zeta")])
    model = ThreadListModel(threads)
    changed: list[QModelIndex] = []
    model.dataChanged.connect(lambda first, _last: changed.append(first))
    with qtbot.assertNotEmitted(model.modelReset):
        threads.set_status("b", "interrupted")
    zeta = model.folder_index("Zeta")
    assert zeta is not None
    assert changed == [zeta, model.index(1, 0, zeta)]
    assert zeta.data(Qt.ItemDataRole.DisplayRole) == "Zeta  (2)  ●"
