"""The grants panel with a running plan's task grants: listed with their scope (plan, task,
accepted paths), revoked by plan and task."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.servers import ServersController
from desktop.models.servers import GrantsState, ServersState, grant_scope
from desktop.views.grants_panel import COLUMNS, GrantsPanelDialog
from sidecar.protocol import Done, GrantInfo, GrantListResult, GrantRevokeParams
from tests.desktop.support import FakeSender

LEFT = Qt.MouseButton.LeftButton
SCOPE = COLUMNS.index("Scope")


def plan_grant(task_id: str, *paths: str) -> GrantInfo:
    return GrantInfo(
        thread_id="t1", thread_title="Book", server="agents", tool="agent_run",
        created_at=1_700_000_000.0, plan_id="plan-1", plan_goal="write the guide",
        task_id=task_id, paths=paths,
    )  # fmt: skip


def standing() -> GrantInfo:
    return GrantInfo(
        thread_id=None, thread_title="All threads", server="time", tool="get_time",
        created_at=1_700_000_000.0,
    )  # fmt: skip


def build(qtbot: QtBot, fake_sender: FakeSender) -> GrantsPanelDialog:
    panel = GrantsPanelDialog(ServersController(fake_sender.api, ServersState(), GrantsState()))
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    grants = (plan_grant("guide", "docs"), plan_grant("tests"), standing())
    fake_sender.last("grant/list")[1].resolve(GrantListResult(grants=grants))
    return panel


def _scope(panel: GrantsPanelDialog, row: int) -> str:
    item = panel.tree.topLevelItem(row)
    assert item is not None
    return item.text(SCOPE)


def test_a_plans_task_grants_show_their_plan_task_and_accepted_paths(
    qtbot: QtBot, fake_sender: FakeSender
):
    panel = build(qtbot, fake_sender)
    assert _scope(panel, 0) == (
        "plan “write the guide”, task guide, until the plan ends; accepts changes in docs"
    )
    assert _scope(panel, 1) == "plan “write the guide”, task tests, until the plan ends"
    assert _scope(panel, 2) == "every thread, until revoked"


def test_revoking_a_plan_grant_names_its_plan_and_task_and_keeps_the_others(
    qtbot: QtBot, fake_sender: FakeSender
):
    panel = build(qtbot, fake_sender)
    panel.select_row(1)
    qtbot.mouseClick(panel.revoke_button, LEFT)
    params, pending = fake_sender.last("grant/revoke")
    assert params == GrantRevokeParams(
        thread_id="t1", server="agents", tool="agent_run", plan_id="plan-1", task_id="tests"
    )
    pending.resolve(Done())
    assert [g.task_id for g in panel.state.grants] == ["guide", None]


def test_a_thread_grant_reads_as_this_thread():
    grant = GrantInfo(thread_id="t1", thread_title="Book", server="s", tool="t", created_at=0.0)
    assert grant_scope(grant) == "this thread"
