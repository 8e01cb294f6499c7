"""The pinned real Claude Code and Codex CLIs, driven by the controllers and the MCP server,
fully offline against scripted model servers on 127.0.0.1.

The CLIs are installed from npm into .cache/agent-clis on first use (tests/setup/agent_clis.py);
only a missing npm skips these tests. Every other network access is off (see `claude_env` and
`codex_env`), and each test checks the scripted server saw only the requests it expected.
Run with `-s` to see the measured cancel latencies.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from mcp_servers.agents.controllers import (
    AgentController,
    ClaudeCodeConfig,
    ClaudeCodeController,
    CodexConfig,
    CodexController,
)
from mcp_servers.agents.events import (
    AgentEvent,
    Completed,
    Failed,
    PermissionRequest,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.requests import (
    AllowTool,
    DenyTool,
    PermissionDecision,
    ResumeRequest,
    StartRequest,
    ToolPolicy,
)
from mcp_servers.agents.results import ErrorCode, OperatorResult
from mcp_servers.agents.server import build_server
from tests.fakes.anthropic_messages import anthropic_server
from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer
from tests.fakes.openai_responses import responses_server
from tests.mcp_servers.agents.server_support import Elicitations, ProgressLog
from tests.peers import peer_unavailable
from tests.setup.agent_clis import (
    INSTALL_TIMEOUT_S,
    AgentClis,
    AgentCliUnavailable,
    claude_env,
    codex_env,
    install_agent_clis,
    node_bin_dir,
)

# The first test may include the npm install (up to INSTALL_TIMEOUT_S) in its fixture setup.
pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(INSTALL_TIMEOUT_S + 300)]

RUN_LIMIT_S = 90.0
Answer = Callable[[PermissionRequest], PermissionDecision]


@pytest.fixture(scope="module")
def clis() -> AgentClis:
    """The pinned CLIs; a failed install fails the tests, only a missing npm skips them."""
    try:
        return install_agent_clis()
    except AgentCliUnavailable:
        if shutil.which("npm") is None or node_bin_dir() is None:
            peer_unavailable("npm/node not on PATH: cannot install the pinned agent CLIs")
        raise


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def anthropic() -> Iterator[ScriptedModelServer]:
    with anthropic_server() as server:
        yield server


@pytest.fixture
def responses() -> Iterator[ScriptedModelServer]:
    with responses_server() as server:
        yield server


def claude(
    clis: AgentClis, server: ScriptedModelServer, tmp_path: Path, **env: Any
) -> ClaudeCodeController:
    environment = claude_env(server.url, tmp_path / "home", **env)
    config = ClaudeCodeConfig(
        executable=str(clis.claude), env=environment, trace_dir=tmp_path / "traces"
    )
    return ClaudeCodeController(config)


def codex(clis: AgentClis, server: ScriptedModelServer, tmp_path: Path) -> CodexController:
    environment = codex_env(server.url, tmp_path / "home")
    config = CodexConfig(executable=str(clis.codex), env=environment, trace_dir=tmp_path / "traces")
    return CodexController(config)


def request(work: Path, instruction: str = "do it", **fields: Any) -> StartRequest:
    return StartRequest(session_id="real", working_dir=work, instruction=instruction, **fields)


async def run_turn(
    ctl: AgentController, req: StartRequest, answer: Answer | None = None
) -> tuple[list[AgentEvent], OperatorResult]:
    """Start (or resume) a run, answer its permission requests, return events and result."""
    await (ctl.resume(req) if isinstance(req, ResumeRequest) else ctl.start(req))
    events: list[AgentEvent] = []
    with anyio.fail_after(RUN_LIMIT_S):
        async for event in ctl.stream():
            events.append(event)
            if isinstance(event, PermissionRequest) and answer is not None:
                await ctl.answer_permission(event.request_id, answer(event))
        return events, await ctl.wait()


async def interrupt_when_requested(
    ctl: AgentController, server: ScriptedModelServer, generations: int
) -> tuple[list[AgentEvent], OperatorResult, float]:
    """Once the model server holds request number `generations`, interrupt; return the events,
    the result and the seconds from the interrupt to the end of the run."""
    events: list[AgentEvent] = []
    interrupted_at: list[float] = []

    async def interrupt() -> None:
        await anyio.to_thread.run_sync(server.wait_for_generations, generations, 60.0)
        interrupted_at.append(anyio.current_time())
        await ctl.interrupt()

    with anyio.fail_after(RUN_LIMIT_S):
        async with anyio.create_task_group() as group:
            group.start_soon(interrupt)
            events.extend([event async for event in ctl.stream()])
        result = await ctl.wait()
    return events, result, anyio.current_time() - interrupted_at[0]


def processes_in(directory: Path) -> list[int]:
    """Live processes whose working directory is `directory` or below (zombies excluded)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd == str(directory) or cwd.startswith(f"{directory}{os.sep}"):
            found.append(int(entry.name))
    return found


