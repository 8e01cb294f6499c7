"""`CommandCompleter`: the composer's `/` popup, a command and its description per row.

What to list is decided by `desktop.models.prompts.match_completions`; this class only shows the
choices under the text cursor and says which one the author picked. Qt's own filtering is off
(`UnfilteredPopupCompletion`): the model holds exactly the matches.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit, QTreeView

from desktop.models.prompts import CommandChoice

_MAX_POPUP_WIDTH = 640


class CommandCompleter(QCompleter):
    """A completer over a `QPlainTextEdit`. Emits `choice_activated(CommandChoice)`."""

    choice_activated = Signal(object)

    def __init__(self, editor: QPlainTextEdit, parent: QObject | None = None) -> None:
        super().__init__(parent or editor)
        self._editor = editor
        self._choices: list[CommandChoice] = []
        self._model = QStandardItemModel(0, 2, self)
        self.setModel(self._model)
        self.setWidget(editor)
        self.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        view = QTreeView()
        view.setHeaderHidden(True)
        view.setRootIsDecorated(False)
        view.setUniformRowHeights(True)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setPopup(view)
        self._view = view
        self.activated.connect(self._on_activated)

    @property
    def is_showing(self) -> bool:
        return self._view.isVisible()

    def listed_commands(self) -> list[str]:
        """The commands the popup lists, top to bottom."""
        return [choice.command for choice in self._choices]

    def show_choices(self, choices: Sequence[CommandChoice]) -> None:
        """List `choices` under the cursor with the first one current; hide when empty."""
        self._choices = list(choices)
        self._model.setRowCount(0)
        for choice in self._choices:
            command = QStandardItem(choice.command)
            description = QStandardItem(choice.description)
            for item in (command, description):
                item.setEditable(False)
                item.setToolTip(choice.description)
            self._model.appendRow([command, description])
        if not self._choices:
            self.hide_choices()
            return
        self._view.resizeColumnToContents(0)
        self._view.resizeColumnToContents(1)
        rect = self._editor.cursorRect()
        width = self._view.columnWidth(0) + self._view.columnWidth(1) + 24
        rect.setWidth(min(width, _MAX_POPUP_WIDTH))
        self.complete(rect)
        self._view.setCurrentIndex(self.completionModel().index(0, 0))

    def hide_choices(self) -> None:
        self._view.hide()

    def activate(self, command: str) -> None:
        """Pick the listed choice with this command, as if the author chose it in the popup."""
        self.hide_choices()
        self._on_activated(command)

    def _on_activated(self, command: str) -> None:
        for choice in self._choices:
            if choice.command == command:
                self.choice_activated.emit(choice)
                return
