"""The runtime driving the real main graph: the four ends of a turn, all resumable."""

from __future__ import annotations

import asyncio

import pytest

from sidecar.llm.types import PlannerError
from sidecar.protocol import RunEventParams
from sidecar.runtime.drive import FAILED_NOTE, STOPPED_NOTE
from sidecar.runtime.errors import ThreadBusyError
from tests.sidecar.runtime.conftest import Rig
from tests.sidecar.runtime.scripted import Gate, answer, call

pytestmark = pytest.mark.anyio


async def test_a_model_tool_call_feeds_its_result_back_and_the_answer_persists(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.planner.script += [
        call("c1", "workspace__read", path="notes.md"),
        answer("The river is wide."),
    ]
    run_id = await rig.runs.start(thread.id, "what do my notes say?")
    await rig.finish(run_id)
    types = rig.types(run_id)
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert "tool_call" in types and "tool_result" in types and "interrupt" not in types
    second_view = rig.planner.seen[1]
    assert [t.role for t in second_view] == ["user", "assistant", "tool"]
    assert second_view[2].tool_call_id == "c1" and "the river is wide" in second_view[2].content
    assert "workspace__read" in rig.planner.tools_seen[0]
    assert "atrium__ask_author" in rig.planner.tools_seen[0]
    assert not any("dispatch" in name for name in rig.planner.tools_seen[0])
    roles = [m.role for m in rig.store.recent_messages(thread.id, 50)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    tokens = "".join(e.event.text for e in rig.events if e.event.type == "token")  # type: ignore[union-attr]
    assert tokens.strip() == "The river is wide."


async def test_a_finished_turn_leaves_no_checkpoint_behind(rig: Rig):
    thread = rig.store.create_thread("t")
    for n in range(3):
        rig.planner.script.append(answer(f"answer {n}"))
        await rig.finish(await rig.runs.start(thread.id, f"question {n}"))
        assert rig.checkpoint_rows(thread.id) == 0
    assert len(rig.store.recent_messages(thread.id, 100)) == 6


async def test_the_context_is_bounded_by_the_token_budget_however_long_the_thread(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("ATRIUM_CONTEXT_TOKENS", "4000")
    thread = rig.store.create_thread("t")
    for n in range(400):
        role = "user" if n % 2 == 0 else "assistant"
        rig.store.add_message(thread.id, role, f"m{n} " + "word " * 20)
    # The older part outgrows its share: the model summarizes it first, then answers.
    rig.planner.script += [answer("MEMORIES:\n- none\nSUMMARY:\nThey talked."), answer("ok")]
    await rig.finish(await rig.runs.start(thread.id, "latest"))
    seen = rig.planner.seen[1]
    assert 10 < len(seen) < 100 and seen[-1].content == "latest"
    assert "They talked." in seen[0].content  # the summary, in the context block


async def test_asking_the_author_interrupts_and_the_answer_returns_as_the_tool_result(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.planner.script += [
        call("q1", "atrium__ask_author", question="Which chapter?", choices=["1", "2"]),
        answer("Chapter 2 it is."),
    ]
    run_id = await rig.runs.start(thread.id, "edit a chapter")
    events = await rig.finish(run_id)
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    assert interrupt.kind == "question" and interrupt.choices == ("1", "2")
    assert rig.store.get_thread(thread.id).status == "interrupted"
    resumed = await rig.runs.resume(thread.id, interrupt.id, {"answer": "2"})
    await rig.finish(resumed)
    tool_turn = rig.planner.seen[1][-1]
    assert tool_turn.role == "tool" and tool_turn.tool_call_id == "q1"
    assert tool_turn.content.endswith("2")
    assert rig.store.get_thread(thread.id).status == "idle"


async def test_cancel_stops_the_turn_and_retry_continues_it(rig: Rig):
    thread = rig.store.create_thread("t")
    gate = Gate()
    rig.planner.script += [gate, answer("done")]
    run_id = await rig.runs.start(thread.id, "slow")
    await gate.entered.wait()
    with pytest.raises(ThreadBusyError):
        await rig.runs.start(thread.id, "again")
    assert await rig.runs.cancel(thread.id) is True
    assert rig.types(run_id)[-1] == "run_cancelled"
    assert rig.store.get_thread(thread.id).status == "cancelled"
    assert rig.checkpoint_rows(thread.id) > 0
    rig.planner.script.insert(0, answer("done after retry"))
    retried = await rig.runs.retry(thread.id)
    await rig.finish(retried)
    assert rig.types(retried)[-1] == "run_finished"
    assert rig.store.recent_messages(thread.id, 10)[-1].content == "done after retry"


async def test_a_stop_keeps_the_answer_the_author_saw_streaming_in_the_conversation(rig: Rig):
    thread = rig.store.create_thread("t")
    seen = " ".join(f"w{n}" for n in range(2000))  # a long answer, cut short
    gate = Gate(streams=seen)
    rig.planner.script += [gate]
    run_id = await rig.runs.start(thread.id, "write the chapter")
    await gate.entered.wait()
    streamed = await rig.streamed(run_id, "w1999")  # the author has seen it all
    assert await rig.runs.cancel(thread.id) is True

    events = [e for e in rig.events if e.run_id == run_id]
    assert [e.event.type for e in events][-2:] == ["message", "run_cancelled"]
    [user, stopped] = rig.store.recent_messages(thread.id, 10)
    assert (user.role, stopped.role) == ("user", "assistant")
    assert stopped.content == streamed + STOPPED_NOTE
    assert stopped.content.startswith("w0 w1 ") and "w1999" in stopped.content
    # The next message sees what was said, marked as stopped, and the stopped turn is closed.
    rig.planner.script.append(answer("picking up"))
    await rig.finish(await rig.runs.start(thread.id, "go on"))
    assert [t.role for t in rig.planner.seen[-1]][-3:] == ["user", "assistant", "user"]
    assert rig.planner.seen[-1][-2].content.endswith(STOPPED_NOTE)


async def test_a_stop_before_any_answer_text_records_no_message(rig: Rig):
    thread = rig.store.create_thread("t")
    gate = Gate()
    rig.planner.script += [gate]
    run_id = await rig.runs.start(thread.id, "think")
    await gate.entered.wait()
    await rig.runs.cancel(thread.id)
    assert rig.types(run_id)[-1] == "run_cancelled" and "message" not in rig.types(run_id)
    assert [m.role for m in rig.store.recent_messages(thread.id, 10)] == ["user"]


async def test_a_model_error_fails_the_run_with_its_code_and_retry_recovers(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.planner.script += [PlannerError("unreachable", "connection refused"), answer("back")]
    run_id = await rig.runs.start(thread.id, "hi")
    events = await rig.finish(run_id)
    failed = events[-1].event
    assert failed.type == "run_failed" and failed.error.code == "unreachable"  # type: ignore[union-attr]
    thread_row = rig.store.get_thread(thread.id)
    assert thread_row.status == "failed" and thread_row.last_error
    retried = await rig.runs.retry(thread.id)
    await rig.finish(retried)
    assert rig.store.recent_messages(thread.id, 10)[-1].content == "back"


async def test_a_failure_mid_answer_keeps_what_streamed_with_the_error_in_the_conversation(
    rig: Rig,
):
    thread = rig.store.create_thread("t")
    seen = " ".join(f"w{n}" for n in range(500))
    gate = Gate(streams=seen)
    error = PlannerError("cut_off", "The model's answer stopped partway")
    rig.planner.script += [gate, error]
    run_id = await rig.runs.start(thread.id, "write the chapter")
    await gate.entered.wait()
    streamed = await rig.streamed(run_id, "w499")
    gate.release.set()
    events = await rig.finish(run_id)

    assert [e.event.type for e in events][-2:] == ["message", "run_failed"]
    [user, kept] = rig.store.recent_messages(thread.id, 10)
    assert (user.role, kept.role, kept.id) == ("user", "assistant", f"{run_id}:failed")
    assert kept.content == streamed + FAILED_NOTE.format(error=str(error))
    assert rig.store.get_thread(thread.id).last_error == str(error)


async def test_a_failure_before_any_answer_text_records_no_message(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.planner.script += [PlannerError("unreachable", "connection refused")]
    run_id = await rig.runs.start(thread.id, "hi")
    await rig.finish(run_id)
    assert "message" not in rig.types(run_id)
    assert [m.role for m in rig.store.recent_messages(thread.id, 10)] == ["user"]


async def test_a_call_cut_off_mid_run_runs_again_only_when_the_author_says_so(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.store.add_grant(thread.id, "slow", "hold")
    rig.planner.script += [call("h1", "slow__hold", label="x")]
    run_id = await rig.runs.start(thread.id, "hold it")
    await rig.hold.entered.wait()
    # Cancelling here leaves what a kill leaves: the intent journaled, no result recorded.
    await rig.runs.cancel(thread.id)
    assert rig.types(run_id)[-1] == "run_cancelled"
    assert [c.id for c in rig.store.unanswered_tool_calls(thread.id)] == ["h1"]
    rig.planner.script.append(answer("held"))
    rig.hold.release.set()
    retried = await rig.runs.retry(thread.id)
    events = await rig.finish(retried)
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    assert interrupt.kind == "question" and interrupt.choices == (
        "Mark as done",
        "Run again",
        "Skip",
    )
    assert rig.hold.calls == 1
    resumed = await rig.runs.resume(thread.id, interrupt.id, {"answer": "Run again"})
    await rig.finish(resumed)
    assert rig.hold.calls == 2
    assert rig.store.unanswered_tool_calls(thread.id) == []
    assert rig.store.recent_messages(thread.id, 10)[-1].content == "held"


async def test_re_running_a_tool_pass_answers_from_the_journal_not_the_server(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.store.add_grant(thread.id, "slow", "hold")
    rig.hold.release.set()
    gate = Gate()
    rig.planner.script += [call("h2", "slow__hold", label="y"), gate]
    await rig.runs.start(thread.id, "hold it")
    await gate.entered.wait()
    await rig.runs.cancel(thread.id)
    assert rig.hold.calls == 1
    # Replay the tool pass from the checkpoint taken before it, as a crash before the pass's
    # checkpoint would make the runtime do.
    graph, _saver = await rig.runs.compiled()
    config = {"configurable": {"thread_id": thread.id}}
    history = [s async for s in graph.aget_state_history(config)]
    before_tool = next(s for s in history if s.next == ("tool",))
    rig.planner.script[:] = [answer("done")]
    async for _ in graph.astream(None, before_tool.config, stream_mode=["custom"]):
        pass
    assert rig.hold.calls == 1
    results = [m for m in rig.store.recent_messages(thread.id, 20) if m.role == "tool"]
    assert [m.content for m in results] == ["held y"]


async def test_an_answer_sent_the_instant_the_question_arrives_finds_the_thread_free(rig: Rig):
    thread = rig.store.create_thread("t")
    rig.planner.script += [
        call("q1", "atrium__ask_author", question="Which chapter?", choices=["1", "2"]),
        answer("Chapter 2 it is."),
    ]
    answers: list[asyncio.Task[str]] = []

    def answer_at_once(params: RunEventParams) -> None:
        # The window answers as soon as the event is on the wire: here, before the run's task
        # takes another step.
        Rig.sink(rig, params)
        if params.event.type == "interrupt":
            interrupt = params.event.interrupt
            answers.append(
                asyncio.ensure_future(rig.runs.resume(thread.id, interrupt.id, {"answer": "2"}))
            )

    rig.sink = answer_at_once  # type: ignore[method-assign]
    await rig.finish(await rig.runs.start(thread.id, "edit a chapter"))
    [resumed] = answers
    await rig.finish(await resumed)
    assert rig.store.recent_messages(thread.id, 10)[-1].content == "Chapter 2 it is."
