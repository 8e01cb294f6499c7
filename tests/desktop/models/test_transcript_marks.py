"""Marks between messages: memory chips under the turn that made them, summary dividers where
a summarized range ends; both kept by message id, so they come back when the thread is shown
again or its pages move."""

from __future__ import annotations

from desktop.models.session import SessionState
from desktop.models.transcript import INITIAL_PAGE, MessageEntry, ToolCallEntry, Transcript
from desktop.models.transcript_marks import (
    ContextChipEntry,
    MemoryChipEntry,
    SummaryDividerEntry,
    chip_text,
    context_chip_text,
    divider_text,
)
from sidecar.protocol import (
    CompactionInfo,
    ContextEvent,
    ContextItemInfo,
    MemoryEvent,
    MemoryEventInfo,
    MemoryInfo,
    MessageEvent,
    RunEventParams,
    RunStarted,
    SummaryInfo,
    ThreadGetResult,
    Token,
    ToolCallInfo,
)
from tests.desktop.support import message, thread_info


def memory(key: str, text: str, tier: str = "workspace") -> MemoryInfo:
    return MemoryInfo.model_validate(
        {"key": key, "tier": tier, "text": text, "by": "agent", "created_at": 1.0,
         "updated_at": 1.0}
    )  # fmt: skip


def saved(key: str, text: str, tier: str = "workspace") -> MemoryEvent:
    return MemoryEvent(action="saved", key=key, memory=memory(key, text, tier))


def summary(from_seq: int, to_seq: int, text: str = "They talked.") -> SummaryInfo:
    return SummaryInfo(
        from_seq=from_seq, to_seq=to_seq, messages=to_seq - from_seq + 1, text=text, created_at=1.0
    )


def turns(count: int, start: int = 0) -> list:
    """`count` turns: a question q<n> and an answer a<n> each."""
    out = []
    for n in range(start, start + count):
        out += [
            message("user", f"question {n}", f"q{n}"),
            message("assistant", f"answer {n}", f"a{n}"),
        ]
    return out


def kinds(transcript: Transcript) -> list[str]:
    names = []
    for entry in transcript.entries:
        if isinstance(entry, MessageEntry):
            names.append(entry.message_id or "local")
        elif isinstance(entry, MemoryChipEntry):
            names.append(f"chip:{entry.key}")
        elif isinstance(entry, ContextChipEntry):
            names.append(f"context:{entry.report.used}")
        elif isinstance(entry, SummaryDividerEntry):
            names.append(f"divider:{entry.summary.to_seq}")
        elif isinstance(entry, ToolCallEntry):
            names.append(f"call:{entry.call_id}")
    return names


def test_a_memory_saved_during_a_turn_shows_as_a_chip_under_its_answer():
    transcript = Transcript()
    transcript.load("t1", tuple(turns(1)))
    inserted: list[int] = []
    transcript.inserted.connect(inserted.append)
    transcript.add_local_message("remember: my editor is Zofia")
    transcript.apply(RunStarted())
    transcript.apply(MessageEvent(message=message("user", "remember: my editor is Zofia", "q1")))
    transcript.apply(Token(text="Noted."))
    transcript.apply(MessageEvent(message=message("assistant", "Noted.", "a1")))
    transcript.apply(saved("m1", "The editor is Zofia."))
    transcript.apply(MemoryEvent(action="forgotten", key="m0", memory=memory("m0", "Old editor")))
    assert kinds(transcript) == ["q0", "a0", "q1", "a1", "chip:m1", "chip:m0"]
    assert inserted[-2:] == [4, 5]
    chip, forgot = transcript.entries[4], transcript.entries[5]
    assert isinstance(chip, MemoryChipEntry) and isinstance(forgot, MemoryChipEntry)
    assert chip_text(chip) == "Saved to workspace memory: The editor is Zofia."
    assert chip.actionable
    assert chip_text(forgot) == "Forgot: Old editor"
    assert not forgot.actionable


def test_a_failed_write_shows_why_and_offers_nothing():
    transcript = Transcript()
    transcript.load("t1", tuple(turns(1)))
    transcript.apply(MemoryEvent(action="failed", key="m9", error="empty text"))
    chip = transcript.entries[-1]
    assert isinstance(chip, MemoryChipEntry)
    assert chip_text(chip) == "Memory not saved: empty text"
    assert not chip.actionable


