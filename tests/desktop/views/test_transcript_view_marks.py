"""Memory chips and summary dividers in `TranscriptView`, with the real memory controller over a
fake sender: chips appear for memory events and act on their memory when clicked; dividers
appear where a summary ends and show it; a long thread full of both renders and scrolls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.memory import MemoryController
from desktop.models.memory import MemoryState
from desktop.models.transcript import MessageEntry, Transcript
from desktop.models.transcript_marks import MemoryChipEntry, SummaryDividerEntry
from desktop.views.transcript_view import TranscriptView
from sidecar.protocol import (
    CompactionParams,
    CompactionResult,
    ContextEvent,
    ContextItemInfo,
    MemoryEvent,
    MemoryInfo,
    MemoryKeyParams,
    MemoryUpdateParams,
    MessageEvent,
    MessageInfo,
    SummaryInfo,
)
from tests.desktop.support import FakeSender, message

TIMEOUT_MS = 10_000


def memory(key: str, text: str, tier: str = "workspace") -> MemoryInfo:
    return MemoryInfo.model_validate(
        {"key": key, "tier": tier, "text": text, "by": "agent", "created_at": 1.0,
         "updated_at": 1.0}
    )  # fmt: skip


def saved(key: str, text: str, tier: str = "workspace") -> MemoryEvent:
    return MemoryEvent(action="saved", key=key, memory=memory(key, text, tier))


def summary(from_seq: int, to_seq: int, text: str) -> SummaryInfo:
    return SummaryInfo(
        from_seq=from_seq, to_seq=to_seq, messages=to_seq - from_seq + 1, text=text, created_at=1.0
    )


def conversation(count: int) -> tuple[MessageInfo, ...]:
    """`count` messages, m0..m<count-1>, the author's and the agent's in turn (seq = n + 1)."""
    return tuple(
        message("user" if n % 2 == 0 else "assistant", f"message {n}", f"m{n}")
        for n in range(count)
    )


@pytest.fixture
def transcript() -> Transcript:
    return Transcript()


@pytest.fixture
def controller(fake_sender: FakeSender) -> MemoryController:
    return MemoryController(fake_sender.api, MemoryState())


@pytest.fixture
def view(
    qtbot: QtBot, transcript: Transcript, controller: MemoryController
) -> Iterator[TranscriptView]:
    view = TranscriptView(transcript)
    view.attach_memory(controller)
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    yield view


def click_row(qtbot: QtBot, view: TranscriptView, row: int) -> None:
    view.list_view.scrollTo(view.model.index(row))
    qtbot.waitUntil(lambda: view.row_is_visible(row), timeout=TIMEOUT_MS)
    rect = view.list_view.visualRect(view.model.index(row))
    qtbot.mouseClick(view.list_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def answer_summaries(
    fake_sender: FakeSender, summaries: tuple[SummaryInfo, ...], messages: tuple[MessageInfo, ...]
) -> None:
    """Answer `thread/compaction` as the sidecar does: each summary names the message after it
    (message seq n is `messages[n - 1]`, and every one of them shows as a row)."""
    _params, pending = fake_sender.last("thread/compaction")
    named = tuple(
        s.model_copy(
            update={"next_id": messages[s.to_seq].id if s.to_seq < len(messages) else None}
        )
        for s in summaries
    )
    pending.resolve(CompactionResult(mode="auto", compact_next=False, summaries=named))
    assert "thread/messages" not in fake_sender.methods()


def open_thread(transcript: Transcript, messages: tuple[MessageInfo, ...]) -> None:
    transcript.clear("t1")
    transcript.load("t1", messages)


def test_memory_events_show_as_chips_under_the_turn(
    qtbot: QtBot, view: TranscriptView, transcript: Transcript, fake_sender: FakeSender
) -> None:
    open_thread(transcript, conversation(2))
    transcript.apply(MessageEvent(message=message("user", "remember my editor", "m2")))
    transcript.apply(MessageEvent(message=message("assistant", "Noted.", "m3")))
    transcript.apply(saved("k1", "The editor is Zofia."))
    transcript.apply(MemoryEvent(action="forgotten", key="k0", memory=memory("k0", "Old editor")))
    assert view.model.rowCount() == 6
    assert view.shown_text(4) == "◆ Saved to workspace memory: The editor is Zofia."
    assert view.shown_text(5) == "◆ Forgot: Old editor"
    assert view.model.index(4).data(Qt.ItemDataRole.ToolTipRole) == "The editor is Zofia."
    qtbot.waitUntil(lambda: view.row_is_visible(5), timeout=TIMEOUT_MS)


def test_clicking_a_chip_and_forget_forgets_that_memory(
    qtbot: QtBot, view: TranscriptView, transcript: Transcript, fake_sender: FakeSender
) -> None:
    open_thread(transcript, conversation(2))
    transcript.apply(saved("k1", "The editor is Zofia."))
    click_row(qtbot, view, 2)
    menu = view.chip_menu
    assert menu is not None and menu.forget_action.isEnabled()
    menu.forget_action.trigger()
    params, pending = fake_sender.last("memory/forget")
    assert params == MemoryKeyParams(thread_id="t1", key="k1")
    pending.resolve(memory("k1", "The editor is Zofia."))
    chip = transcript.entry(2)
    assert isinstance(chip, MemoryChipEntry) and chip.action == "forgotten"
    assert view.shown_text(2) == "◆ Forgot: The editor is Zofia."
    menu = view.open_chip_menu(2)
    assert menu is not None and not menu.forget_action.isEnabled()


def test_move_to_tier_offers_the_other_tiers_and_sends_the_chosen_one(
    qtbot: QtBot, view: TranscriptView, transcript: Transcript, fake_sender: FakeSender
) -> None:
    open_thread(transcript, conversation(2))
    transcript.apply(saved("k1", "Tea, no sugar.", tier="thread"))
    click_row(qtbot, view, 2)
    menu = view.chip_menu
    assert menu is not None
    assert sorted(menu.tier_actions) == ["account", "channel", "workspace"]
    menu.tier_actions["account"].trigger()
    params, pending = fake_sender.last("memory/update")
    assert params == MemoryUpdateParams(thread_id="t1", key="k1", tier="account")
    pending.resolve(memory("k1", "Tea, no sugar.", tier="account"))
    assert view.shown_text(2) == "◆ Updated in account memory: Tea, no sugar."


def test_edit_sends_the_new_text(
    qtbot: QtBot, view: TranscriptView, transcript: Transcript, fake_sender: FakeSender
) -> None:
    open_thread(transcript, conversation(2))
    transcript.apply(saved("k1", "The editor is Zofia."))
    menu = view.open_chip_menu(2)
    assert menu is not None
    menu.edit_action.trigger()
    actions = view.chip_actions
    assert actions is not None and actions.editor is not None
    assert actions.editor.textValue() == "The editor is Zofia."
    actions.editor.setTextValue("The editor is Zofia Quintanilla-Brandt.")
    actions.editor.accept()
    params, _pending = fake_sender.last("memory/update")
    assert params == MemoryUpdateParams(
        thread_id="t1", key="k1", text="The editor is Zofia Quintanilla-Brandt."
    )


def test_a_divider_stands_where_the_summary_ends_and_a_click_shows_the_summary(
    qtbot: QtBot, view: TranscriptView, transcript: Transcript, fake_sender: FakeSender
) -> None:
    messages = conversation(12)
    open_thread(transcript, messages)
    assert fake_sender.last("thread/compaction")[0] == CompactionParams(thread_id="t1")
    answer_summaries(fake_sender, (summary(1, 6, "The first three turns."),), messages)
    divider = transcript.entry(6)
    assert isinstance(divider, SummaryDividerEntry)
    before, after = transcript.entry(5), transcript.entry(7)
    assert isinstance(before, MessageEntry) and before.message_id == "m5"
    assert isinstance(after, MessageEntry) and after.message_id == "m6"
    assert view.shown_text(6) == "Earlier messages summarized (6 messages) — show"
    click_row(qtbot, view, 6)
    assert view.is_expanded(6)
    assert view.shown_text(6) == (
        "Earlier messages summarized (6 messages) — hide\n\nThe first three turns."
    )
    assert view.model.rowCount() == 13  # every message is still there


def test_a_click_on_a_turns_context_chip_shows_what_the_agent_saw(
    qtbot: QtBot, view: TranscriptView, transcript: Transcript
) -> None:
    messages = conversation(4)
    open_thread(transcript, messages)
    report = ContextEvent(
        window=8_000, budget=6_000, used=2_400, tokenizer="estimate (4 characters a token)",
        items=(
            ContextItemInfo(kind="identity", label="AGENTS.md", tokens=300, included=True,
                            reason="identity files are always in"),
            ContextItemInfo(kind="older_message", label="m0", tokens=900, included=False,
                            reason="over the budget"),
        ),
        warnings=("USER.md is over its budget: truncated",), message_id="m2",
    )  # fmt: skip
    transcript.apply(report)
    row = transcript.row_of_entry(transcript.marks.of("t1").chips_after("m2")[0])
    assert row == 4  # live: under the author's newest message, where the turn runs
    assert view.shown_text(row) == ("◇ Context: 1 part, 1 left out, 1 warning — show")
    assert "What the agent saw" in view.model.data(
        view.model.index(row), Qt.ItemDataRole.ToolTipRole
    )
    click_row(qtbot, view, row)
    assert view.is_expanded(row)
    assert view.shown_text(row).splitlines()[2:] == [
        "2400 of 6000 tokens (window 8000, estimate (4 characters a token))",
        "[in ] identity: AGENTS.md — 300 tokens, identity files are always in",
        "[out] older_message: m0 — 900 tokens, over the budget",
        "Warning: USER.md is over its budget: truncated",
    ]
    view.toggle_tool(row)  # folded again (a second click would be a double click here)
    assert not view.is_expanded(row)
    assert view.shown_text(row).endswith("— show")
    assert view.model.rowCount() == 5


def test_opening_the_thread_again_shows_its_dividers_without_asking_again(
    view: TranscriptView, transcript: Transcript, fake_sender: FakeSender
) -> None:
    messages = conversation(12)
    open_thread(transcript, messages)
    answer_summaries(fake_sender, (summary(1, 6, "Earlier."),), messages)
    asked = len(fake_sender.sent)
    open_thread(transcript, (message("user", "other", "x0", thread_id="t2"),))
    open_thread(transcript, messages)
    assert isinstance(transcript.entry(6), SummaryDividerEntry)
    assert len(fake_sender.sent) == asked


def test_a_thread_of_5000_messages_with_200_chips_and_5_summaries_renders_and_scrolls_to_the_end(
    qtbot: QtBot, view: TranscriptView, transcript: Transcript, fake_sender: FakeSender
) -> None:
    messages = conversation(5000)
    for n in range(200):
        anchor = f"m{25 * n + 1}"  # an answer
        chip = MemoryChipEntry.of(saved(f"k{n}", f"Fact number {n}."), anchor)
        transcript.marks.add_chip("t1", chip)
    open_thread(transcript, messages)
    ends = (800, 1600, 2400, 3200, 4000)
    summaries = tuple(summary(1, end, f"Up to message {end}.") for end in ends)
    answer_summaries(fake_sender, summaries, messages)
    assert view.model.rowCount() == 5000 + 200 + 5
    entries = transcript.entries
    dividers = [r for r, e in enumerate(entries) if isinstance(e, SummaryDividerEntry)]
    for row, end in zip(dividers, ends, strict=True):
        following = entries[row + 1]
        assert isinstance(following, MessageEntry) and following.message_id == f"m{end}"
    chips = [e for e in entries if isinstance(e, MemoryChipEntry)]
    assert [c.key for c in chips] == [f"k{n}" for n in range(200)]
    last = view.model.rowCount() - 1
    bar = view.list_view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: view.row_is_visible(last), timeout=TIMEOUT_MS)
    transcript.apply(saved("k200", "One more."))
    qtbot.waitUntil(lambda: view.row_is_visible(last + 1), timeout=TIMEOUT_MS)
