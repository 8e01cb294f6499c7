"""`MemoryController.load_summaries`: each summary of a thread is placed before the first
message after its range that has a row of its own, found once per summary."""

from __future__ import annotations

from desktop.memory_controller import ANCHOR_LOOKAHEAD, MemoryController
from desktop.models.memory import MemoryState
from sidecar.protocol.history import HistoryMessage, ThreadMessagesParams, ThreadMessagesResult
from sidecar.protocol.memory import CompactionParams, CompactionResult, SummaryInfo
from tests.desktop.support import FakeSender, message


def summary(to_seq: int) -> SummaryInfo:
    return SummaryInfo(from_seq=1, to_seq=to_seq, messages=to_seq, text="s", created_at=1.0)


def test_summaries_are_read_without_changing_the_setting_and_placed_past_tool_results(
    fake_sender: FakeSender,
) -> None:
    controller = MemoryController(fake_sender, MemoryState())
    placed: list[tuple[int, str]] = []
    controller.load_summaries("t1", lambda s, anchor: placed.append((s.to_seq, anchor)))
    params, pending = fake_sender.last("thread/compaction")
    assert params == CompactionParams(thread_id="t1")
    pending.resolve(CompactionResult(mode="auto", compact_next=False, summaries=(summary(40),)))
    params, pending = fake_sender.last("thread/messages")
    assert params == ThreadMessagesParams(thread_id="t1", after_seq=40, limit=ANCHOR_LOOKAHEAD)
    page = (
        HistoryMessage(seq=41, message=message("tool", "ok", "r41", tool_call_id="c1")),
        HistoryMessage(seq=42, message=message("user", "next", "q42")),
    )
    pending.resolve(
        ThreadMessagesResult(thread_id="t1", messages=page, has_older=True, has_newer=False)
    )
    assert placed == [(40, "q42")]
    controller.load_summaries("t1", lambda s, anchor: placed.append((s.to_seq, anchor)))
    _params, pending = fake_sender.last("thread/compaction")
    pending.resolve(CompactionResult(mode="auto", compact_next=False, summaries=(summary(40),)))
    assert placed == [(40, "q42"), (40, "q42")]
    assert fake_sender.methods().count("thread/messages") == 1
