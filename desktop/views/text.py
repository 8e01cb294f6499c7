"""Small shared pieces for showing code-like text: monospace views, JSON, diff colouring."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy, QWidget


def pretty_json(value: Any) -> str:
    """Indented JSON for showing tool arguments; falls back to repr for odd values."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def monospace_font() -> QFont:
    """The system's fixed font, marked fixed-pitch so fallbacks stay monospace too."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    return font


ERROR_COLOUR = "#cf222e"
WARNING_COLOUR = "#9a6700"


def build_status_label(colour: str = ERROR_COLOUR) -> QLabel:
    """A hidden, wrapping, plain-text label in `colour`, for an error or problem shown where it
    happened (shown when there is something to say). It never widens its window, even for one
    very long word: it takes the width it is given and wraps (or clips) within it."""
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setMinimumWidth(1)
    label.setStyleSheet(f"color: {colour}")
    label.hide()
    return label


def build_code_view(text: str = "", parent: QWidget | None = None) -> QPlainTextEdit:
    """A read-only, non-wrapping, monospace text view."""
    view = QPlainTextEdit(parent)
    view.setReadOnly(True)
    view.setFont(monospace_font())
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    view.setPlainText(text)
    return view


def _format(colour: str, *, bold: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class DiffHighlighter(QSyntaxHighlighter):
    """Colours a unified diff: additions green, removals red, hunk headers blue."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._added = _format("#1a7f37")
        self._removed = _format("#cf222e")
        self._hunk = _format("#0550ae")
        self._header = _format("#57606a", bold=True)

    def highlightBlock(self, text: str) -> None:
        fmt = self.format_for_line(text)
        if fmt is not None:
            self.setFormat(0, len(text), fmt)

    def format_for_line(self, line: str) -> QTextCharFormat | None:
        """The format for one diff line (None leaves context lines plain)."""
        if line.startswith(("+++", "---", "diff ", "index ")):
            return self._header
        if line.startswith("@@"):
            return self._hunk
        if line.startswith("+"):
            return self._added
        if line.startswith("-"):
            return self._removed
        return None
