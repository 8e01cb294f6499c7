"""`IdleDeadline`: progress keeps a call alive, silence ends it, the hard cap always holds, and
waiting on the author does not count as silence."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from sidecar.binding.calls import InFlightCalls, RunBinding, bind_run, current_call, in_flight
from sidecar.binding.deadline import CallTimeoutError, IdleDeadline
from tests.sidecar.host.features.conftest import ScriptedAuthor

pytestmark = pytest.mark.anyio


async def steady_progress(deadline: IdleDeadline, every_s: float, times: int) -> None:
    """A server that reports progress at a steady pace (its work is the sleep)."""
    sink = deadline.progress_sink()
    for step in range(times):
        await asyncio.sleep(every_s)
        await sink(step + 1, times, None)


async def test_a_silent_call_times_out_as_idle() -> None:
    with pytest.raises(CallTimeoutError) as info, IdleDeadline(idle_s=0.05, hard_s=30):
        await asyncio.Event().wait()
    assert info.value.kind == "idle"


async def test_progress_keeps_a_call_alive_past_its_idle_timeout() -> None:
    # Steps 10x shorter than the idle limit, for longer than it in all: only progress can keep
    # the call alive (and a loaded machine's event-loop stalls stay well inside the limit).
    with IdleDeadline(idle_s=1.5, hard_s=60) as deadline:
        await steady_progress(deadline, every_s=0.15, times=14)


async def test_the_hard_cap_holds_however_much_progress_arrives() -> None:
    with pytest.raises(CallTimeoutError) as info, IdleDeadline(idle_s=5, hard_s=0.2) as deadline:
        await steady_progress(deadline, every_s=0.02, times=1000)
    assert info.value.kind == "hard"


async def test_waiting_on_the_author_does_not_count_as_silence() -> None:
    with IdleDeadline(idle_s=0.05, hard_s=30) as deadline, deadline.paused():
        await asyncio.sleep(0.2)


async def test_no_limits_means_no_timeout() -> None:
    done = asyncio.Event()
    with IdleDeadline(idle_s=None, hard_s=None):
        asyncio.get_running_loop().call_soon(done.set)
        await done.wait()


async def test_an_outer_cancel_is_a_cancel_not_a_timeout() -> None:
    with anyio.move_on_after(0.05) as scope, IdleDeadline(idle_s=10, hard_s=10):
        await asyncio.Event().wait()
    assert scope.cancelled_caught


async def test_the_deadline_attaches_to_the_call_in_flight_and_pauses_while_it_asks() -> None:
    calls = InFlightCalls()
    author = ScriptedAuthor()
    author.answers.append({"action": "cancel"})
    with bind_run(RunBinding("t", "r", calls, author)), in_flight("srv", "c1") as call:
        assert call is not None and current_call() is call
        with IdleDeadline(idle_s=0.05, hard_s=30) as deadline:
            assert call.deadline is deadline
            assert calls.owner("srv") is call
            assert await call.ask({"kind": "form"}) == {"action": "cancel"}
        assert call.deadline is None
    assert calls.owner("srv") is None
    assert call.done.is_set()
