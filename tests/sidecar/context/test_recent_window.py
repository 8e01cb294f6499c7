"""The recent messages of a long thread: counted as the planner sends them, read from the
database once, and as many as the budget holds however long the thread has grown."""

from __future__ import annotations

from collections.abc import Iterator

from mcp_servers.memory import Scope
from sidecar.context.assemble import Assembly, Sources, assemble
from sidecar.context.budget import budget_for
from sidecar.context.identity import Identity
from sidecar.context.parts import MemoryDeps
from sidecar.context.tokens import ESTIMATE
from sidecar.llm.framing import NATIVE, UNFRAMED, Framing
from sidecar.store import Store
from sidecar.store.history import ContextRow

WINDOW = 8_000


class CountingStore(Store):
    """The store, counting the message rows the context reads from it."""

    rows_read = 0

    def newest_rows(
        self, thread_id: str, *, after_seq: int, before_seq: int | None = None
    ) -> Iterator[ContextRow]:
        for row in super().newest_rows(thread_id, after_seq=after_seq, before_seq=before_seq):
            self.rows_read += 1
            yield row


def _assemble(sources: Sources, thread_id: str, framing: Framing = UNFRAMED) -> Assembly:
    return assemble(
        sources,
        thread_id=thread_id,
        scope=Scope(thread=thread_id, workspace="/w"),
        text="What do my notes say?",
        identity=Identity(),
        budget=budget_for(WINDOW),
        counter=ESTIMATE,
        with_memory=False,
        framing=framing,
    )


def _turns(store: Store, thread_id: str, count: int, first: int = 0) -> None:
    with store.transaction():
        for n in range(first, first + count):
            store.add_message(thread_id, "user", f"question {n}: what do my notes say?")
            store.add_message(thread_id, "assistant", f"answer {n}: the river is wide.")


def _recent(out: Assembly) -> int:
    return int(next(i for i in out.items if i.kind == "recent_messages").label.split()[0])


def test_recent_messages_are_counted_with_the_framing_the_planner_sends(
    store: Store, mem: MemoryDeps
) -> None:
    thread = store.create_thread("t").id
    _turns(store, thread, 400)
    plain = _assemble(mem.sources(store), thread)
    framed = _assemble(mem.sources(store), thread, NATIVE)

    kept = framed.turns[-_recent(framed) :]
    counted = sum(
        ESTIMATE.message(t["content"]) + ESTIMATE.count(NATIVE.around(t["role"])) for t in kept
    )
    recent = next(i for i in framed.items if i.kind == "recent_messages")
    assert recent.tokens == counted <= budget_for(WINDOW).recent
    assert _recent(framed) < _recent(plain)  # the same share holds fewer messages as sent


def test_the_window_is_the_same_however_long_the_thread(store: Store, mem: MemoryDeps) -> None:
    short, long = store.create_thread("short").id, store.create_thread("long").id
    _turns(store, short, 300)
    _turns(store, long, 3_000)

    windows = [_assemble(mem.sources(store), t, NATIVE) for t in (short, long)]

    assert _recent(windows[0]) == _recent(windows[1])
    assert [len(w.turns) for w in windows] == [len(windows[0].turns)] * 2


def test_a_turn_reads_only_the_messages_added_since_the_last(mem: MemoryDeps, store: Store) -> None:
    counting = CountingStore(store.db)
    thread = counting.create_thread("long").id
    _turns(counting, thread, 3_000)
    sources = mem.sources(counting)

    first = _assemble(sources, thread, NATIVE)
    read_first = counting.rows_read
    _turns(counting, thread, 1, first=3_000)
    second = _assemble(sources, thread, NATIVE)

    assert read_first <= _recent(first) + 1  # the walk stops where the budget is full
    assert counting.rows_read - read_first == 2  # the new turn's two messages, nothing older
    assert second.turns[-2:] == [
        {"role": "user", "content": "question 3000: what do my notes say?"},
        {"role": "assistant", "content": "answer 3000: the river is wide."},
    ]


def test_words_every_earlier_message_has_do_not_search_the_whole_history(
    store: Store, mem: MemoryDeps
) -> None:
    thread = store.create_thread("t").id
    _turns(store, thread, 1_200)  # "notes" in 1,200 messages: it says nothing about relevance
    store.add_message(thread, "user", "the gazebo")
    _turns(store, thread, 400, first=1_200)

    def older(text: str) -> list[str]:
        out = assemble(
            mem.sources(store),
            thread_id=thread,
            scope=Scope(thread=thread, workspace="/w"),
            text=text,
            identity=Identity(),
            budget=budget_for(WINDOW),
            counter=ESTIMATE,
        )
        return [i.label for i in out.items if i.kind == "older_message" and i.included]

    assert older("What do my notes say?") == []
    assert len(older("What do my notes say about the gazebo?")) == 1
