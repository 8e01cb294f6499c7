"""`TaskDialogs`: the run tree's windows onto what one task did.

From a task in the run tree: "Open transcript" (its sub-thread, read-only), "Show activity" (its
stored events), "Show messages" (its envelopes; a strong agent's trace files open from there).
Each is a non-modal dialog, one of each kind per task: asked for again, the open one is raised
and loaded again. A reply that comes after its dialog closed is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QWidget

from desktop.controllers.team import TeamController
from desktop.models.run_tree import RunTree
from desktop.models.transcript import Transcript
from desktop.views.sub_thread_dialog import SubThreadDialog
from desktop.views.task_activity_dialog import TaskActivityDialog
from desktop.views.task_messages_dialog import TaskMessagesDialog
from desktop.views.trace_viewer import TraceViewerDialog
from sidecar.protocol import ErrorObject

DialogKey = tuple[str, ...]
T = TypeVar("T")


class TaskDialogs(QObject):
    """Opens and keeps the task dialogs of the run tree.

    Signals: `dialog_opened(QDialog)` each time one is shown (new or raised)."""

    dialog_opened = Signal(object)

    def __init__(self, team: TeamController, tree: RunTree, parent: QWidget) -> None:
        super().__init__(parent)
        self._team = team
        self._tree = tree
        self._parent = parent
        self._open: dict[DialogKey, QDialog] = {}

    @property
    def dialogs(self) -> dict[DialogKey, QDialog]:
        """The open dialogs by (kind, …): kind is transcript, activity, messages or trace."""
        return dict(self._open)

    def _title(self, plan_id: str, task_id: str) -> str:
        node = self._tree.task(plan_id, task_id)
        return node.info.title if node is not None else task_id

    def open_transcript(self, plan_id: str, task_id: str) -> SubThreadDialog | None:
        """The task's sub-thread, read-only (None: the task has none yet)."""
        node = self._tree.task(plan_id, task_id)
        sub_thread_id = node.info.sub_thread_id if node is not None else None
        if sub_thread_id is None:
            return None
        key = ("transcript", sub_thread_id)
        dialog = self._open.get(key)
        if not isinstance(dialog, SubThreadDialog):
            reader = self._team.sub_thread(sub_thread_id, Transcript())
            dialog = SubThreadDialog(reader, self._title(plan_id, task_id), self._parent)
        self._show(key, dialog)
        dialog.load()
        return dialog

    def show_activity(self, plan_id: str, task_id: str) -> TaskActivityDialog:
        """What the task's agent did, from its stored events."""
        key = ("activity", plan_id, task_id)
        dialog = self._open.get(key)
        if not isinstance(dialog, TaskActivityDialog):
            dialog = TaskActivityDialog(self._title(plan_id, task_id), self._parent)
            made = dialog
            dialog.refresh_requested.connect(lambda: self._load_activity(made, plan_id, task_id))
        self._show(key, dialog)
        self._load_activity(dialog, plan_id, task_id)
        return dialog

    def show_messages(self, plan_id: str, task_id: str) -> TaskMessagesDialog:
        """What the task's agents sent each other; its trace files open from there."""
        key = ("messages", plan_id, task_id)
        dialog = self._open.get(key)
        if not isinstance(dialog, TaskMessagesDialog):
            title = self._title(plan_id, task_id)
            dialog = TaskMessagesDialog(title, self._parent)
            made = dialog
            dialog.refresh_requested.connect(lambda: self._load_messages(made, plan_id, task_id))
            dialog.trace_requested.connect(lambda kind, path: self.open_trace(kind, path, title))
        self._show(key, dialog)
        self._load_messages(dialog, plan_id, task_id)
        return dialog

    def open_trace(self, kind: str, path: str, task_title: str) -> TraceViewerDialog:
        """A trace file in a read-only viewer."""
        key = ("trace", path)
        dialog = self._open.get(key)
        if not isinstance(dialog, TraceViewerDialog):
            dialog = TraceViewerDialog(kind, path, task_title, self._parent)
        self._show(key, dialog)
        dialog.load()
        return dialog

    def close_all(self) -> None:
        for dialog in list(self._open.values()):
            dialog.close()

    def _load_activity(self, dialog: TaskActivityDialog, plan_id: str, task_id: str) -> None:
        pending = self._team.task_events(plan_id, task_id)
        if pending is None:
            dialog.show_error("The task's plan is no longer known: refresh the run tree")
            return
        pending.then(
            self._while_open(dialog, dialog.show_events),
            self._while_open(dialog, _failed(dialog.show_error, "Loading the activity")),
        )

    def _load_messages(self, dialog: TaskMessagesDialog, plan_id: str, task_id: str) -> None:
        pending = self._team.task_envelopes(plan_id, task_id)
        if pending is None:
            dialog.show_error("The task's plan is no longer known: refresh the run tree")
            return
        pending.then(
            self._while_open(dialog, dialog.show_envelopes),
            self._while_open(dialog, _failed(dialog.show_error, "Loading the messages")),
        )

    def _while_open(self, dialog: QDialog, show: Callable[[T], None]) -> Callable[[T], None]:
        """`show`, unless the dialog was closed meanwhile (then the reply is dropped)."""

        def shown(value: T) -> None:
            if dialog in self._open.values():
                show(value)

        return shown

    def _show(self, key: DialogKey, dialog: QDialog) -> None:
        if self._open.get(key) is not dialog:
            self._open[key] = dialog
            dialog.finished.connect(lambda _result: self._forget(key, dialog))
        dialog.show()
        dialog.raise_()
        self.dialog_opened.emit(dialog)

    def _forget(self, key: DialogKey, dialog: QDialog) -> None:
        if self._open.get(key) is dialog:
            del self._open[key]
        dialog.deleteLater()


def _failed(show_error: Callable[[str], None], what: str) -> Callable[[ErrorObject], None]:
    return lambda error: show_error(f"{what} failed: {error.message}")
