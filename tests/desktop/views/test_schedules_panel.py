"""The Schedules panel: next fire times in local time, last results, pause/resume, run now,
delete, and the history with the reason of every skip."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolBar
from pytestqt.qtbot import QtBot

from desktop.schedules_controller import SchedulesController
from desktop.views.main_window import MainWindow
from desktop.views.schedules_panel import (
    SchedulesPanelDialog,
    add_schedules_panel,
    local_time,
    show_automation_notice,
)
from sidecar.protocol.queue import (
    FireInfo,
    NotifyParams,
    QueueEmpty,
    ScheduleHistoryResult,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleRef,
    ScheduleRunResult,
)
from tests.desktop.support import FakeSender
from tests.desktop.views.test_main_window import window

__all__ = ["window"]


def _schedule(schedule_id: str, **fields: object) -> ScheduleInfo:
    base: dict[str, object] = {
        "id": schedule_id,
        "name": f"Job {schedule_id}",
        "kind": "cron",
        "spec": "0 9 * * 1-5",
        "timezone": "Europe/Berlin",
        "prompt": "standup notes",
        "thread_id": None,
        "missed": "run_once",
        "enabled": True,
        "next_fire_at": 1_800_000_000.0,
        "next_fires_local": ("2027-01-15T09:00+01:00",),
        "last_status": "finished",
        "created_at": 1.0,
    }
    return ScheduleInfo.model_validate(base | fields)


def _listed(fake_sender: FakeSender, *schedules: ScheduleInfo) -> None:
    params, pending = fake_sender.last("schedule/list")
    assert params == QueueEmpty()
    pending.resolve(ScheduleListResult(schedules=schedules, default_timezone="Europe/Berlin"))


def test_the_panel_lists_schedules_with_local_next_times_and_pauses_runs_and_deletes(
    qtbot: QtBot, fake_sender: FakeSender
):
    controller = SchedulesController(fake_sender)
    panel = SchedulesPanelDialog(controller)
    qtbot.addWidget(panel)
    assert panel.empty_label.isVisibleTo(panel)
    controller.reload()
    _listed(fake_sender, _schedule("a"), _schedule("b", enabled=False, last_status="skipped"))
    rows = [
        [panel.tree.topLevelItem(i).text(c) for c in range(6)]  # type: ignore[union-attr]
        for i in range(panel.tree.topLevelItemCount())
    ]
    assert rows == [
        [
            "Job a",
            "cron 0 9 * * 1-5",
            "Europe/Berlin",
            local_time(1_800_000_000.0),
            "finished",
            "on",
        ],
        ["Job b", "cron 0 9 * * 1-5", "Europe/Berlin", "paused", "skipped", "paused"],
    ]
    panel.tree.topLevelItem(1).setSelected(True)  # type: ignore[union-attr]
    _, history = fake_sender.last("schedule/history")
    history.resolve(
        ScheduleHistoryResult(
            fires=(
                FireInfo(
                    schedule_id="b",
                    scheduled_for=1_799_000_000.0,
                    status="skipped",
                    reason="missed: Atrium was not running at 2027-01-14T09:00+01:00 (3 times)",
                    missed=3,
                    recorded_at=1_799_000_100.0,
                ),
            )
        )
    )
    assert "skipped (for 3 missed times): missed: Atrium was not running" in (
        panel.history_view.toPlainText()
    )
    assert panel.pause_button.text() == "Resume"
    qtbot.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    params, resumed = fake_sender.last("schedule/resume")
    assert params == ScheduleRef(schedule_id="b")
    resumed.resolve(_schedule("b"))
    _listed(fake_sender, _schedule("a"), _schedule("b"))
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    params, ran = fake_sender.last("schedule/run_now")
    assert params == ScheduleRef(schedule_id="b")
    ran.resolve(ScheduleRunResult(run_id="r9", thread_id="t9"))
    _listed(fake_sender, _schedule("a"), _schedule("b", last_status="started"))
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    assert fake_sender.last("schedule/delete")[0] == ScheduleRef(schedule_id="b")


def test_the_window_offers_the_panel_in_its_toolbar(
    qtbot: QtBot,
    window: MainWindow,
    fake_sender: FakeSender,
):
    action = add_schedules_panel(window, SchedulesController(fake_sender))
    toolbar = window.findChild(QToolBar, "main_toolbar")
    assert toolbar is not None and action in toolbar.actions()
    action.trigger()
    _listed(fake_sender, _schedule("a"))
    panel = window.findChild(SchedulesPanelDialog)
    assert panel is not None and panel.isVisible() and panel.tree.topLevelItemCount() == 1


def test_a_heartbeat_that_needs_the_author_is_told_in_the_window_or_as_a_notification(
    qtbot: QtBot,
    window: MainWindow,
):
    shown: list[tuple[str, str]] = []
    window.notifier.shown.connect(lambda title, text: shown.append((title, text)))
    notice = NotifyParams(kind="heartbeat", title="Heartbeat", text="The build is red")
    show_automation_notice(window, notice)
    in_bar = window.statusBar().currentMessage() == "Heartbeat: The build is red"
    assert in_bar or shown == [("Heartbeat", "The build is red")]
