"""Messages to a running agent, per controller. Claude Code gets them on its stdin as stream-json
user messages, takes them as its next turn, and the run goes on to that turn's result; Codex and
OpenClaw (embedded or on a Gateway) refuse them as input they cannot take mid-run.

The fake CLI replays a recorded stream (claude_4.jsonl) and holds before its result until the
messages arrive; it then queues and echoes them as Claude Code 2.1.197 does (see fake_cli.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.agents.controllers import (
    CodexConfig,
    CodexController,
    OpenClawConfig,
    OpenClawController,
)
from mcp_servers.agents.controllers.openclaw_gateway import OpenClawGatewayController
from mcp_servers.agents.errors import InputUnsupportedError, NoRunError
from mcp_servers.agents.events import (
    AgentEvent,
    Completed,
    Failed,
    MessageCompleted,
    StateHint,
    load_event,
)
from mcp_servers.agents.requests import MessageReceipt
from mcp_servers.agents.results import ErrorCode
from tests.mcp_servers.agents.helpers import (
    collect,
    fake_settings,
    shared_transcript,
    stdin_messages,
)
from tests.mcp_servers.agents.test_claude_controller import controller, start_request

pytestmark = pytest.mark.anyio

HOLD = {"FAKE_CLI_HANG_AFTER": "2", "FAKE_CLI_RELEASE_AFTER_MESSAGES": "1"}
"""Hold claude_4.jsonl's first turn before its result until one message has arrived."""


def hints(events: list[AgentEvent], name: str) -> list[StateHint]:
    return [e for e in events if isinstance(e, StateHint) and e.hint == name]


async def test_a_message_mid_turn_reaches_stdin_and_the_run_goes_on_to_its_turn(
    tmp_path: Path,
) -> None:
    receipts: list[MessageReceipt] = []
    async with controller(tmp_path, shared_transcript("claude_4.jsonl"), **HOLD) as ctl:
        await ctl.start(start_request(tmp_path))

        async def message_on_first_answer(event: AgentEvent) -> None:
            if isinstance(event, MessageCompleted) and not receipts:
                receipts.append(await ctl.send_message("also add a test"))

        events = await collect(ctl, message_on_first_answer)
        result = await ctl.wait()

    [receipt] = receipts
    assert (receipt.run_id, receipt.delivery) == (result.run_id, "stdin")
    prompt, message = stdin_messages(tmp_path)
    assert prompt["message"] == {"role": "user", "content": "write hello.txt"}
    assert message == {
        "type": "user",
        "message": {"role": "user", "content": "also add a test"},
        "parent_tool_use_id": None,
        "session_id": "default",
        "uuid": receipt.message_id,
    }
    # Recorded in the run's events and its normalized trace, then taken by the CLI.
    sent = StateHint(
        hint="message_sent",
        detail={"message_id": receipt.message_id, "delivery": "stdin", "text": "also add a test"},
    )
    taken = StateHint(hint="message_taken", detail={"message_id": receipt.message_id})
    assert events.index(sent) < events.index(taken)
    assert result.trace is not None
    logged = [load_event(line) for line in result.trace.normalized_path.read_text().splitlines()]
    assert sent in logged
    # The first turn's result did not end the run: the message's turn did.
    assert [h.detail["subtype"] for h in hints(events, "result")] == ["success", "success"]
    assert isinstance(events[-1], Completed)
    assert (result.status, result.final_message) == ("success", "noted: also add a test")
    assert result.notes == ()


async def test_a_message_sent_right_after_start_follows_the_prompt(tmp_path: Path) -> None:
    async with controller(tmp_path, shared_transcript("claude_4.jsonl"), **HOLD) as ctl:
        await ctl.start(start_request(tmp_path))
        receipt = await ctl.send_message("and keep it short")
        await collect(ctl)
        result = await ctl.wait()

    received = stdin_messages(tmp_path)
    assert [m["message"]["content"] for m in received] == ["write hello.txt", "and keep it short"]
    assert received[1]["uuid"] == receipt.message_id
    assert (result.status, result.final_message) == ("success", "noted: and keep it short")


async def test_a_stop_while_a_message_waits_ends_the_run_interrupted(tmp_path: Path) -> None:
    async with controller(
        tmp_path, shared_transcript("claude_4.jsonl"), FAKE_CLI_HANG_AFTER="2"
    ) as ctl:
        await ctl.start(start_request(tmp_path))

        async def message_then_stop(event: AgentEvent) -> None:
            if isinstance(event, StateHint) and event.hint == "message_sent":
                await ctl.interrupt()
            elif isinstance(event, MessageCompleted):
                await ctl.send_message("one more thing")

        events = await collect(ctl, message_then_stop)
        result = await ctl.wait()
        with pytest.raises(NoRunError):
            await ctl.send_message("too late")

    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    assert isinstance(events[-1], Failed)
    # The aborted result ended the run: the waiting message never got its turn.
    assert [h.detail["subtype"] for h in hints(events, "result")] == ["error_during_execution"]
    assert len(hints(events, "message_taken")) == 1  # the prompt's


async def test_a_finished_run_takes_no_message(tmp_path: Path) -> None:
    async with controller(tmp_path, shared_transcript("claude_4.jsonl")) as ctl:
        with pytest.raises(NoRunError):
            await ctl.send_message("before any run")
        await ctl.start(start_request(tmp_path))
        await collect(ctl)
        result = await ctl.wait()
        with pytest.raises(NoRunError):
            await ctl.send_message("after the run")

    assert result.status == "success"
    assert len(stdin_messages(tmp_path)) == 1


async def test_codex_exec_takes_no_input_mid_run(tmp_path: Path) -> None:
    transcript = shared_transcript("codex_3.jsonl")
    settings = fake_settings(tmp_path, transcript, FAKE_CLI_HANG_AFTER="1")
    async with CodexController(CodexConfig(**settings)) as ctl:
        await ctl.start(start_request(tmp_path))
        with pytest.raises(InputUnsupportedError) as refused:
            await ctl.send_message("also add a test")
        await ctl.interrupt()
        await collect(ctl)
        result = await ctl.wait()

    assert refused.value.code == "input_unsupported"
    assert refused.value.cli == "codex exec"
    assert result.status == "interrupted"


async def test_openclaw_takes_no_input_mid_run_embedded_or_on_a_gateway() -> None:
    config = OpenClawConfig(gateway_url="ws://127.0.0.1:9", gateway_token="t")
    async with OpenClawController(config) as embedded:
        with pytest.raises(InputUnsupportedError) as local:
            await embedded.send_message("more")
    async with OpenClawGatewayController(config) as gateway:
        with pytest.raises(InputUnsupportedError) as remote:
            await gateway.send_message("more")

    assert local.value.cli == "openclaw agent (embedded)"
    assert remote.value.cli == "an OpenClaw Gateway run"
    assert local.value.code == remote.value.code == "input_unsupported"
