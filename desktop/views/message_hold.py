"""A message sent while the thread waits on the author's decision is kept, never lost.

When the author presses Enter while the selected thread has a question open (an approval, a
form, a plan…), the message is not sent: it stays in the composer with a note, and it goes by
itself once the thread is free (the answered run has ended and nothing else is pending), as
long as the draft is still that message. An author who edits the draft or moves to another
thread takes it back: nothing is sent behind their back.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QTextCursor

from desktop.controller import SessionController
from desktop.models.session import SessionState
from desktop.views.composer import ComposerWidget
from sidecar.protocol.queue import QueueMode

HELD_NOTE = (
    "Answer the open question first: your message stays here and is sent once the agent is free."
)

# "interrupted" lasts until the answered run starts; the held message goes when that one ends.
_BUSY = ("running", "interrupted")


class MessageHold:
    """Sits between the composer's `message_submitted` and `SessionController.send_message`.

    `dialog_open(thread_id)` says whether a decision dialog of that thread is showing.
    """

    def __init__(
        self,
        state: SessionState,
        composer: ComposerWidget,
        controller: SessionController,
        dialog_open: Callable[[str], bool],
    ) -> None:
        self._state = state
        self._composer = composer
        self._controller = controller
        self._dialog_open = dialog_open
        self.held: tuple[str, str] | None = None  # (thread id, text)

    def submit(self, text: str, mode: QueueMode | None = None) -> None:
        """Send `text`, or keep it in the composer while the thread waits on the author (an
        `interrupt` goes at once: it drops the question and starts a new turn)."""
        thread_id = self._state.selected_thread_id
        if mode == "interrupt":
            self._controller.send_message(text, mode)
            return
        if thread_id is not None and self._waits_on_author(thread_id):
            self.held = (thread_id, text)
            editor = self._composer.editor
            editor.setPlainText(text)
            editor.moveCursor(QTextCursor.MoveOperation.End)
            self._composer.show_error(HELD_NOTE)
            return
        self._controller.send_message(text)

    def release(self) -> None:
        """Send the held message if its thread is free now (call on every status change)."""
        if self.held is None:
            return
        thread_id, text = self.held
        draft = self._composer.editor.toPlainText().strip()
        if thread_id != self._state.selected_thread_id or draft != text:
            self.held = None  # the author moved on or changed the draft: it is theirs now
            return
        if self._state.run_state(thread_id).status in _BUSY or self._waits_on_author(thread_id):
            return
        self.held = None
        self._composer.editor.clear()
        self._controller.send_message(text)

    def _waits_on_author(self, thread_id: str) -> bool:
        return bool(self._state.inbox.count(thread_id)) or self._dialog_open(thread_id)
