"""`MemoryPanelDialog`: memories per tier with search (edit, pin, move, forget, add), who wrote
each and from what, a review of what the agent saved (keep or forget), what the agent saw on
each turn with the memories it saved or forgot, and the identity files."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.memory import MemoryController
from desktop.models.memory import (
    describe_change,
    describe_context,
    describe_provenance,
    describe_usage,
)
from desktop.views.text import build_status_label
from sidecar.protocol import ErrorObject, MemoryInfo, MemoryTier

TIERS: tuple[MemoryTier, ...] = ("thread", "channel", "workspace", "account")
ALL = "all tiers"
IDENTITY_PATHS = (".atrium/AGENT.md", "AGENTS.md", ".atrium/USER.md", ".atrium/SOUL.md")


class MemoryPanelDialog(QDialog):
    """Non-modal. `thread_id()` names the thread whose scope the memories are seen from."""

    def __init__(
        self,
        controller: MemoryController,
        thread_id: Callable[[], str | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.state = controller.state
        self.thread_id = thread_id
        self.setWindowTitle("Memory")
        self.setModal(False)
        self.resize(760, 520)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_memories(), "Memories")
        self.tabs.addTab(self._build_seen(), "What the agent saw")
        self.tabs.addTab(self._build_identity(), "Identity files")
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.state.memories_changed.connect(self._on_memories_changed)
        self.state.reports_changed.connect(self._on_reports_changed)
        self.state.identity_changed.connect(self._on_identity_changed)

    # -- memories -------------------------------------------------------------------------------

    def _build_memories(self) -> QWidget:
        page = QWidget()
        self.tier_box = QComboBox()
        self.tier_box.addItems([ALL, *TIERS])
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search memories")
        self.search_edit.returnPressed.connect(self.refresh)
        self.tier_box.currentIndexChanged.connect(lambda _i: self.refresh())
        self.review_box = QCheckBox("Saved by the agent, not reviewed")
        self.review_box.setToolTip(
            "What the agent saved or changed that you have not kept, edited or approved yet"
        )
        self.review_box.toggled.connect(lambda _on: self.refresh())
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Tier", "Memory", "Written by", "Pinned"])
        self.tree.setRootIsDecorated(False)
        self.tree.setColumnWidth(1, 440)
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        self.add_button = QPushButton("Add…")
        self.edit_button = QPushButton("Edit…")
        self.pin_button = QPushButton("Pin")
        self.move_button = QPushButton("Move to…")
        self.keep_button = QPushButton("Keep")
        self.keep_button.setToolTip("Mark what the agent saved as reviewed, as it is")
        self.forget_button = QPushButton("Forget")
        self.keep_button.clicked.connect(self._on_keep)
        self.add_button.clicked.connect(self._on_add)
        self.edit_button.clicked.connect(self._on_edit)
        self.pin_button.clicked.connect(self._on_pin)
        self.move_button.clicked.connect(self._on_move)
        self.forget_button.clicked.connect(self._on_forget)
        top = QHBoxLayout()
        top.addWidget(self.tier_box)
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.review_box)
        actions = QHBoxLayout()
        for button in (
            self.add_button,
            self.edit_button,
            self.pin_button,
            self.move_button,
            self.keep_button,
            self.forget_button,
        ):
            actions.addWidget(button)
        actions.addStretch(1)
        layout = QVBoxLayout(page)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addLayout(actions)
        self._update_buttons()
        return page

    def refresh(self) -> None:
        """Reload the memories (tier and search as chosen), the reports and identity files."""
        self.error_label.hide()
        thread = self.thread_id()
        if thread is not None:
            chosen = self.tier_box.currentText()
            tier = None if chosen == ALL else cast(MemoryTier, chosen)
            query = self.search_edit.text().strip() or None
            unreviewed = self.review_box.isChecked()
            self.controller.refresh(thread, tier, query, unreviewed=unreviewed).then(
                None, self.show_error
            )
        self.controller.load_identity().then(None, self.show_error)
        self._on_reports_changed(thread or "")

    def show_error(self, error: ErrorObject) -> None:
        self.error_label.setText(error.message)
        self.error_label.show()

    def selected_memory(self) -> MemoryInfo | None:
        item = self.tree.currentItem()
        if item is None or not item.isSelected():
            return None
        row = self.tree.indexOfTopLevelItem(item)
        memories = self.state.memories
        return memories[row] if 0 <= row < len(memories) else None

    def _on_memories_changed(self) -> None:
        self.tree.clear()
        for memory in self.state.memories:
            written = describe_provenance(memory)
            item = QTreeWidgetItem(
                [memory.tier, memory.text, written, "yes" if memory.pinned else ""]
            )
            source = memory.source_message or "typed by the author"
            item.setToolTip(1, f"{memory.key} — source: {source}")
            item.setToolTip(2, written)
            if memory.unreviewed:
                font = item.font(2)
                font.setBold(True)
                item.setFont(2, font)
            self.tree.addTopLevelItem(item)
        self._update_buttons()

    def _update_buttons(self) -> None:
        memory = self.selected_memory()
        for button in (self.edit_button, self.pin_button, self.move_button, self.forget_button):
            button.setEnabled(memory is not None)
        self.keep_button.setEnabled(memory is not None and memory.unreviewed)
        self.pin_button.setText("Unpin" if memory is not None and memory.pinned else "Pin")
        self.add_button.setEnabled(self.thread_id() is not None)

    def _on_keep(self) -> None:
        memory, thread = self.selected_memory(), self.thread_id()
        if memory is not None and thread is not None:
            self.controller.keep(thread, memory.key).then(None, self.show_error)

    def _on_add(self) -> None:
        thread = self.thread_id()
        if thread is None:
            return
        text, ok = QInputDialog.getMultiLineText(self, "Add a memory", "Memory:")
        if not ok or not text.strip():
            return
        tier, ok = QInputDialog.getItem(self, "Add a memory", "Tier:", list(TIERS), 2, False)
        if ok:
            self.controller.write(thread, cast(MemoryTier, tier), text, pinned=False).then(
                None, self.show_error
            )

    def _on_edit(self) -> None:
        memory, thread = self.selected_memory(), self.thread_id()
        if memory is None or thread is None:
            return
        text, ok = QInputDialog.getMultiLineText(self, "Edit the memory", "Memory:", memory.text)
        if ok and text.strip() and text != memory.text:
            self.controller.update(thread, memory.key, text=text).then(None, self.show_error)

    def _on_pin(self) -> None:
        memory, thread = self.selected_memory(), self.thread_id()
        if memory is not None and thread is not None:
            self.controller.update(thread, memory.key, pinned=not memory.pinned).then(
                None, self.show_error
            )

    def _on_move(self) -> None:
        memory, thread = self.selected_memory(), self.thread_id()
        if memory is None or thread is None:
            return
        others = [t for t in TIERS if t != memory.tier]
        tier, ok = QInputDialog.getItem(self, "Move the memory", "To tier:", others, 0, False)
        if ok:
            self.controller.update(thread, memory.key, tier=cast(MemoryTier, tier)).then(
                None, self.show_error
            )

    def _on_forget(self) -> None:
        memory, thread = self.selected_memory(), self.thread_id()
        if memory is not None and thread is not None:
            self.controller.forget(thread, memory.key).then(None, self.show_error)

    # -- what the agent saw ---------------------------------------------------------------------

    def _build_seen(self) -> QWidget:
        page = QWidget()
        self.seen_tree = QTreeWidget()
        self.seen_tree.setHeaderLabels(["Turn", "Context"])
        self.seen_tree.setColumnWidth(0, 80)
        layout = QVBoxLayout(page)
        layout.addWidget(self.seen_tree, 1)
        return page

    def _on_reports_changed(self, thread_id: str) -> None:
        if thread_id != (self.thread_id() or ""):
            return
        self.seen_tree.clear()
        for number, report in enumerate(self.state.turn_reports(thread_id), start=1):
            lines = describe_context(report.context)
            turn = QTreeWidgetItem([f"#{number}", lines[0]])
            for line in lines[1:]:
                turn.addChild(QTreeWidgetItem(["", line]))
            for change in report.changes:
                turn.addChild(QTreeWidgetItem(["memory", describe_change(change)]))
            if report.usage is not None:
                turn.addChild(QTreeWidgetItem(["usage", describe_usage(report.usage)]))
            self.seen_tree.addTopLevelItem(turn)

    # -- identity files -------------------------------------------------------------------------

    def _build_identity(self) -> QWidget:
        page = QWidget()
        self.identity_box = QComboBox()
        self.identity_box.addItems(list(IDENTITY_PATHS))
        self.identity_box.currentIndexChanged.connect(lambda _i: self._on_identity_changed())
        self.identity_edit = QPlainTextEdit()
        self.identity_save = QPushButton("Save")
        self.identity_save.clicked.connect(self._on_identity_save)
        self.identity_note = build_status_label()
        layout = QVBoxLayout(page)
        layout.addWidget(self.identity_box)
        layout.addWidget(self.identity_edit, 1)
        layout.addWidget(self.identity_note)
        layout.addWidget(self.identity_save)
        return page

    def _on_identity_changed(self) -> None:
        path = self.identity_box.currentText()
        found = next((f for f in self.state.identity if f.path == path), None)
        self.identity_edit.setPlainText(found.text if found is not None else "")
        # Only the start of a file over the limit was read: saving it here would cut the rest.
        whole = found is None or not found.truncated
        self.identity_edit.setReadOnly(not whole)
        self.identity_save.setEnabled(whole)
        if found is not None and found.error:
            note = f"{path}: {found.error}"
            if not whole:
                note += " It is shown read-only: edit it in a text editor."
            self.identity_note.setText(note)
            self.identity_note.show()
        else:
            self.identity_note.hide()

    def _on_identity_save(self) -> None:
        path = self.identity_box.currentText()
        self.controller.save_identity(path, self.identity_edit.toPlainText()).then(
            None, self.show_error
        )