def tool_results_sent(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool_result blocks Claude Code sent back in a Messages request."""
    last = request.body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else []
    return [b for b in content if b.get("type") == "tool_result"]


def of_type(events: list[AgentEvent], kind: type[Any]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


# -- Claude Code ----------------------------------------------------------------------------


async def test_claude_turn_runs_a_tool_and_reports_metrics(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    command = {"command": "echo from-bash > out.txt && cat out.txt", "description": "write"}
    anthropic.push(Reply.tool_call("Bash", command, id="toolu_bash1"), Reply.text("ran it"))
    policy = ToolPolicy(allowed_tools=("Bash",))
    async with claude(clis, anthropic, tmp_path) as ctl:
        events, result = await run_turn(ctl, request(work, tool_policy=policy))

    assert result.status == "success", result.error
    [started] = of_type(events, SessionStarted)
    assert result.session is not None and result.session.session_id == started.session_id
    [call] = of_type(events, ToolCall)
    assert (call.call_id, call.name, call.input["command"]) == (
        "toolu_bash1",
        "Bash",
        command["command"],
    )
    [tool_result] = of_type(events, ToolResult)
    assert tool_result.call_id == "toolu_bash1" and "from-bash" in tool_result.output
    assert events[-1] == Completed(session_id=started.session_id, final_message="ran it")
    assert (work / "out.txt").read_text() == "from-bash\n"
    metrics = result.metrics
    assert (metrics.tool_calls, metrics.turns) == (1, 2)
    assert metrics.input_tokens and metrics.output_tokens
    [sent] = tool_results_sent(anthropic.generation_requests[1])
    assert sent["tool_use_id"] == "toolu_bash1"
    assert anthropic.paths == ["POST /v1/messages", "POST /v1/messages"]
    assert result.trace is not None
    raw = result.trace.raw_path.read_text().splitlines()
    assert json.loads(raw[0])["type"] == "system" and json.loads(raw[-1])["type"] == "result"


async def test_claude_permission_requests_answered_allow_edited_and_deny(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    anthropic.push(
        Reply.tool_call(
            "Bash", {"command": "echo allowed > a.txt", "description": "a"}, id="toolu_a"
        ),
        Reply.tool_call(
            "Bash", {"command": "echo original > b.txt", "description": "b"}, id="toolu_b"
        ),
        Reply.tool_call(
            "Bash", {"command": "echo denied > c.txt", "description": "c"}, id="toolu_c"
        ),
        Reply.text("finished"),
    )
    decisions: dict[str, PermissionDecision] = {
        "toolu_a": AllowTool(),
        "toolu_b": AllowTool(updated_input={"command": "echo edited > b.txt", "description": "b"}),
        "toolu_c": DenyTool(message="not this one"),
    }
    # read_only = Claude's default permission mode: Bash commands that write ask first.
    async with claude(clis, anthropic, tmp_path) as ctl:
        events, result = await run_turn(
            ctl,
            request(work, tool_policy=ToolPolicy(mode="read_only")),
            lambda p: decisions[p.call_id or ""],
        )

    asked = of_type(events, PermissionRequest)
    assert [(p.tool_name, p.call_id) for p in asked] == [
        ("Bash", "toolu_a"),
        ("Bash", "toolu_b"),
        ("Bash", "toolu_c"),
    ]
    assert (work / "a.txt").read_text() == "allowed\n"
    assert (work / "b.txt").read_text() == "edited\n"
    assert not (work / "c.txt").exists()
    denied = [r for r in of_type(events, ToolResult) if r.call_id == "toolu_c"]
    assert denied and denied[0].is_error
    assert result.status == "success" and result.final_message == "finished"
    assert [(d.tool_name, d.call_id) for d in result.permission_denials] == [("Bash", "toolu_c")]
    [sent] = tool_results_sent(anthropic.generation_requests[3])
    assert sent["is_error"] is True and "not this one" in json.dumps(sent["content"])


async def test_claude_resumes_the_same_session(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    anthropic.push(Reply.text("first answer"), Reply.text("second answer"))
    async with claude(clis, anthropic, tmp_path) as ctl:
        _, first = await run_turn(ctl, request(work, "remember the word kiwi"))
        assert first.session is not None
        again = ResumeRequest(
            session_id="real",
            working_dir=work,
            instruction="which word?",
            native_session_id=first.session.session_id,
        )
        _, second = await run_turn(ctl, again)

    assert second.status == "success" and second.final_message == "second answer"
    assert second.session == first.session
    assert [(a.mode, a.outcome) for a in second.attempts] == [("resume", "completed")]
    history = json.dumps(anthropic.generation_requests[1].body["messages"])
    assert "remember the word kiwi" in history and "first answer" in history


async def test_claude_interrupt_mid_turn_stops_the_cli(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    release = threading.Event()
    anthropic.push(Reply.text("never finished").after(release, mid_stream=True))
    try:
        async with claude(clis, anthropic, tmp_path) as ctl:
            await ctl.start(request(work))
            events, result, latency = await interrupt_when_requested(ctl, anthropic, 1)
            left = processes_in(work)
    finally:
        release.set()

    print(f"\nclaude interrupt -> run ended: {latency:.3f}s")
    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    assert isinstance(events[-1], Failed)
    assert left == []
    assert anthropic.disconnects.get(timeout=10).client_disconnected.is_set()
    assert latency < 15


async def test_claude_takes_messages_sent_mid_turn_in_later_turns_and_the_run_goes_on(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    release = threading.Event()
    later = [Reply.text("second answer"), Reply.text("third answer")]
    anthropic.push(Reply.text("first answer").after(release), *later)
    texts = ["also say kiwi", "and be brief"]
    receipts: list[str] = []
    try:
        async with claude(clis, anthropic, tmp_path) as ctl:
            await ctl.start(request(work, "count the files"))
            await anyio.to_thread.run_sync(anthropic.wait_for_generations, 1, 60.0)
            for text in texts:
                receipts.append((await ctl.send_message(text)).message_id)
            release.set()
            with anyio.fail_after(RUN_LIMIT_S):
                events = [event async for event in ctl.stream()]
            result = await ctl.wait()
    finally:
        release.set()

    # The messages waited for the first turn's result, then went in as later turns: one turn
    # for both when the CLI had read both by then (it joins waiting messages), else one each.
    # The run ended with the turn that took the last one.
    assert result.status == "success", result.error
    turns = anthropic.generation_requests
    assert len(turns) in (2, 3)
    prompts = [
        block["text"] for turn in turns[1:] for block in turn.body["messages"][-1]["content"]
    ]
    assert prompts in (["also say kiwi\nand be brief"], texts)
    assert result.final_message == ["second answer", "third answer"][len(turns) - 2]
    hints = of_type(events, StateHint)
    taken = [h.detail["message_id"] for h in hints if h.hint == "message_taken"]
    assert taken[1:] == receipts  # after the prompt's
    assert [h.detail["subtype"] for h in hints if h.hint == "result"] == ["success"] * len(turns)
    assert result.notes == ()


@pytest.mark.parametrize(
    ("replies", "retries", "code", "status"),
    [
        ([Reply.error(500), Reply.error(500)], 1, ErrorCode.API_ERROR, 500),
        ([Reply.error(401)], 0, ErrorCode.AUTH_FAILED, 401),
    ],
    ids=["500-after-a-retry", "401"],
)
async def test_claude_model_errors_fail_the_run(
    *,
    clis: AgentClis,
    anthropic: ScriptedModelServer,
    tmp_path: Path,
    work: Path,
    replies: list[Reply],
    retries: int,
    code: ErrorCode,
    status: int,
) -> None:
    anthropic.push(*replies)
    async with claude(clis, anthropic, tmp_path, max_retries=retries) as ctl:
        events, result = await run_turn(ctl, request(work))

    assert result.status == "failed"
    assert result.error is not None and result.error.code is code
    assert result.error.detail.get("api_error_status") == status
    assert len(anthropic.generation_requests) == len(replies)
    retried = [e for e in of_type(events, StateHint) if e.hint == "api_retry"]
    assert len(retried) == retries


async def test_claude_full_access_runs_tools_without_asking(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    target = work / "full.txt"
    anthropic.push(
        Reply.tool_call("Write", {"file_path": str(target), "content": "full\n"}),
        Reply.tool_call("Bash", {"command": "echo more >> full.txt", "description": "append"}),
        Reply.text("done"),
    )
    async with claude(clis, anthropic, tmp_path) as ctl:
        events, result = await run_turn(
            ctl, request(work, tool_policy=ToolPolicy(mode="full_access"))
        )

    assert result.status == "success", result.error
    assert not of_type(events, PermissionRequest)
    assert target.read_text() == "full\nmore\n"
    assert [a.path for a in result.artifacts] == [str(target)]


async def test_claude_through_the_mcp_server_elicits_and_streams(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    anthropic.push(
        Reply.tool_call("Bash", {"command": "echo via-mcp > m.txt", "description": "m"}),
        Reply.text("done via mcp"),
    )
    elicit = Elicitations(ElicitResult(action="accept", content={}))
    progress = ProgressLog()
    arguments = {
        "provider": "claude",
        "instruction": "go",
        "working_dir": str(work),
        "tool_policy": {"mode": "read_only"},
    }
    async with mcp_client(clis, anthropic, tmp_path, elicit) as client:
        with anyio.fail_after(RUN_LIMIT_S):
            result = await client.call_tool("agent_run", arguments, progress_callback=progress)

    assert not result.is_error, result.content
    run = OperatorResult.model_validate(result.structured_content)
    assert run.status == "success" and run.final_message == "done via mcp"
    [asked] = elicit.asked
    assert "Bash" in asked.message and "via-mcp" in asked.message
    assert (work / "m.txt").read_text() == "via-mcp\n"
    assert [m["text"] for m in progress.of_type("message_completed")] == ["done via mcp"]
    assert "via-mcp" in json.dumps(progress.of_type("tool_call"))


async def test_claude_through_the_mcp_server_stops_when_the_call_is_cancelled(
    clis: AgentClis, anthropic: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    release = threading.Event()
    anthropic.push(Reply.text("never").after(release, mid_stream=True))
    arguments = {
        "provider": "claude",
        "instruction": "go",
        "working_dir": str(work),
        "run_id": "cancel-me",
    }
    try:
        async with mcp_client(clis, anthropic, tmp_path, None) as client:
            with anyio.fail_after(RUN_LIMIT_S):
                async with anyio.create_task_group() as group:
                    group.start_soon(lambda: client.call_tool("agent_run", arguments))
                    await anyio.to_thread.run_sync(anthropic.wait_for_generations, 1, 60.0)
                    cancelled_at = anyio.current_time()
                    group.cancel_scope.cancel()
                latency = anyio.current_time() - cancelled_at
                status = await client.call_tool("agent_status", {"run_id": "cancel-me"})
            left = processes_in(work)
    finally:
        release.set()

    print(f"\nclaude via MCP: call cancelled -> CLI stopped: {latency:.3f}s")
    assert status.structured_content is not None
    assert status.structured_content["result"]["status"] == "interrupted"
    assert left == []


@asynccontextmanager
async def mcp_client(
    clis: AgentClis, server: ScriptedModelServer, tmp_path: Path, elicit: Elicitations | None
) -> AsyncIterator[Client]:
    """An in-memory client of an agents server whose Claude runs the real CLI offline."""

    def factory(provider: str, executable: str) -> AgentController:
        assert provider == "claude"
        return claude(clis, server, tmp_path)

    async with Client(
        build_server(controller_factory=factory), elicitation_callback=elicit
    ) as client:
        yield client


@pytest.mark.parametrize("provider", ["claude", "codex"])
async def test_resuming_an_unknown_session_falls_back_to_a_fresh_one(
    clis: AgentClis, tmp_path: Path, work: Path, provider: str
) -> None:
    unknown = str(uuid.uuid4())
    with anthropic_server() if provider == "claude" else responses_server() as server:
        server.push(Reply.text("fresh start"))
        ctl = (
            claude(clis, server, tmp_path)
            if provider == "claude"
            else codex(clis, server, tmp_path)
        )
        again = ResumeRequest(
            session_id="real", working_dir=work, instruction="hi", native_session_id=unknown
        )
        async with ctl:
            events, result = await run_turn(ctl, again)

    assert result.status == "success" and result.final_message == "fresh start"
    assert [(a.mode, a.outcome) for a in result.attempts] == [
        ("resume", "resume_failed"),
        ("start", "completed"),
    ]
    assert result.session is not None and result.session.session_id != unknown
    [hint] = [e for e in of_type(events, StateHint) if e.hint == "resume_failed"]
    assert hint.detail["session_id"] == unknown


# -- Codex ----------------------------------------------------------------------------------


async def test_codex_turn_executes_a_command(
    clis: AgentClis, responses: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    command = {"cmd": "echo from-exec > out.txt; cat out.txt"}
    responses.push(Reply.tool_call("exec_command", command, id="c1"), Reply.text("ran it"))
    async with codex(clis, responses, tmp_path) as ctl:
        events, result = await run_turn(ctl, request(work))

    assert result.status == "success", result.error
    [call] = of_type(events, ToolCall)
    assert call.name == "command_execution" and "from-exec" in str(call.input["command"])
    [tool_result] = of_type(events, ToolResult)
    assert (tool_result.output, tool_result.exit_code, tool_result.is_error) == (
        "from-exec\n",
        0,
        False,
    )
    assert (work / "out.txt").read_text() == "from-exec\n"
    assert result.final_message == "ran it"
    assert result.metrics.tool_calls == 1 and result.metrics.input_tokens
    assert result.policy is not None and result.policy.native == ("--sandbox", "workspace-write")
    outputs = [
        i
        for i in responses.generation_requests[1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert outputs[-1]["call_id"] == "c1"
    assert responses.paths == ["POST /v1/responses", "POST /v1/responses"]


async def test_codex_resumes_the_same_thread(
    clis: AgentClis, responses: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    responses.push(Reply.text("first answer"), Reply.text("second answer"))
    async with codex(clis, responses, tmp_path) as ctl:
        _, first = await run_turn(ctl, request(work, "remember the word kiwi"))
        assert first.session is not None
        again = ResumeRequest(
            session_id="real",
            working_dir=work,
            instruction="which word?",
            native_session_id=first.session.session_id,
        )
        _, second = await run_turn(ctl, again)

    assert second.status == "success" and second.final_message == "second answer"
    assert second.session == first.session
    assert [(a.mode, a.outcome) for a in second.attempts] == [("resume", "completed")]
    history = json.dumps(responses.generation_requests[1].body["input"])
    assert "remember the word kiwi" in history and "first answer" in history


async def test_codex_interrupt_mid_turn_stops_the_cli(
    clis: AgentClis, responses: ScriptedModelServer, tmp_path: Path, work: Path
) -> None:
    release = threading.Event()
    responses.push(Reply.text("never finished").after(release, mid_stream=True))
    try:
        async with codex(clis, responses, tmp_path) as ctl:
            await ctl.start(request(work))
            events, result, latency = await interrupt_when_requested(ctl, responses, 1)
            left = processes_in(work)
    finally:
        release.set()

    print(f"\ncodex interrupt -> run ended: {latency:.3f}s")
    assert result.status == "interrupted"
    assert isinstance(events[-1], Failed)
    assert result.exit_code != 0
    assert left == []
    assert responses.disconnects.get(timeout=10).client_disconnected.is_set()
    assert latency < 15


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, ErrorCode.API_ERROR), (401, ErrorCode.AUTH_FAILED), (500, ErrorCode.API_ERROR)],
)
async def test_codex_model_errors_fail_the_run(
    *,
    clis: AgentClis,
    responses: ScriptedModelServer,
    tmp_path: Path,
    work: Path,
    status: int,
    code: ErrorCode,
) -> None:
    responses.push(Reply.error(status))
    async with codex(clis, responses, tmp_path) as ctl:
        _, result = await run_turn(ctl, request(work))

    assert result.status == "failed"
    assert result.error is not None and result.error.code is code
    assert result.exit_code not in (0, None)
    assert len(responses.generation_requests) == 1
