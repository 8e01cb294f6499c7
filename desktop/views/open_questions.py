"""`OpenQuestions`: the dialogs of the author's pending questions, at most one per interrupt.

The inbox (`SessionState.inbox`) holds every question the agent and its subagents wait on. This
decides which of them are on screen: when the selected thread gets a question (or is selected
with questions waiting) the newest one opens, unless a dialog is already open, and after a burst
only the newest; asking for a question whose dialog is open raises it instead of opening it
twice. An answer goes to the controller; a dialog closes once the inbox drops its question
(answered here, in another window of the inbox, or by the sidecar). A dialog that opens while
the author is typing does not take the keys from under their fingers.

Signals: `opened(dialog)` for every dialog shown; `granted(text)` once an answer that leaves a
standing approval ("Allow in every thread", "Allow for this thread") was taken, saying where it
holds.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QDialog, QPlainTextEdit, QWidget

from desktop.controllers import PendingRequest
from desktop.controllers.plans import CoordController
from desktop.controllers.session import SessionController
from desktop.models.servers import grant_notice
from desktop.models.session import SessionState
from desktop.views.interrupt_dialogs import (
    InterruptDialog,
    ReplyAwareDialog,
    build_interrupt_dialog,
)
from desktop.views.status_widgets import keep_within_width
from sidecar.protocol import InterruptInfo, WireModel


class OpenQuestions(QObject):
    opened = Signal(object)
    granted = Signal(str)

    def __init__(
        self,
        state: SessionState,
        controller: SessionController,
        parent: QWidget,
        editor: QPlainTextEdit,
        coord: CoordController | None,
    ) -> None:
        super().__init__(parent)
        self._state = state
        self._controller = controller
        self._parent = parent
        self._editor = editor
        self._coord = coord
        self.dialogs: dict[str, InterruptDialog] = {}
        self._newest_soon = QTimer(self)
        self._newest_soon.setSingleShot(True)
        self._newest_soon.setInterval(0)  # after a burst of interrupts, the newest
        self._newest_soon.timeout.connect(self.open_newest)
        state.inbox.added.connect(self._on_interrupt_added)
        state.inbox.removed.connect(self._on_interrupt_removed)

    def open(self, thread_id: str, interrupt_id: str) -> InterruptDialog | None:
        """Open (or raise) the dialog for a pending interrupt."""
        found = self._state.inbox.get(interrupt_id)
        if found is None:
            return None
        return self._open(thread_id, found[1])

    def open_newest(self) -> None:
        """Open the selected thread's newest pending interrupt, unless a dialog is open."""
        thread_id = self._state.selected_thread_id
        if thread_id is None or any(d.isVisible() for d in self.dialogs.values()):
            return
        pending = self._state.inbox.pending(thread_id)
        if pending:
            self._open(thread_id, pending[-1][1])

    def close_all(self) -> None:
        for dialog in list(self.dialogs.values()):
            dialog.close()

    def _open(self, thread_id: str, interrupt: InterruptInfo) -> InterruptDialog:
        existing = self.dialogs.get(interrupt.id)
        if existing is not None:
            existing.raise_()
            existing.activateWindow()
            return existing
        thread = self._state.threads.get(thread_id)
        title = thread.title if thread else ""
        task_title = self._task_title(thread_id, interrupt)
        dialog = build_interrupt_dialog(interrupt, title, self._parent, task_title)
        keep_within_width(dialog)
        dialog.thread_id = thread_id
        dialog.answered.connect(
            lambda interrupt_id, value: self._on_answered(dialog, thread_id, interrupt_id, value)
        )
        dialog.finished.connect(lambda _result: self._forget(interrupt.id, dialog))
        self.dialogs[interrupt.id] = dialog
        if self._editor.hasFocus() and self._editor.toPlainText().strip():
            # The author is typing (the composer is enabled): the dialog does not take the keys
            # from under their fingers (honoured by xcb, Windows and macOS; not by offscreen).
            dialog.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        dialog.show()
        self.opened.emit(dialog)
        return dialog

    def _on_answered(
        self, dialog: InterruptDialog, thread_id: str, interrupt_id: str, value: WireModel
    ) -> PendingRequest:
        found = self._state.inbox.get(interrupt_id)
        notice = grant_notice(found[1], value) if found is not None else None
        pending = self._controller.answer_interrupt(thread_id, interrupt_id, value)
        if notice is not None:
            pending.then(lambda _ref: self.granted.emit(notice))
        if isinstance(dialog, ReplyAwareDialog):
            pending.then(None, dialog.show_resume_error)  # it closes once the inbox drops it
        return pending

    def _task_title(self, thread_id: str, interrupt: InterruptInfo) -> str:
        if self._coord is None or interrupt.task_id is None:
            return ""
        node = self._coord.tree.find_task(interrupt.task_id, thread_id)
        return node.info.title if node is not None else ""

    def _forget(self, interrupt_id: str, dialog: QDialog) -> None:
        if self.dialogs.get(interrupt_id) is dialog:
            del self.dialogs[interrupt_id]
        dialog.deleteLater()

    def _on_interrupt_added(self, thread_id: str, _interrupt: InterruptInfo) -> None:
        if thread_id == self._state.selected_thread_id:
            self._newest_soon.start()

    def _on_interrupt_removed(self, _thread_id: str, interrupt_id: str) -> None:
        dialog = self.dialogs.pop(interrupt_id, None)
        if dialog is not None:
            dialog.close()
            dialog.deleteLater()
