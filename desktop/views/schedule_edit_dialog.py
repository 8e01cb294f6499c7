"""`ScheduleEditDialog`: the fields of `schedule/create` and `schedule/update`, with the
sidecar's refusals shown next to the field they are about. Among them, what a run does with a
question while the author is away (the schedule's `UnattendedPolicy`): wait, deny after some
minutes, or skip the run."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from PySide6.QtCore import QDate, QDateTime, Qt, QTime, QTimeZone, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QCompleter,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.views.text import build_status_label
from sidecar.protocol import (
    MAX_DENY_AFTER_MINUTES,
    ErrorObject,
    QueueErrorCode,
    ScheduleCreateParams,
    ScheduleInfo,
    ScheduleKind,
    ScheduleUpdateParams,
    ThreadInfo,
    UnattendedAction,
    UnattendedPolicy,
)

KINDS: tuple[tuple[ScheduleKind, str], ...] = (
    ("cron", "Repeating (cron)"),
    ("once", "Once"),
    ("interval", "Every (interval)"),
)
KIND_HINTS: dict[str, str] = {
    "cron": "minute hour day month weekday, e.g. 0 9 * * 1-5 for weekdays at 09:00",
    "once": "a wall-clock time in the time zone below",
    "interval": "e.g. 15m, 2h, 1d, or seconds (at least 60)",
}
MISSED = (
    ("run_once", "Run once for all missed times"),
    ("skip", "Skip missed times (recorded with the reason)"),
)
UNATTENDED: tuple[tuple[UnattendedAction, str], ...] = (
    ("wait", "Wait for me"),
    ("deny_after", "Deny after"),
    ("skip", "Skip the run"),
)
UNATTENDED_LABEL = "If it needs an answer while you're away"
UNATTENDED_HINT = (
    "Wait: you are notified and it waits for you. Deny: you are notified; if nobody answers "
    "in time, approvals are denied, questions declined, and the run goes on. Skip: the first "
    "question ends the run; nothing that needed your answer is done."
)
FIELDS = ("name", "when", "timezone", "prompt", "thread", "missed", "unattended")
# The sidecar's refusal reasons (`error.data["reason"]`) and the field each is about.
FIELD_OF_REASON = {
    "bad_cron": "when",
    "bad_time": "when",
    "in_the_past": "when",
    "bad_interval": "when",
    "bad_kind": "when",
    "unknown_timezone": "timezone",
    "prompt_too_long": "prompt",
    "no_such_thread": "thread",
    "bad_policy": "missed",
    "bad_unattended": "unattended",
}
NAME_MAX = 200
SPEC_MAX = 200
ONCE_FORMAT = "yyyy-MM-ddTHH:mm"
_REASON_PREFIX = re.compile(r"^\[[a-z_]+\]\s*")


@functools.cache
def zone_names() -> tuple[str, ...]:
    """Every IANA zone name this computer knows, sorted (read once)."""
    return tuple(sorted(available_timezones()))


def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name) if name else None
    except (ZoneInfoNotFoundError, ValueError):
        return None


def zone_time(iso: str) -> str:
    """An ISO time from `next_fires_local` as the author reads it, in its own zone's clock."""
    try:
        return datetime.fromisoformat(iso).strftime("%a %Y-%m-%d %H:%M")
    except ValueError:
        return iso


def _wall_time(value: datetime) -> QDateTime:
    """A naive wall-clock time in a UTC `QDateTime`, so no local DST gap can shift it."""
    return QDateTime(
        QDate(value.year, value.month, value.day), QTime(value.hour, value.minute), QTimeZone.utc()
    )


def _with_error(editor: QWidget | QLayout, error: QLabel) -> QWidget:
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    if isinstance(editor, QLayout):
        column.addLayout(editor)
    else:
        column.addWidget(editor)
    column.addWidget(error)
    return box