def test_a_chip_arriving_while_the_answer_streams_goes_above_it_and_the_stream_goes_on():
    transcript = Transcript()
    transcript.load("t1", tuple(turns(1)))
    transcript.apply(Token(text="Let me"))
    transcript.apply(saved("m1", "A fact."))
    transcript.apply(Token(text=" think."))
    assert kinds(transcript) == ["q0", "a0", "chip:m1", "local"]
    answer = transcript.entries[-1]
    assert isinstance(answer, MessageEntry) and answer.text == "Let me think."


def test_chips_come_back_under_their_turns_when_the_thread_is_opened_again():
    transcript = Transcript()
    history = tuple(turns(3))
    transcript.load("t1", history[:4])
    transcript.apply(MessageEvent(message=message("user", "question 2", "q2")))
    transcript.apply(saved("m1", "Saved before the answer."))
    transcript.apply(MessageEvent(message=message("assistant", "answer 2", "a2")))
    transcript.apply(saved("m2", "Saved with the answer."))
    transcript.clear("t2")
    transcript.load("t2", (message("user", "elsewhere", "x0", thread_id="t2"),))
    assert kinds(transcript) == ["x0"]
    transcript.clear("t1")
    transcript.load("t1", history)
    assert kinds(transcript) == ["q0", "a0", "q1", "a1", "q2", "chip:m1", "a2", "chip:m2"]


def test_a_turn_that_ran_in_the_background_shows_its_chips_when_its_thread_is_opened():
    state = SessionState()
    state.select("t2", loaded=True)
    events = [
        MessageEvent(message=message("user", "question 0", "q0")),
        MessageEvent(message=message("assistant", "answer 0", "a0")),
        saved("m1", "Background fact.", tier="account"),
    ]
    for seq, event in enumerate(events):
        state.apply_event(RunEventParams(run_id="r1", thread_id="t1", seq=seq, event=event))
    state.select("t1")
    state.load_thread(
        ThreadGetResult(
            thread=thread_info("t1"), messages=tuple(turns(1)), interrupts=(), status="idle"
        )
    )
    assert kinds(state.transcript) == ["q0", "a0", "chip:m1"]
    chip = state.transcript.entries[-1]
    assert isinstance(chip, MemoryChipEntry)
    assert chip_text(chip) == "Saved to account memory: Background fact."


def test_a_chip_follows_the_tool_calls_of_its_answer():
    call = ToolCallInfo(id="c1", server="memory", tool="write", arguments={})
    history = (
        message("user", "question 0", "q0"),
        message("assistant", "Saving.", "a0", tool_calls=(call,)),
        message("tool", "ok", "r0", tool_call_id="c1"),
        message("user", "question 1", "q1"),
    )
    transcript = Transcript()
    transcript.marks.add_chip("t1", MemoryChipEntry.of(saved("m1", "fact"), "a0"))
    transcript.load("t1", history)
    assert kinds(transcript) == ["q0", "a0", "call:c1", "chip:m1", "q1"]


def test_a_divider_stands_before_the_first_message_after_the_summary_and_shows_it():
    transcript = Transcript()
    transcript.load("t1", tuple(turns(4)))
    transcript.marks.add_chip("t1", MemoryChipEntry.of(saved("m1", "fact"), "a1"))
    transcript.load("t1", tuple(turns(4)))
    inserted: list[int] = []
    transcript.inserted.connect(inserted.append)
    transcript.add_summary("t1", summary(1, 4, "Chapters one and two."), "q2")
    assert kinds(transcript) == [
        *["q0", "a0", "q1", "a1", "chip:m1"],
        *["divider:4", "q2", "a2", "q3", "a3"],
    ]
    assert inserted == [5]
    divider = transcript.entries[5]
    assert isinstance(divider, SummaryDividerEntry)
    assert (
        divider_text(divider, expanded=False) == "Earlier messages summarized (4 messages) — show"
    )
    assert divider_text(divider, expanded=True).endswith("\n\nChapters one and two.")
    transcript.add_summary("t1", summary(1, 4), "q2")  # the same summary again: no second row
    assert len(inserted) == 1


def test_a_divider_for_messages_not_shown_yet_appears_with_their_page():
    transcript = Transcript()
    history = turns(10)
    pairs = list(enumerate(history, start=1))
    transcript.clear("t1")
    transcript.show_page(pairs[10:], has_older=True, has_newer=False)
    transcript.add_summary("t1", summary(1, 3), "a1")
    transcript.add_summary("t1", summary(1, 10), "q5")
    assert "divider:3" not in kinds(transcript)
    assert kinds(transcript)[:2] == ["divider:10", "q5"]
    transcript.prepend(pairs[:10], has_older=False)
    names = kinds(transcript)
    assert names.index("divider:3") == names.index("a1") - 1
    assert names.count("divider:10") == 1
    assert names.index("divider:10") == names.index("q5") - 1


