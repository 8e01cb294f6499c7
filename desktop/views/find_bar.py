"""`FindBarWidget`: search the whole thread (the sidecar's full-text index) and step through its
matches.

Typing searches after a short pause; Enter goes to the next match (up the thread), Shift+Enter
to the previous one, Esc closes the bar. It counts matches, not messages ("3 of 120"). The bar
knows nothing of the transcript: it emits `search_requested(query)`, `results_shown(FindResults)`
and `match_activated(FindMatch)`, and shows what it is given.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from desktop.models.find import FindResults
from sidecar.protocol import SearchHit

SEARCH_DELAY_MS = 200


class FindBarWidget(QWidget):
    """Signals: `search_requested(str)`; `results_shown(FindResults)`, the matches of the last
    search (none for an empty query); `match_activated(FindMatch)`, the match to show now;
    `closed()`."""

    search_requested = Signal(str)
    results_shown = Signal(object)
    match_activated = Signal(object)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query_edit = QLineEdit()
        self.query_edit.setPlaceholderText("Find in this thread")
        self.query_edit.setClearButtonEnabled(True)
        self.status_label = QLabel()
        self.next_button = QToolButton()
        self.next_button.setArrowType(Qt.ArrowType.UpArrow)
        self.next_button.setToolTip("Next match, up the thread (Enter)")
        self.previous_button = QToolButton()
        self.previous_button.setArrowType(Qt.ArrowType.DownArrow)
        self.previous_button.setToolTip("Previous match, down the thread (Shift+Enter)")
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        for widget in (self.query_edit, self.status_label):
            layout.addWidget(widget)
        for button in (self.next_button, self.previous_button, self.close_button):
            layout.addWidget(button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DELAY_MS)
        self._timer.timeout.connect(self.search_now)
        self.query_edit.textEdited.connect(self._on_query_edit_text_edited)
        self.query_edit.installEventFilter(self)
        self.previous_button.clicked.connect(self.previous_hit)
        self.next_button.clicked.connect(self.next_hit)
        self.close_button.clicked.connect(self.close_bar)
        self.results = FindResults("", ())
        self.current = -1
        self._searched = ""
        self.hide()

    def open_bar(self) -> None:
        """Show the bar with its text selected, ready to type."""
        self.show()
        self.query_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query_edit.selectAll()

    def close_bar(self) -> None:
        self._timer.stop()
        self.hide()
        self.closed.emit()

    def search_now(self) -> None:
        self._timer.stop()
        query = self.query_edit.text().strip()
        self._searched = query
        if not query:
            self.show_hits(query, ())
            return
        self.status_label.setText("Searching…")
        self.search_requested.emit(query)

    def search_or_next(self) -> None:
        if self.query_edit.text().strip() != self._searched or self._timer.isActive():
            self.search_now()
        else:
            self.next_hit()

    def show_hits(self, query: str, hits: tuple[SearchHit, ...], more: bool = False) -> None:
        """The sidecar's answer for `query` (ignored if the author typed on meanwhile)."""
        if query != self._searched:
            return
        self.results = FindResults(query, hits, more)
        self.current = -1
        self.results_shown.emit(self.results)
        if not query:
            self.status_label.setText("")
        elif not self.results:
            self.status_label.setText("No matches")
        else:
            self._activate(0)

    def show_error(self, message: str) -> None:
        self.status_label.setText(message)

    def next_hit(self) -> None:
        if self.results:
            self._activate((self.current + 1) % len(self.results))

    def previous_hit(self) -> None:
        if self.results:
            self._activate((self.current - 1) % len(self.results))

    def _activate(self, position: int) -> None:
        self.current = position
        self.status_label.setText(f"{position + 1} of {self.results.count_text()}")
        self.match_activated.emit(self.results.at(position))

    def _on_query_edit_text_edited(self, _text: str) -> None:
        self._timer.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc closes the bar (taken before the window's Esc shortcut), Enter steps."""
        if watched is not self.query_edit or not isinstance(event, QKeyEvent):
            return super().eventFilter(watched, event)
        key = event.key()
        keys = (Qt.Key.Key_Escape, Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if event.type() == QEvent.Type.ShortcutOverride and key in keys:
            event.accept()
            return True
        if event.type() != QEvent.Type.KeyPress or key not in keys:
            return super().eventFilter(watched, event)
        if key == Qt.Key.Key_Escape:
            self.close_bar()
        elif event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.previous_hit()
        else:
            self.search_or_next()
        return True
