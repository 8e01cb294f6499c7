"""`TraceViewerDialog`: a strong agent's trace file, read-only.

A strong agent's run leaves two files: the CLI's raw output, verbatim, and its events normalized
to JSON lines (the paths are in the task's result envelope, `traces`). They can be large, so the
file is read off the GUI thread, and only its first `MAX_TRACE_BYTES` are shown.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from desktop.views.text import build_code_view, build_status_label

MAX_TRACE_BYTES = 2_000_000
TRACE_TITLES = {"raw": "Raw trace", "normalized": "Normalized trace"}


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


class _TraceReadSignals(QObject):
    """Carries a read's outcome back to the GUI thread: (text, error, file size)."""

    finished = Signal(str, str, int)


class _TraceRead(QRunnable):
    """Reads the head of one file on a pool thread."""

    def __init__(self, path: Path, signals: _TraceReadSignals) -> None:
        super().__init__()
        self._path = path
        self._signals = signals  # kept alive here until the read is reported

    def run(self) -> None:
        try:
            size = self._path.stat().st_size
            with self._path.open("rb") as file:
                head = file.read(MAX_TRACE_BYTES)
        except OSError as exc:
            self._signals.finished.emit("", f"Cannot read {self._path}: {exc.strerror or exc}", 0)
            return
        self._signals.finished.emit(head.decode("utf-8", errors="replace"), "", size)


class TraceViewerDialog(QDialog):
    """One trace file (`kind`: raw or normalized) in a read-only monospace view.

    Signals: `trace_loaded()` once the file was read (or could not be: `error_label` says why).
    """

    trace_loaded = Signal()

    def __init__(self, kind: str, path: str, task_title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.kind = kind
        self.path = path
        self.setWindowTitle(f"{TRACE_TITLES.get(kind, kind)}: {task_title}")
        self.setModal(False)
        self.resize(860, 560)
        self.path_label = QLabel(path)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.size_label = QLabel("Reading…")
        self.text_view = build_code_view()
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.path_label)
        layout.addWidget(self.size_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.text_view, 1)
        layout.addWidget(buttons)
        self._signals = _TraceReadSignals()
        self._signals.finished.connect(self._on_read_finished)

    def load(self) -> None:
        """Read the file (again) off the GUI thread."""
        self.size_label.setText("Reading…")
        QThreadPool.globalInstance().start(_TraceRead(Path(self.path), self._signals))

    def _on_read_finished(self, text: str, error: str, size: int) -> None:
        if error:
            self.size_label.setText("")
            self.error_label.setText(error)
            self.error_label.show()
        else:
            self.error_label.hide()
            self.size_label.setText(
                f"The first {_megabytes(MAX_TRACE_BYTES)} of {_megabytes(size)}"
                if size > MAX_TRACE_BYTES
                else f"{size:,} bytes"
            )
            self.text_view.setPlainText(text or "(empty)")
        self.trace_loaded.emit()
