"""A Claude Code run the author stopped ends `interrupted`, whatever the CLI prints after the
interrupt request: its own success result, the aborted result, or nothing at all before it
exits (with any code). The fake CLI replays a recorded stream (claude_4.jsonl) and hangs after
the assistant's message until the interrupt arrives."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.agents.events import AgentEvent, Failed, MessageCompleted
from mcp_servers.agents.results import ErrorCode
from tests.mcp_servers.agents.helpers import collect, shared_transcript, stdin_messages
from tests.mcp_servers.agents.test_claude_controller import controller, start_request

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "after",
    [
        "continue",  # the recorded success result still comes after the interrupt
        "",  # the aborted result (error_during_execution, aborted_tools)
        "exit:0",  # the stream ends after the interrupt's acknowledgement
        "exit:1",
        "exit:143",
    ],
)
async def test_a_run_the_author_stopped_ends_interrupted_whatever_the_cli_prints(
    tmp_path: Path, after: str
) -> None:
    transcript = shared_transcript("claude_4.jsonl")
    options = {"FAKE_CLI_HANG_AFTER": "2", "FAKE_CLI_AFTER_INTERRUPT": after}
    async with controller(tmp_path, transcript, **options) as ctl:
        await ctl.start(start_request(tmp_path))

        async def stop_on_message(event: AgentEvent) -> None:
            if isinstance(event, MessageCompleted):
                await ctl.interrupt()

        events = await collect(ctl, stop_on_message)
        result = await ctl.wait()
    sent = [m["request"] for m in stdin_messages(tmp_path) if m["type"] == "control_request"]
    assert sent == [{"subtype": "interrupt"}]
    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    last = events[-1]
    assert isinstance(last, Failed) and last.status == "interrupted"


async def test_a_run_that_was_not_stopped_keeps_its_success(tmp_path: Path) -> None:
    transcript = shared_transcript("claude_4.jsonl")
    async with controller(tmp_path, transcript) as ctl:
        await ctl.start(start_request(tmp_path))
        await collect(ctl)
        result = await ctl.wait()
    assert result.status == "success"
