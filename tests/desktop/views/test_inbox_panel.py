"""The inbox panel in the main window: several pending interrupts (the main agent's and its
subagents'), the newest opening, the rest waiting, each answered in any order."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.escalation_dialog import EscalationDialog
from desktop.views.main_window import MainWindow
from desktop.views.plan_dialog import PlanApprovalDialog
from desktop.views.question_dialog import QuestionDialog
from sidecar.protocol import (
    ApprovalInterrupt,
    ErrorCode,
    ErrorObject,
    InterruptEvent,
    InterruptInfo,
    PlanGetResult,
    QuestionInterrupt,
    RunFinished,
    RunRef,
    RunResumeParams,
    ThreadGetResult,
    ThreadListResult,
)
from tests.desktop.coord_support import escalation, plan, plan_approval, task
from tests.desktop.support import FakeSender, RunScript, thread_info

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """A window with thread t1 loaded, whose plan has tasks a ("Task a") and b."""
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    window = MainWindow(state, controller, coord=CoordController(fake_sender.api))
    qtbot.addWidget(window)
    window.show()
    controller.refresh()
    fake_sender.last("thread/list")[1].resolve(ThreadListResult(threads=(thread_info("t1"),)))
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(thread=thread_info("t1"), messages=(), interrupts=(), status="idle")
    )
    plans = (plan(task("a", "running"), task("b", "running")),)
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=False, plans=plans)
    )
    return window


def question(interrupt_id: str = "iq", task_id: str | None = "a") -> QuestionInterrupt:
    return QuestionInterrupt(
        id=interrupt_id, title="Which tense?", body="", question="Which tense?",
        choices=("past", "present"), task_id=task_id,
    )  # fmt: skip


def approval(interrupt_id: str = "iw", task_id: str | None = "b") -> ApprovalInterrupt:
    return ApprovalInterrupt(
        id=interrupt_id, title="Write b.md", body="", server="workspace", tool="write",
        arguments={"path": "b.md"}, call_id="cb", task_id=task_id,
    )  # fmt: skip


def arrive(qtbot: QtBot, window: MainWindow, *interrupts: InterruptInfo) -> object:
    """Deliver the interrupts in one burst and return the dialog that opened."""
    run = RunScript()
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        for interrupt in interrupts:
            window.controller.handle_run_event(run(InterruptEvent(interrupt=interrupt)))
        window.controller.handle_run_event(run(RunFinished(outcome="interrupted")))
    return (opened.args or [None])[0]


def test_a_burst_opens_only_the_newest_and_the_inbox_lists_all(qtbot: QtBot, window: MainWindow):
    dialog = arrive(qtbot, window, question(), approval())
    assert isinstance(dialog, ApprovalDialog) and list(window.dialogs) == ["iw"]
    assert window.inbox_panel.interrupt_ids() == ["iw", "iq"]
    texts = [window.inbox_panel.list.item(r).text() for r in range(2)]
    assert texts[0] == "Approval: Write b.md\nfrom task “Task b” (b)"
    assert texts[1] == "Question: Which tense?\nfrom task “Task a” (a)"
    assert window.inbox_panel.count_label.text() == "2 waiting"


def test_two_pending_interrupts_answered_in_reverse_order_send_their_own_ids(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    newest = arrive(qtbot, window, question(), approval())
    assert isinstance(newest, ApprovalDialog)
    qtbot.mouseClick(newest.allow_once_button, LEFT)
    params, pending = fake_sender.last("run/resume")
    assert params == RunResumeParams(
        thread_id="t1", interrupt_id="iw", value={"decision": "allow_once"}
    )
    pending.resolve(RunRef(run_id="r2"))
    assert window.inbox_panel.interrupt_ids() == ["iq"] and window.dialogs == {}
    window.inbox_panel.list.setCurrentRow(0)
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        qtbot.mouseClick(window.inbox_panel.open_button, LEFT)
    older = (opened.args or [None])[0]
    assert isinstance(older, QuestionDialog)
    older.choice_buttons[1].setChecked(True)
    qtbot.mouseClick(older.answer_button, LEFT)
    params, pending = fake_sender.last("run/resume")
    assert params == RunResumeParams(thread_id="t1", interrupt_id="iq", value={"answer": "present"})
    pending.resolve(RunRef(run_id="r3"))
    assert len(window.state.inbox) == 0 and window.inbox_panel.interrupt_ids() == []


def test_an_interrupt_arriving_while_a_dialog_is_open_waits_in_the_list(
    qtbot: QtBot, window: MainWindow
):
    arrive(qtbot, window, question())
    run = RunScript(run_id="r9")
    window.controller.handle_run_event(run(InterruptEvent(interrupt=approval())))
    QCoreApplication.processEvents()  # a (wrongly) scheduled opening would run now
    assert list(window.dialogs) == ["iq"]
    assert window.inbox_panel.interrupt_ids() == ["iw", "iq"]


def test_a_refused_plan_stays_open_with_the_error_and_an_accepted_one_closes(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    dialog = arrive(qtbot, window, plan_approval("ip"))
    assert isinstance(dialog, PlanApprovalDialog)
    qtbot.mouseClick(dialog.approve_button, LEFT)
    params, pending = fake_sender.last("run/resume")
    assert params == RunResumeParams(thread_id="t1", interrupt_id="ip",
                                     value={"decision": "approve"})  # fmt: skip
    pending.reject(ErrorObject(code=ErrorCode.INVALID_RESUME_VALUE, message="cycle a → a"))
    assert dialog.isVisible() and "cycle a → a" in dialog.error_label.text()
    assert window.dialogs == {"ip": dialog} and window.inbox_panel.interrupt_ids() == ["ip"]
    dialog.reason_edit.setText("later")
    qtbot.mouseClick(dialog.reject_button, LEFT)
    params, pending = fake_sender.last("run/resume")
    assert params.model_dump()["value"] == {"decision": "reject", "reason": "later"}
    pending.resolve(RunRef(run_id="r2"))
    assert window.dialogs == {} and not dialog.isVisible()


def test_an_escalation_dialog_names_the_task_from_the_run_tree(qtbot: QtBot, window: MainWindow):
    dialog = arrive(qtbot, window, escalation("ie"))
    assert isinstance(dialog, EscalationDialog)
    assert dialog.task_label.text() == "Task a (a)"


def test_the_inbox_lists_only_the_selected_threads_interrupts(qtbot: QtBot, window: MainWindow):
    window.controller.handle_run_event(
        RunScript(thread_id="t2")(InterruptEvent(interrupt=question(task_id=None)))
    )
    assert window.inbox_panel.interrupt_ids() == []
    assert window.inbox_button.text() == "Waiting: 1"
