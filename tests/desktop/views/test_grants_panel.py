"""The grants panel: listing standing approvals, revoking one, refresh; and the main window's
toolbar actions that open both panels."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.servers import ServersController
from desktop.controllers.session import SessionController
from desktop.ipc.api import SidecarApi
from desktop.ipc.client import RpcClient
from desktop.models.servers import GrantsState, ServersState
from desktop.models.session import SessionState
from desktop.views.grants_panel import GrantsPanelDialog
from desktop.views.main_window import MainWindow
from sidecar.protocol import Done, ErrorObject, GrantInfo, GrantListResult, GrantRevokeParams
from tests.desktop.conftest import FakeProcessFactory
from tests.desktop.support import FakeSender

TIMEOUT_MS = 10_000
LEFT = Qt.MouseButton.LeftButton


def grant(thread_id: str, tool: str) -> GrantInfo:
    return GrantInfo(
        thread_id=thread_id, thread_title=f"Thread {thread_id}", server="time", tool=tool,
        created_at=1_700_000_000.0,
    )  # fmt: skip


@pytest.fixture
def panel(qtbot: QtBot, fake_sender: FakeSender) -> GrantsPanelDialog:
    grants = GrantsState()
    panel = GrantsPanelDialog(ServersController(fake_sender.api, ServersState(), grants))
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    result = GrantListResult(grants=(grant("t1", "get_time"), grant("t2", "convert")))
    fake_sender.last("grant/list")[1].resolve(result)
    return panel


def test_every_grant_is_listed_with_thread_server_and_tool(panel: GrantsPanelDialog):
    assert panel.tree.topLevelItemCount() == 2
    item = panel.tree.topLevelItem(1)
    assert item is not None
    assert [item.text(column) for column in range(3)] == ["Thread t2", "time", "convert"]
    assert not panel.empty_label.isVisible()
    assert not panel.revoke_button.isEnabled()


def test_revoke_sends_the_selected_grant_and_drops_it_when_confirmed(
    qtbot: QtBot, panel: GrantsPanelDialog, fake_sender: FakeSender
):
    panel.select_row(1)
    qtbot.mouseClick(panel.revoke_button, LEFT)
    params, pending = fake_sender.last("grant/revoke")
    assert params == GrantRevokeParams(thread_id="t2", server="time", tool="convert")
    pending.resolve(Done())
    assert panel.tree.topLevelItemCount() == 1
    assert panel.state.grants[0].thread_id == "t1"


def test_a_refused_revoke_keeps_the_grant_and_shows_why(
    qtbot: QtBot, panel: GrantsPanelDialog, fake_sender: FakeSender
):
    panel.select_row(0)
    qtbot.mouseClick(panel.revoke_button, LEFT)
    fake_sender.last("grant/revoke")[1].reject(ErrorObject(code=-32602, message="no such grant"))
    assert panel.tree.topLevelItemCount() == 2
    assert panel.error_label.isVisible() and panel.error_label.text() == "no such grant"


def test_refresh_reloads_the_list(qtbot: QtBot, panel: GrantsPanelDialog, fake_sender: FakeSender):
    qtbot.mouseClick(panel.refresh_button, LEFT)
    fake_sender.last("grant/list")[1].resolve(GrantListResult(grants=()))
    assert panel.tree.topLevelItemCount() == 0 and panel.empty_label.isVisible()


def test_the_toolbar_actions_open_both_panels_and_load_them(qtbot: QtBot, fake_sender: FakeSender):
    state = SessionState()
    servers = ServersController(fake_sender.api, ServersState())
    window = MainWindow(state, SessionController(fake_sender.api, state), servers=servers)
    qtbot.addWidget(window)
    window.show()
    window.servers_action.trigger()
    assert window.servers_panel is not None and window.servers_panel.isVisible()
    window.grants_action.trigger()
    assert window.grants_panel is not None and window.grants_panel.isVisible()
    assert fake_sender.methods()[-2:] == ["server/list", "grant/list"]


def test_without_a_servers_controller_the_actions_are_disabled(
    qtbot: QtBot, fake_sender: FakeSender
):
    state = SessionState()
    window = MainWindow(state, SessionController(fake_sender.api, state))
    qtbot.addWidget(window)
    assert not window.servers_action.isEnabled() and not window.grants_action.isEnabled()


@pytest.fixture
def live(qtbot: QtBot, fake_process_factory: FakeProcessFactory) -> Iterator[GrantsPanelDialog]:
    process = fake_process_factory()
    client = RpcClient(process)
    panel = GrantsPanelDialog(ServersController(SidecarApi(client), ServersState()))
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(client.initialized, timeout=TIMEOUT_MS):
        process.start()
    panel.refresh()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 2, timeout=TIMEOUT_MS)
    yield panel
    process.stop(timeout_ms=2000)


@pytest.mark.slow
def test_revoking_through_the_sidecar_survives_a_refresh(qtbot: QtBot, live: GrantsPanelDialog):
    live.select_row(0)
    qtbot.mouseClick(live.revoke_button, LEFT)
    qtbot.waitUntil(lambda: live.tree.topLevelItemCount() == 1, timeout=TIMEOUT_MS)
    reloaded: list[object] = []
    live.controller.refresh_grants().then(reloaded.append)
    qtbot.waitUntil(lambda: bool(reloaded), timeout=TIMEOUT_MS)
    assert live.tree.topLevelItemCount() == 1
    assert [grant.tool for grant in live.state.grants] == ["write"]
