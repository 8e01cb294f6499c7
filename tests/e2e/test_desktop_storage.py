"""The window and the real sidecar on a damaged database: the window shows the storage dialog
instead of restarting the sidecar in a loop; "Start fresh" moves the file aside and comes up
empty; "Restore a backup…" brings back the backup's threads."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from sidecar.protocol import ThreadListResult
from sidecar.store.backups import take_backup
from sidecar.store.files import DatabaseFiles
from tests.sidecar.store.damage import database_with_threads, garbage_header, garbage_page

pytestmark = pytest.mark.slow

TIMEOUT_MS = 60_000


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, data: Path) -> Iterator[DesktopApp]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring"
    )
    desktop = build_desktop(data, env)
    qtbot.addWidget(desktop.window)
    yield desktop
    desktop.shutdown()


def _refused_with_the_dialog(qtbot: QtBot, app: DesktopApp) -> list[int]:
    """Start the window's sidecar and wait for the storage refusal; the deaths seen."""
    died: list[int] = []
    app.process.died.connect(lambda code, _tail: died.append(code))
    with qtbot.waitSignal(app.process.storage_refused, timeout=TIMEOUT_MS):
        app.start()
    qtbot.waitUntil(app.storage_dialog.isVisible, timeout=5_000)
    return died


def test_start_fresh_moves_the_damaged_file_aside_and_comes_up_empty(
    qtbot: QtBot, app: DesktopApp, data: Path
) -> None:
    path = data / "atrium.db"
    database_with_threads(path)
    garbage_page(path)
    damaged = path.read_bytes()

    died = _refused_with_the_dialog(qtbot, app)

    dialog = app.storage_dialog
    assert died == [] and app.process.has_given_up
    assert app.storage.last is not None and app.storage.last.database == str(path)
    assert app.window.banner.state == "refused"
    assert not dialog.restore_button.isEnabled()  # no backups to restore
    with qtbot.waitSignal(app.client.initialized, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.start_fresh_button, Qt.MouseButton.LeftButton)

    assert not dialog.isVisible()
    aside = sorted(data.glob("atrium.set-aside-*.db"))
    assert len(aside) == 1 and aside[0].read_bytes() == damaged
    listings: list[ThreadListResult] = []
    app.api.thread_list().then(listings.append)
    qtbot.waitUntil(lambda: bool(listings), timeout=10_000)
    assert len(listings[0].threads) == 0
    assert app.window.thread_list.model.rowCount() == 0
    assert died == []


def test_restore_brings_back_the_backups_threads(qtbot: QtBot, app: DesktopApp, data: Path) -> None:
    path = data / "atrium.db"
    ids = database_with_threads(path, threads=2)
    backup = take_backup(DatabaseFiles(path), time.time() - 3600, threading.Event())
    garbage_header(path)

    _refused_with_the_dialog(qtbot, app)

    dialog = app.storage_dialog
    assert dialog.restore_button.isEnabled()
    qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    assert dialog.backup_list.count() == 1
    assert dialog.backup_list.currentItem().toolTip() == str(backup.path)
    with qtbot.waitSignal(app.client.initialized, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.restore_chosen_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: app.window.thread_list.model.rowCount() == len(ids), timeout=10_000)
    assert sorted(t.id for t in app.state.threads.threads) == sorted(ids)
    assert len(list(data.glob("atrium.set-aside-*.db"))) == 1
    assert backup.path.exists()
