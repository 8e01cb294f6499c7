"""The MCP servers panel both ways (state → lights, clicks → requests), and against the fake
sidecar process (replies and `server/status` notifications through the real `RpcClient`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from desktop.controllers.servers import ServersController
from desktop.ipc.api import SidecarApi
from desktop.ipc.client import RpcClient
from desktop.models.servers import ServersState
from desktop.views.server_dialogs import ReportDialog
from desktop.views.servers_panel import ServersPanelDialog
from sidecar.protocol import (
    Done,
    ErrorObject,
    SecretSetParams,
    ServerConfigInfo,
    ServerConfigParams,
    ServerInfo,
    ServerListResult,
    ServerLogsResult,
    ServerPreviewParams,
    ServerRef,
    ServerSetEnabledParams,
    ServerStatusParams,
)
from tests.desktop.conftest import FakeProcessFactory
from tests.desktop.support import FakeSender

TIMEOUT_MS = 10_000
LEFT = Qt.MouseButton.LeftButton


def server(name: str, state: str = "ready", **fields: object) -> ServerInfo:
    base: dict[str, object] = {
        "name": name, "state": state, "tool_count": 1, "trust": "untrusted", "enabled": True,
        "builtin": False, "required": False, "transport": "stdio", "restarts": 0,
        "config": {"name": name, "command": "uvx", "args": [f"mcp-server-{name}"]},
    }  # fmt: skip
    return ServerInfo.model_validate(base | fields)


@pytest.fixture
def panel(qtbot: QtBot, fake_sender: FakeSender) -> ServersPanelDialog:
    state = ServersState()
    state.set_list(
        ServerListResult(
            servers=(server("time"), server("git", "crashed", error="exited with code 1")),
            config_path="/tmp/mcp.json",
        )
    )
    panel = ServersPanelDialog(ServersController(fake_sender.api, state))
    qtbot.addWidget(panel)
    panel.show()
    return panel


def test_each_server_shows_a_light_and_its_last_error(panel: ServersPanelDialog):
    assert panel.tree.topLevelItemCount() == 2
    assert panel.light_of("time") == "green"
    assert panel.light_of("git") == "red"
    item = panel.item_for("git")
    assert item is not None and item.text(3) == "exited with code 1"


def test_a_status_notification_changes_the_light(panel: ServersPanelDialog):
    panel.controller.handle_status(ServerStatusParams(server=server("time", "backoff")))
    assert panel.light_of("time") == "amber"
    panel.controller.handle_status(ServerStatusParams(server=server("time", "disabled")))
    assert panel.light_of("time") == "grey"


def test_restart_sends_the_selected_servers_name(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    panel.select("git")
    qtbot.mouseClick(panel.restart_button, LEFT)
    params, pending = fake_sender.last("server/restart")
    assert params == ServerRef(name="git")
    pending.resolve(server("git", "starting", restarts=1))
    assert panel.light_of("git") == "amber"


def test_a_refused_request_shows_in_the_panel(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    panel.select("time")
    qtbot.mouseClick(panel.restart_button, LEFT)
    fake_sender.last("server/restart")[1].reject(ErrorObject(code=-32020, message="gone"))
    assert panel.error_label.isVisible() and panel.error_label.text() == "gone"


def test_disable_then_the_button_offers_enable(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    panel.select("time")
    assert panel.enable_button.text() == "Disable"
    qtbot.mouseClick(panel.enable_button, LEFT)
    params, pending = fake_sender.last("server/set_enabled")
    assert params == ServerSetEnabledParams(name="time", enabled=False)
    pending.resolve(server("time", "disabled", enabled=False))
    assert panel.enable_button.text() == "Enable"
    assert panel.light_of("time") == "grey"


def test_remove_asks_first_then_drops_the_row(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    panel.select("git")
    qtbot.mouseClick(panel.remove_button, LEFT)
    box = panel.confirm_box
    assert box is not None and box.isVisible()
    assert "server/remove" not in fake_sender.methods()
    box.button(QMessageBox.StandardButton.Yes).click()
    params, pending = fake_sender.last("server/remove")
    assert params == ServerRef(name="git")
    pending.resolve(Done())
    assert panel.item_for("git") is None and panel.tree.topLevelItemCount() == 1


def test_the_add_dialog_sends_the_config_it_describes(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    qtbot.mouseClick(panel.add_button, LEFT)
    dialog = panel.edit_dialog
    assert dialog is not None
    dialog.name_edit.setText("github")
    dialog.command_edit.setText("npx")
    dialog.args_edit.setPlainText("-y\n@modelcontextprotocol/server-github\n")
    dialog.env_edit.setPlainText("GITHUB_TOKEN=${secret:GITHUB_TOKEN}\n")
    dialog.trust_combo.setCurrentText("trusted")
    dialog.timeout_spin.setValue(60)
    dialog.idle_spin.setValue(0)
    dialog.denied_edit.setPlainText("delete_repo")
    dialog.required_check.setChecked(True)
    qtbot.mouseClick(dialog.save_button, LEFT)
    params, pending = fake_sender.last("server/add")
    expected = ServerConfigInfo(
        name="github", command="npx", args=("-y", "@modelcontextprotocol/server-github"),
        env={"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}"}, trust="trusted", timeout=60.0,
        idle_timeout=None, denied_tools=("delete_repo",), required=True,
    )  # fmt: skip
    assert params == ServerConfigParams(config=expected)
    assert dialog.isVisible()
    pending.resolve(server("github", "starting"))
    assert not dialog.isVisible()
    assert panel.light_of("github") == "amber"


def test_editing_keeps_the_name_and_round_trips_the_config(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    panel.select("time")
    qtbot.mouseClick(panel.edit_button, LEFT)
    dialog = panel.edit_dialog
    assert dialog is not None and dialog.name_edit.isReadOnly()
    qtbot.mouseClick(dialog.save_button, LEFT)
    params, _ = fake_sender.last("server/update")
    original = panel.state.get("time")
    assert original is not None and original.config is not None
    assert params == ServerConfigParams(config=original.config)


def test_a_bad_env_line_is_shown_and_nothing_is_sent(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    qtbot.mouseClick(panel.add_button, LEFT)
    dialog = panel.edit_dialog
    assert dialog is not None
    dialog.name_edit.setText("x")
    dialog.command_edit.setText("x")
    dialog.env_edit.setPlainText("no equals sign")
    qtbot.mouseClick(dialog.save_button, LEFT)
    assert dialog.error_label.isVisible()
    assert "server/add" not in fake_sender.methods()


def test_a_refused_add_shows_in_the_dialog_which_stays_open(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    qtbot.mouseClick(panel.add_button, LEFT)
    dialog = panel.edit_dialog
    assert dialog is not None
    dialog.name_edit.setText("time")
    dialog.command_edit.setText("uvx")
    qtbot.mouseClick(dialog.save_button, LEFT)
    fake_sender.last("server/add")[1].reject(ErrorObject(code=-32021, message="time exists"))
    assert dialog.isVisible() and dialog.error_label.text() == "time exists"
    assert dialog.save_button.isEnabled()


def test_logs_show_stderr_and_the_protocol_log(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    panel.select("git")
    qtbot.mouseClick(panel.logs_button, LEFT)
    fake_sender.last("server/logs")[1].resolve(
        ServerLogsResult.model_validate(
            {"stderr": ["boom"], "protocol": [{"at": 0.0, "direction": "out", "text": "init"}]}
        )
    )
    dialog = panel.logs_dialog
    assert dialog is not None
    assert dialog.stderr_view.toPlainText() == "boom"
    assert dialog.protocol_view.toPlainText().endswith("→ init")


@pytest.fixture
def live(qtbot: QtBot, fake_process_factory: FakeProcessFactory) -> Iterator[ServersPanelDialog]:
    """A panel whose controller talks to the fake sidecar process, list loaded."""
    process = fake_process_factory()
    client = RpcClient(process)
    controller = ServersController(SidecarApi(client), ServersState())
    client.server_status_received.connect(controller.handle_status)
    panel = ServersPanelDialog(controller)
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(client.initialized, timeout=TIMEOUT_MS):
        process.start()
    controller.refresh()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 3, timeout=TIMEOUT_MS)
    yield panel
    process.stop(timeout_ms=2000)


@pytest.mark.slow
def test_restart_through_the_sidecar_follows_status_notifications(
    qtbot: QtBot, live: ServersPanelDialog
):
    assert live.light_of("broken") == "red" and live.issues_label.isVisible()
    lights: list[str | None] = []
    live.state.updated.connect(lambda _row: lights.append(live.light_of("broken")))
    live.select("broken")
    qtbot.mouseClick(live.restart_button, LEFT)
    qtbot.waitUntil(lambda: lights == ["amber", "red"], timeout=TIMEOUT_MS)
    found = live.state.get("broken")
    assert found is not None and found.restarts == 1 and found.error == "exited with code 1"


@pytest.mark.slow
def test_test_connection_and_preview_show_a_report(qtbot: QtBot, live: ServersPanelDialog):
    live.select("broken")
    qtbot.mouseClick(live.test_button, LEFT)
    qtbot.waitUntil(lambda: live.report_dialog is not None, timeout=TIMEOUT_MS)
    report = live.report_dialog
    assert isinstance(report, ReportDialog)
    assert "did not connect" in report.heading_label.text()
    qtbot.mouseClick(live.preview_button, LEFT)
    qtbot.waitUntil(lambda: live.report_dialog is not report, timeout=TIMEOUT_MS)
    assert live.report_dialog is not None
    assert "missing-binary is not on PATH" in live.report_dialog.text_view.toPlainText()


@pytest.mark.slow
def test_importing_a_claude_desktop_config_adds_its_servers(
    qtbot: QtBot, live: ServersPanelDialog, tmp_path: Path
):
    config = tmp_path / "claude_desktop_config.json"
    servers = {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}, "time": {"command": "x"}}
    config.write_text(json.dumps({"mcpServers": servers}))
    live.import_file(str(config))
    qtbot.waitUntil(lambda: live.item_for("fetch") is not None, timeout=TIMEOUT_MS)
    report = live.report_dialog
    assert report is not None
    assert report.text_view.toPlainText().splitlines()[:3] == [
        "Added: fetch", "Skipped:", "  time: already configured",
    ]  # fmt: skip


def test_set_secret_sends_the_name_and_value_and_closes_on_success(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    qtbot.mouseClick(panel.secret_button, LEFT)
    dialog = panel.secret_dialog
    assert dialog is not None
    dialog.name_edit.setText("GITHUB_TOKEN")
    dialog.value_edit.setText("ghp_x")
    qtbot.mouseClick(dialog.save_button, LEFT)
    params, pending = fake_sender.last("server/set_secret")
    assert params == SecretSetParams(name="GITHUB_TOKEN", value="ghp_x")
    pending.resolve(Done())
    assert not dialog.isVisible()


def test_an_invalid_secret_name_is_shown_and_not_sent(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    qtbot.mouseClick(panel.secret_button, LEFT)
    dialog = panel.secret_dialog
    assert dialog is not None
    dialog.name_edit.setText("has space")
    qtbot.mouseClick(dialog.save_button, LEFT)
    assert dialog.isVisible() and dialog.error_label.isVisible()
    assert "server/set_secret" not in fake_sender.methods()


def test_the_edit_dialog_previews_the_config_in_the_form(
    qtbot: QtBot, panel: ServersPanelDialog, fake_sender: FakeSender
):
    qtbot.mouseClick(panel.add_button, LEFT)
    dialog = panel.edit_dialog
    assert dialog is not None
    dialog.name_edit.setText("remote")
    dialog.url_edit.setText("http://127.0.0.1:3001/mcp")
    qtbot.mouseClick(dialog.preview_button, LEFT)
    params, pending = fake_sender.last("server/preview")
    assert params == ServerPreviewParams(
        config=ServerConfigInfo(name="remote", url="http://127.0.0.1:3001/mcp")
    )
    pending.reject(ErrorObject(code=-32602, message="bad url"))
    assert dialog.error_label.text() == "bad url"
