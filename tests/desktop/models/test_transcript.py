"""Event sequences → transcript state."""

from __future__ import annotations

from desktop.models.transcript import MessageEntry, NoticeEntry, ToolCallEntry, Transcript
from sidecar.protocol import (
    ApprovalInterrupt,
    ErrorInfo,
    InterruptEvent,
    MessageEvent,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
    Token,
    ToolCall,
    ToolCallInfo,
    ToolProgress,
    ToolResult,
)
from tests.desktop.support import message

CALL = ToolCallInfo(id="c1", server="workspace", tool="write", arguments={"path": "a.md"})


def approval(call_id: str = "c1") -> ApprovalInterrupt:
    return ApprovalInterrupt(
        id="i1", title="Write", body="", server="workspace", tool="write",
        arguments={"path": "a.md"}, call_id=call_id, diff="+x",
    )  # fmt: skip


class Recorder:
    def __init__(self, transcript: Transcript) -> None:
        self.calls: list[tuple[str, int]] = []
        transcript.inserted.connect(lambda row: self.calls.append(("inserted", row)))
        transcript.updated.connect(lambda row: self.calls.append(("updated", row)))
        transcript.appended.connect(lambda row, _text: self.calls.append(("appended", row)))
        transcript.prepended.connect(lambda count: self.calls.append(("prepended", count)))
        transcript.reset.connect(lambda: self.calls.append(("reset", -1)))


def test_tokens_build_one_streaming_answer_that_the_message_finalizes():
    transcript = Transcript()
    recorder = Recorder(transcript)
    for text in ("Hel", "lo", "!"):
        transcript.apply(Token(text=text))
    (entry,) = transcript.entries
    assert entry == MessageEntry("assistant", "Hello!", streaming=True)
    transcript.apply(MessageEvent(message=message("assistant", "Hello!", "m2")))
    assert transcript.entries == (MessageEntry("assistant", "Hello!", "m2"),)
    assert recorder.calls == [("inserted", 0), ("appended", 0), ("appended", 0), ("updated", 0)]


def test_run_finished_ends_streaming_even_without_a_message():
    transcript = Transcript()
    transcript.apply(Token(text="partial"))
    transcript.apply(RunFinished())
    assert transcript.entries == (MessageEntry("assistant", "partial"),)


def test_the_local_user_message_is_adopted_by_its_echo():
    transcript = Transcript()
    transcript.add_local_message("hi")
    transcript.apply(MessageEvent(message=message("user", "hi", "m1")))
    transcript.apply(MessageEvent(message=message("user", "hi", "m1")))
    assert transcript.entries == (MessageEntry("user", "hi", "m1"),)


def test_tool_calls_pair_with_results_and_progress():
    transcript = Transcript()
    transcript.apply(MessageEvent(message=message("assistant", "", "m1", tool_calls=(CALL,))))
    transcript.apply(ToolCall(call_id="c1", server="workspace", tool="write", arguments={}))
    transcript.apply(ToolProgress(call_id="c1", progress=1, total=4, message="writing"))
    (call,) = transcript.entries
    assert isinstance(call, ToolCallEntry)
    assert (call.state, call.progress, call.total, call.progress_message) == (
        "pending", 1, 4, "writing",
    )  # fmt: skip
    transcript.apply(ToolResult(call_id="c1", is_error=False, content="ok"))
    transcript.apply(MessageEvent(message=message("tool", "ok", "m2", tool_call_id="c1")))
    assert len(transcript) == 1
    assert (call.state, call.result) == ("succeeded", "ok")


def test_a_failed_tool_result_marks_the_call_failed():
    transcript = Transcript()
    transcript.apply(ToolCall(call_id="c1", server="s", tool="t", arguments={}))
    transcript.apply(ToolResult(call_id="c1", is_error=True, content="denied"))
    (call,) = transcript.entries
    assert isinstance(call, ToolCallEntry) and call.state == "failed"


def test_an_approval_interrupt_marks_its_call_until_the_resumed_run_starts():
    transcript = Transcript()
    transcript.apply(InterruptEvent(interrupt=approval()))
    (call,) = transcript.entries
    assert isinstance(call, ToolCallEntry)
    assert (call.server, call.tool, call.state) == ("workspace", "write", "awaiting_approval")
    transcript.apply(RunFinished(outcome="interrupted"))
    assert call.state == "awaiting_approval"
    transcript.apply(RunStarted(resumed=True))
    assert call.state == "pending"


def test_failed_and_cancelled_runs_leave_a_notice():
    transcript = Transcript()
    transcript.apply(Token(text="so far"))
    transcript.apply(RunFailed(error=ErrorInfo(code="x", message="model down")))
    transcript.apply(RunCancelled())
    assert transcript.entries[1:] == (
        NoticeEntry("failed", "model down"),
        NoticeEntry("cancelled", "Cancelled"),
    )
    first = transcript.entries[0]
    assert isinstance(first, MessageEntry) and not first.streaming


def test_load_rebuilds_messages_calls_results_interrupts_and_the_last_error():
    transcript = Transcript()
    recorder = Recorder(transcript)
    second = ToolCallInfo(id="c2", server="workspace", tool="write", arguments={})
    messages = (
        message("user", "write it", "m1"),
        message("assistant", "Sure.", "m2", tool_calls=(CALL, second)),
        message("tool", "done", "m3", tool_call_id="c1"),
    )
    transcript.load("t1", messages, (approval("c2"),), last_error="boom")
    assert transcript.thread_id == "t1"
    user, answer, first_call, second_call, notice = transcript.entries
    assert user == MessageEntry("user", "write it", "m1")
    assert answer == MessageEntry("assistant", "Sure.", "m2")
    assert isinstance(first_call, ToolCallEntry) and first_call.state == "succeeded"
    assert isinstance(second_call, ToolCallEntry) and second_call.state == "awaiting_approval"
    assert notice == NoticeEntry("failed", "boom")
    assert recorder.calls == [("reset", -1)]
