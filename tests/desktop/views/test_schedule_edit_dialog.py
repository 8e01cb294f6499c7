"""The schedule editor: each kind of "when" builds the request the sidecar takes, an edit keeps
the kind and thread, and a refusal is shown by its field with everything typed kept."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QDate, QDateTime, Qt, QTime, QTimeZone
from pytestqt.qtbot import QtBot

from desktop.views.schedule_edit_dialog import ScheduleEditDialog
from sidecar.protocol import (
    ErrorCode,
    ErrorObject,
    QueueErrorCode,
    ScheduleCreateParams,
    ScheduleUpdateParams,
    UnattendedPolicy,
)
from tests.desktop.controllers.test_schedules import refusal, schedule_info
from tests.desktop.support import thread_info


def _dialog(qtbot: QtBot, *args: object, **kwargs: object) -> ScheduleEditDialog:
    dialog = ScheduleEditDialog(*args, **kwargs)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _save(qtbot: QtBot, dialog: ScheduleEditDialog) -> list[object]:
    sent: list[object] = []
    dialog.submitted.connect(sent.append)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    return sent


def test_a_new_cron_schedule_defaults_to_the_workspace_zone_and_a_new_thread_per_run(
    qtbot: QtBot,
):
    dialog = _dialog(qtbot, "Europe/Berlin", (thread_info("t1", "Journal"),))
    assert dialog.windowTitle() == "New schedule"
    assert dialog.timezone_combo.currentText() == "Europe/Berlin"
    dialog.name_edit.setText("Standup")
    dialog.cron_edit.setText("0 9 * * 1-5")
    dialog.prompt_edit.setPlainText("standup notes")
    assert _save(qtbot, dialog) == [
        ScheduleCreateParams(
            name="Standup",
            kind="cron",
            spec="0 9 * * 1-5",
            timezone="Europe/Berlin",
            prompt="standup notes",
            thread_id=None,
            missed="run_once",
        )
    ]
    assert not dialog.save_button.isEnabled()


def test_a_one_shot_and_an_interval_on_a_named_thread_are_enterable(qtbot: QtBot):
    dialog = _dialog(qtbot, "UTC", (thread_info("t1", "Journal"),))
    dialog.prompt_edit.setPlainText("tea")
    dialog.thread_combo.setCurrentIndex(dialog.thread_combo.findData("t1"))
    dialog.missed_combo.setCurrentIndex(dialog.missed_combo.findData("skip"))
    dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData("once"))
    dialog.once_edit.setDateTime(QDateTime(QDate(2031, 3, 30), QTime(2, 30), QTimeZone.utc()))
    once = dialog.build_params()
    assert isinstance(once, ScheduleCreateParams)
    assert (once.kind, once.spec, once.thread_id, once.missed) == (
        "once",
        "2031-03-30T02:30",
        "t1",
        "skip",
    )
    dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData("interval"))
    dialog.interval_edit.setText("90m")
    interval = dialog.build_params()
    assert isinstance(interval, ScheduleCreateParams)
    assert (interval.kind, interval.spec) == ("interval", "90m")


def test_switching_kinds_loses_nothing_typed(qtbot: QtBot):
    dialog = _dialog(qtbot, "UTC")
    dialog.cron_edit.setText("*/5 * * * *")
    dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData("interval"))
    dialog.interval_edit.setText("2h")
    dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData("cron"))
    assert (dialog.spec(), dialog.interval_edit.text()) == ("*/5 * * * *", "2h")


def test_an_empty_when_or_prompt_is_shown_by_its_field_and_nothing_is_sent(qtbot: QtBot):
    dialog = _dialog(qtbot, "UTC")
    assert _save(qtbot, dialog) == []
    assert set(dialog.visible_errors()) == {"when", "prompt"}
    assert dialog.save_button.isEnabled()


def test_editing_keeps_kind_and_thread_and_sends_an_update(qtbot: QtBot):
    schedule = schedule_info("a", thread_id="t1")
    dialog = _dialog(qtbot, "UTC", (thread_info("t1", "Journal"),), schedule)
    assert not dialog.kind_combo.isEnabled() and not dialog.thread_combo.isEnabled()
    assert dialog.thread_combo.currentText() == "Journal"
    assert (dialog.cron_edit.text(), dialog.timezone_combo.currentText()) == (
        "0 9 * * 1-5",
        "Europe/Berlin",
    )
    assert "Fri 2027-01-15 09:00" in dialog.preview_label.text()
    dialog.prompt_edit.setPlainText("weekly review")
    assert _save(qtbot, dialog) == [
        ScheduleUpdateParams(
            schedule_id="a",
            name="Job a",
            spec="0 9 * * 1-5",
            timezone="Europe/Berlin",
            prompt="weekly review",
            missed="run_once",
            unattended=UnattendedPolicy(),
        )
    ]


def test_a_one_shot_with_an_offset_is_shown_in_its_own_zone(qtbot: QtBot):
    schedule = schedule_info(
        "o", kind="once", spec="2031-01-15T08:00:00+00:00", timezone="Europe/Berlin"
    )
    dialog = _dialog(qtbot, "UTC", (), schedule)
    assert dialog.spec() == "2031-01-15T09:00"


def test_a_refusal_is_shown_by_its_field_and_keeps_what_was_typed(qtbot: QtBot):
    dialog = _dialog(qtbot, "UTC")
    dialog.cron_edit.setText("61 * * * *")
    dialog.prompt_edit.setPlainText("standup notes")
    dialog.timezone_combo.setCurrentText("Mars/Olympus")
    _save(qtbot, dialog)
    fields = {
        "bad_cron": "when",
        "in_the_past": "when",
        "unknown_timezone": "timezone",
        "prompt_too_long": "prompt",
        "no_such_thread": "thread",
        "bad_unattended": "unattended",
    }
    for reason, field in fields.items():
        dialog.show_error(refusal(reason))
        assert list(dialog.visible_errors()) == [field], reason
        assert not dialog.visible_errors()[field].startswith("[")
        assert dialog.isVisible() and dialog.save_button.isEnabled()
        _save(qtbot, dialog)
    dialog.show_error(refusal("no_such_schedule", QueueErrorCode.NO_SUCH_SCHEDULE))
    assert dialog.visible_errors() == {} and dialog.error_label.isVisibleTo(dialog)
    assert (dialog.spec(), dialog.prompt_edit.toPlainText()) == ("61 * * * *", "standup notes")
    assert dialog.timezone_combo.currentText() == "Mars/Olympus"
    dialog.show_error(ErrorObject(code=ErrorCode.INVALID_PARAMS, message="bad params"))
    assert dialog.visible_errors() == {} and dialog.save_button.isEnabled()


def test_once_saved_the_dialog_shows_the_next_runs_and_edits_what_it_saved(qtbot: QtBot):
    dialog = _dialog(qtbot, "Europe/Berlin")
    dialog.cron_edit.setText("0 9 * * 1-5")
    dialog.prompt_edit.setPlainText("standup notes")
    _save(qtbot, dialog)
    dialog.show_saved(
        schedule_info(
            "n1",
            next_fires_local=("2027-01-15T09:00:00+01:00", "2027-01-18T09:00:00+01:00"),
        )
    )
    assert dialog.editing and dialog.save_button.isEnabled()
    text = dialog.preview_label.text()
    assert "Fri 2027-01-15 09:00" in text and "Mon 2027-01-18 09:00" in text
    dialog.prompt_edit.setPlainText("standup notes, short")
    sent = _save(qtbot, dialog)
    assert [type(p) for p in sent] == [ScheduleUpdateParams]


def test_a_new_schedule_waits_for_the_author_unless_told_otherwise(qtbot: QtBot):
    dialog = _dialog(qtbot, "UTC")
    assert dialog.unattended_buttons["wait"].isChecked()
    assert not dialog.deny_minutes_spin.isEnabled()
    dialog.cron_edit.setText("0 3 * * *")
    dialog.prompt_edit.setPlainText("night report")
    [sent] = _save(qtbot, dialog)
    assert isinstance(sent, ScheduleCreateParams)
    assert sent.unattended == UnattendedPolicy(action="wait", minutes=30)


@pytest.mark.parametrize(("action", "minutes"), [("deny_after", 45), ("skip", 30), ("wait", 30)])
def test_the_away_choice_and_its_minutes_are_sent(qtbot: QtBot, action: str, minutes: int):
    dialog = _dialog(qtbot, "UTC")
    dialog.cron_edit.setText("0 3 * * *")
    dialog.prompt_edit.setPlainText("night report")
    qtbot.mouseClick(dialog.unattended_buttons[action], Qt.MouseButton.LeftButton)  # type: ignore[index]
    assert dialog.deny_minutes_spin.isEnabled() == (action == "deny_after")
    if action == "deny_after":
        dialog.deny_minutes_spin.setValue(minutes)
    [sent] = _save(qtbot, dialog)
    assert isinstance(sent, ScheduleCreateParams)
    assert (sent.unattended.action, sent.unattended.minutes) == (action, minutes)


def test_editing_shows_the_saved_choice_and_sends_the_changed_one(qtbot: QtBot):
    policy = UnattendedPolicy(action="deny_after", minutes=90)
    dialog = _dialog(qtbot, "UTC", (), schedule_info("a", unattended=policy))
    assert dialog.unattended_buttons["deny_after"].isChecked()
    assert (dialog.deny_minutes_spin.value(), dialog.deny_minutes_spin.isEnabled()) == (90, True)
    qtbot.mouseClick(dialog.unattended_buttons["skip"], Qt.MouseButton.LeftButton)
    [sent] = _save(qtbot, dialog)
    assert isinstance(sent, ScheduleUpdateParams)
    assert sent.unattended == UnattendedPolicy(action="skip", minutes=90)
