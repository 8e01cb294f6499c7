"""What a memory chip in the transcript offers when clicked: Edit…, Move to tier ▸, Forget.

`MemoryChipMenu` only asks (its signals); `ChipActions` sends the requests through the memory
controller and shows the result on the chip, so the chip says what the memory is now.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu, QWidget

from desktop.controllers import PendingRequest
from desktop.models.transcript import Transcript
from desktop.models.transcript_marks import MemoryChipEntry
from sidecar.protocol import MemoryInfo, MemoryTier

TIERS: tuple[MemoryTier, ...] = ("thread", "channel", "workspace", "account")


class ChipMemory(Protocol):
    """What chips need of the memory controller (`MemoryController` provides it)."""

    def update(
        self,
        thread_id: str,
        key: str,
        *,
        text: str | None = None,
        tier: MemoryTier | None = None,
        pinned: bool | None = None,
    ) -> PendingRequest: ...

    def forget(self, thread_id: str, key: str) -> PendingRequest: ...


class MemoryChipMenu(QMenu):
    """The chip's menu. Signals: `edit_requested()`, `move_requested(tier)`,
    `forget_requested()`. Public for tests: `edit_action`, `tier_actions`, `forget_action`."""

    edit_requested = Signal()
    move_requested = Signal(str)
    forget_requested = Signal()

    def __init__(self, chip: MemoryChipEntry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        live = chip.actionable
        current = chip.memory.tier if chip.memory is not None else None
        self.edit_action = self.addAction("Edit…")
        self.edit_action.triggered.connect(self.edit_requested)
        move = self.addMenu("Move to tier")
        self.tier_actions: dict[str, QAction] = {}
        for tier in TIERS:
            if tier == current:
                continue
            action = move.addAction(tier)
            action.triggered.connect(lambda _checked=False, t=tier: self.move_requested.emit(t))
            self.tier_actions[tier] = action
        self.forget_action = self.addAction("Forget")
        self.forget_action.triggered.connect(self.forget_requested)
        for action in (self.edit_action, move.menuAction(), self.forget_action):
            action.setEnabled(live)


class ChipActions:
    """Carries out a chip's menu with the memory controller and revises the chip on success.

    Errors are reported by the controller (its `error_reported`), not here.
    """

    def __init__(self, memory: ChipMemory, transcript: Transcript, parent: QWidget) -> None:
        self._memory = memory
        self._transcript = transcript
        self._parent = parent
        self.editor: QInputDialog | None = None

    def bind(self, menu: MemoryChipMenu, chip: MemoryChipEntry) -> None:
        menu.edit_requested.connect(lambda: self.edit(chip))
        menu.move_requested.connect(lambda tier: self.move(chip, tier))
        menu.forget_requested.connect(lambda: self.forget(chip))

    def forget(self, chip: MemoryChipEntry) -> PendingRequest | None:
        thread = self._transcript.thread_id
        if thread is None or not chip.actionable:
            return None
        return self._memory.forget(thread, chip.key).then(
            lambda memory: self._revise(chip, "forgotten", memory)
        )

    def move(self, chip: MemoryChipEntry, tier: str) -> PendingRequest | None:
        thread = self._transcript.thread_id
        if thread is None or not chip.actionable or tier not in TIERS:
            return None
        chosen: MemoryTier = next(t for t in TIERS if t == tier)
        return self._memory.update(thread, chip.key, tier=chosen).then(
            lambda memory: self._revise(chip, "updated", memory)
        )

    def edit(self, chip: MemoryChipEntry) -> QInputDialog | None:
        """Open the editor (non-modal; the edit is sent when it is accepted with new text)."""
        if chip.memory is None or not chip.actionable:
            return None
        editor = QInputDialog(self._parent)
        editor.setWindowTitle("Edit the memory")
        editor.setLabelText("Memory:")
        editor.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        editor.setTextEchoMode(QLineEdit.EchoMode.Normal)
        editor.setTextValue(chip.memory.text)
        editor.textValueSelected.connect(lambda text: self._send_edit(chip, text))
        editor.finished.connect(editor.deleteLater)
        self.editor = editor
        editor.open()
        return editor

    def _send_edit(self, chip: MemoryChipEntry, text: str) -> None:
        thread = self._transcript.thread_id
        if thread is None or chip.memory is None or not text.strip():
            return
        if text == chip.memory.text:
            return
        self._memory.update(thread, chip.key, text=text).then(
            lambda memory: self._revise(chip, "updated", memory)
        )

    def _revise(self, chip: MemoryChipEntry, action: str, memory: object) -> None:
        info = memory if isinstance(memory, MemoryInfo) else None
        self._transcript.revise_chip(chip, action, info)
