"""The agents MCP server in memory, driving the fake CLI over real pipes."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, ElicitResult, InputRequiredResult, TextContent

from mcp_servers.agents.providers import ProvidersReport
from mcp_servers.agents.results import OperatorResult
from mcp_servers.agents.runs import RunStatus
from mcp_servers.agents.server import build_server
from tests.mcp_servers.agents.helpers import (
    LOCAL_TRANSCRIPTS,
    fake_log,
    stdin_messages,
    wait_pid_gone,
)
from tests.mcp_servers.agents.server_support import (
    SESSION,
    WRITE_INPUT,
    Elicitations,
    ProgressLog,
    fake_factory,
    group_alive,
    permission_transcript,
    write_transcript,
)

pytestmark = pytest.mark.anyio

# "legacy" negotiates 2025-11-25 (the elicitation goes out during the call); "auto" in memory
# speaks 2026-07-28 (the call returns input-required and the client retries with the answer).
ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["inline", "input-required"])
ACCEPT = ElicitResult(action="accept", content={})

Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    return write_transcript(tmp_path / "permission.jsonl", permission_transcript())


@pytest.fixture
def connect(tmp_path: Path) -> Connect:
    """Open an in-memory client to a server whose controllers run the fake CLI."""

    @asynccontextmanager
    async def open_client(
        transcript: Path | None,
        *,
        mode: str = "auto",
        elicit: Elicitations | None = None,
        fake_env: dict[str, str] | None = None,
        **options: Any,
    ) -> AsyncIterator[Client]:
        options.setdefault(
            "controller_factory", fake_factory(tmp_path, transcript, **(fake_env or {}))
        )
        server = build_server(**options)
        async with Client(server, mode=mode, elicitation_callback=elicit) as client:
            yield client

    return open_client


def run_args(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "provider": "claude",
        "instruction": "write hello.txt",
        "working_dir": str(tmp_path),
        **extra,
    }


async def call(
    client: Client, tool: str, arguments: dict[str, Any], progress: ProgressLog | None = None
) -> CallToolResult:
    with anyio.fail_after(30):
        return await client.call_tool(tool, arguments, progress_callback=progress)


def operator_result(result: CallToolResult) -> OperatorResult:
    return OperatorResult.model_validate(result.structured_content)


def control_responses(tmp_path: Path) -> list[dict[str, Any]]:
    return [m["response"] for m in stdin_messages(tmp_path) if m["type"] == "control_response"]


async def test_tools_are_listed_with_annotations_and_output_schemas(connect: Connect) -> None:
    async with connect(None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == {
        "agent_providers",
        "agent_run",
        "agent_resume",
        "agent_status",
        "agent_cancel",
        "agent_message",
    }
    for name in ("agent_providers", "agent_status"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint is True
    for name in ("agent_run", "agent_resume"):
        annotations = tools[name].annotations
        assert annotations is not None
        assert (
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.open_world_hint,
        ) == (False, True, True)
        assert tools[name].output_schema is not None
        assert "status" in tools[name].output_schema["properties"]
    run_inputs = tools["agent_run"].input_schema
    assert set(run_inputs["required"]) == {"provider", "instruction", "working_dir"}
    assert run_inputs["properties"]["provider"]["enum"] == ["claude", "codex", "openclaw"]


@ERAS
async def test_events_stream_as_progress_messages_with_their_text(
    connect: Connect, transcript: Path, tmp_path: Path, mode: str
) -> None:
    progress = ProgressLog()
    async with connect(transcript, mode=mode, elicit=Elicitations(ACCEPT)) as client:
        result = await call(client, "agent_run", run_args(tmp_path), progress)

    assert not result.is_error
    run = operator_result(result)
    assert run.status == "success"
    assert run.session is not None and run.session.session_id == SESSION
    first = progress.messages[0]
    assert first == {"run_id": run.run_id, "type": "run_started", "provider": "claude"}
    assert all(m["run_id"] == run.run_id for m in progress.messages)
    texts = [m["text"] for m in progress.of_type("message_completed")]
    assert texts == ["Wrote hello.txt."]
    kinds = [m["type"] for m in progress.messages]
    assert kinds.index("session_started") < kinds.index("tool_call") < kinds.index("completed")
    seqs = [m["seq"] for m in progress.messages if "seq" in m]
    assert seqs == sorted(seqs) and seqs[0] == 1
    assert isinstance(result.content[0], TextContent)
    assert "Wrote hello.txt." in result.content[0].text


@ERAS
async def test_accepted_elicitation_lets_the_cli_run_the_tool(
    connect: Connect, transcript: Path, tmp_path: Path, mode: str
) -> None:
    elicit = Elicitations(ACCEPT)
    async with connect(transcript, mode=mode, elicit=elicit) as client:
        result = await call(client, "agent_run", run_args(tmp_path))

    assert operator_result(result).status == "success"
    [asked] = elicit.asked
    assert "Write" in asked.message
    schema = asked.requested_schema
    assert json.loads(schema["properties"]["updated_input"]["default"]) == WRITE_INPUT
    assert control_responses(tmp_path) == [
        {"subtype": "success", "request_id": "perm-1",
         "response": {"behavior": "allow", "updatedInput": WRITE_INPUT}},
    ]  # fmt: skip


@ERAS
async def test_accepted_elicitation_can_edit_the_tool_input(
    connect: Connect, transcript: Path, tmp_path: Path, mode: str
) -> None:
    edited = {**WRITE_INPUT, "content": "edited by the author"}
    answer = ElicitResult(action="accept", content={"updated_input": json.dumps(edited)})
    async with connect(transcript, mode=mode, elicit=Elicitations(answer)) as client:
        await call(client, "agent_run", run_args(tmp_path))

    [response] = control_responses(tmp_path)
    assert response["response"] == {"behavior": "allow", "updatedInput": edited}


@ERAS
async def test_declined_elicitation_denies_the_tool(
    connect: Connect, transcript: Path, tmp_path: Path, mode: str
) -> None:
    elicit = Elicitations(ElicitResult(action="decline"))
    async with connect(transcript, mode=mode, elicit=elicit) as client:
        result = await call(client, "agent_run", run_args(tmp_path))

    [response] = control_responses(tmp_path)
    assert response["request_id"] == "perm-1"
    assert response["response"]["behavior"] == "deny"
    assert operator_result(result).status == "success"


async def test_a_client_without_elicitation_gets_permission_requests_denied(
    connect: Connect, transcript: Path, tmp_path: Path
) -> None:
    async with connect(transcript, elicit=None) as client:
        result = await call(client, "agent_run", run_args(tmp_path))

    [response] = control_responses(tmp_path)
    assert response["response"]["behavior"] == "deny"
    assert operator_result(result).status == "success"


@ERAS
async def test_ask_user_question_becomes_a_choice_and_is_answered(
    connect: Connect, tmp_path: Path, mode: str
) -> None:
    elicit = Elicitations(ElicitResult(action="accept", content={"q0": "hello"}))
    transcript = LOCAL_TRANSCRIPTS / "claude_ask_user.jsonl"
    async with connect(transcript, mode=mode, elicit=elicit) as client:
        result = await call(client, "agent_run", run_args(tmp_path))

    [asked] = elicit.asked
    assert asked.requested_schema["properties"]["q0"]["enum"] == ["hi", "hello"]
    [response] = control_responses(tmp_path)
    answers = response["response"]["updatedInput"]["answers"]
    assert answers == {"Which greeting should the file hold?": "hello"}
    assert operator_result(result).final_message == "You chose hello."


@ERAS
async def test_cancelling_the_call_interrupts_the_cli_and_its_process_group_is_gone(
    connect: Connect, tmp_path: Path, mode: str
) -> None:
    hanging = write_transcript(tmp_path / "hang.jsonl", permission_transcript())
    progress = ProgressLog()
    async with connect(
        hanging, mode=mode, fake_env={"FAKE_CLI_HANG_AFTER": "2"}, heartbeat_interval_s=0.1
    ) as client:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(
                    call, client, "agent_run", run_args(tmp_path, run_id="hang-1"), progress
                )
                heartbeat = await progress.heartbeat_after("tool_call")  # the CLI hangs there
                group.cancel_scope.cancel()
            [argv] = fake_log(tmp_path, "argv")
            assert await wait_pid_gone(argv["pid"], 10)
            # Over a JSON-RPC transport the cancel is a notification: wait until the run ended.
            status = await call(client, "agent_cancel", {"run_id": "hang-1"})
            assert not group_alive(argv["pid"])

    requests = [m["request"] for m in stdin_messages(tmp_path) if m["type"] == "control_request"]
    assert requests == [{"subtype": "interrupt"}]
    assert heartbeat["phase"] == "running" and heartbeat["idle_s"] >= 0
    values = progress.values
    assert values == sorted(set(values))
    view = RunStatus.model_validate(status.structured_content)
    assert view.phase == "finished" and view.cancel_requested
    assert view.result is not None and view.result.status == "interrupted"


async def test_status_and_cancel_reach_a_running_run_by_id(
    connect: Connect, tmp_path: Path
) -> None:
    hanging = write_transcript(tmp_path / "hang.jsonl", permission_transcript())
    progress = ProgressLog()
    outcome: list[CallToolResult] = []

    async def run_it(client: Client) -> None:
        outcome.append(await call(client, "agent_run", run_args(tmp_path, run_id="r-7"), progress))

    async with (
        connect(hanging, fake_env={"FAKE_CLI_HANG_AFTER": "2"}) as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(run_it, client)
        await progress.wait_for(lambda m: m["type"] == "tool_call")
        running = RunStatus.model_validate(
            (await call(client, "agent_status", {"run_id": "r-7"})).structured_content
        )
        cancelled = await call(client, "agent_cancel", {"run_id": "r-7"})

    assert running.phase == "running"
    assert (running.native_session_id, running.metrics.tool_calls) == (SESSION, 1)
    assert running.last_event is not None and running.last_event["type"] == "tool_call"
    assert running.result is None
    view = RunStatus.model_validate(cancelled.structured_content)
    assert view.phase == "finished" and view.result is not None
    assert view.result.status == "interrupted"
    [result] = outcome
    assert result.is_error
    assert operator_result(result).error is not None
    assert operator_result(result).error.code == "interrupted"


async def test_cancel_by_id_withdraws_an_unanswered_inline_question(
    connect: Connect, transcript: Path, tmp_path: Path
) -> None:
    asked = anyio.Event()
    never = anyio.Event()
    outcome: list[CallToolResult] = []

    async def elicit_and_wait(context: Any, params: Any) -> ElicitResult:
        asked.set()
        await never.wait()
        return ACCEPT

    async def run_it(client: Client) -> None:
        outcome.append(await call(client, "agent_run", run_args(tmp_path, run_id="q-1")))

    async with connect(transcript, mode="legacy", elicit=elicit_and_wait) as client:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(run_it, client)
                await asked.wait()
                cancelled = await call(client, "agent_cancel", {"run_id": "q-1"})
        never.set()

    assert RunStatus.model_validate(cancelled.structured_content).phase == "finished"
    [result] = outcome
    assert operator_result(result).status == "interrupted"
    assert control_responses(tmp_path) == []  # the question was withdrawn, never answered


async def test_status_of_an_unknown_run_is_an_error(connect: Connect) -> None:
    async with connect(None) as client:
        result = await call(client, "agent_status", {"run_id": "nope"})
    assert result.is_error
    assert isinstance(result.content[0], TextContent)
    assert "[unknown_run]" in result.content[0].text


async def test_a_relative_working_dir_is_refused(connect: Connect) -> None:
    async with connect(None) as client:
        result = await call(
            client, "agent_run", {"provider": "codex", "instruction": "x", "working_dir": "rel"}
        )
    assert result.is_error
    assert isinstance(result.content[0], TextContent)
    assert "[invalid_params]" in result.content[0].text


async def test_a_missing_cli_fails_the_run_with_cli_not_found(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    server = build_server(env={"PATH": str(empty)}, trace_dir=tmp_path / "traces")
    async with Client(server) as client:
        result = await call(client, "agent_run", run_args(tmp_path))
    assert result.is_error
    run = operator_result(result)
    assert run.status == "failed"
    assert run.error is not None and run.error.code == "cli_not_found"


async def test_codex_runs_through_the_server_with_its_sandbox_policy(
    connect: Connect, tmp_path: Path
) -> None:
    transcript = write_transcript(
        tmp_path / "codex.jsonl",
        [
            {"type": "thread.started", "thread_id": "019b0000-0000-7000-8000-000000000001"},
            {"type": "turn.started"},
            {
                "type": "item.completed",
                "item": {"id": "item_0", "type": "agent_message", "text": "all done"},
            },
            {
                "type": "turn.completed",
                "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 3},
            },
        ],
    )
    policy = {"mode": "read_only"}
    async with connect(transcript) as client:
        result = await call(
            client, "agent_run", run_args(tmp_path, provider="codex", tool_policy=policy)
        )

    run = operator_result(result)
    assert (run.status, run.final_message) == ("success", "all done")
    assert run.policy is not None and run.policy.native == ("--sandbox", "read-only")
    argv = fake_log(tmp_path, "argv")[0]["argv"]
    assert argv[argv.index("--sandbox") + 1] == "read-only"


async def test_resume_passes_the_native_session_and_reports_the_attempt(
    connect: Connect, transcript: Path, tmp_path: Path
) -> None:
    arguments = {**run_args(tmp_path), "native_session_id": SESSION}
    async with connect(transcript, elicit=Elicitations(ACCEPT)) as client:
        result = await call(client, "agent_resume", arguments)
        refused = await call(client, "agent_run", {**run_args(tmp_path), "session": "resume"})

    run = operator_result(result)
    assert [(a.mode, a.resume_session_id) for a in run.attempts] == [("resume", SESSION)]
    argv = fake_log(tmp_path, "argv")[0]["argv"]
    assert argv[argv.index("--resume") + 1] == SESSION
    assert refused.is_error


async def test_an_unanswered_input_required_round_is_interrupted_after_the_unattended_timeout(
    connect: Connect, transcript: Path, tmp_path: Path
) -> None:
    async with connect(transcript, elicit=Elicitations(ACCEPT), unattended_timeout_s=0.2) as client:
        with anyio.fail_after(30):
            first = await client.session.call_tool(
                "agent_run", run_args(tmp_path, run_id="left"), allow_input_required=True
            )
            assert isinstance(first, InputRequiredResult)
            assert first.input_requests is not None and list(first.input_requests) == ["perm-1"]
            [argv] = fake_log(tmp_path, "argv")
            assert await wait_pid_gone(argv["pid"], 10)  # nobody came back: the run was stopped
            final = await call(client, "agent_cancel", {"run_id": "left"})

    view = RunStatus.model_validate(final.structured_content)
    interrupts = [m for m in stdin_messages(tmp_path) if m["type"] == "control_request"]
    assert [m["request"] for m in interrupts] == [{"subtype": "interrupt"}]
    assert view.result is not None and view.result.status == "interrupted"


async def test_closing_the_connection_stops_a_run_left_waiting_for_an_answer(
    connect: Connect, transcript: Path, tmp_path: Path
) -> None:
    async with connect(transcript, elicit=Elicitations(ACCEPT)) as client:
        with anyio.fail_after(30):
            first = await client.session.call_tool(
                "agent_run", run_args(tmp_path), allow_input_required=True
            )
        assert isinstance(first, InputRequiredResult)
        [argv] = fake_log(tmp_path, "argv")

    assert await wait_pid_gone(argv["pid"], 0.5)
    assert not group_alive(argv["pid"])


async def test_agent_providers_reports_cli_versions_found_on_path_or_by_variable(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = _script(bin_dir / "claude", "echo '9.9.9 (Claude Code)'")
    codex = _script(tmp_path / "my-codex", "echo 'WARNING: noise' >&2; echo 'codex-cli 1.2.3'")
    env = {"PATH": str(bin_dir), "ATRIUM_CODEX_BIN": str(codex)}
    async with Client(build_server(env=env)) as client:
        result = await call(client, "agent_providers", {})

    report = ProvidersReport.model_validate(result.structured_content)
    found = {p.provider: p for p in report.providers}
    assert (found["claude"].installed, found["claude"].version, found["claude"].source) == (
        True,
        "9.9.9",
        "path",
    )
    assert found["claude"].executable == str(claude)
    assert (found["codex"].version, found["codex"].source) == ("1.2.3", "env")
    assert found["codex"].version_text == "codex-cli 1.2.3"
    assert found["openclaw"].installed is False and found["openclaw"].error


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
