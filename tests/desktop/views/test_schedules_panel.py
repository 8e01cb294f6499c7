"""The Schedules panel: next fire times in local time, last results, new and edit through the
schedule editor, pause/resume, run now, delete, and the history with the reason of every skip."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolBar
from pytestqt.qtbot import QtBot

from desktop.controllers.schedules import SchedulesController
from desktop.views.main_window import MainWindow
from desktop.views.schedule_edit_dialog import ScheduleEditDialog
from desktop.views.schedules_panel import (
    COLUMNS,
    SchedulesPanelDialog,
    local_time,
)
from sidecar.protocol import (
    ErrorObject,
    FireInfo,
    NotifyParams,
    QueueEmpty,
    QueueErrorCode,
    ScheduleCreateParams,
    ScheduleHistoryResult,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleRef,
    ScheduleRunResult,
    ScheduleUpdateParams,
    UnattendedPolicy,
)
from tests.desktop.support import FakeSender
from tests.desktop.views.test_main_window import build_window, window

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
    controller = SchedulesController(fake_sender.api)
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


def test_the_window_offers_the_panel_in_its_toolbar(qtbot: QtBot, fake_sender: FakeSender):
    window = build_window(qtbot, fake_sender, schedules=SchedulesController(fake_sender.api))
    action = window.schedules_action
    assert action is not None
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
    window.notifier.tell(notice.title, notice.text)
    in_bar = window.statusBar().currentMessage() == "Heartbeat: The build is red"
    assert in_bar or shown == [("Heartbeat", "The build is red")]


def _rows(panel: SchedulesPanelDialog) -> list[str]:
    return [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]  # type: ignore[union-attr]


def _selected_id(panel: SchedulesPanelDialog) -> str | None:
    schedule = panel.selected()
    return schedule.id if schedule is not None else None


def _open_new(qtbot: QtBot, panel: SchedulesPanelDialog) -> ScheduleEditDialog:
    qtbot.mouseClick(panel.new_button, Qt.MouseButton.LeftButton)
    dialog = panel.edit_dialog
    assert dialog is not None and dialog.isVisible() and not dialog.editing
    return dialog


def test_an_author_creates_a_cron_schedule_in_the_dialog_and_sees_it_listed_and_selected(
    qtbot: QtBot, fake_sender: FakeSender
):
    controller = SchedulesController(fake_sender.api)
    panel = SchedulesPanelDialog(controller)
    qtbot.addWidget(panel)
    controller.reload()
    _listed(fake_sender)
    dialog = _open_new(qtbot, panel)
    assert dialog.timezone_combo.currentText() == "Europe/Berlin"
    dialog.name_edit.setText("Standup")
    qtbot.keyClicks(dialog.cron_edit, "0 9 * * 1-5")
    dialog.prompt_edit.setPlainText("standup notes")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    params, pending = fake_sender.last("schedule/create")
    assert params == ScheduleCreateParams(
        name="Standup",
        kind="cron",
        spec="0 9 * * 1-5",
        timezone="Europe/Berlin",
        prompt="standup notes",
    )
    created = _schedule("n1", name="Standup")
    pending.resolve(created)
    _listed(fake_sender, created)
    assert _rows(panel) == ["Standup"] and _selected_id(panel) == "n1"
    assert dialog.isVisible() and dialog.editing
    assert "2027-01-15 09:00" in dialog.preview_label.text()


def test_a_cron_the_sidecar_refuses_keeps_the_dialog_open_with_the_text_by_the_field(
    qtbot: QtBot, fake_sender: FakeSender
):
    controller = SchedulesController(fake_sender.api)
    panel = SchedulesPanelDialog(controller)
    qtbot.addWidget(panel)
    dialog = _open_new(qtbot, panel)
    dialog.cron_edit.setText("61 * * * *")
    dialog.prompt_edit.setPlainText("standup notes")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    fake_sender.last("schedule/create")[1].reject(
        ErrorObject(
            code=QueueErrorCode.SCHEDULE_INVALID,
            message="[bad_cron] bad cron expression '61 * * * *'",
            data={"reason": "bad_cron"},
        )
    )
    assert panel.edit_dialog is dialog and dialog.isVisible() and not dialog.editing
    assert list(dialog.visible_errors()) == ["when"]
    assert (dialog.cron_edit.text(), dialog.prompt_edit.toPlainText()) == (
        "61 * * * *",
        "standup notes",
    )
    assert fake_sender.methods() == ["schedule/create"]
    assert panel.error_label.isHidden()
    dialog.cron_edit.setText("1 * * * *")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert fake_sender.last("schedule/create")[0] == ScheduleCreateParams(
        kind="cron", spec="1 * * * *", timezone=None, prompt="standup notes"
    )
    assert dialog.visible_errors() == {}


def test_editing_the_selected_schedule_changes_its_prompt(qtbot: QtBot, fake_sender: FakeSender):
    controller = SchedulesController(fake_sender.api)
    panel = SchedulesPanelDialog(controller)
    qtbot.addWidget(panel)
    controller.reload()
    _listed(fake_sender, _schedule("a"), _schedule("b"))
    assert not panel.edit_button.isEnabled()
    panel.tree.topLevelItem(1).setSelected(True)  # type: ignore[union-attr]
    qtbot.mouseClick(panel.edit_button, Qt.MouseButton.LeftButton)
    dialog = panel.edit_dialog
    assert dialog is not None and dialog.editing
    assert dialog.prompt_edit.toPlainText() == "standup notes"
    dialog.prompt_edit.setPlainText("weekly review")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    params, pending = fake_sender.last("schedule/update")
    assert isinstance(params, ScheduleUpdateParams)
    assert (params.schedule_id, params.prompt) == ("b", "weekly review")
    pending.resolve(_schedule("b", prompt="weekly review"))
    _listed(fake_sender, _schedule("a"), _schedule("b", prompt="weekly review"))
    assert [s.prompt for s in controller.schedules] == ["standup notes", "weekly review"]
    assert _selected_id(panel) == "b"


def test_a_thousand_schedules_are_all_listed_and_one_more_can_be_created(
    qtbot: QtBot, fake_sender: FakeSender
):
    controller = SchedulesController(fake_sender.api)
    panel = SchedulesPanelDialog(controller)
    qtbot.addWidget(panel)
    many = tuple(_schedule(f"s{i:04}", name=f"Job {i:04}") for i in range(1000))
    controller.reload()
    _listed(fake_sender, *many)
    assert _rows(panel) == [s.name for s in many]
    assert not panel.empty_label.isVisibleTo(panel)
    dialog = _open_new(qtbot, panel)
    dialog.name_edit.setText("One more")
    dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData("interval"))
    dialog.interval_edit.setText("2h")
    dialog.prompt_edit.setPlainText("check the build")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    params, pending = fake_sender.last("schedule/create")
    assert isinstance(params, ScheduleCreateParams)
    assert (params.kind, params.spec) == ("interval", "2h")
    added = _schedule("s1000", name="One more", kind="interval", spec="2h")
    pending.resolve(added)
    _listed(fake_sender, *many, added)
    assert len(_rows(panel)) == 1001 and _rows(panel)[-1] == "One more"
    assert _selected_id(panel) == "s1000"


def test_a_refusal_after_the_dialog_was_closed_is_shown_in_the_panel(
    qtbot: QtBot, fake_sender: FakeSender
):
    controller = SchedulesController(fake_sender.api)
    panel = SchedulesPanelDialog(controller)
    qtbot.addWidget(panel)
    dialog = _open_new(qtbot, panel)
    dialog.cron_edit.setText("61 * * * *")
    dialog.prompt_edit.setPlainText("p")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    dialog.close()
    assert panel.edit_dialog is None
    fake_sender.last("schedule/create")[1].reject(
        ErrorObject(code=QueueErrorCode.SCHEDULE_INVALID, message="bad cron", data=None)
    )
    assert not panel.error_label.isHidden()


def test_each_row_says_what_its_run_does_with_a_question_while_the_author_is_away(
    qtbot: QtBot, fake_sender: FakeSender
):
    controller = SchedulesController(fake_sender.api)
    panel = SchedulesPanelDialog(controller)
    qtbot.addWidget(panel)
    controller.reload()
    _listed(
        fake_sender,
        _schedule("a"),
        _schedule("b", unattended=UnattendedPolicy(action="deny_after", minutes=45)),
        _schedule("c", unattended=UnattendedPolicy(action="skip")),
    )
    column = COLUMNS.index("If you're away")
    texts = [
        panel.tree.topLevelItem(i).text(column)  # type: ignore[union-attr]
        for i in range(panel.tree.topLevelItemCount())
    ]
    assert texts == ["waits for you", "denies after 45 min", "skips the run"]
