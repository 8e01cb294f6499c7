"""`ThreadExporter`: a thread saved as a Markdown or JSON file, from the window.

The author picks the file in a save dialog (either format; the one asked for comes first), the
sidecar renders the thread (`thread/export`: its messages, tokens and cost), and the window
writes the reply's text to the file. A refusal or a failed write is reported, never dropped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QStandardPaths, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.controllers import PendingRequest
from desktop.controllers.memory import ExportFormat
from sidecar.protocol import ErrorObject, ThreadExportResult

NAME_FILTERS: dict[ExportFormat, str] = {
    "markdown": "Markdown (*.md)",
    "json": "JSON (*.json)",
}
SUFFIXES: dict[ExportFormat, str] = {"markdown": "md", "json": "json"}
_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')


class ThreadExports(Protocol):
    """What the exporter asks of the memory controller (`MemoryController` provides it)."""

    def export(self, thread_id: str, export_format: ExportFormat) -> PendingRequest: ...


def file_name_for(title: str, export_format: ExportFormat) -> str:
    """A file name from the thread's title, without characters file systems refuse."""
    stem = " ".join(_UNSAFE.sub(" ", title).split()).strip(" .") or "thread"
    return f"{stem[:80].rstrip()}.{SUFFIXES[export_format]}"


def format_of(name_filter: str) -> ExportFormat:
    """The format a save dialog's name filter stands for (Markdown unless it is JSON's)."""
    return "json" if name_filter == NAME_FILTERS["json"] else "markdown"


def format_for(path: str, name_filter: str) -> ExportFormat:
    """The format of the chosen file: its suffix says (`.json`, `.md`), else the filter."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in {".md", ".markdown"}:
        return "markdown"
    return format_of(name_filter)


class ThreadExporter(QObject):
    """Asks where to save a thread and writes the export there.

    The open save dialog is `file_dialog` (non-modal; its `fileSelected` saves); it opens in
    `folder`, the Documents folder until a thread is saved somewhere else. Signals:
    `exported(path)` once the file is written, `failed(str)` with a sentence for the author
    when the sidecar refused or the file could not be written.
    """

    exported = Signal(str)
    failed = Signal(str)

    def __init__(self, exports: ThreadExports, parent: QWidget) -> None:
        super().__init__(parent)
        self._exports = exports
        self._parent = parent
        self.file_dialog: QFileDialog | None = None
        self.folder = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation
        )

    def ask(self, thread_id: str, title: str, export_format: ExportFormat) -> QFileDialog:
        """Open the save dialog for the thread, `export_format` chosen first."""
        if self.file_dialog is not None:
            self.file_dialog.close()
        dialog = QFileDialog(self._parent, f"Export “{title}”", self.folder)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setNameFilters(list(NAME_FILTERS.values()))
        dialog.selectNameFilter(NAME_FILTERS[export_format])
        dialog.setDefaultSuffix(SUFFIXES[export_format])
        dialog.selectFile(file_name_for(title, export_format))
        dialog.filterSelected.connect(
            lambda name_filter: dialog.setDefaultSuffix(SUFFIXES[format_of(name_filter)])
        )
        dialog.fileSelected.connect(
            lambda path: self.save(thread_id, format_for(path, dialog.selectedNameFilter()), path)
        )
        dialog.finished.connect(lambda _result: self._forget_dialog(dialog))
        self.file_dialog = dialog
        dialog.open()
        return dialog

    def save(self, thread_id: str, export_format: ExportFormat, path: str) -> PendingRequest:
        """Ask the sidecar for the export and write its text to `path` (UTF-8, as sent)."""
        self.folder = str(Path(path).parent)

        def on_export(result: ThreadExportResult) -> None:
            try:
                Path(path).write_text(result.content, encoding="utf-8", newline="")
            except OSError as exc:
                self.failed.emit(f"Exporting the thread failed: {exc.strerror or exc} ({path})")
                return
            self.exported.emit(path)

        def on_error(error: ErrorObject) -> None:
            self.failed.emit(f"Exporting the thread failed: {error.message}")

        return self._exports.export(thread_id, export_format).then(on_export, on_error)

    def _forget_dialog(self, dialog: QFileDialog) -> None:
        if self.file_dialog is dialog:
            self.file_dialog = None
        dialog.deleteLater()
