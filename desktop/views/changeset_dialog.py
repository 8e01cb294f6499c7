"""`ChangesetDialog`: a strong agent's changes, accepted or rejected file by file.

The list shows each file with a badge (added, changed, deleted, binary, conflict) and a box to
accept it; the diff of the current file shows beside it. Nothing is ticked at first: only what
the author ticks reaches the workspace. A conflict (the author changed the file meanwhile)
cannot be ticked. "Accept selected" sends the ticked paths, "Reject all" sends none. Like the
plan dialog it stays open until the sidecar takes the answer, and shows a refusal in place.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.views.text import build_status_label
from sidecar.protocol import ChangesetFileInfo, ChangesetInterrupt, ChangesetValue, ErrorObject

COLUMNS = ("File", "Change")
ISOLATIONS = {"worktree": "a git worktree", "snapshot": "a snapshot copy"}


def badge(change: ChangesetFileInfo) -> str:
    """The words shown beside a file: its status, then what makes it special."""
    words = [change.status]
    if change.binary:
        words.append("binary")
    if change.conflict:
        words.append("conflict")
    return ", ".join(words)


class ChangesetDialog(QDialog):
    """Shows one `changeset` interrupt; emits `answered(interrupt_id, ChangesetValue)`.
    Closing the dialog leaves the changeset waiting in the inbox."""

    answered = Signal(str, object)

    def __init__(
        self, interrupt: ChangesetInterrupt, thread_title: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.interrupt = interrupt
        self.thread_id: str | None = None
        self.setWindowTitle(interrupt.title or "Review the changes")
        self.setModal(False)
        layout = QVBoxLayout(self)
        if thread_title:
            layout.addWidget(QLabel(f"From “{escape(thread_title)}”"))
        self.intro_label = _plain(self._intro())
        layout.addWidget(self.intro_label)
        if interrupt.accepted_by_grant:
            granted = ", ".join(interrupt.accepted_by_grant)
            self.granted_label = _plain(f"Already applied under the plan's grant: {granted}")
            layout.addWidget(self.granted_label)
        layout.addWidget(self._build_body(), 1)
        self._build_buttons(layout)
        self.resize(900, 560)
        if interrupt.files:
            self.show_file(interrupt.files[0].path)

    def _intro(self) -> str:
        interrupt = self.interrupt
        where = ISOLATIONS.get(interrupt.isolation, interrupt.isolation)
        text = (
            f"{interrupt.agent} worked in {where} of {interrupt.workspace}. Tick the files to "
            "bring into the workspace; the rest are discarded."
        )
        if interrupt.summary:
            text += f"\n\n{interrupt.agent}: {interrupt.summary}"
        return text

    def _build_body(self) -> QSplitter:
        self.file_list = QTreeWidget()
        self.file_list.setHeaderLabels(list(COLUMNS))
        self.file_list.setRootIsDecorated(False)
        self.file_list.setColumnWidth(0, 260)
        for change in self.interrupt.files:
            item = QTreeWidgetItem([change.path, badge(change)])
            flags = item.flags() | Qt.ItemFlag.ItemIsUserCheckable
            if change.conflict:
                flags &= ~Qt.ItemFlag.ItemIsUserCheckable
                item.setToolTip(0, "Changed in the workspace meanwhile: it cannot be applied.")
            item.setFlags(flags)
            if not change.conflict:
                item.setCheckState(0, Qt.CheckState.Unchecked)
            self.file_list.addTopLevelItem(item)
        self.file_list.currentItemChanged.connect(self._on_current_changed)
        self.file_list.itemChanged.connect(lambda _item, _column: self._update_buttons())
        self.diff_view = QPlainTextEdit()
        self.diff_view.setReadOnly(True)
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_view.setFont(QFont("monospace"))
        splitter = QSplitter()
        splitter.addWidget(self.file_list)
        splitter.addWidget(self.diff_view)
        splitter.setStretchFactor(1, 2)
        return splitter

    def _build_buttons(self, layout: QVBoxLayout) -> None:
        self.accept_button = QPushButton("Accept selected")
        self.reject_button = QPushButton("Reject all")
        self.accept_button.clicked.connect(lambda: self._decide(self.checked_paths()))
        self.reject_button.clicked.connect(lambda: self._decide(()))
        self.error_label = build_status_label()
        row = QHBoxLayout()
        row.addWidget(self.reject_button)
        row.addStretch(1)
        row.addWidget(self.accept_button)
        layout.addWidget(self.error_label)
        layout.addLayout(row)
        self._update_buttons()

    def checked_paths(self) -> tuple[str, ...]:
        """The ticked files, in the list's order."""
        paths: list[str] = []
        for row, change in enumerate(self.interrupt.files):
            item = self.file_list.topLevelItem(row)
            if item is not None and item.checkState(0) == Qt.CheckState.Checked:
                paths.append(change.path)
        return tuple(paths)

    def set_checked(self, path: str, checked: bool = True) -> None:
        """Tick (or untick) a file by path; conflicts stay unticked."""
        for row, change in enumerate(self.interrupt.files):
            item = self.file_list.topLevelItem(row)
            if change.path == path and item is not None and not change.conflict:
                state = Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
                item.setCheckState(0, state)

    def show_file(self, path: str) -> None:
        """Make `path` the current file (its diff shows)."""
        for row, change in enumerate(self.interrupt.files):
            item = self.file_list.topLevelItem(row)
            if change.path == path and item is not None:
                self.file_list.setCurrentItem(item)

    def show_resume_error(self, error: ErrorObject) -> None:
        """The sidecar refused the answer: say why and let the author choose again."""
        self.error_label.setText(f"Not accepted: {error.message}")
        self.error_label.show()
        self._set_waiting(False)

    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        if current is None:
            self.diff_view.clear()
            return
        change = self.interrupt.files[self.file_list.indexOfTopLevelItem(current)]
        self.diff_view.setPlainText(_diff_text(change))

    def _decide(self, paths: tuple[str, ...]) -> None:
        self.error_label.hide()
        self._set_waiting(True)
        self.answered.emit(self.interrupt.id, ChangesetValue(accepted=paths))

    def _set_waiting(self, waiting: bool) -> None:
        self.reject_button.setEnabled(not waiting)
        self.file_list.setEnabled(not waiting)
        if waiting:
            self.accept_button.setEnabled(False)
        else:
            self._update_buttons()

    def _update_buttons(self) -> None:
        self.accept_button.setEnabled(bool(self.checked_paths()))


def _diff_text(change: ChangesetFileInfo) -> str:
    lines: list[str] = []
    if change.conflict:
        lines.append(
            "CONFLICT: this file changed in your workspace meanwhile; it cannot be applied."
        )
    if change.binary:
        lines.append(f"Binary file ({change.size} bytes): no diff to show.")
    if change.note:
        lines.append(f"Note: {change.note}")
    if change.diff:
        lines.append(change.diff)
    elif not lines:
        lines.append(f"{change.status}: no text difference (the file's mode changed).")
    return "\n".join(lines)


def _plain(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label
