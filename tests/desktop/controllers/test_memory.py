"""`MemoryController.load_summaries`: each summary of a thread is placed before the message the
sidecar names as the first row after its range, with no look-up of its own."""

from __future__ import annotations

from desktop.controllers.memory import MemoryController
from desktop.models.memory import MemoryState
from sidecar.protocol import CompactionParams, CompactionResult, SummaryInfo
from tests.desktop.support import FakeSender


def summary(to_seq: int, next_id: str | None) -> SummaryInfo:
    return SummaryInfo(
        from_seq=1, to_seq=to_seq, messages=to_seq, text="s", created_at=1.0, next_id=next_id
    )


def test_summaries_are_read_without_changing_the_setting_and_placed_at_their_next_message(
    fake_sender: FakeSender,
) -> None:
    controller = MemoryController(fake_sender.api, MemoryState())
    placed: list[tuple[int, str]] = []
    controller.load_summaries("t1", lambda s, anchor: placed.append((s.to_seq, anchor)))
    params, pending = fake_sender.last("thread/compaction")
    assert params == CompactionParams(thread_id="t1")
    summaries = (summary(40, "q42"), summary(90, "a95"), summary(120, None))
    pending.resolve(CompactionResult(mode="auto", compact_next=False, summaries=summaries))
    assert placed == [(40, "q42"), (90, "a95")]
    assert fake_sender.methods() == ["thread/compaction"]
