"""`SchedulesPanelDialog`: every schedule with its next fire times in local time, its last
result, what its run does with a question while the author is away, new and edit (in
`ScheduleEditDialog`), pause/resume, run now, delete, and its history (fires and skips with
their reasons)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.schedules import SchedulesController
from desktop.views.schedule_edit_dialog import ScheduleEditDialog
from desktop.views.text import build_status_label
from sidecar.protocol import (
    ErrorObject,
    FireInfo,
    ScheduleCreateParams,
    ScheduleHistoryResult,
    ScheduleInfo,
    ScheduleUpdateParams,
    ThreadInfo,
    UnattendedPolicy,
)

COLUMNS = ("Name", "When", "Zone", "Next (local time)", "Last result", "State", "If you're away")


def unattended_text(policy: UnattendedPolicy) -> str:
    """A schedule's policy for a question nobody answers, in a few words."""
    if policy.action == "deny_after":
        return f"denies after {policy.minutes} min"
    return "skips the run" if policy.action == "skip" else "waits for you"


def local_time(stamp: float | None) -> str:
    """A Unix time in this computer's local time zone."""
    if stamp is None:
        return "—"
    return datetime.fromtimestamp(stamp).astimezone().strftime("%a %Y-%m-%d %H:%M %Z")


def fire_line(fire: FireInfo) -> str:
    line = f"{local_time(fire.scheduled_for)}  {fire.status}"
    if fire.missed > 1:
        line += f" (for {fire.missed} missed times)"
    return line + (f": {fire.reason}" if fire.reason else "")


def _no_threads() -> Sequence[ThreadInfo]:
    return ()


class SchedulesPanelDialog(QDialog):
    """`threads` gives the threads a new schedule may run in (besides a new one per run)."""

    def __init__(
        self,
        controller: SchedulesController,
        parent: QWidget | None = None,
        threads: Callable[[], Sequence[ThreadInfo]] = _no_threads,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self._threads = threads
        self.edit_dialog: ScheduleEditDialog | None = None
        self._select_id: str | None = None
        self.setWindowTitle("Schedules")
        self.setModal(False)
        self.resize(960, 460)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.tree.itemDoubleClicked.connect(lambda _item, _column: self._on_edit())
        self.empty_label = QLabel(
            "No schedules yet. Create one with “New schedule…”, or ask the agent, e.g. "
            "“remind me every weekday at 9 to…”."
        )
        self.history_view = QPlainTextEdit()
        self.history_view.setReadOnly(True)
        self.history_view.setMaximumHeight(140)
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.new_button = QPushButton("New schedule…")
        self.edit_button = QPushButton("Edit…")
        self.pause_button = QPushButton("Pause")
        self.run_button = QPushButton("Run now")
        self.delete_button = QPushButton("Delete")
        self.refresh_button = QPushButton("Refresh")
        for button in (
            self.new_button,
            self.edit_button,
            self.pause_button,
            self.run_button,
            self.delete_button,
            self.refresh_button,
        ):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.new_button.clicked.connect(self._on_new)
        self.edit_button.clicked.connect(self._on_edit)
        self.pause_button.clicked.connect(self._on_pause)
        self.run_button.clicked.connect(self._on_run)
        self.delete_button.clicked.connect(self._on_delete)
        self.refresh_button.clicked.connect(controller.reload)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.empty_label)
        layout.addWidget(QLabel("History"))
        layout.addWidget(self.history_view)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        controller.changed.connect(self._show)
        controller.failed.connect(self._show_error)
        self._show()

    def selected(self) -> ScheduleInfo | None:
        items = self.tree.selectedItems()
        if not items:
            return None
        index = self.tree.indexOfTopLevelItem(items[0])
        return self.controller.schedules[index] if index >= 0 else None

    def _show(self) -> None:
        chosen = self.selected()
        chosen_id = self._select_id or (chosen.id if chosen is not None else None)
        self._select_id = None
        self.tree.clear()
        for schedule in self.controller.schedules:
            when = f"{schedule.kind} {schedule.spec}"
            nexts = local_time(schedule.next_fire_at) if schedule.enabled else "paused"
            state = "on" if schedule.enabled else "paused"
            row = (
                schedule.name,
                when,
                schedule.timezone,
                nexts,
                schedule.last_status or "—",
                state,
                unattended_text(schedule.unattended),
            )
            item = QTreeWidgetItem(list(row))
            item.setToolTip(3, "\n".join(schedule.next_fires_local))
            self.tree.addTopLevelItem(item)
            if chosen_id == schedule.id:
                item.setSelected(True)
                self.tree.scrollToItem(item)
        self.empty_label.setVisible(not self.controller.schedules)
        self._on_selection()

    def _on_selection(self) -> None:
        schedule = self.selected()
        for button in (self.edit_button, self.pause_button, self.run_button, self.delete_button):
            button.setEnabled(schedule is not None)
        self.pause_button.setText("Resume" if schedule and not schedule.enabled else "Pause")
        self.history_view.clear()
        if schedule is not None:
            self.controller.history(schedule.id).then(self._show_history)

    def _show_history(self, result: ScheduleHistoryResult) -> None:
        lines = [fire_line(f) for f in result.fires]
        self.history_view.setPlainText("\n".join(lines) or "Not fired yet.")

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()

    def _on_new(self) -> None:
        self.open_editor(None)

    def _on_edit(self) -> None:
        schedule = self.selected()
        if schedule is not None:
            self.open_editor(schedule)

    def open_editor(self, schedule: ScheduleInfo | None) -> ScheduleEditDialog:
        """The dialog that creates a schedule (None) or edits `schedule`; one at a time."""
        if self.edit_dialog is not None:
            self.edit_dialog.close()
        dialog = ScheduleEditDialog(
            self.controller.default_timezone, self._threads(), schedule, self
        )
        dialog.submitted.connect(lambda params: self._on_submitted(dialog, params))
        dialog.finished.connect(lambda _result: self._forget_editor(dialog))
        self.edit_dialog = dialog
        dialog.show()
        return dialog

    def _forget_editor(self, dialog: ScheduleEditDialog) -> None:
        if self.edit_dialog is dialog:
            self.edit_dialog = None
        dialog.deleteLater()

    def _on_submitted(
        self, dialog: ScheduleEditDialog, params: ScheduleCreateParams | ScheduleUpdateParams
    ) -> None:
        # The author may have closed the dialog before the answer came.
        def on_saved(schedule: ScheduleInfo) -> None:
            self._select_id = schedule.id
            if self.edit_dialog is dialog:
                dialog.show_saved(schedule)

        def on_refused(error: ErrorObject) -> None:
            if self.edit_dialog is dialog:
                dialog.show_error(error)
            else:
                self._show_error(error.message)

        if isinstance(params, ScheduleUpdateParams):
            pending = self.controller.update(params)
        else:
            pending = self.controller.create(params)
        pending.then(on_saved, on_refused)

    def _on_pause(self) -> None:
        schedule = self.selected()
        if schedule is not None:
            self.controller.set_enabled(schedule.id, not schedule.enabled)

    def _on_run(self) -> None:
        schedule = self.selected()
        if schedule is not None:
            self.controller.run_now(schedule.id)

    def _on_delete(self) -> None:
        schedule = self.selected()
        if schedule is not None:
            self.controller.delete(schedule.id)
