"""`SessionState`: run status, inbox, thread list and transcript from replies and events."""

from __future__ import annotations

import subprocess
import sys

from desktop.models.session import SessionState
from desktop.models.threads import RunState, describe_run
from desktop.models.transcript import MessageEntry
from sidecar.protocol import (
    ErrorInfo,
    InterruptClosed,
    InterruptEvent,
    NodeStarted,
    QuestionInterrupt,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
    ThreadGetResult,
    Token,
)
from tests.desktop.support import RunScript, message, thread_info


def question(interrupt_id: str = "q1") -> QuestionInterrupt:
    return QuestionInterrupt(id=interrupt_id, title="Q", body="", question="Which?")


def loaded(state: SessionState, thread_id: str = "t1", **fields: object) -> None:
    result = ThreadGetResult.model_validate(
        {"thread": thread_info(thread_id), "messages": (), "interrupts": (), "status": "idle"}
        | fields
    )
    state.load_thread(result)


def selected_state(thread_id: str = "t1") -> SessionState:
    state = SessionState()
    state.set_threads((thread_info("t1"), thread_info("t2", "Other")))
    state.select(thread_id)
    loaded(state, thread_id)
    return state


def test_run_status_follows_the_run_through_to_completion():
    state = selected_state()
    run = RunScript()
    changes: list[str] = []
    state.run_state_changed.connect(changes.append)
    state.apply_event(run(RunStarted()))
    state.apply_event(run(NodeStarted(node="planner")))
    assert state.run_state() == RunState("running", "r1", "planner")
    assert state.threads.get("t1").status == "running"  # type: ignore[union-attr]
    state.apply_event(run(RunFinished()))
    assert state.run_state().status == "idle"
    assert changes == ["t1", "t1", "t1"]


def test_failed_and_cancelled_runs_can_be_retried():
    state = selected_state()
    state.apply_event(RunScript(run_id="a")(RunFailed(error=ErrorInfo(code="x", message="no"))))
    assert state.run_state() == RunState("failed", "a", error="no")
    assert state.run_state().can_retry
    state.apply_event(RunScript(run_id="b")(RunCancelled()))
    assert state.run_state().status == "cancelled" and state.run_state().can_retry


def test_interrupts_go_to_the_inbox_and_a_completed_turn_clears_them():
    state = selected_state()
    added: list[tuple[str, str]] = []
    state.inbox.added.connect(lambda thread_id, interrupt: added.append((thread_id, interrupt.id)))
    run = RunScript()
    state.apply_event(run(InterruptEvent(interrupt=question())))
    state.apply_event(run(RunFinished(outcome="interrupted")))
    assert state.run_state().status == "interrupted"
    assert added == [("t1", "q1")] and state.inbox.count("t1") == 1
    state.apply_event(RunScript(run_id="r2")(RunFinished()))
    assert len(state.inbox) == 0


def test_a_live_interrupt_closed_by_the_sidecar_leaves_the_inbox_while_others_stay():
    state = selected_state()
    run = RunScript()
    state.apply_event(run(InterruptEvent(interrupt=question("q1"))))
    state.apply_event(run(InterruptEvent(interrupt=question("q2"))))
    state.apply_event(run(InterruptClosed(interrupt_id="q1")))
    assert [i.id for _, i in state.inbox.pending("t1")] == ["q2"]
    assert state.run_state().status == "running"


def test_a_failed_turn_with_pending_interrupts_asks_for_a_resync():
    state = selected_state()
    resyncs: list[str] = []
    state.resync_needed.connect(resyncs.append)
    state.inbox.add("t1", question())
    state.apply_event(RunScript()(RunFailed(error=ErrorInfo(code="x", message="no"))))
    assert resyncs == ["t1"]


def test_events_of_other_threads_leave_the_transcript_alone():
    state = selected_state("t1")
    state.apply_event(RunScript(thread_id="t2")(Token(text="elsewhere")))
    assert len(state.transcript) == 0
    assert state.run_state("t2").status == "running"


def test_events_during_loading_are_held_and_replayed_after_the_load():
    state = selected_state("t1")
    state.select("t2")
    run = RunScript(thread_id="t2")
    state.apply_event(run(Token(text="Hi")))
    assert state.loading and len(state.transcript) == 0
    loaded(state, "t2", messages=(message("user", "hello", "m1", thread_id="t2"),))
    assert state.transcript.entries == (
        MessageEntry("user", "hello", "m1"),
        MessageEntry("assistant", "Hi", streaming=True),
    )


def test_duplicate_events_are_ignored_and_gaps_ask_for_a_resync():
    state = selected_state()
    resyncs: list[str] = []
    state.resync_needed.connect(resyncs.append)
    run = RunScript()
    first = run(Token(text="a"))
    state.apply_event(first)
    state.apply_event(first)
    run(Token(text="lost"))
    state.apply_event(run(Token(text="c")))
    assert state.transcript.entries == (MessageEntry("assistant", "ac", streaming=True),)
    assert resyncs == ["t1"]


def test_sending_shows_the_message_and_marks_the_thread_running():
    state = selected_state()
    state.note_message_sent("t1", "hello")
    assert state.transcript.entries == (MessageEntry("user", "hello", local=True),)
    assert state.run_state().is_running
    state.note_run_refused("t1", "idle", "busy")
    assert state.run_state() == RunState("idle", error="busy")


def test_removing_the_selected_thread_selects_the_next():
    state = selected_state("t1")
    selections: list[str | None] = []
    state.selection_changed.connect(selections.append)
    state.inbox.add("t1", question())
    state.remove_thread("t1")
    assert selections == ["t2"] and state.loading
    assert len(state.inbox) == 0


def test_loading_a_thread_takes_its_status_error_and_interrupts():
    state = selected_state("t1")
    loaded(state, "t1", status="failed", last_error="boom", interrupts=(question(),))
    assert state.run_state() == RunState("failed", error="boom")
    assert state.inbox.count("t1") == 1
    loaded(state, "t1")
    assert state.inbox.count("t1") == 0


def test_the_status_line_describes_each_state():
    assert describe_run(RunState()) == "Ready"
    assert describe_run(RunState("running", node="tool")) == "Using a tool…"
    assert describe_run(RunState("running", node="planner")) == "Thinking…"
    assert describe_run(RunState("running", node="some_new_step")) == "Working…"
    assert describe_run(RunState("running")) == "Working…"
    assert describe_run(RunState("interrupted"), 1) == "Waiting for your decision"
    assert describe_run(RunState("interrupted"), 3) == "Waiting for 3 decisions"
    assert describe_run(RunState("failed", error="x")) == "Failed: x"
    assert describe_run(RunState("cancelled")) == "Cancelled"


def test_the_pure_models_do_not_import_qt():
    code = "import sys, desktop.models; assert 'PySide6' not in sys.modules, 'Qt imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