def test_a_compaction_in_the_shown_thread_asks_for_its_summaries_again():
    transcript = Transcript()
    transcript.load("t1", tuple(turns(1)))
    stale: list[str] = []
    transcript.summaries_stale.connect(stale.append)
    assert transcript.marks.wants_summaries("t1")
    assert not transcript.marks.wants_summaries("t1")
    context = ContextEvent(
        window=8000, budget=6000, used=100, tokenizer="estimate",
        compaction=CompactionInfo(performed=True, reason="full", from_seq=1, to_seq=2),
    )  # fmt: skip
    transcript.apply(context)
    assert stale == ["t1"]
    assert transcript.marks.wants_summaries("t1")


def test_revising_a_chip_updates_its_row():
    transcript = Transcript()
    transcript.load("t1", tuple(turns(1)))
    transcript.apply(saved("m1", "A fact."))
    updated: list[int] = []
    transcript.updated.connect(updated.append)
    chip = transcript.entries[-1]
    assert isinstance(chip, MemoryChipEntry)
    transcript.revise_chip(chip, "updated", memory("m1", "A fact.", tier="account"))
    assert updated == [2]
    assert chip_text(chip) == "Updated in account memory: A fact."


def test_chips_of_messages_walked_back_to_from_a_jump_appear_with_their_page():
    transcript = Transcript()
    transcript.clear("t1")
    pairs = list(enumerate(turns(6), start=1))
    transcript.marks.add_chip("t1", MemoryChipEntry.of(saved("m1", "fact"), "a4"))
    transcript.show_page(pairs[:4], has_older=False, has_newer=True)
    inserted: list[int] = []
    transcript.inserted.connect(inserted.append)
    transcript.append_newer(pairs[4:], has_newer=False)
    assert kinds(transcript) == [
        *["q0", "a0", "q1", "a1", "q2", "a2", "q3", "a3"],
        *["q4", "a4", "chip:m1", "q5", "a5"],
    ]
    assert inserted == [*range(4, 12), 10]  # the page's messages, then the chip between them


def context(used: int, question: str | None, *, left_out: int = 0) -> ContextEvent:
    items = (
        ContextItemInfo(kind="identity", label=".atrium/AGENT.md", tokens=40, included=True,
                        reason="identity files are always in"),
        ContextItemInfo(kind="memory", label="The editor is Zofia.", tokens=9, included=True,
                        reason="matches the message"),
        ContextItemInfo(kind="memory", label="An old note.", tokens=7, included=False,
                        reason="over the memories' share"),
    )  # fmt: skip
    return ContextEvent(
        window=128_000, budget=120_000, used=used, tokenizer="o200k_base", items=items,
        left_out_messages=left_out, message_id=question,
    )  # fmt: skip


def test_each_turn_shows_what_the_agent_saw_as_a_chip_under_the_authors_message():
    transcript = Transcript()
    transcript.load("t1", tuple(turns(1)))
    transcript.add_local_message("who is my editor?")
    transcript.apply(RunStarted())
    transcript.apply(context(1_234, "turn1:user", left_out=12))
    transcript.apply(Token(text="Zofia"))
    transcript.apply(saved("m1", "Asked about the editor."))
    transcript.apply(MessageEvent(message=message("assistant", "Zofia.", "a1")))
    assert kinds(transcript) == ["q0", "a0", "local", "context:1234", "chip:m1", "a1"]
    chip = transcript.entries[3]
    assert isinstance(chip, ContextChipEntry) and chip.anchor == "turn1:user"
    assert context_chip_text(chip, expanded=False) == (
        "Context: 2 parts, 13 left out — show"  # token counts only in the details
    )
    assert context_chip_text(chip, expanded=True).splitlines()[2:] == [
        "1234 of 120000 tokens (window 128000, o200k_base)",
        "[in ] identity: .atrium/AGENT.md — 40 tokens, identity files are always in",
        "[in ] memory: The editor is Zofia. — 9 tokens, matches the message",
        "[out] memory: An old note. — 7 tokens, over the memories' share",
    ]

    # Opened again with the ids the sidecar gave the turn: the chip follows its question,
    # ahead of the memory chips of the same message (the report named the question, so the
    # memory saved before the answer follows it too, not the turn before).
    history = (*turns(1), message("user", "who is my editor?", "turn1:user"),
               message("assistant", "Zofia.", "a1"))  # fmt: skip
    transcript.marks.add_chip("t1", MemoryChipEntry.of(saved("m2", "b"), "turn1:user"))
    transcript.clear("t1")
    transcript.load("t1", history)
    assert kinds(transcript) == ["q0", "a0", "turn1:user", "context:1234", "chip:m1", "chip:m2",
                                 "a1"]  # fmt: skip