class ScheduleEditDialog(QDialog):
    """Creates a schedule (no `schedule`) or edits one (its kind and thread are fixed: the
    sidecar's `schedule/update` changes neither). Non-modal.

    Save emits `submitted(ScheduleCreateParams | ScheduleUpdateParams)`; the panel sends it and
    calls `show_saved` with the sidecar's `ScheduleInfo` or `show_error` with its refusal. The
    dialog stays open either way: a refusal is shown next to its field with everything typed
    left as it was; a saved schedule shows its next fire times and the dialog goes on editing it.
    """

    submitted = Signal(object)

    def __init__(
        self,
        default_timezone: str,
        threads: Sequence[ThreadInfo] = (),
        schedule: ScheduleInfo | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setModal(False)
        self.resize(600, 560)
        self.default_timezone = default_timezone
        self.schedule: ScheduleInfo | None = None
        self.error_labels = {field: build_status_label() for field in FIELDS}
        layout = QVBoxLayout(self)
        layout.addLayout(self._build_form(threads))
        self.preview_label = QLabel()
        self.preview_label.setWordWrap(True)
        self.preview_label.hide()
        layout.addWidget(self.preview_label)
        self.error_label = build_status_label()
        layout.addWidget(self.error_label)
        layout.addWidget(self._build_buttons())
        if schedule is None:
            self._start_new()
        else:
            self.load(schedule)

    @property
    def editing(self) -> bool:
        return self.schedule is not None

    def _build_form(self, threads: Sequence[ThreadInfo]) -> QFormLayout:
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setMaxLength(NAME_MAX)
        self.name_edit.setPlaceholderText("optional, e.g. Standup notes")
        form.addRow("Name", _with_error(self.name_edit, self.error_labels["name"]))
        form.addRow("When", _with_error(self._build_when(), self.error_labels["when"]))
        self.timezone_combo = QComboBox()
        self.timezone_combo.setEditable(True)
        self.timezone_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.timezone_combo.addItems(list(zone_names()))
        completer = QCompleter(list(zone_names()), self.timezone_combo)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.timezone_combo.setCompleter(completer)
        line_edit = self.timezone_combo.lineEdit()
        if line_edit is not None:
            line_edit.setPlaceholderText("the workspace's")
        form.addRow("Time zone", _with_error(self.timezone_combo, self.error_labels["timezone"]))
        self.prompt_edit = QPlainTextEdit()
        self.prompt_edit.setPlaceholderText("What the agent is asked each time it runs")
        form.addRow("Prompt", _with_error(self.prompt_edit, self.error_labels["prompt"]))
        self.thread_combo = QComboBox()
        self.thread_combo.addItem("A new thread for every run", None)
        for thread in threads:
            self.thread_combo.addItem(thread.title or thread.id, thread.id)
        form.addRow("Runs in", _with_error(self.thread_combo, self.error_labels["thread"]))
        self.missed_combo = QComboBox()
        for policy, label in MISSED:
            self.missed_combo.addItem(label, policy)
        form.addRow("Missed runs", _with_error(self.missed_combo, self.error_labels["missed"]))
        unattended = _with_error(self._build_unattended(), self.error_labels["unattended"])
        form.addRow(UNATTENDED_LABEL, unattended)
        return form

    def _build_unattended(self) -> QVBoxLayout:
        """Wait for me / Deny after [N] minutes / Skip the run, as radio buttons; the minutes
        are editable while "Deny after" is chosen."""
        self.unattended_group = QButtonGroup(self)
        self.unattended_buttons: dict[UnattendedAction, QRadioButton] = {}
        self.deny_minutes_spin = QSpinBox()
        self.deny_minutes_spin.setRange(1, MAX_DENY_AFTER_MINUTES)
        self.deny_minutes_spin.setValue(UnattendedPolicy().minutes)
        self.deny_minutes_spin.setSuffix(" minutes")
        row = QHBoxLayout()
        for action, label in UNATTENDED:
            button = QRadioButton(label)
            self.unattended_buttons[action] = button
            self.unattended_group.addButton(button)
            row.addWidget(button)
            if action == "deny_after":
                row.addWidget(self.deny_minutes_spin)
        row.addStretch(1)
        self.unattended_buttons["wait"].setChecked(True)
        self.unattended_group.buttonToggled.connect(self._on_unattended_toggled)
        self._on_unattended_toggled()
        hint = QLabel(UNATTENDED_HINT)
        hint.setWordWrap(True)
        column = QVBoxLayout()
        column.addLayout(row)
        column.addWidget(hint)
        return column

    def _build_when(self) -> QVBoxLayout:
        self.kind_combo = QComboBox()
        for kind, label in KINDS:
            self.kind_combo.addItem(label, kind)
        self.cron_edit = QLineEdit()
        self.cron_edit.setMaxLength(SPEC_MAX)
        self.cron_edit.setPlaceholderText("0 9 * * 1-5")
        self.once_edit = QDateTimeEdit()
        self.once_edit.setCalendarPopup(True)
        self.once_edit.setTimeZone(QTimeZone.utc())
        self.once_edit.setDisplayFormat("yyyy-MM-dd HH:mm")
        soon = datetime.now(_zone(self.default_timezone)) + timedelta(hours=1)
        self.once_edit.setDateTime(_wall_time(soon))
        self.interval_edit = QLineEdit()
        self.interval_edit.setMaxLength(SPEC_MAX)
        self.interval_edit.setPlaceholderText("1h")
        # One editor per kind: switching kinds loses nothing typed in another.
        self.spec_stack = QStackedWidget()
        for editor in (self.cron_edit, self.once_edit, self.interval_edit):
            self.spec_stack.addWidget(editor)
        self.spec_stack.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.kind_hint = QLabel()
        self.kind_hint.setWordWrap(True)
        self.kind_combo.currentIndexChanged.connect(self._on_kind_changed)
        row = QHBoxLayout()
        row.addWidget(self.kind_combo)
        row.addWidget(self.spec_stack, 1)
        column = QVBoxLayout()
        column.addLayout(row)
        column.addWidget(self.kind_hint)
        self._on_kind_changed(0)
        return column

    def _build_buttons(self) -> QDialogButtonBox:
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        buttons.accepted.connect(self._on_save_clicked)
        buttons.rejected.connect(self.reject)
        return buttons

    def _start_new(self) -> None:
        self.setWindowTitle("New schedule")
        self.timezone_combo.setCurrentText(self.default_timezone)

    def load(self, schedule: ScheduleInfo) -> None:
        """Show `schedule` and edit it from now on (Save sends `schedule/update`)."""
        self.schedule = schedule
        self.setWindowTitle(f"Edit schedule: {schedule.name}")
        self.name_edit.setText(schedule.name)
        self.kind_combo.setCurrentIndex(self.kind_combo.findData(schedule.kind))
        self.kind_combo.setEnabled(False)
        if schedule.kind == "cron":
            self.cron_edit.setText(schedule.spec)
        elif schedule.kind == "interval":
            self.interval_edit.setText(schedule.spec)
        else:
            self._load_once(schedule.spec, schedule.timezone)
        self.timezone_combo.setCurrentText(schedule.timezone)
        self.prompt_edit.setPlainText(schedule.prompt)
        index = self.thread_combo.findData(schedule.thread_id)
        if index < 0:
            self.thread_combo.addItem(schedule.thread_id or "", schedule.thread_id)
            index = self.thread_combo.count() - 1
        self.thread_combo.setCurrentIndex(index)
        self.thread_combo.setEnabled(False)
        self.missed_combo.setCurrentIndex(self.missed_combo.findData(schedule.missed))
        self.unattended_buttons[schedule.unattended.action].setChecked(True)
        self.deny_minutes_spin.setValue(schedule.unattended.minutes)
        self._show_next_fires(schedule, saved=False)

    def _load_once(self, spec: str, timezone: str) -> None:
        try:
            when = datetime.fromisoformat(spec)
        except ValueError:
            return
        if when.tzinfo is not None:
            when = when.astimezone(_zone(timezone)).replace(tzinfo=None)
        self.once_edit.setDateTime(_wall_time(when))

    def kind(self) -> ScheduleKind:
        return self.kind_combo.currentData()

    def spec(self) -> str:
        """The "when" as the sidecar takes it for the chosen kind."""
        kind = self.kind()
        if kind == "once":
            return self.once_edit.dateTime().toString(ONCE_FORMAT)
        editor = self.cron_edit if kind == "cron" else self.interval_edit
        return editor.text().strip()

    def unattended_policy(self) -> UnattendedPolicy:
        """The choice for a question nobody answers (the minutes are kept with any choice)."""
        chosen: UnattendedAction = "wait"
        for action, button in self.unattended_buttons.items():
            if button.isChecked():
                chosen = action
        return UnattendedPolicy(action=chosen, minutes=self.deny_minutes_spin.value())

    def build_params(self) -> ScheduleCreateParams | ScheduleUpdateParams | None:
        """The request the form describes, or None after showing what is missing by its field."""
        spec, prompt = self.spec(), self.prompt_edit.toPlainText()
        if not spec:
            self._show_field_error("when", f"Give the time: {KIND_HINTS[self.kind()]}.")
        if not prompt.strip():
            self._show_field_error("prompt", "Write the prompt the schedule runs.")
        if not spec or not prompt.strip():
            return None
        name = self.name_edit.text().strip()
        timezone = self.timezone_combo.currentText().strip() or self.default_timezone
        missed = self.missed_combo.currentData()
        unattended = self.unattended_policy()
        if self.schedule is not None:
            return ScheduleUpdateParams(
                schedule_id=self.schedule.id,
                name=name or None,
                spec=spec,
                timezone=timezone,
                prompt=prompt,
                missed=missed,
                unattended=unattended,
            )
        return ScheduleCreateParams(
            name=name,
            kind=self.kind(),
            spec=spec,
            timezone=timezone or None,
            prompt=prompt,
            thread_id=self.thread_combo.currentData(),
            missed=missed,
            unattended=unattended,
        )

    def show_error(self, error: ErrorObject) -> None:
        """The sidecar refused: say why next to the field it names (or under the form)."""
        reason = error.data.get("reason") if isinstance(error.data, dict) else None
        field = FIELD_OF_REASON.get(str(reason))
        message = _REASON_PREFIX.sub("", error.message)
        if error.code == QueueErrorCode.SCHEDULE_INVALID and field is not None:
            self._show_field_error(field, message)
        else:
            self.error_label.setText(message)
            self.error_label.show()
        self.save_button.setEnabled(True)

    def show_saved(self, schedule: ScheduleInfo) -> None:
        """Saved: go on editing `schedule` and show when it fires next."""
        self.load(schedule)
        self._show_next_fires(schedule, saved=True)
        self.save_button.setEnabled(True)

    def visible_errors(self) -> dict[str, str]:
        """The fields that show an error now, with its text."""
        return {
            field: label.text()
            for field, label in self.error_labels.items()
            if not label.isHidden()
        }

    def _show_next_fires(self, schedule: ScheduleInfo, *, saved: bool) -> None:
        if schedule.next_fires_local:
            times = ", ".join(zone_time(iso) for iso in schedule.next_fires_local)
            text = f"Next runs ({schedule.timezone}): {times}"
        else:
            text = "Paused." if not schedule.enabled else "No more runs."
        self.preview_label.setText(("Saved. " if saved else "") + text)
        self.preview_label.show()

    def _show_field_error(self, field: str, message: str) -> None:
        label = self.error_labels[field]
        label.setText(message)
        label.show()

    def _clear_errors(self) -> None:
        for label in (*self.error_labels.values(), self.error_label):
            label.hide()

    def _on_unattended_toggled(self, *_args: object) -> None:
        self.deny_minutes_spin.setEnabled(self.unattended_buttons["deny_after"].isChecked())

    def _on_kind_changed(self, index: int) -> None:
        self.spec_stack.setCurrentIndex(index)
        self.kind_hint.setText(KIND_HINTS[self.kind()])

    def _on_save_clicked(self) -> None:
        self._clear_errors()
        params = self.build_params()
        if params is not None:
            self.save_button.setEnabled(False)
            self.submitted.emit(params)
