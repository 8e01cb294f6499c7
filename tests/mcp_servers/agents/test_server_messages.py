"""`agent_message`: the agents server hands a message to a running run by id (in memory, the fake
CLI over real pipes)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_servers.agents.requests import MessageReceipt
from mcp_servers.agents.results import OperatorResult
from mcp_servers.agents.server import build_server
from tests.mcp_servers.agents.helpers import shared_transcript, stdin_messages
from tests.mcp_servers.agents.server_support import ProgressLog, fake_factory

pytestmark = pytest.mark.anyio

DAY = 200
"""Messages in a day of talking to one long task."""


@asynccontextmanager
async def connect(tmp_path: Path, transcript: Path, **fake_env: str) -> AsyncIterator[Client]:
    server = build_server(controller_factory=fake_factory(tmp_path, transcript, **fake_env))
    async with Client(server) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    with anyio.fail_after(30):
        return await client.call_tool(tool, arguments)


def run_args(tmp_path: Path, provider: str, run_id: str) -> dict[str, Any]:
    return {
        "provider": provider,
        "instruction": "write hello.txt",
        "working_dir": str(tmp_path),
        "run_id": run_id,
    }


def refusal_code(result: CallToolResult) -> str:
    """The stable `[code]` of a refused call (the SDK puts its own words before it)."""
    assert result.is_error
    assert isinstance(result.content[0], TextContent)
    found = re.search(r"\[([a-z_]+)\]", result.content[0].text)
    assert found is not None, result.content[0].text
    return found.group(1)


def hinted(progress: ProgressLog, hint: str) -> list[dict[str, Any]]:
    """The progress messages of the run's `state_hint` events named `hint`."""
    return [m for m in progress.of_type("state_hint") if m["hint"] == hint]


class Running:
    """One agent_run call in the background, with its progress."""

    def __init__(self) -> None:
        self.progress = ProgressLog()
        self.outcome: list[CallToolResult] = []

    async def run(self, client: Client, arguments: dict[str, Any]) -> None:
        with anyio.fail_after(60):
            result = await client.call_tool("agent_run", arguments, progress_callback=self.progress)
        self.outcome.append(result)

    @property
    def result(self) -> OperatorResult:
        [result] = self.outcome
        return OperatorResult.model_validate(result.structured_content)


async def test_a_message_reaches_a_running_claude_run_by_id_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    running = Running()
    hold = {"FAKE_CLI_HANG_AFTER": "2", "FAKE_CLI_RELEASE_AFTER_MESSAGES": "1"}
    async with (
        connect(tmp_path, shared_transcript("claude_4.jsonl"), **hold) as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(running.run, client, run_args(tmp_path, "claude", "c-1"))
        # The run id the caller chose is also in the first progress message.
        started = await running.progress.wait_for(lambda m: m["type"] == "run_started")
        await running.progress.wait_for(lambda m: m["type"] == "message_completed")
        sent = await call(client, "agent_message", {"run_id": started["run_id"], "text": "more"})

    assert not sent.is_error
    receipt = MessageReceipt.model_validate(sent.structured_content)
    assert (receipt.run_id, receipt.delivery) == ("c-1", "stdin")
    assert stdin_messages(tmp_path)[1] == {
        "type": "user",
        "message": {"role": "user", "content": "more"},
        "parent_tool_use_id": None,
        "session_id": "default",
        "uuid": receipt.message_id,
    }
    [hint] = hinted(running.progress, "message_sent")
    assert hint["run_id"] == "c-1"
    assert hint["detail"] == {"message_id": receipt.message_id, "delivery": "stdin", "text": "more"}
    assert (running.result.status, running.result.final_message) == ("success", "noted: more")


async def test_a_codex_run_takes_no_message_mid_run(tmp_path: Path) -> None:
    running = Running()
    async with (
        connect(tmp_path, shared_transcript("codex_3.jsonl"), FAKE_CLI_HANG_AFTER="1") as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(running.run, client, run_args(tmp_path, "codex", "x-1"))
        await running.progress.wait_for(lambda m: m["type"] == "session_started")
        refused = await call(client, "agent_message", {"run_id": "x-1", "text": "more"})
        await call(client, "agent_cancel", {"run_id": "x-1"})

    assert refusal_code(refused) == "input_unsupported"
    assert running.result.status == "interrupted"


async def test_a_message_to_an_unknown_or_finished_run_is_refused_as_unknown_run(
    tmp_path: Path,
) -> None:
    async with connect(tmp_path, shared_transcript("claude_4.jsonl")) as client:
        unknown = await call(client, "agent_message", {"run_id": "nope", "text": "hi"})
        finished = await call(client, "agent_run", run_args(tmp_path, "claude", "done-1"))
        late = await call(client, "agent_message", {"run_id": "done-1", "text": "hi"})

    assert refusal_code(unknown) == "unknown_run"
    assert not finished.is_error
    assert refusal_code(late) == "unknown_run"
    assert len(stdin_messages(tmp_path)) == 1  # the prompt only


async def test_a_days_messages_reach_one_long_run_all_in_order(tmp_path: Path) -> None:
    running = Running()
    hold = {"FAKE_CLI_HANG_AFTER": "2", "FAKE_CLI_RELEASE_AFTER_MESSAGES": str(DAY)}
    texts = [f"note {n}: keep going" for n in range(DAY)]
    receipts: list[MessageReceipt] = []
    async with (
        connect(tmp_path, shared_transcript("claude_4.jsonl"), **hold) as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(running.run, client, run_args(tmp_path, "claude", "long-1"))
        await running.progress.wait_for(lambda m: m["type"] == "message_completed")
        for text in texts:
            sent = await call(client, "agent_message", {"run_id": "long-1", "text": text})
            receipts.append(MessageReceipt.model_validate(sent.structured_content))

    received = stdin_messages(tmp_path)[1:]
    assert [m["message"]["content"] for m in received] == texts
    assert [m["uuid"] for m in received] == [r.message_id for r in receipts]
    assert len({r.message_id for r in receipts}) == DAY
    # The CLI took them all (one turn, as Claude Code joins waiting messages) and the run ended
    # after that turn, with nothing left waiting.
    taken = [h["detail"]["message_id"] for h in hinted(running.progress, "message_taken")]
    assert taken == [stdin_messages(tmp_path)[0]["uuid"], *(r.message_id for r in receipts)]
    result = running.result
    assert result.status == "success"
    assert result.final_message == "noted: " + "\n".join(texts)
    assert result.notes == ()
