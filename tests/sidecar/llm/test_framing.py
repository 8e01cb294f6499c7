"""The framing the context's budget counts around each earlier message is the framing the
planner sends (DSPy's field markers and format reminder), on both tool-calling paths."""

from __future__ import annotations

import pytest

from sidecar.llm.framing import NATIVE, TEXT, UNFRAMED, framing_for
from sidecar.llm.types import ChatTurn
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.sidecar.llm.conftest import (
    NATIVE_MODEL,
    TEXT_MODEL,
    TOOLS,
    PlannerFactory,
    answer_text,
)

pytestmark = pytest.mark.anyio

QUESTION = "What do my notes say?\nSecond line."
ANSWER = "They say the river is wide."


@pytest.mark.parametrize(("model", "native"), [(NATIVE_MODEL, True), (TEXT_MODEL, False)])
async def test_earlier_messages_are_sent_in_the_framing_the_budget_counts(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory, model: str, native: bool
) -> None:
    chat_server.push(Reply.text(answer_text("ok")))
    planner = make_planner(model)
    history = [ChatTurn("user", QUESTION), ChatTurn("assistant", ANSWER), ChatTurn("user", "Now?")]

    await planner.decide(history, TOOLS)

    framing = framing_for(planner)
    assert framing is (NATIVE if native else TEXT)
    sent = chat_server.generation_requests[0].body["messages"]
    assert sent[1] == {"role": "user", "content": framing.wrap("user", QUESTION)}
    assert sent[2] == {"role": "assistant", "content": framing.wrap("assistant", ANSWER)}


async def test_a_planner_that_is_not_dspys_frames_nothing_and_an_unloaded_one_the_longer_way(
    make_planner: PlannerFactory,
) -> None:
    assert framing_for(object()) is UNFRAMED
    assert framing_for(make_planner()) is TEXT  # not loaded yet: which path is not known
    assert len(TEXT.around("user")) > len(NATIVE.around("user"))
    assert TEXT.around("tool") == ""
