"""`SessionController` opening a thread: after its first load the thread's stored memory events
(`memory/events`) become chips at their messages, so a window started anew (a fresh
`SessionState`) shows the chips of earlier sessions; a chip seen live is not shown twice."""

from __future__ import annotations

from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.models.transcript import INITIAL_PAGE, MessageEntry, ToolCallEntry
from desktop.models.transcript_marks import MemoryChipEntry
from sidecar.protocol import (
    ErrorCode,
    ErrorObject,
    HistoryMessage,
    MemoryEvent,
    MemoryEventInfo,
    MemoryEventsParams,
    MemoryEventsResult,
    MemoryInfo,
    MessageEvent,
    MessageInfo,
    ThreadGetResult,
    ThreadMessagesResult,
    ToolCallInfo,
)
from tests.desktop.support import FakeSender, RunScript, message, thread_info


def saved(key: str, text: str) -> MemoryEvent:
    info = MemoryInfo(key=key, tier="workspace", text=text, by="agent", created_at=1.0,
                      updated_at=1.0)  # fmt: skip
    return MemoryEvent(action="saved", key=key, memory=info)


def stored(key: str, after: str, seq: int = 0) -> MemoryEventInfo:
    return MemoryEventInfo(
        run_id=f"run-{key}", seq=seq, after_message=after, event=saved(key, f"fact {key}")
    )


def turns(start: int, count: int) -> list[MessageInfo]:
    """Turns q<n> / a<n> for n in start..start+count-1."""
    out: list[MessageInfo] = []
    for n in range(start, start + count):
        out += [message("user", f"question {n}", f"q{n}"), message("assistant", f"a {n}", f"a{n}")]
    return out


def kinds(state: SessionState) -> list[str]:
    names: list[str] = []
    for entry in state.transcript.entries:
        if isinstance(entry, MessageEntry):
            names.append(entry.message_id or "local")
        elif isinstance(entry, MemoryChipEntry):
            names.append(f"chip:{entry.key}")
        elif isinstance(entry, ToolCallEntry):
            names.append(f"call:{entry.call_id}")
    return names


def open_thread(
    fake_sender: FakeSender, messages: list[MessageInfo], thread_id: str = "t1"
) -> tuple[SessionState, SessionController]:
    """A window started anew opens a thread: a fresh state, `thread/get` answered."""
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    controller.select_thread(thread_id)
    _params, pending = fake_sender.last("thread/get")
    pending.resolve(
        ThreadGetResult(
            thread=thread_info(thread_id), messages=tuple(messages), interrupts=(), status="idle"
        )
    )
    return state, controller


def answer_events(fake_sender: FakeSender, events: list[MemoryEventInfo]) -> None:
    params, pending = fake_sender.last("memory/events")
    assert params == MemoryEventsParams(thread_id="t1")
    pending.resolve(MemoryEventsResult(events=tuple(events)))


def test_a_reopened_thread_shows_the_chips_of_earlier_sessions_at_their_messages(
    fake_sender: FakeSender,
) -> None:
    call = ToolCallInfo(id="c1", server="memory", tool="search", arguments={})
    messages = [
        *turns(0, 1),
        message("user", "remember the river", "q1"),
        message("assistant", "", "c1", tool_calls=(call,)),
        message("tool", "ok", "c1:result", tool_call_id="c1"),
        message("assistant", "Noted.", "a1"),
    ]
    state, _controller = open_thread(fake_sender, messages)
    assert kinds(state) == ["q0", "a0", "q1", "call:c1", "a1"]

    answer_events(fake_sender, [stored("k0", "a0"), stored("k1", "q1"), stored("k2", "a1")])

    assert kinds(state) == ["q0", "a0", "chip:k0", "q1", "call:c1", "chip:k1", "a1", "chip:k2"]
    chip = state.transcript.entries[2]
    assert isinstance(chip, MemoryChipEntry) and chip.memory is not None
    assert chip.memory.text == "fact k0" and chip.actionable


def test_1000_stored_chips_over_500_turns_show_with_their_pages(
    fake_sender: FakeSender,
) -> None:
    newest = turns(400, 100)
    assert len(newest) == INITIAL_PAGE
    state, controller = open_thread(fake_sender, newest)
    events = [e for n in range(500) for e in (stored(f"k{n}q", f"q{n}"), stored(f"k{n}a", f"a{n}"))]

    answer_events(fake_sender, events)

    shown = kinds(state)
    assert shown[:6] == ["q400", "chip:k400q", "a400", "chip:k400a", "q401", "chip:k401q"]
    assert len(shown) == 400 and shown[-1] == "chip:k499a"
    controller.load_older()
    _params, pending = fake_sender.last("thread/messages")
    page = tuple(HistoryMessage(seq=n + 601, message=m) for n, m in enumerate(turns(300, 100)))
    pending.resolve(
        ThreadMessagesResult(thread_id="t1", messages=page, has_older=True, has_newer=False)
    )
    shown = kinds(state)
    assert shown[:4] == ["q300", "chip:k300q", "a300", "chip:k300a"]
    rows = [name for name in shown if not name.startswith("chip:")]
    assert shown == [name for row in rows for name in (row, f"chip:k{row[1:]}{row[0]}")]
    assert fake_sender.methods().count("memory/events") == 1


def test_a_chip_seen_live_is_not_shown_again_from_the_stored_events(
    fake_sender: FakeSender,
) -> None:
    state, controller = open_thread(fake_sender, turns(0, 1))
    run = RunScript()
    controller.handle_run_event(run(MessageEvent(message=message("assistant", "Sure.", "a1"))))
    controller.handle_run_event(run(saved("live", "fact live")))

    answer_events(fake_sender, [stored("old", "a0"), stored("live", "a1")])

    assert kinds(state) == ["q0", "a0", "chip:old", "a1", "chip:live"]


def test_stored_events_are_asked_for_once_per_thread_and_again_after_a_failure(
    fake_sender: FakeSender,
) -> None:
    state, controller = open_thread(fake_sender, turns(0, 2))
    _params, pending = fake_sender.last("memory/events")
    pending.reject(ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="busy"))
    controller.fetch_thread("t1")
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(
            thread=thread_info("t1"), messages=tuple(turns(0, 2)), interrupts=(), status="idle"
        )
    )
    answer_events(fake_sender, [stored("k1", "a1")])
    controller.fetch_thread("t1")
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(
            thread=thread_info("t1"), messages=tuple(turns(0, 2)), interrupts=(), status="idle"
        )
    )
    assert fake_sender.methods().count("memory/events") == 2
    assert kinds(state) == ["q0", "a0", "q1", "a1", "chip:k1"]
