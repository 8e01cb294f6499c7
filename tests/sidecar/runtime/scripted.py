"""A scripted planner for graph/runtime tests: returns queued decisions, records what it saw.

It stands in for the model at the `Planner` seam; the DSPy path itself is tested against a
scripted HTTP model server in tests/sidecar/llm and tests/e2e.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from sidecar.llm.types import (
    ChatTurn,
    PlannerDecision,
    PlannerError,
    TokenSink,
    ToolCallRequest,
    ToolSpec,
)


def answer(text: str) -> PlannerDecision:
    return PlannerDecision(kind="answer", text=text)


def call(call_id: str, name: str, **arguments: object) -> PlannerDecision:
    return PlannerDecision(
        kind="tool_calls", tool_calls=(ToolCallRequest(call_id, name, dict(arguments)),)
    )


@dataclass
class Gate:
    """Makes the planner wait until the test releases it (to cancel or kill mid-turn), after
    streaming `streams` (an answer cut short) when given."""

    entered: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    streams: str = ""


@dataclass
class ScriptedPlanner:
    script: list[PlannerDecision | PlannerError | Gate]
    seen: list[list[ChatTurn]] = field(default_factory=list[list[ChatTurn]])
    tools_seen: list[list[str]] = field(default_factory=list[list[str]])

    async def decide(
        self,
        history: Sequence[ChatTurn],
        tools: Sequence[ToolSpec],
        on_token: TokenSink | None = None,
    ) -> PlannerDecision:
        self.seen.append(list(history))
        self.tools_seen.append([t.name for t in tools])
        step = self.script.pop(0)
        if isinstance(step, Gate):
            if step.streams and on_token is not None:
                for word in step.streams.split(" "):
                    await on_token(word + " ")
            step.entered.set()
            await step.release.wait()
            step = self.script.pop(0)
        if isinstance(step, PlannerError):
            raise step
        if step.kind == "answer" and on_token is not None:
            for word in step.text.split(" "):
                await on_token(word + " ")
        return step
