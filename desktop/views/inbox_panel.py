"""`InboxPanel`: every interrupt waiting in the selected thread, its subagents' included.

Several can wait at once (a plan approval, a subagent's tool approval, another's question…);
each is answered in any order by opening its dialog. The newest is listed first. The panel
only lists and asks to open; the main window owns the dialogs.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.models.run_tree import RunTree
from desktop.models.session import SessionState
from sidecar.protocol import InterruptInfo

KIND_LABELS = {
    "approval": "Approval",
    "question": "Question",
    "form": "Form",
    "sampling": "Model use",
    "plan_approval": "Plan",
    "escalation": "Escalation",
    "changeset": "Changes",
}
ID_ROLE = Qt.ItemDataRole.UserRole


def describe_origin(interrupt: InterruptInfo, tree: RunTree | None = None) -> str:
    """Who asks: the main agent, or the subagent task (by title when the tree knows it)."""
    if interrupt.task_id is None:
        return "the main agent"
    node = tree.find_task(interrupt.task_id) if tree is not None else None
    title = node.info.title if node is not None else ""
    return f"task “{title}” ({interrupt.task_id})" if title else f"task {interrupt.task_id}"


class InboxPanel(QWidget):
    """Lists the selected thread's pending interrupts, newest first.

    Emits `interrupt_activated(thread_id, interrupt_id)` on double click or Open.
    """

    interrupt_activated = Signal(str, str)

    def __init__(
        self, state: SessionState, tree: RunTree | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.tree = tree
        self.count_label = QLabel()
        self.list = QListWidget()
        self.list.itemDoubleClicked.connect(self._activate)
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.open_button = QPushButton("Open")
        self.open_button.clicked.connect(lambda: self._activate(self.list.currentItem()))
        header = QHBoxLayout()
        header.addWidget(self.count_label, 1)
        header.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.list, 1)
        state.inbox.changed.connect(self.refresh)
        state.selection_changed.connect(self._on_selection_changed)
        if tree is not None:
            tree.reset.connect(self.refresh)
            tree.plan_changed.connect(lambda _plan_id: self.refresh())
        self.refresh()

    def interrupt_ids(self) -> list[str]:
        """The listed interrupt ids, top (newest) first."""
        return [self.list.item(row).data(ID_ROLE) for row in range(self.list.count())]

    def refresh(self) -> None:
        thread_id = self.state.selected_thread_id
        pending = self.state.inbox.pending(thread_id) if thread_id is not None else []
        current = self.list.currentItem()
        keep = current.data(ID_ROLE) if current is not None else None
        self.list.clear()
        for _, interrupt in reversed(pending):
            kind = KIND_LABELS.get(interrupt.kind, interrupt.kind)
            title = interrupt.title or kind
            origin = describe_origin(interrupt, self.tree)
            item = QListWidgetItem(f"{kind}: {title}\nfrom {origin}")
            item.setData(ID_ROLE, interrupt.id)
            item.setToolTip(interrupt.body or title)
            self.list.addItem(item)
            if interrupt.id == keep:
                self.list.setCurrentItem(item)
        count = len(pending)
        self.count_label.setText(f"{count} waiting" if count else "Nothing waiting")
        self._update_buttons()

    def _on_selection_changed(self, _thread_id: str | None) -> None:
        self.refresh()

    def _activate(self, item: QListWidgetItem | None) -> None:
        thread_id = self.state.selected_thread_id
        if item is not None and thread_id is not None:
            self.interrupt_activated.emit(thread_id, item.data(ID_ROLE))

    def _update_buttons(self) -> None:
        self.open_button.setEnabled(self.list.currentItem() is not None)
