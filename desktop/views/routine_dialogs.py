"""The routine dialogs: run a routine with the author's values, and save a completed plan as one.

`RoutineRunDialog` has one field per parameter, prefilled with the saved value; `SaveRoutineDialog`
asks for the routine's name and which values of the plan become parameters (`name=value`, one a
line: each occurrence of the value in the plan becomes `{{name}}`). The sidecar's refusal stays in
the save dialog, under its fields, until the author changes something.
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.views.text import build_status_label
from sidecar.protocol import ErrorObject, PlanInfo, RoutineInfo

MAX_NAME = 64


def suggested_name(goal: str) -> str:
    """A routine name from the plan's goal: its first words, lower-case, joined by hyphens."""
    words = re.findall(r"[a-z0-9]+", goal.lower())[:4]
    return "-".join(words)[:MAX_NAME].strip("-")


def parse_parameters(text: str) -> dict[str, str]:
    """`name=value` lines (blank lines skipped) as a mapping.

    Raises:
        ValueError: a line without `=`, without a name or a value, or a name given twice.
    """
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, eq, value = line.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value:
            raise ValueError(f"line {number}: write name=value, e.g. port=Falmouth")
        if name in found:
            raise ValueError(f"line {number}: {name} is given twice")
        found[name] = value
    return found


def _plain_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


class RoutineRunDialog(QDialog):
    """One field per parameter of `routine`, prefilled with its saved value. OK (enabled while
    every field has a value) emits `submitted(dict[str, str])` and closes."""

    submitted = Signal(object)

    def __init__(self, routine: RoutineInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.routine = routine
        self.setWindowTitle(f"Run routine {routine.name}")
        self.setModal(False)
        self.edits: dict[str, QLineEdit] = {}
        layout = QVBoxLayout(self)
        layout.addWidget(_plain_label(routine.goal))
        form = QFormLayout()
        for name, value in routine.parameters.items():
            edit = QLineEdit(value)
            edit.textChanged.connect(self._on_text_changed)
            self.edits[name] = edit
            form.addRow(name, edit)
        layout.addLayout(form)
        if not routine.parameters:
            layout.addWidget(_plain_label("This routine takes no parameters."))
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Run")
        self.buttons.accepted.connect(self._on_accepted)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._on_text_changed()

    def values(self) -> dict[str, str]:
        return {name: edit.text().strip() for name, edit in self.edits.items()}

    def _on_text_changed(self) -> None:
        self.ok_button.setEnabled(all(self.values().values()))

    def _on_accepted(self) -> None:
        if self.ok_button.isEnabled():
            self.submitted.emit(self.values())
            self.accept()


class SaveRoutineDialog(QDialog):
    """The name of a routine made from `plan`, and its parameters. OK emits
    `submitted(name, parameters)` and waits: `show_saved()` closes it, `show_error(error)` shows
    the sidecar's refusal and lets the author try again."""

    submitted = Signal(str, object)

    def __init__(self, plan: PlanInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.setWindowTitle("Save plan as routine")
        self.setModal(False)
        self.resize(520, 420)
        layout = QVBoxLayout(self)
        layout.addWidget(_plain_label(f"Goal: {plan.goal}"))
        tasks = QPlainTextEdit("\n".join(f"{t.title}: {t.objective}" for t in plan.tasks))
        tasks.setReadOnly(True)
        tasks.setMaximumHeight(120)
        layout.addWidget(tasks)
        form = QFormLayout()
        self.name_edit = QLineEdit(suggested_name(plan.goal))
        self.name_edit.setMaxLength(MAX_NAME)
        self.name_edit.setPlaceholderText("harbour-report")
        self.name_edit.setToolTip("Lower-case letters, digits and single hyphens")
        form.addRow("Name", self.name_edit)
        self.parameters_edit = QPlainTextEdit()
        self.parameters_edit.setPlaceholderText("port=Falmouth")
        self.parameters_edit.setToolTip(
            "One a line: name=value. Each time the value occurs in the plan it becomes {{name}}."
        )
        form.addRow("Parameters", self.parameters_edit)
        layout.addLayout(form)
        self.error_label = build_status_label()
        layout.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Save")
        self.buttons.accepted.connect(self._on_accepted)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.name_edit.textChanged.connect(self._on_changed)
        self.parameters_edit.textChanged.connect(self._on_changed)
        self._on_changed()

    def show_error(self, error: ErrorObject | str) -> None:
        """The refusal, under the fields; the author may change them and save again."""
        self.error_label.setText(error if isinstance(error, str) else error.message)
        self.error_label.show()
        self.ok_button.setEnabled(bool(self.name_edit.text().strip()))

    def show_saved(self) -> None:
        self.accept()

    def _on_changed(self) -> None:
        self.error_label.hide()
        self.ok_button.setEnabled(bool(self.name_edit.text().strip()))

    def _on_accepted(self) -> None:
        name = self.name_edit.text().strip()
        if not name:
            return
        try:
            parameters = parse_parameters(self.parameters_edit.toPlainText())
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.ok_button.setEnabled(False)  # until the sidecar answers
        self.submitted.emit(name, parameters)
