"""`PlanApprovalDialog`: the planner proposes a plan; the author edits, approves or rejects it.

The tasks are a table (id, title, objective, profile, depends on) whose rows can be edited,
moved up and down and dropped. What the coordinator would refuse is said under the table as
the author edits, and Approve stays off until it is fixed. The dialog stays open after
answering until the sidecar takes the answer: a refusal (`INVALID_RESUME_VALUE`) is shown here
and the author can fix the plan and try again.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.models.plan_draft import DraftRow, PlanDraft, parse_ids
from desktop.views.text import WARNING_COLOUR, build_status_label
from sidecar.protocol import ErrorObject, PlanApprovalInterrupt

COLUMNS = ("Id", "Title", "Objective", "Profile", "Depends on")
ID, TITLE, OBJECTIVE, PROFILE, DEPENDS = range(5)


class PlanApprovalDialog(QDialog):
    """Shows one `plan_approval` interrupt; emits `answered(interrupt_id, PlanApprovalValue)`.

    Closing it without answering leaves the plan waiting in the inbox.
    """

    answered = Signal(str, object)

    def __init__(
        self,
        interrupt: PlanApprovalInterrupt,
        thread_title: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.interrupt = interrupt
        self.thread_id: str | None = None
        self.draft = PlanDraft.from_interrupt(interrupt)
        self._rendering = False
        self.setWindowTitle(f"Approve plan: {interrupt.goal}")
        self.setModal(False)
        layout = QVBoxLayout(self)
        self._build_header(layout, thread_title)
        self._build_table(layout)
        self._build_decision(layout)
        self._render()
        self.resize(900, 520)

    def _build_header(self, layout: QVBoxLayout, thread_title: str) -> None:
        where = f" in “{escape(thread_title)}”" if thread_title else ""
        goal = f"<b>{escape(self.interrupt.goal)}</b>"
        self.goal_label = QLabel(f"{goal} (version {self.interrupt.version}){where}")
        self.goal_label.setWordWrap(True)
        layout.addWidget(self.goal_label)
        if self.interrupt.body:
            body = QLabel(self.interrupt.body)
            body.setTextFormat(Qt.TextFormat.PlainText)
            body.setWordWrap(True)
            layout.addWidget(body)
        self.estimate_label = QLabel(self.interrupt.estimate or "")
        self.estimate_label.setTextFormat(Qt.TextFormat.PlainText)
        self.estimate_label.setWordWrap(True)
        self.estimate_label.setToolTip(
            "A guide from earlier tasks of the same profiles; a budget in the plan is what "
            "stops it."
        )
        self.estimate_label.setVisible(bool(self.interrupt.estimate))
        layout.addWidget(self.estimate_label)

    def _build_table(self, layout: QVBoxLayout) -> None:
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(
            OBJECTIVE, QHeaderView.ResizeMode.Stretch
        )
        self.table.itemChanged.connect(self._on_item_changed)
        self.table.currentCellChanged.connect(lambda *_: self._update_buttons())
        self.up_button = QPushButton("Up")
        self.down_button = QPushButton("Down")
        self.drop_button = QPushButton("Drop")
        self.up_button.clicked.connect(lambda: self._move(-1))
        self.down_button.clicked.connect(lambda: self._move(1))
        self.drop_button.clicked.connect(self._drop)
        row = QHBoxLayout()
        for button in (self.up_button, self.down_button, self.drop_button):
            row.addWidget(button)
        row.addStretch(1)
        self.problems_label = build_status_label(WARNING_COLOUR)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.problems_label)

    def _build_decision(self, layout: QVBoxLayout) -> None:
        self.error_label = build_status_label()
        self.reason_edit = QLineEdit()
        self.reason_edit.setPlaceholderText("Reason for rejecting (optional, the agent sees it)")
        self.approve_button = QPushButton("Approve")
        self.reject_button = QPushButton("Reject")
        self.approve_button.setDefault(True)
        self.approve_button.clicked.connect(self._on_approve_clicked)
        self.reject_button.clicked.connect(self._on_reject_clicked)
        self.accept_paths_edit = QLineEdit()
        self.accept_paths_edit.setPlaceholderText(
            "Accept strong agents' changes in these paths without asking (comma-separated, "
            "e.g. docs, tests); empty: review every file"
        )
        row = QHBoxLayout()
        row.addWidget(self.reason_edit, 1)
        row.addWidget(self.reject_button)
        row.addWidget(self.approve_button)
        layout.addWidget(self.accept_paths_edit)
        layout.addWidget(self.error_label)
        layout.addLayout(row)

    def profile_combo(self, row: int) -> QComboBox:
        combo = self.table.cellWidget(row, PROFILE)
        assert isinstance(combo, QComboBox)
        return combo

    def show_resume_error(self, error: ErrorObject) -> None:
        """The sidecar refused the answer: say why and let the author try again."""
        self.error_label.setText(f"The plan was not accepted: {error.message}")
        self.error_label.show()
        self._set_waiting(False)

    def _render(self) -> None:
        """Fill the table from the draft (after a move or drop)."""
        self._rendering = True
        self.table.setRowCount(len(self.draft.rows))
        for row, draft in enumerate(self.draft.rows):
            texts = {ID: draft.id, TITLE: draft.title, OBJECTIVE: draft.objective,
                     DEPENDS: ", ".join(draft.depends_on)}  # fmt: skip
            for column, text in texts.items():
                item = QTableWidgetItem(text)
                if column == OBJECTIVE:
                    item.setToolTip(text)
                self.table.setItem(row, column, item)
            self.table.setCellWidget(row, PROFILE, self._build_profile_combo(draft.profile))
        self._rendering = False
        self._on_draft_changed()

    def _build_profile_combo(self, profile: str) -> QComboBox:
        combo = QComboBox()
        profiles = list(self.interrupt.profiles)
        combo.setEditable(not profiles)
        combo.addItems(profiles if profile in profiles or not profile else [*profiles, profile])
        combo.setCurrentText(profile)
        combo.currentTextChanged.connect(lambda _text: self._on_profile_changed(combo))
        return combo

    def _read_row(self, row: int) -> DraftRow:
        def text(column: int) -> str:
            item = self.table.item(row, column)
            return item.text() if item is not None else ""

        profile = self.profile_combo(row).currentText()
        criteria = self.draft.rows[row].success_criteria
        return DraftRow(text(ID), text(TITLE), text(OBJECTIVE), profile, parse_ids(text(DEPENDS)),
                        criteria)  # fmt: skip

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if not self._rendering:
            self.draft.put(item.row(), self._read_row(item.row()))
            self._on_draft_changed()

    def _on_profile_changed(self, combo: QComboBox) -> None:
        if self._rendering:
            return
        for row in range(self.table.rowCount()):
            if self.table.cellWidget(row, PROFILE) is combo:
                self.draft.put(row, self._read_row(row))
        self._on_draft_changed()

    def _move(self, offset: int) -> None:
        row = self.table.currentRow()
        if row < 0:
            return
        target = self.draft.move(row, offset)
        self._render()
        self.table.setCurrentCell(target, TITLE)

    def _drop(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            return
        self.draft.drop(row)
        self._render()
        if self.draft.rows:
            self.table.setCurrentCell(min(row, len(self.draft.rows) - 1), TITLE)

    def _on_draft_changed(self) -> None:
        problems = self.draft.problems()
        self.problems_label.setText("\n".join(problems))
        self.problems_label.setVisible(bool(problems))
        self.approve_button.setEnabled(not problems)
        self.approve_button.setText("Approve with changes" if self.draft.edited else "Approve")
        self._update_buttons()

    def _update_buttons(self) -> None:
        row, count = self.table.currentRow(), self.table.rowCount()
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < count - 1)
        self.drop_button.setEnabled(0 <= row < count)

    def _on_approve_clicked(self) -> None:
        try:
            value = self.draft.approve()
        except ValueError as exc:
            self.problems_label.setText(str(exc))
            self.problems_label.show()
            return
        paths = self.accept_paths()
        self._send(value.model_copy(update={"accept_paths": paths}) if paths else value)

    def accept_paths(self) -> tuple[str, ...]:
        """The paths the author named for the plan's grant (the review gate accepts the plan's
        strong agents' changes inside them)."""
        parts = (p.strip() for p in self.accept_paths_edit.text().split(","))
        return tuple(dict.fromkeys(p for p in parts if p))

    def _on_reject_clicked(self) -> None:
        self._send(self.draft.reject(self.reason_edit.text()))

    def _send(self, value: object) -> None:
        self.error_label.hide()
        self._set_waiting(True)
        self.answered.emit(self.interrupt.id, value)

    def _set_waiting(self, waiting: bool) -> None:
        self.table.setEnabled(not waiting)
        self.reject_button.setEnabled(not waiting)
        if not waiting:
            self._on_draft_changed()
            return
        for button in (self.approve_button, self.up_button, self.down_button, self.drop_button):
            button.setEnabled(False)
