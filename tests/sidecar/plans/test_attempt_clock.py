"""An attempt's time limit stops while the author is asked: a review left open past the limit
does not time the attempt out, and the attempt has the rest of its time after the answer."""

from __future__ import annotations

import asyncio

import pytest

from sidecar.plans.attempt import AttemptResult
from sidecar.plans.runner import AttemptClock

pytestmark = pytest.mark.anyio

LIMIT = 0.2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_attempt_that_runs_past_its_limit_times_out() -> None:
    clock = AttemptClock(LIMIT)
    never = asyncio.Event()

    async def body() -> AttemptResult:
        await never.wait()
        return AttemptResult(status="success")

    result = await clock.run(body())
    assert (result.status, result.error) == ("failed", "timed out after 0s")


async def test_the_authors_time_is_not_the_attempts() -> None:
    clock = AttemptClock(LIMIT)
    answered = asyncio.Event()
    asyncio.get_running_loop().call_later(LIMIT * 5, answered.set)  # the review stays open

    async def body() -> AttemptResult:
        with clock.paused():
            await answered.wait()
        with clock.paused():  # a second question, after the first: paused again
            pass
        return AttemptResult(status="success", summary="applied")

    result = await clock.run(body())
    assert (result.status, result.summary) == ("success", "applied")


async def test_after_the_answer_the_attempt_has_only_the_rest_of_its_time() -> None:
    clock = AttemptClock(LIMIT)
    answered, never = asyncio.Event(), asyncio.Event()
    asyncio.get_running_loop().call_later(LIMIT * 3, answered.set)

    async def body() -> AttemptResult:
        with clock.paused():
            await answered.wait()
        await never.wait()  # the agent then hangs: the limit applies again
        return AttemptResult(status="success")

    result = await clock.run(body())
    assert result.status == "failed" and result.error is not None
