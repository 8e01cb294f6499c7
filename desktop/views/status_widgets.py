"""Small status pieces of the main window: run status (with an error's details), the sidecar
banner, the interrupts indicator and the empty window's first steps.

Text that can be long (errors) wraps and is cut to one short line; the full text is behind
"Details". None of these widgets ever asks for more width than the window has.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.models.inbox import InterruptInbox
from desktop.models.threads import RunState, describe_run

STATUS_LIMIT = 160  # characters of the status line; the rest is behind "Details"


def shorten(text: str, limit: int = STATUS_LIMIT) -> str:
    """The first line of `text`, cut to `limit` characters with an ellipsis."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > limit:
        return first[: limit - 1].rstrip() + "…"
    return first + (" …" if len(lines) > 1 else "")


def wrapping_label(text: str = "") -> QLabel:
    """A plain-text label that wraps and never widens its window (even for one long word)."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return let_narrow(label)


def let_narrow(label: QLabel) -> QLabel:
    """Make `label` wrap within the width it is given instead of asking for its text's width."""
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setMinimumWidth(1)
    return label


LONG_LABEL = 80  # characters from which a label's text may not set its window's width


def keep_within_width(root: QWidget, longer_than: int = LONG_LABEL) -> None:
    """Let every label under `root` whose text is long wrap within the window's width (a
    question, a body, a path of thousands of characters never makes a window wider)."""
    for label in root.findChildren(QLabel):
        if len(label.text()) > longer_than:
            let_narrow(label)


class RunStatusWidget(QWidget):
    """The selected thread's status line, with Cancel (while running) and Retry (after a
    failed or cancelled turn). A failure shows one short line; "Details" opens the whole
    message and the underlying error text. Emits `cancel_requested()` and `retry_requested()`.
    """

    cancel_requested = Signal()
    retry_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status_label = wrapping_label("Ready")
        self.details_button = QToolButton()
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.toggled.connect(self._on_details_toggled)
        self.details_view = QPlainTextEdit()
        self.details_view.setReadOnly(True)
        self.details_view.setMaximumHeight(140)
        self.details_view.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.details_view.hide()
        self.retry_button = QPushButton("Retry")
        self.cancel_button = QPushButton("Cancel")
        self.retry_button.clicked.connect(self.retry_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.status_label, 1)
        row.addWidget(self.details_button)
        row.addWidget(self.retry_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.details_view)
        self.show_state(RunState(), 0, has_thread=False)

    def show_state(self, state: RunState, waiting: int, *, has_thread: bool = True) -> None:
        text = describe_run(state, waiting) if has_thread else "No thread"
        self.status_label.setText(shorten(text))
        self.status_label.setToolTip(text if len(text) <= 2000 else "")
        details = _details_text(state) if has_thread and state.status == "failed" else ""
        if details != self.details_view.toPlainText():
            self.details_view.setPlainText(details)
        self.details_button.setVisible(bool(details))
        if not details:
            self.details_button.setChecked(False)
        self.cancel_button.setVisible(has_thread and state.is_running)
        self.retry_button.setVisible(has_thread and state.can_retry and not waiting)

    def _on_details_toggled(self, shown: bool) -> None:
        self.details_view.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.details_button.setArrowType(arrow)


def _details_text(state: RunState) -> str:
    """The whole error and its underlying text ("" when the short line says it all)."""
    message = state.error or ""
    details = state.error_details or ""
    if not details and shorten(message) == message.strip():
        return ""
    return "\n\n".join(part for part in (message.strip(), details.strip()) if part)


class EmptyStateWidget(QLabel):
    """What to do first, where the transcript would be: no thread yet, or no model."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.setMargin(24)
        self.show_guide(has_thread=False, has_model=True)

    def show_guide(self, *, has_thread: bool, has_model: bool | None) -> None:
        """`has_model` None: not known yet (nothing said about it)."""
        steps: list[str] = []
        if has_model is False:
            steps.append(
                "<b>No model is configured.</b> Open <b>File → Settings</b> (Ctrl+,) and enter a "
                "model, or start Atrium with <code>ATRIUM_MODEL</code> set. Direct commands "
                "such as <code>/tools</code> work without one."
            )
        if has_thread:
            steps.append("This thread is empty: type a message below and press Enter.")
        else:
            steps.append(
                "<b>No thread yet.</b> Type a message below and press Enter to start one, or "
                "choose <b>File → New thread</b> (Ctrl+N)."
            )
        self.setText("<br><br>".join(steps))
        self.has_model = has_model


class SidecarBannerWidget(QFrame):
    """Says when the sidecar died, was restarted, or is given up on (with a Restart button).

    The stderr tail of a death is in the tooltip. Emits `restart_requested()`.
    """

    restart_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.message_label = wrapping_label()
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
        self.message_label.setText(shorten(text, 400))
        self.message_label.setToolTip(text if len(text) > 400 else "")
        self.setStyleSheet(
            f"SidecarBannerWidget {{ background: {background}; }} QLabel {{ color: #1f2328; }}"
        )
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