def test_stored_context_reports_of_earlier_sessions_follow_their_questions_once():
    transcript = Transcript()
    history = tuple(turns(3))
    transcript.load("t1", history)
    transcript.apply(context(500, "q2"))  # this session's, live
    stored = tuple(
        MemoryEventInfo(run_id=f"r{n}", seq=0, after_message=f"q{n}", event=context(500, f"q{n}"))
        if n == 2
        else MemoryEventInfo(run_id=f"r{n}", seq=0, after_message=f"q{n}",
                             event=context(100 + n, f"q{n}"))
        for n in range(3)
    )  # fmt: skip
    transcript.add_stored_chips("t1", stored)
    assert kinds(transcript) == ["q0", "context:100", "a0", "q1", "context:101", "a1", "q2",
                                 "a2", "context:500"]  # fmt: skip
    transcript.clear("t1")
    transcript.load("t1", history)
    assert kinds(transcript) == ["q0", "context:100", "a0", "q1", "context:101", "a1", "q2",
                                 "context:500", "a2"]  # fmt: skip


def test_a_day_of_300_turns_shows_one_context_chip_per_turn_in_place():
    transcript = Transcript()
    history = tuple(turns(300))
    stored = tuple(
        MemoryEventInfo(run_id=f"r{n}", seq=0, after_message=f"q{n}", event=context(n, f"q{n}"))
        for n in range(300)
    )
    transcript.load("t1", history[-INITIAL_PAGE:])
    transcript.add_stored_chips("t1", stored)
    shown = kinds(transcript)
    first = 300 - INITIAL_PAGE // 2
    assert shown[:3] == [f"q{first}", f"context:{first}", f"a{first}"]
    assert shown.count("context:299") == 1
    assert sum(k.startswith("context:") for k in shown) == INITIAL_PAGE // 2


def test_a_context_chip_stays_right_under_its_question_when_tool_calls_follow():
    """One rule for a reload and a late stored report: the context chip right after the
    author's message, memory chips after the tool calls of the turn."""
    call = ToolCallInfo(id="c1", server="memory", tool="write", arguments={})
    history = (
        message("user", "question 0", "q0"),
        message("assistant", "", "x0", tool_calls=(call,)),
        message("tool", "ok", "r0", tool_call_id="c1"),
        message("assistant", "answer 0", "a0"),
    )
    stored = (MemoryEventInfo(run_id="r", seq=0, after_message="q0", event=context(7, "q0")),)
    transcript = Transcript()
    transcript.marks.add_chip("t1", MemoryChipEntry.of(saved("m1", "fact"), "q0"))
    transcript.load("t1", history)
    transcript.add_stored_chips("t1", stored)
    assert kinds(transcript) == ["q0", "context:7", "call:c1", "chip:m1", "a0"]
    transcript.clear("t1")
    transcript.load("t1", history)
    assert kinds(transcript) == ["q0", "context:7", "call:c1", "chip:m1", "a0"]


def test_a_context_chip_says_how_many_tools_the_turn_left_for_the_tool_search():
    report = context(1_234, "turn1:user").model_copy(
        update={"tools_sent": 19, "tools_deferred": 316}
    )
    chip = ContextChipEntry(report, "turn1:user")
    assert context_chip_text(chip, expanded=False) == (
        "Context: 2 parts, 1 left out, 316 tools deferred — show"
    )
    assert context_chip_text(chip, expanded=True).splitlines()[3] == (
        "Tools: 19 sent, 316 deferred (found with tool search)"
    )
    one = ContextChipEntry(report.model_copy(update={"tools_deferred": 1}), "turn1:user")
    assert context_chip_text(one, expanded=False).endswith(", 1 tool deferred — show")
    every = ContextChipEntry(report.model_copy(update={"tools_deferred": 0}), "turn1:user")
    assert "deferred" not in context_chip_text(every, expanded=True)
    assert context_chip_text(every, expanded=True).splitlines()[3] == "Tools: 19 sent"
