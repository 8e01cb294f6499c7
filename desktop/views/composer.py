"""`ComposerWidget`: where the author types. Enter sends, Shift+Enter starts a new line.

Typing `/` offers the direct commands and the connected servers' MCP prompts. A prompt is
expanded by the sidecar (`prompt/get`) into the draft for the author to review and send; it is
never sent by itself. "Attach" puts a resource's text into the draft. Deciding what a line means
lives in `desktop.models.prompts`; the requests in `ComposerController`.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from desktop.controllers import PendingRequest
from desktop.controllers.composer import ComposerController, feature_error_text
from desktop.models.prompts import (
    CommandChoice,
    PromptLineError,
    choices_for,
    completion_prefix,
    insert_block,
    is_prompt_line,
    match_completions,
    read_prompt_request,
)
from desktop.views.command_completer import CommandCompleter
from desktop.views.prompt_dialogs import (
    PromptArgumentsDialog,
    ResourcePickerDialog,
)
from desktop.views.text import build_status_label
from sidecar.protocol import (
    ErrorObject,
    PromptGetResult,
    PromptInfo,
    ResourceAttachResult,
    ResourceInfo,
)

_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
_POPUP_KEYS = (*_ENTER_KEYS, Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab)


class ComposerEditorWidget(QPlainTextEdit):
    """A text edit whose plain Enter emits `submitted` instead of inserting a newline.

    Keys as in other desktop apps' message boxes: Tab and Shift+Tab move the focus on (a tab is
    never typed; Ctrl+Tab is the window's next thread), Ctrl+Home and Ctrl+End scroll the
    conversation (`start_requested`, `end_requested`) rather than the draft. While the command
    popup shows, Enter, Tab and Escape belong to the popup. `focus_gained` fires when the author
    comes back to the editor (not when the popup closes).
    """

    submitted = Signal()
    interrupt_submitted = Signal()
    focus_gained = Signal()
    start_requested = Signal()
    end_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.completer = CommandCompleter(self)
        self.setTabChangesFocus(True)

    def focusNextPrevChild(self, next: bool) -> bool:
        if self.completer.is_showing:
            return False  # Tab picks the popup's choice (`keyPressEvent` leaves it to it)
        return super().focusNextPrevChild(next)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if self.completer.is_showing and e.key() in _POPUP_KEYS:
            e.ignore()
            return
        if e.matches(QKeySequence.StandardKey.MoveToStartOfDocument):
            e.accept()
            self.start_requested.emit()
            return
        if e.matches(QKeySequence.StandardKey.MoveToEndOfDocument):
            e.accept()
            self.end_requested.emit()
            return
        shift = bool(e.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if e.key() in _ENTER_KEYS and e.modifiers() & Qt.KeyboardModifier.AltModifier:
            e.accept()
            self.interrupt_submitted.emit()
            return
        if e.key() in _ENTER_KEYS and not shift:
            e.accept()
            self.submitted.emit()
            return
        if e.key() in _ENTER_KEYS:
            self.insertPlainText("\n")
            e.accept()
            return
        super().keyPressEvent(e)

    def focusInEvent(self, e: QFocusEvent) -> None:
        super().focusInEvent(e)
        if e.reason() != Qt.FocusReason.PopupFocusReason:
            self.focus_gained.emit()


class ComposerWidget(QWidget):
    """Emits `message_submitted(text)` with the stripped text and clears itself.

    Messages and direct commands (`/tools`, `/call server__tool {json}`) go the same way; the
    sidecar tells them apart. A `/<server>:<prompt> key=value …` line is expanded in place
    instead (with a `ComposerController`; without one it is sent like any text).
    While the thread runs (`set_busy(True)`) it still sends: the sidecar queues the message in
    the thread's default mode; Alt+Enter sends it as `interrupt_submitted(text)` instead, which
    stops the running turn and starts a new one with it. A sent message that is refused comes
    back into the draft (`take_back`), with the reason above it; `refusal` keeps that error.

    Signals: `transcript_start_requested()`, `transcript_end_requested()` (Ctrl+Home, Ctrl+End:
    the conversation, not the draft), `prompt_dialog_opened(PromptArgumentsDialog)`,
    `resource_picker_opened(ResourcePickerDialog)`.
    """

    message_submitted = Signal(str)
    interrupt_submitted = Signal(str)
    transcript_start_requested = Signal()
    transcript_end_requested = Signal()
    prompt_dialog_opened = Signal(object)
    resource_picker_opened = Signal(object)

    def __init__(
        self, parent: QWidget | None = None, *, features: ComposerController | None = None
    ) -> None:
        super().__init__(parent)
        self.features: ComposerController | None = None
        self.prompt_dialog: PromptArgumentsDialog | None = None
        self.resource_picker: ResourcePickerDialog | None = None
        self._expanding: PendingRequest | None = None
        self._taken_back: list[str] = []  # refused while a prompt expanded; restored after
        self.refusal: ErrorObject | None = None
        self._refusal_note = ""
        self._busy = False
        self._build()
        self.set_features(features)

    def _build(self) -> None:
        self.editor = ComposerEditorWidget()
        self.editor.setPlaceholderText(
            "Message the agent (Enter sends, Shift+Enter for a new line; / for commands and "
            "prompts)"
        )
        self.editor.setMaximumHeight(120)
        self.editor.setToolTip(
            "Enter sends, Shift+Enter starts a new line, Alt+Enter interrupts the running turn. "
            "Tab moves on to the buttons; Ctrl+Tab and Ctrl+Shift+Tab go to the next and "
            "previous thread; Ctrl+Home and Ctrl+End scroll the conversation to its start or end."
        )
        self.editor.start_requested.connect(self.transcript_start_requested)
        self.editor.end_requested.connect(self.transcript_end_requested)
        self.completer = self.editor.completer
        self.send_button = QPushButton("Send")
        self.attach_button = QPushButton("Attach…")
        self.attach_button.setToolTip("Put a resource of a connected MCP server into the message")
        self.error_label = build_status_label()
        self.editor.submitted.connect(self._on_editor_submitted)
        self.editor.interrupt_submitted.connect(self._on_interrupt_submitted)
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.focus_gained.connect(self._on_focus_gained)
        self.completer.choice_activated.connect(self._on_choice_activated)
        self.send_button.clicked.connect(self._on_editor_submitted)
        self.attach_button.clicked.connect(self.open_resource_picker)
        buttons = QVBoxLayout()
        buttons.addWidget(self.attach_button)
        buttons.addWidget(self.send_button)
        row = QHBoxLayout()
        row.addWidget(self.editor, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.error_label)
        layout.addLayout(row)

    def set_features(self, features: ComposerController | None) -> None:
        """Offer prompts and resources through `features` (None: direct commands only)."""
        self.features = features
        if features is not None:
            features.prompts_changed.connect(self._on_prompts_changed)
        self._show_enabled()

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._show_enabled()

    def show_error(self, message: str) -> None:
        """Show a problem above the draft; it goes away when the draft changes."""
        self.error_label.setText(message)
        self.error_label.show()

    def take_back(self, text: str, error: ErrorObject, where: str = "") -> None:
        """A sent message was refused (`error`): put `text` back and say why.

        Nothing the author typed since is overwritten: into an empty composer the text comes
        back as the draft (the cursor at its end); a draft that is that text, or starts with it
        (taken back before), stays as it is; otherwise the text goes in front of the new draft,
        the older message first, a blank line between, as one undoable edit that leaves the
        author's cursor where it was. While a prompt is being expanded (the draft is about to
        be replaced) it waits and goes in after the expansion. `where` names the thread it was
        meant for when that is not the one shown.
        """
        self.refusal = error
        target = f" to “{where}”" if where else ""
        self._refusal_note = f"Not sent{target}: {error.message} — it is back in the draft."
        if self._expanding is not None:
            self._taken_back.append(text)
        else:
            self._put_back(text)
        self.show_error(self._refusal_note)

    def bring_back(self, text: str) -> None:
        """Put `text` (a queued message taken back to edit) into the draft by `take_back`'s
        rule, so nothing typed meanwhile is overwritten, and focus the editor."""
        if self._expanding is not None:
            self._taken_back.append(text)
        else:
            self._put_back(text)
        self.editor.setFocus()

    def _put_back(self, text: str) -> None:
        draft = self.editor.toPlainText()
        if draft.strip() == text or draft.startswith(text + "\n\n"):
            return
        if not draft.strip():
            self.editor.setPlainText(text)
            self.editor.moveCursor(QTextCursor.MoveOperation.End)
            return
        cursor = QTextCursor(self.editor.document())
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        cursor.insertText(text + "\n\n")

    def _show_enabled(self) -> None:
        expanding = self._expanding is not None
        self.editor.setReadOnly(expanding)
        self.send_button.setEnabled(not expanding)
        self.send_button.setText("Queue" if self._busy else "Send")
        self.send_button.setToolTip(
            "The turn is running: Enter queues the message (Alt+Enter interrupts the turn)"
            if self._busy
            else ""
        )
        self.attach_button.setEnabled(self.features is not None and not self._busy)

    def _on_editor_submitted(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text or not self.editor.isEnabled() or self._expanding is not None:
            return
        if self.features is not None and is_prompt_line(text):
            self._submit_prompt_line(text)
            return
        self.editor.clear()
        self.refusal = None
        self.message_submitted.emit(text)

    def _on_interrupt_submitted(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text or self._expanding is not None or is_prompt_line(text):
            return
        self.editor.clear()
        self.refusal = None
        self.interrupt_submitted.emit(text)

    def _submit_prompt_line(self, text: str) -> None:
        assert self.features is not None
        try:
            request = read_prompt_request(text, self.features.prompts)
        except PromptLineError as exc:
            self.show_error(str(exc))
            return
        if request is None:
            return
        invocation = request.invocation
        if request.prompt is not None and request.missing:
            self.open_prompt_dialog(request.prompt, invocation.arguments)
        else:
            self.expand(invocation.server, invocation.name, invocation.arguments)

    def open_prompt_dialog(
        self, prompt: PromptInfo, values: Mapping[str, str] | None = None
    ) -> PromptArgumentsDialog:
        """Ask for the prompt's arguments; OK expands it."""
        if self.prompt_dialog is not None:
            self.prompt_dialog.close()
        dialog = PromptArgumentsDialog(prompt, values, self)
        dialog.arguments_submitted.connect(
            lambda arguments: self.expand(prompt.server, prompt.name, arguments)
        )
        dialog.finished.connect(lambda _result: self._forget_prompt_dialog(dialog))
        self.prompt_dialog = dialog
        dialog.show()
        self.prompt_dialog_opened.emit(dialog)
        return dialog

    def _forget_prompt_dialog(self, dialog: PromptArgumentsDialog) -> None:
        if self.prompt_dialog is dialog:
            self.prompt_dialog = None
        dialog.deleteLater()

    def expand(self, server: str, name: str, arguments: dict[str, str]) -> PendingRequest | None:
        """`prompt/get`, then the expanded text replaces the draft (not sent). On an error the
        draft stays and the error shows above it. The draft is read-only meanwhile."""
        if self.features is None or self._expanding is not None:
            return None
        self.error_label.hide()
        pending = self.features.expand(server, name, arguments)
        if not pending.done:
            self._expanding = pending
            self._show_enabled()
        return pending.then(self._on_expanded, self._on_expand_failed)

    def _on_expanded(self, result: PromptGetResult) -> None:
        self._expanding = None
        self._show_enabled()
        self.editor.setPlainText(result.text)
        self.editor.moveCursor(QTextCursor.MoveOperation.End)
        self.editor.setFocus()
        self._put_back_taken()

    def _on_expand_failed(self, error: ErrorObject) -> None:
        self._expanding = None
        self._show_enabled()
        self._put_back_taken()
        self.show_error(feature_error_text(error))

    def _put_back_taken(self) -> None:
        taken, self._taken_back = self._taken_back, []
        for text in reversed(taken):  # each goes first: the oldest ends up on top
            self._put_back(text)
        if taken:
            self.show_error(self._refusal_note)

    def open_resource_picker(self) -> ResourcePickerDialog | None:
        """List the connected servers' resources; the chosen one goes into the draft."""
        if self.features is None:
            return None
        if self.resource_picker is not None:
            self.resource_picker.raise_()
            return self.resource_picker
        picker = ResourcePickerDialog(self)
        picker.resource_chosen.connect(lambda resource: self._attach(picker, resource))
        picker.finished.connect(lambda _result: self._forget_resource_picker(picker))
        self.resource_picker = picker
        self.features.list_resources().then(
            picker.load, lambda error: picker.show_error(feature_error_text(error))
        )
        picker.show()
        self.resource_picker_opened.emit(picker)
        return picker

    def _forget_resource_picker(self, picker: ResourcePickerDialog) -> None:
        if self.resource_picker is picker:
            self.resource_picker = None
        picker.deleteLater()

    def _attach(self, picker: ResourcePickerDialog, resource: ResourceInfo) -> None:
        if self.features is None:
            return

        def on_attached(result: ResourceAttachResult) -> None:
            self.insert_attachment(result.text)
            picker.accept()

        def on_failed(error: ErrorObject) -> None:
            picker.show_error(feature_error_text(error))

        self.features.attach(resource.server, resource.uri).then(on_attached, on_failed)

    def insert_attachment(self, block: str) -> None:
        """Put a block of text at the cursor, on lines of its own (undoable)."""
        cursor = self.editor.textCursor()
        position = cursor.position()
        text, end = insert_block(self.editor.toPlainText(), position, block)
        cursor.insertText(text[position:end])
        self.editor.setTextCursor(cursor)

    def _on_text_changed(self) -> None:
        self.error_label.hide()
        self._update_completions()

    def _update_completions(self) -> None:
        prefix = completion_prefix(self.editor.toPlainText())
        if prefix is None or self._expanding is not None:
            self.completer.hide_choices()
            return
        choices = self.features.choices() if self.features is not None else choices_for(())
        self.completer.show_choices(match_completions(choices, prefix))

    def _on_prompts_changed(self) -> None:
        if self.completer.is_showing:
            self._update_completions()

    def _on_focus_gained(self) -> None:
        if self.features is not None:
            self.features.refresh_prompts()

    def _on_choice_activated(self, choice: CommandChoice) -> None:
        if choice.prompt is None and self.editor.toPlainText() == choice.command:
            self._on_editor_submitted()  # a whole direct command, e.g. `/tools`: Enter sends it
            return
        self.editor.setPlainText(choice.command + " ")
        self.editor.moveCursor(QTextCursor.MoveOperation.End)
        prompt = choice.prompt
        if prompt is None:
            return
        if prompt.arguments:
            self.open_prompt_dialog(prompt)
        else:
            self.expand(prompt.server, prompt.name, {})
