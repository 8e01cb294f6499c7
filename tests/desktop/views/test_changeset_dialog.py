"""`ChangesetDialog`: the changeset → file list with badges and diffs (model → view); ticks and
buttons → the `ChangesetValue` sent through the main window (view → model), opened from the
inbox like every interrupt."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.views.changeset_dialog import ChangesetDialog
from desktop.views.main_window import MainWindow
from sidecar.protocol import (
    ChangesetInterrupt,
    ChangesetValue,
    ErrorCode,
    ErrorObject,
    InterruptEvent,
    RunRef,
    RunResumeParams,
    ThreadListResult,
)
from tests.desktop.support import FakeSender, RunScript, thread_info
from tests.desktop.views.test_main_window import thread_result

LEFT = Qt.MouseButton.LeftButton


def changeset(**fields: Any) -> ChangesetInterrupt:
    base: dict[str, Any] = {
        "id": "ic", "title": "Review the changes", "body": "", "task_id": "t", "live": True,
        "agent": "Codex", "workspace": "/home/a/book", "folder": "/data/runs/p/t/work",
        "isolation": "worktree", "summary": "Wrote the guide.",
        "files": [
            {"path": "docs/guide.md", "status": "added", "diff": "+++ b/docs/guide.md\n+# Guide\n"},
            {"path": "notes.md", "status": "changed", "diff": "-old\n+new\n", "conflict": True},
            {"path": "logo.png", "status": "changed", "binary": True, "size": 2048},
            {"path": "old.txt", "status": "deleted", "diff": "-gone\n"},
        ],
    }  # fmt: skip
    return ChangesetInterrupt.model_validate(base | fields)


def build(qtbot: QtBot, **fields: Any) -> ChangesetDialog:
    dialog = ChangesetDialog(changeset(**fields), "Book")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _rows(dialog: ChangesetDialog) -> list[tuple[str, str, bool]]:
    rows: list[tuple[str, str, bool]] = []
    for row in range(dialog.file_list.topLevelItemCount()):
        item = dialog.file_list.topLevelItem(row)
        assert item is not None
        checkable = bool(item.flags() & Qt.ItemFlag.ItemIsUserCheckable)
        rows.append((item.text(0), item.text(1), checkable))
    return rows


def test_each_file_shows_its_badge_and_conflicts_cannot_be_ticked(qtbot: QtBot):
    dialog = build(qtbot)
    assert _rows(dialog) == [
        ("docs/guide.md", "added", True),
        ("notes.md", "changed, conflict", False),
        ("logo.png", "changed, binary", True),
        ("old.txt", "deleted", True),
    ]
    assert "Codex worked in a git worktree of /home/a/book" in dialog.intro_label.text()
    assert dialog.checked_paths() == ()  # nothing is accepted unless the author ticks it
    assert not dialog.accept_button.isEnabled()


def test_the_current_files_diff_shows_beside_the_list(qtbot: QtBot):
    dialog = build(qtbot)
    assert "+# Guide" in dialog.diff_view.toPlainText()
    dialog.show_file("notes.md")
    assert dialog.diff_view.toPlainText().startswith("CONFLICT")
    dialog.show_file("logo.png")
    assert "Binary file (2048 bytes)" in dialog.diff_view.toPlainText()


def test_accept_selected_sends_exactly_the_ticked_files(qtbot: QtBot):
    dialog = build(qtbot)
    dialog.set_checked("old.txt")
    dialog.set_checked("notes.md")  # a conflict stays unticked
    got: list[tuple[str, object]] = []
    dialog.answered.connect(lambda interrupt_id, value: got.append((interrupt_id, value)))
    qtbot.mouseClick(dialog.accept_button, LEFT)
    assert got == [("ic", ChangesetValue(accepted=("old.txt",)))]
    assert not dialog.reject_button.isEnabled()  # until the sidecar takes it or refuses


def test_reject_all_sends_no_file(qtbot: QtBot):
    dialog = build(qtbot)
    dialog.set_checked("docs/guide.md")
    got: list[object] = []
    dialog.answered.connect(lambda _interrupt_id, value: got.append(value))
    qtbot.mouseClick(dialog.reject_button, LEFT)
    assert got == [ChangesetValue(accepted=())]


def test_a_refusal_is_shown_and_the_choice_comes_back(qtbot: QtBot):
    dialog = build(qtbot)
    dialog.set_checked("docs/guide.md")
    qtbot.mouseClick(dialog.accept_button, LEFT)
    dialog.show_resume_error(ErrorObject(code=ErrorCode.INVALID_RESUME_VALUE, message="gone"))
    assert dialog.error_label.isVisible() and dialog.accept_button.isEnabled()


def test_files_applied_under_a_plans_grant_are_named(qtbot: QtBot):
    dialog = build(qtbot, accepted_by_grant=("docs/api.md",))
    assert dialog.granted_label.text().endswith("docs/api.md")


def test_the_inbox_opens_the_changeset_and_accepting_resumes_with_the_ticked_path(
    qtbot: QtBot, fake_sender: FakeSender
):
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    window = MainWindow(state, controller)
    qtbot.addWidget(window)
    window.show()
    controller.refresh()
    fake_sender.last("thread/list")[1].resolve(ThreadListResult(threads=(thread_info("t1"),)))
    fake_sender.last("thread/get")[1].resolve(thread_result("t1"))
    with qtbot.waitSignal(window.interrupt_dialog_opened):
        controller.handle_run_event(RunScript()(InterruptEvent(interrupt=changeset())))
    window.dialogs["ic"].close()
    (action,) = window.inbox_button.menu().actions()
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        action.trigger()
    dialog = (opened.args or [None])[0]
    assert isinstance(dialog, ChangesetDialog)
    dialog.set_checked("docs/guide.md")
    qtbot.mouseClick(dialog.accept_button, LEFT)
    params, pending = fake_sender.last("run/resume")
    assert params == RunResumeParams(
        thread_id="t1", interrupt_id="ic", value={"accepted": ["docs/guide.md"]}
    )
    pending.resolve(RunRef(run_id="r1"))
