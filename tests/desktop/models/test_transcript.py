"""Event sequences → transcript state."""

from __future__ import annotations

from desktop.models.transcript import (
    INITIAL_PAGE,
    MAX_ROWS,
    MessageEntry,
    NoticeEntry,
    ToolCallEntry,
    Transcript,
)
from sidecar.protocol import (
    ApprovalInterrupt,
    ErrorInfo,
    InterruptEvent,
    MessageEvent,
    MessageInfo,
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


# --- pages of a long thread ------------------------------------------------------------------


def _page(first: int, last: int) -> list[tuple[int, MessageInfo]]:
    return [(n + 1, message("user", f"message {n}", f"m{n}")) for n in range(first, last + 1)]


def test_a_full_first_page_means_older_messages_exist() -> None:
    transcript = Transcript()
    transcript.load("t1", tuple(m for _, m in _page(0, INITIAL_PAGE - 1)))
    assert transcript.has_older and not transcript.has_newer
    transcript.load("t1", tuple(m for _, m in _page(0, 9)))
    assert not transcript.has_older
    assert transcript.oldest_message_id() == "m0"


def test_an_older_page_goes_before_the_first_entry() -> None:
    transcript = Transcript()
    recorder = Recorder(transcript)
    transcript.load("t1", tuple(m for _, m in _page(100, 109)))
    added = transcript.prepend(_page(90, 99), has_older=True)
    assert added == 10 and recorder.calls[-1] == ("prepended", 10)
    assert [e.text for e in transcript.entries if isinstance(e, MessageEntry)] == [
        f"message {n}" for n in range(90, 110)
    ]
    assert transcript.oldest_message_id() == "m90" and transcript.has_older
    entry = transcript.entry(0)
    assert isinstance(entry, MessageEntry) and entry.seq == 91


def test_a_tool_call_split_across_pages_stays_one_entry() -> None:
    transcript = Transcript()
    result = message("tool", "42", "m2", tool_call_id="c1")
    transcript.load("t1", (result, message("assistant", "It is 42.", "m3")))
    call = message("assistant", "", "m1", tool_calls=(CALL,))
    transcript.prepend([(1, message("user", "compute", "m0")), (2, call)], has_older=False)
    calls = [e for e in transcript.entries if isinstance(e, ToolCallEntry)]
    assert len(calls) == 1
    assert (calls[0].server, calls[0].tool, calls[0].state) == ("workspace", "write", "succeeded")
    assert transcript.row_of_message("m2") == transcript.entries.index(calls[0])


def test_a_page_far_back_detaches_from_the_live_end_until_newer_pages_join_it() -> None:
    transcript = Transcript()
    transcript.load("t1", tuple(m for _, m in _page(900, 999)))
    transcript.show_page(_page(10, 29), has_older=True, has_newer=True)
    assert transcript.row_of_message("m17") == 7 and transcript.row_of_message("m999") is None
    transcript.apply(Token(text="live text is not shown while detached"))
    assert len(transcript) == 20
    assert transcript.newest_seq() == 30
    transcript.append_newer(_page(30, 39), has_newer=False)
    assert len(transcript) == 30 and not transcript.has_newer
    transcript.apply(Token(text="live again"))
    assert transcript.entry(len(transcript) - 1) == MessageEntry(
        "assistant", "live again", streaming=True
    )


def test_a_long_stream_keeps_chunks_until_the_text_is_read() -> None:
    transcript = Transcript()
    appended: list[str] = []
    transcript.appended.connect(lambda _row, text: appended.append(text))
    for n in range(100_000):
        transcript.apply(Token(text=f"w{n} "))
    raw = transcript.peek(0)
    assert isinstance(raw, MessageEntry) and raw.length == sum(len(t) for t in appended) + 3
    entry = transcript.entry(0)
    assert isinstance(entry, MessageEntry)
    assert entry.text == "".join(f"w{n} " for n in range(100_000)) and not entry.chunks


def test_past_max_rows_a_page_at_one_end_drops_rows_at_the_other() -> None:
    transcript = Transcript()
    removed: list[tuple[int, int]] = []
    transcript.removed.connect(lambda first, last: removed.append((first, last)))
    transcript.load("t1", tuple(m for _, m in _page(1800, 1999)))  # the newest, without seqs
    transcript.prepend(_page(1600, 1799), has_older=True)
    transcript.prepend(_page(1400, 1599), has_older=True)
    assert len(transcript) == 600 and removed == []
    transcript.prepend(_page(1200, 1399), has_older=True)
    assert len(transcript) == MAX_ROWS and removed == [(600, 799)]
    assert transcript.has_newer  # detached: the newest rows went
    assert transcript.newest_seq() == 1800  # the page after is asked for by seq
    transcript.append_newer(_page(1800, 1999), has_newer=False)
    assert removed[-1] == (0, 199) and transcript.has_older and not transcript.has_newer
    assert transcript.oldest_message_id() == "m1400"
    ids = [e.message_id for e in transcript.entries if isinstance(e, MessageEntry)]
    assert ids == [f"m{n}" for n in range(1400, 2000)]
