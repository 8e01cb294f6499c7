"""Small status pieces of the main window: run status, sidecar banner, interrupts indicator."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QToolButton,
    QWidget,
)

from desktop.models.inbox import InterruptInbox
from desktop.models.threads import RunState, describe_run


class RunStatusWidget(QWidget):
    """The selected thread's status line, with Cancel (while running) and Retry (after a
    failed or cancelled turn). Emits `cancel_requested()` and `retry_requested()`."""

    cancel_requested = Signal()
    retry_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status_label = QLabel("Ready")
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.retry_button = QPushButton("Retry")
        self.cancel_button = QPushButton("Cancel")
        self.retry_button.clicked.connect(self.retry_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status_label, 1)
        layout.addWidget(self.retry_button)
        layout.addWidget(self.cancel_button)
        self.show_state(RunState(), 0, has_thread=False)

    def show_state(self, state: RunState, waiting: int, *, has_thread: bool = True) -> None:
        self.status_label.setText(describe_run(state, waiting) if has_thread else "No thread")
        self.cancel_button.setVisible(has_thread and state.is_running)
        self.retry_button.setVisible(has_thread and state.can_retry and not waiting)


class SidecarBannerWidget(QFrame):
    """Says when the sidecar died, was restarted, or is given up on (with a Restart button).

    The stderr tail of a death is in the tooltip. Emits `restart_requested()`.
    """

    restart_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.restart_button = QPushButton("Restart")
        self.dismiss_button = QPushButton("Dismiss")
        self.restart_button.clicked.connect(self.restart_requested)
        self.dismiss_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.addWidget(self.message_label, 1)
        layout.addWidget(self.restart_button)
        layout.addWidget(self.dismiss_button)
        self.state = "hidden"
        self.hide()

    def show_died(self, exit_code: int, stderr_tail: str) -> None:
        self._show("died", f"The sidecar stopped (exit code {exit_code}). Restarting…", "#fff8c5")
        lines = stderr_tail.strip().splitlines()[-20:]
        self.setToolTip("<pre>" + escape("\n".join(lines)) + "</pre>" if lines else "")

    def show_refused(self, reason: str) -> None:
        """The sidecar would not start; restarting cannot help, so say what to change."""
        self._show("refused", f"Atrium could not start its engine: {reason}", "#ffebe9")
        self.restart_button.show()

    def show_restarted(self) -> None:
        self._show("restarted", "The sidecar was restarted; threads are reloaded.", "#ddf4ff")

    def show_gave_up(self) -> None:
        text = "The sidecar keeps stopping, so Atrium stopped restarting it."
        self._show("gave_up", text, "#ffebe9")
        self.restart_button.show()

    def show_message(self, text: str) -> None:
        self._show("message", text, "#ffebe9")

    def _show(self, state: str, text: str, background: str) -> None:
        self.state = state
        self.message_label.setText(text)
        self.setStyleSheet(f"SidecarBannerWidget {{ background: {background}; }}")
        self.restart_button.hide()
        self.show()


class InterruptInboxWidget(QToolButton):
    """How many interrupts wait, across all threads; its menu opens one.

    Emits `interrupt_activated(thread_id, interrupt_id)`.
    """

    interrupt_activated = Signal(str, str)

    def __init__(self, inbox: InterruptInbox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._inbox = inbox
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))
        inbox.changed.connect(self._on_inbox_changed)
        self._on_inbox_changed()

    def _on_inbox_changed(self) -> None:
        count = len(self._inbox)
        self.setText(f"Waiting: {count}" if count else "Nothing waiting")
        self.setEnabled(bool(count))
        menu = self.menu()
        menu.clear()
        for thread_id, interrupt in self._inbox.pending():
            action = menu.addAction(interrupt.title or interrupt.kind)
            action.triggered.connect(
                lambda _checked=False, t=thread_id, i=interrupt.id: self.interrupt_activated.emit(
                    t, i
                )
            )
