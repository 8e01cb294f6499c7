"""`TranscriptView`: the selected thread's messages, streaming answer and compact tool calls."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QProgressBar,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.models.transcript import (
    MessageEntry,
    NoticeEntry,
    ToolCallEntry,
    Transcript,
    TranscriptEntry,
)
from desktop.views.text import build_code_view, pretty_json

_TOOL_STATE_TEXT = {
    "pending": "running…",
    "awaiting_approval": "waiting for approval",
    "succeeded": "done",
    "failed": "failed",
}


class MessageWidget(QFrame):
    """One message: who said it, and the text (Markdown for finished agent answers)."""

    def __init__(self, entry: MessageEntry) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        self.role_label = QLabel("<b>You</b>" if entry.role == "user" else "<b>Agent</b>")
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.role_label)
        layout.addWidget(self.text_label)
        self.show_entry(entry)

    def show_entry(self, entry: MessageEntry) -> None:
        rich = entry.role == "assistant" and not entry.streaming
        fmt = Qt.TextFormat.MarkdownText if rich else Qt.TextFormat.PlainText
        self.text_label.setTextFormat(fmt)
        self.text_label.setText(entry.text + (" ▍" if entry.streaming else ""))

    def plain_text(self) -> str:
        return self.text_label.text()


class ToolCallWidget(QFrame):
    """One tool call on one line (server · tool — state); expands to arguments and result."""

    def __init__(self, entry: ToolCallEntry) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        self.header_button = QToolButton()
        self.header_button.setCheckable(True)
        self.header_button.setAutoRaise(True)
        self.header_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header_button.setArrowType(Qt.ArrowType.RightArrow)
        self.header_button.toggled.connect(self._on_header_toggled)
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumHeight(8)
        self.progress_bar.setTextVisible(False)
        self.details_view = build_code_view()
        self.details_view.setMaximumHeight(180)
        self.details_view.hide()
        layout.addWidget(self.header_button)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.details_view)
        self.show_entry(entry)

    def show_entry(self, entry: ToolCallEntry) -> None:
        state = _TOOL_STATE_TEXT.get(entry.state, entry.state)
        if entry.state == "pending" and entry.progress_message:
            state = entry.progress_message
        name = f"{entry.server} · {entry.tool}" if entry.server else entry.tool
        self.header_button.setText(f"⚙ {name} — {state}")
        self._show_progress(entry)
        details = f"arguments:\n{pretty_json(entry.arguments)}"
        if entry.result is not None:
            details += f"\n\n{'error' if entry.state == 'failed' else 'result'}:\n{entry.result}"
        self.details_view.setPlainText(details)

    def _show_progress(self, entry: ToolCallEntry) -> None:
        running = entry.state == "pending" and entry.progress is not None
        self.progress_bar.setVisible(running)
        if not running or entry.progress is None:
            return
        if entry.total:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(1000 * min(entry.progress / entry.total, 1.0)))
        else:
            self.progress_bar.setRange(0, 0)

    def plain_text(self) -> str:
        return self.header_button.text()

    def _on_header_toggled(self, expanded: bool) -> None:
        self.details_view.setVisible(expanded)
        arrow = Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow
        self.header_button.setArrowType(arrow)


class NoticeWidget(QLabel):
    """A turn that failed or was cancelled."""

    def __init__(self, entry: NoticeEntry) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.show_entry(entry)

    def show_entry(self, entry: NoticeEntry) -> None:
        colour = "#cf222e" if entry.kind == "failed" else "#57606a"
        self.setStyleSheet(f"color: {colour}; font-style: italic;")
        self.setText(("⚠ " if entry.kind == "failed" else "■ ") + entry.text)

    def plain_text(self) -> str:
        return self.text()


EntryWidget = MessageWidget | ToolCallWidget | NoticeWidget


def build_entry_widget(entry: TranscriptEntry) -> EntryWidget:
    if isinstance(entry, MessageEntry):
        return MessageWidget(entry)
    if isinstance(entry, ToolCallEntry):
        return ToolCallWidget(entry)
    return NoticeWidget(entry)


def _show(widget: EntryWidget, entry: TranscriptEntry) -> None:
    match widget, entry:
        case MessageWidget(), MessageEntry():
            widget.show_entry(entry)
        case ToolCallWidget(), ToolCallEntry():
            widget.show_entry(entry)
        case NoticeWidget(), NoticeEntry():
            widget.show_entry(entry)
        case _:
            pass


class TranscriptView(QScrollArea):
    """One widget per `Transcript` entry, kept in step with its events; stays scrolled to the
    bottom while the author has not scrolled up."""

    def __init__(self, transcript: Transcript, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._transcript = transcript
        self.entry_widgets: list[EntryWidget] = []
        self.setWidgetResizable(True)
        container = QWidget()
        self._layout = QVBoxLayout(container)
        self._layout.addStretch(1)
        self.setWidget(container)
        self._pinned = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)
        transcript.reset.connect(self._on_transcript_reset)
        transcript.inserted.connect(self._on_transcript_inserted)
        transcript.updated.connect(self._on_transcript_updated)
        self._on_transcript_reset()

    def plain_text(self) -> str:
        """Everything shown, one entry per line (for tests and copying)."""
        return "\n".join(widget.plain_text() for widget in self.entry_widgets)

    def _on_transcript_reset(self) -> None:
        for widget in self.entry_widgets:
            self._layout.removeWidget(widget)
            widget.deleteLater()
        self.entry_widgets = []
        self._pinned = True
        for row in range(len(self._transcript)):
            self._on_transcript_inserted(row)

    def _on_transcript_inserted(self, row: int) -> None:
        widget = build_entry_widget(self._transcript.entry(row))
        self.entry_widgets.insert(row, widget)
        self._layout.insertWidget(row, widget)

    def _on_transcript_updated(self, row: int) -> None:
        if 0 <= row < len(self.entry_widgets):
            _show(self.entry_widgets[row], self._transcript.entry(row))

    def _on_scroll_value_changed(self, value: int) -> None:
        self._pinned = value >= self.verticalScrollBar().maximum() - 4

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._pinned:
            self.verticalScrollBar().setValue(maximum)
