"""The composer's slash commands, prompt expansion and attachments, both ways (keys and clicks →
requests, replies → draft), over a recording sender and against the fake sidecar process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.controllers.composer import ComposerController
from desktop.ipc.api import SidecarApi
from desktop.ipc.client import RpcClient
from desktop.models.prompts import BUILTIN_COMMANDS
from desktop.views.composer import ComposerWidget
from desktop.views.prompt_dialogs import PromptArgumentsDialog, ResourcePickerDialog
from sidecar.protocol import (
    ErrorObject,
    FeatureErrorCode,
    PromptArgumentInfo,
    PromptGetParams,
    PromptGetResult,
    PromptInfo,
    PromptListResult,
    PromptMessageInfo,
    ResourceAttachResult,
    ResourceInfo,
    ResourceListResult,
    ResourceRef,
)
from tests.desktop.conftest import FakeProcessFactory
from tests.desktop.support import FakeSender

TIMEOUT_MS = 10_000
LEFT = Qt.MouseButton.LeftButton
BUILTINS = [choice.command for choice in BUILTIN_COMMANDS]

SUMMARIZE = PromptInfo(
    server="workspace", name="summarize", description="Summarize a file",
    arguments=(
        PromptArgumentInfo(name="path", description="File to summarize", required=True),
        PromptArgumentInfo(name="style"),
    ),
    command="/workspace:summarize",
)  # fmt: skip
OUTLINE = PromptInfo(server="workspace", name="outline", command="/workspace:outline")
CONVERT = PromptInfo(
    server="time", name="convert", description="Convert a time",
    arguments=(
        PromptArgumentInfo(name="time", required=True),
        PromptArgumentInfo(name="zone", required=True),
    ),
    command="/time:convert",
)  # fmt: skip


def expanded(server: str, name: str, text: str) -> PromptGetResult:
    message = PromptMessageInfo(role="user", text=text)
    return PromptGetResult(server=server, name=name, messages=(message,), text=text)


@pytest.fixture
def composer(qtbot: QtBot, fake_sender: FakeSender) -> ComposerWidget:
    """A composer whose controller has listed prompts of two servers."""
    controller = ComposerController(fake_sender.api)
    composer = ComposerWidget(features=controller)
    qtbot.addWidget(composer)
    composer.show()
    controller.refresh_prompts()
    answer_prompt_lists(fake_sender)
    return composer


def answer_prompt_lists(fake_sender: FakeSender) -> None:
    """Answer every `prompt/list` asked so far (showing the composer may focus it, and each
    answer may prompt one more listing)."""
    listing = PromptListResult(prompts=(SUMMARIZE, OUTLINE, CONVERT))
    while pending := [p for m, _, p in fake_sender.sent if m == "prompt/list" and not p.done]:
        for request in pending:
            request.resolve(listing)


@pytest.fixture
def sent(composer: ComposerWidget) -> list[str]:
    messages: list[str] = []
    composer.message_submitted.connect(messages.append)
    return messages


def type_and_send(qtbot: QtBot, composer: ComposerWidget, text: str) -> None:
    qtbot.keyClicks(composer.editor, text)
    qtbot.keyClick(composer.editor, Qt.Key.Key_Return)


def choose_in_popup(qtbot: QtBot, composer: ComposerWidget) -> None:
    """Enter on the popup, as when the author picks its current (first) line."""
    assert composer.completer.is_showing
    qtbot.keyClick(composer.completer.popup(), Qt.Key.Key_Return)


def test_a_slash_lists_the_direct_commands_and_the_prompts_of_both_servers(
    qtbot: QtBot, composer: ComposerWidget
):
    qtbot.keyClicks(composer.editor, "/")
    assert composer.completer.is_showing
    assert composer.completer.listed_commands() == [
        *BUILTINS, "/time:convert", "/workspace:outline", "/workspace:summarize",
    ]  # fmt: skip
    qtbot.keyClicks(composer.editor, "sum")
    assert composer.completer.listed_commands() == ["/workspace:summarize"]
    qtbot.keyClicks(composer.editor, " ")
    assert not composer.completer.is_showing


def test_gaining_focus_refreshes_the_prompt_list(composer: ComposerWidget, fake_sender: FakeSender):
    answer_prompt_lists(fake_sender)
    before = fake_sender.methods().count("prompt/list")
    event = QFocusEvent(QEvent.Type.FocusIn, Qt.FocusReason.MouseFocusReason)
    QApplication.sendEvent(composer.editor, event)
    assert fake_sender.methods().count("prompt/list") == before + 1


def test_choosing_a_direct_command_puts_it_in_the_draft(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender, sent: list[str]
):
    qtbot.keyClicks(composer.editor, "/too")
    choose_in_popup(qtbot, composer)
    assert composer.editor.toPlainText() == "/tools "
    assert sent == [] and "prompt/get" not in fake_sender.methods()


def test_enter_on_a_whole_direct_command_sends_it(
    qtbot: QtBot, composer: ComposerWidget, sent: list[str]
):
    qtbot.keyClicks(composer.editor, "/tools")
    choose_in_popup(qtbot, composer)
    assert sent == ["/tools"] and composer.editor.toPlainText() == ""


def test_a_required_argument_left_empty_keeps_ok_disabled(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender
):
    with qtbot.waitSignal(composer.prompt_dialog_opened) as opened:
        qtbot.keyClicks(composer.editor, "/sum")
        choose_in_popup(qtbot, composer)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, PromptArgumentsDialog)
    assert list(dialog.edits) == ["path", "style"]
    assert not dialog.ok_button.isEnabled()
    dialog.edits["style"].setText("bullets")
    dialog.edits["path"].setText("   ")
    assert not dialog.ok_button.isEnabled()
    dialog.ok_button.click()
    assert dialog.isVisible() and "prompt/get" not in fake_sender.methods()
    dialog.edits["path"].setText("draft.md")
    assert dialog.ok_button.isEnabled()
    qtbot.mouseClick(dialog.ok_button, LEFT)
    params, _ = fake_sender.last("prompt/get")
    assert params == PromptGetParams(
        server="workspace", name="summarize", arguments={"path": "draft.md", "style": "bullets"}
    )
    assert not dialog.isVisible()


def test_the_expanded_prompt_replaces_the_draft_and_is_not_sent(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender, sent: list[str]
):
    type_and_send(qtbot, composer, '/time:convert time=14:30 zone="Europe/Paris"')
    params, pending = fake_sender.last("prompt/get")
    assert params == PromptGetParams(
        server="time", name="convert", arguments={"time": "14:30", "zone": "Europe/Paris"}
    )
    assert composer.editor.isReadOnly() and not composer.send_button.isEnabled()
    pending.resolve(expanded("time", "convert", "Convert 14:30 to Europe/Paris."))
    assert composer.editor.toPlainText() == "Convert 14:30 to Europe/Paris."
    assert not composer.editor.isReadOnly() and composer.send_button.isEnabled()
    assert sent == []
    qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert sent == ["Convert 14:30 to Europe/Paris."]


def test_a_prompt_without_arguments_expands_as_soon_as_it_is_chosen(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender, sent: list[str]
):
    qtbot.keyClicks(composer.editor, "/workspace:out")
    choose_in_popup(qtbot, composer)
    params, pending = fake_sender.last("prompt/get")
    assert params == PromptGetParams(server="workspace", name="outline")
    pending.resolve(expanded("workspace", "outline", "Outline the workspace."))
    assert composer.editor.toPlainText() == "Outline the workspace." and sent == []


def test_a_missing_required_argument_on_send_opens_the_dialog_with_what_was_typed(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender, sent: list[str]
):
    with qtbot.waitSignal(composer.prompt_dialog_opened) as opened:
        type_and_send(qtbot, composer, "/time:convert time=14:30")
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, PromptArgumentsDialog)
    assert dialog.values() == {"time": "14:30", "zone": ""}
    assert not dialog.ok_button.isEnabled()
    assert "prompt/get" not in fake_sender.methods() and sent == []
    assert composer.editor.toPlainText() == "/time:convert time=14:30"


def test_a_refused_expansion_shows_in_place_and_keeps_the_draft(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender, sent: list[str]
):
    line = "/time:convert time=14:30 zone=Atlantis"
    type_and_send(qtbot, composer, line)
    refusal = ErrorObject(code=FeatureErrorCode.SERVER_REFUSED, message="unknown zone")
    fake_sender.last("prompt/get")[1].reject(refusal)
    assert composer.error_label.isVisible() and "unknown zone" in composer.error_label.text()
    assert composer.editor.toPlainText() == line and sent == []
    assert not composer.editor.isReadOnly() and composer.send_button.isEnabled()
    qtbot.keyClicks(composer.editor, "x")
    assert not composer.error_label.isVisible()


def test_unreadable_arguments_show_in_place_and_nothing_is_asked(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender, sent: list[str]
):
    type_and_send(qtbot, composer, "/workspace:summarize draft.md")
    assert composer.error_label.isVisible()
    assert "prompt/get" not in fake_sender.methods() and sent == []


def test_an_unlisted_prompt_is_asked_of_the_sidecar(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender
):
    type_and_send(qtbot, composer, "/git:review branch=main")
    params, pending = fake_sender.last("prompt/get")
    assert params == PromptGetParams(server="git", name="review", arguments={"branch": "main"})
    pending.reject(ErrorObject(code=FeatureErrorCode.SERVER_UNAVAILABLE, message="git is down"))
    assert composer.error_label.isVisible()


def resources() -> ResourceListResult:
    return ResourceListResult(
        resources=(
            ResourceInfo(server="workspace", uri="file:///w/draft.md", name="draft.md",
                         mime_type="text/markdown"),
            ResourceInfo(server="time", uri="time://zones", name="zones"),
        )
    )  # fmt: skip


def open_picker(qtbot: QtBot, composer: ComposerWidget) -> ResourcePickerDialog:
    with qtbot.waitSignal(composer.resource_picker_opened) as opened:
        qtbot.mouseClick(composer.attach_button, LEFT)
    picker = (opened.args or [])[0]
    assert isinstance(picker, ResourcePickerDialog)
    return picker


def test_attach_inserts_the_chosen_resources_block_at_the_cursor(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender, sent: list[str]
):
    qtbot.keyClicks(composer.editor, "Read this:")
    picker = open_picker(qtbot, composer)
    fake_sender.last("resource/list")[1].resolve(resources())
    assert picker.tree.topLevelItemCount() == 2
    assert not picker.attach_button.isEnabled()
    picker.select("workspace", "file:///w/draft.md")
    qtbot.mouseClick(picker.attach_button, LEFT)
    params, pending = fake_sender.last("resource/attach")
    assert params == ResourceRef(server="workspace", uri="file:///w/draft.md")
    block = '<resource server="workspace" uri="file:///w/draft.md">\n# Draft\n</resource>'
    pending.resolve(ResourceAttachResult(server="workspace", uri="file:///w/draft.md", text=block))
    assert composer.editor.toPlainText() == f"Read this:\n{block}\n"
    assert not picker.isVisible() and sent == []


def test_a_refused_attachment_shows_in_the_picker_and_keeps_the_draft(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender
):
    qtbot.keyClicks(composer.editor, "Draft")
    picker = open_picker(qtbot, composer)
    fake_sender.last("resource/list")[1].resolve(resources())
    picker.select("time", "time://zones")
    qtbot.mouseClick(picker.attach_button, LEFT)
    refusal = ErrorObject(code=FeatureErrorCode.SERVER_UNAVAILABLE, message="time is down")
    fake_sender.last("resource/attach")[1].reject(refusal)
    assert picker.isVisible() and picker.error_label.isVisible()
    assert picker.attach_button.isEnabled()
    assert composer.editor.toPlainText() == "Draft"


def test_a_failed_resource_listing_shows_in_the_picker(
    qtbot: QtBot, composer: ComposerWidget, fake_sender: FakeSender
):
    picker = open_picker(qtbot, composer)
    refusal = ErrorObject(code=FeatureErrorCode.FEATURE_UNSUPPORTED, message="not enabled")
    fake_sender.last("resource/list")[1].reject(refusal)
    assert picker.error_label.isVisible() and picker.tree.topLevelItemCount() == 0


def test_a_busy_composer_cannot_attach(composer: ComposerWidget):
    composer.set_busy(True)
    # The editor stays usable: a message typed now is queued behind the running turn.
    assert not composer.attach_button.isEnabled() and composer.editor.isEnabled()
    composer.set_busy(False)
    assert composer.attach_button.isEnabled()


def test_without_a_controller_prompt_lines_are_sent_and_attach_is_off(qtbot: QtBot):
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    messages: list[str] = []
    composer.message_submitted.connect(messages.append)
    assert not composer.attach_button.isEnabled()
    qtbot.keyClicks(composer.editor, "/")
    assert composer.completer.listed_commands() == BUILTINS
    qtbot.keyClicks(composer.editor, "x:y a=1")
    qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert messages == ["/x:y a=1"]


@pytest.fixture
def live(qtbot: QtBot, fake_process_factory: FakeProcessFactory) -> Iterator[ComposerWidget]:
    """A composer whose controller talks to the fake sidecar process, prompts listed."""
    process = fake_process_factory()
    client = RpcClient(process)
    controller = ComposerController(SidecarApi(client))
    client.server_status_received.connect(controller.handle_status)
    composer = ComposerWidget(features=controller)
    qtbot.addWidget(composer)
    composer.show()
    with qtbot.waitSignal(client.initialized, timeout=TIMEOUT_MS):
        process.start()
    with qtbot.waitSignal(controller.prompts_changed, timeout=TIMEOUT_MS):
        controller.refresh_prompts()
    yield composer
    process.stop(timeout_ms=2000)


@pytest.mark.slow
def test_a_prompt_from_the_sidecar_is_listed_filled_in_and_expanded(
    qtbot: QtBot, live: ComposerWidget
):
    qtbot.keyClicks(live.editor, "/")
    assert live.completer.listed_commands() == [
        *BUILTINS, "/time:convert", "/workspace:outline", "/workspace:summarize",
    ]  # fmt: skip
    qtbot.keyClicks(live.editor, "time:")
    with qtbot.waitSignal(live.prompt_dialog_opened, timeout=TIMEOUT_MS) as opened:
        choose_in_popup(qtbot, live)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, PromptArgumentsDialog)
    dialog.edits["time"].setText("09:00")
    dialog.edits["zone"].setText("Asia/Tokyo")
    qtbot.mouseClick(dialog.ok_button, LEFT)
    qtbot.waitUntil(lambda: live.editor.toPlainText() == "Convert 09:00 to Asia/Tokyo.")


@pytest.mark.slow
def test_the_sidecars_refusal_shows_and_the_draft_stays(qtbot: QtBot, live: ComposerWidget):
    line = "/time:convert time=09:00 zone=Atlantis"
    type_and_send(qtbot, live, line)
    qtbot.waitUntil(live.error_label.isVisible, timeout=TIMEOUT_MS)
    assert live.editor.toPlainText() == line and not live.editor.isReadOnly()


@pytest.mark.slow
def test_a_resource_from_the_sidecar_is_attached(qtbot: QtBot, live: ComposerWidget):
    picker = open_picker(qtbot, live)
    qtbot.waitUntil(lambda: picker.tree.topLevelItemCount() == 2, timeout=TIMEOUT_MS)
    picker.select("workspace", "file:///workspace/notes.txt")
    qtbot.mouseClick(picker.attach_button, LEFT)
    qtbot.waitUntil(lambda: "Remember the lighthouse." in live.editor.toPlainText())
    assert live.editor.toPlainText().startswith('<resource server="workspace"')
