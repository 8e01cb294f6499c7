"""The pinned real OpenClaw CLI driven by the controller, offline against scripted models.

OpenClaw is installed from npm into .cache/peers on first use (tests/setup/openclaw.py) and runs
on the venv's Node 24. An embedded turn takes seconds of CPU, so the module's scenarios run
concurrently once (`turns`), each with its own scripted Chat Completions server on 127.0.0.1 and
its own state folder, and the tests assert on what each scenario produced. A missing Node/npm or
registry skips loudly (fails under ATRIUM_REQUIRE_PEERS=1). Run with `-s` to see the timings.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Coroutine
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from mcp_servers.agents.controllers import OpenClawConfig, OpenClawController
from mcp_servers.agents.controllers.openclaw_state import OpenClawModel, build_config
from mcp_servers.agents.events import (
    AgentEvent,
    ArtifactCreated,
    Completed,
    Failed,
    MessageCompleted,
    MessageDelta,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.requests import ResumeRequest, StartRequest, ToolPolicy
from mcp_servers.agents.results import ErrorCode, OperatorResult
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.mcp_servers.agents.helpers import wait_pid_gone
from tests.peers import peer_unavailable
from tests.setup.openclaw import (
    INSTALL_TIMEOUT_S,
    OpenClawInstall,
    OpenClawUnavailable,
    openclaw_gateway,
)
from tests.setup.openclaw import install_openclaw as install

pytestmark = [pytest.mark.slow, pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)]

TURN_LIMIT_S = 300.0
KEY = "sk-scripted-not-a-real-key"
T = TypeVar("T")


@dataclass
class Turn:
    """What one scenario saw: each run's events and result, plus scenario-specific facts."""

    events: list[list[AgentEvent]] = field(default_factory=list[list[AgentEvent]])
    results: list[OperatorResult] = field(default_factory=list[OperatorResult])
    server: ScriptedModelServer | None = None
    work: Path | None = None
    facts: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def result(self) -> OperatorResult:
        return self.results[-1]

    def of_type(self, kind: type[T], run: int = -1) -> list[T]:
        return [e for e in self.events[run] if isinstance(e, kind)]


@pytest.fixture(scope="module")
def openclaw() -> OpenClawInstall:
    try:
        return install()
    except OpenClawUnavailable as exc:
        peer_unavailable(f"OpenClaw {exc}")


@pytest.fixture(scope="module")
def turns(openclaw: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Turn]:
    """Every scenario, run concurrently against the real CLI."""
    root = tmp_path_factory.mktemp("openclaw")
    scenarios: dict[str, Callable[[OpenClawInstall, Path, Turn], Coroutine[Any, Any, None]]] = {
        "plain": plain_turn,
        "tool": tool_turn,
        "resume": resumed_turns,
        "bad_key": bad_key_turn,
        "interrupt": interrupted_turn,
        "gateway": gateway_turns,
    }
    out = {name: Turn() for name in scenarios}

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for name, scenario in scenarios.items():
                folder = root / name
                folder.mkdir()
                group.start_soon(scenario, openclaw, folder, out[name])

    started = anyio.run(_timed, main, backend="asyncio")
    print(f"\nopenclaw scenarios, concurrently: {started:.1f}s")
    return out


async def _timed(main: Callable[[], Coroutine[Any, Any, None]]) -> float:
    began = anyio.current_time()
    await main()
    return anyio.current_time() - began


def scripted_model(server: ScriptedModelServer, key: str = KEY) -> OpenClawModel:
    return OpenClawModel(
        api="openai-completions", base_url=server.url + "/v1", model_id="scripted", api_key=key
    )


def controller(
    openclaw: OpenClawInstall,
    folder: Path,
    server: ScriptedModelServer,
    key: str = KEY,
    **settings: Any,
) -> OpenClawController:
    config = OpenClawConfig(
        executable=str(openclaw.executable),
        mode="local",
        model=scripted_model(server, key),
        state_root=folder / "state",
        trace_dir=folder / "traces",
    ).model_copy(update=settings)
    return OpenClawController(config)


def workspace(folder: Path) -> Path:
    work = folder / "work"
    work.mkdir(exist_ok=True)
    return work


async def run(ctl: OpenClawController, request: StartRequest, turn: Turn) -> None:
    await (ctl.resume(request) if isinstance(request, ResumeRequest) else ctl.start(request))
    events: list[AgentEvent] = []
    with anyio.fail_after(TURN_LIMIT_S):
        async for event in ctl.stream():
            events.append(event)
        turn.events.append(events)
        turn.results.append(await ctl.wait())


async def plain_turn(openclaw: OpenClawInstall, folder: Path, turn: Turn) -> None:
    with openai_chat_server([Reply.text("hello from the scripted model")]) as server:
        turn.server, turn.work = server, workspace(folder)
        async with controller(openclaw, folder, server) as ctl:
            await run(
                ctl, StartRequest(session_id="a", working_dir=turn.work, instruction="hi"), turn
            )


async def tool_turn(openclaw: OpenClawInstall, folder: Path, turn: Turn) -> None:
    """The model's answer after the tool is held until the tool call reached the stream, so the
    call must arrive live (from the transcript followed during the turn), not at its end."""
    release = threading.Event()
    write = Reply.tool_call("write", {"path": "notes.md", "content": "# Notes\n"}, id="call_w1")
    try:
        with openai_chat_server([write, Reply.text("wrote notes.md").after(release)]) as server:
            turn.server, turn.work = server, workspace(folder)
            request = StartRequest(
                session_id="a",
                working_dir=turn.work,
                instruction="write the notes",
                tool_policy=ToolPolicy(mode="workspace_write"),
            )
            async with controller(openclaw, folder, server) as ctl:
                await ctl.start(request)
                events: list[AgentEvent] = []
                with anyio.fail_after(TURN_LIMIT_S):
                    async with anyio.create_task_group() as group:

                        async def unblock_eventually() -> None:
                            # Only so a broken live stream fails the test instead of hanging it.
                            await anyio.to_thread.run_sync(server.wait_for_generations, 2, 240.0)
                            await anyio.sleep(60)
                            release.set()

                        group.start_soon(unblock_eventually)
                        async for event in ctl.stream():
                            events.append(event)
                            if isinstance(event, ToolResult) and not release.is_set():
                                turn.facts["live"] = True
                                release.set()
                        group.cancel_scope.cancel()
                turn.events.append(events)
                turn.results.append(await ctl.wait())
    finally:
        release.set()


async def resumed_turns(openclaw: OpenClawInstall, folder: Path, turn: Turn) -> None:
    with openai_chat_server([Reply.text("noted: kiwi"), Reply.text("it was kiwi")]) as server:
        turn.server, turn.work = server, workspace(folder)
        async with controller(openclaw, folder, server) as ctl:
            first = StartRequest(
                session_id="a", working_dir=turn.work, instruction="remember the word kiwi"
            )
            await run(ctl, first, turn)
            session = turn.results[0].session
            assert session is not None
            again = ResumeRequest(
                session_id="a",
                working_dir=turn.work,
                instruction="which word?",
                native_session_id=session.session_id,
            )
            await run(ctl, again, turn)


async def bad_key_turn(openclaw: OpenClawInstall, folder: Path, turn: Turn) -> None:
    with openai_chat_server([Reply.error(401)], fallback=Reply.error(401)) as server:
        turn.server, turn.work = server, workspace(folder)
        async with controller(openclaw, folder, server, key="sk-wrong") as ctl:
            await run(
                ctl, StartRequest(session_id="a", working_dir=turn.work, instruction="hi"), turn
            )


async def interrupted_turn(openclaw: OpenClawInstall, folder: Path, turn: Turn) -> None:
    release = threading.Event()
    held = Reply.text("never finished").after(release, mid_stream=True)
    try:
        with openai_chat_server([held], fallback=held) as server:
            turn.server, turn.work = server, workspace(folder)
            async with controller(openclaw, folder, server) as ctl:
                request = StartRequest(session_id="a", working_dir=turn.work, instruction="hi")
                await ctl.start(request)
                events: list[AgentEvent] = []
                async with anyio.create_task_group() as group:

                    async def interrupt() -> None:
                        await anyio.to_thread.run_sync(server.wait_for_generations, 1, 240.0)
                        proc = ctl._run.proc if ctl._run else None  # pyright: ignore[reportPrivateUsage]
                        turn.facts["pid"] = proc.pid if proc else None
                        group = _group_members(proc.pid) if proc else set[int]()
                        turn.facts["group"] = group
                        turn.facts["interrupted_at"] = anyio.current_time()
                        await ctl.interrupt()
                        gone = [await wait_pid_gone(pid, 60.0) for pid in sorted(group)]
                        if group and all(gone):
                            ended = anyio.current_time() - turn.facts["interrupted_at"]
                            turn.facts["gone_after_s"] = ended

                    group.start_soon(interrupt)
                    with anyio.fail_after(TURN_LIMIT_S):
                        async for event in ctl.stream():
                            events.append(event)
                turn.events.append(events)
                turn.results.append(await ctl.wait())
                turn.facts["ended_after_s"] = anyio.current_time() - turn.facts["interrupted_at"]
                turn.facts["pid_alive"] = _alive(turn.facts["pid"])
    finally:
        release.set()


async def gateway_turns(openclaw: OpenClawInstall, folder: Path, turn: Turn) -> None:
    """Start a Gateway on a free loopback port; a streamed turn, then one aborted mid-turn."""
    release = threading.Event()
    held = Reply.text("never finished").after(release, mid_stream=True)
    streamed = Reply.text("streamed from the gateway, in several chunks of text")
    write = Reply.tool_call("write", {"path": "gw.md", "content": "gateway\n"}, id="call_g1")
    try:
        with openai_chat_server([write, streamed, held], fallback=held) as server:
            turn.server, turn.work = server, workspace(folder)
            config = build_config(turn.work, scripted_model(server), ToolPolicy())
            began = anyio.current_time()
            stack = ExitStack()
            gateway = await anyio.to_thread.run_sync(
                stack.enter_context, openclaw_gateway(openclaw, folder / "gateway", config)
            )
            turn.facts["gateway_start_s"] = anyio.current_time() - began
            try:
                ctl = controller(
                    openclaw,
                    folder,
                    server,
                    mode="gateway",
                    gateway_url=gateway.url,
                    gateway_token=gateway.token,
                )
                async with ctl:
                    request = StartRequest(session_id="a", working_dir=turn.work, instruction="hi")
                    await run(ctl, request, turn)
                    await ctl.start(request.model_copy(update={"run_id": "gw-abort"}))
                    events: list[AgentEvent] = []
                    async with anyio.create_task_group() as group:

                        async def interrupt() -> None:
                            await anyio.to_thread.run_sync(server.wait_for_generations, 3, 240.0)
                            turn.facts["interrupted_at"] = anyio.current_time()
                            await ctl.interrupt()

                        group.start_soon(interrupt)
                        with anyio.fail_after(TURN_LIMIT_S):
                            async for event in ctl.stream():
                                events.append(event)
                    turn.events.append(events)
                    turn.results.append(await ctl.wait())
                    ended = anyio.current_time() - turn.facts["interrupted_at"]
                    turn.facts["ended_after_s"] = ended
                    gone = await anyio.to_thread.run_sync(server.disconnects.get, True, 30.0)
                    turn.facts["disconnected"] = gone.client_disconnected.is_set()
            finally:
                await anyio.to_thread.run_sync(stack.close)
    finally:
        release.set()


def _group_members(pgid: int) -> set[int]:
    """Every process of the process group `pgid` (Linux /proc): the CLI and what it started."""
    members: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:
            members.add(int(stat.parent.name))
    return members


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


# -- the scenarios' checks ------------------------------------------------------------------


def test_a_plain_turn_succeeds_with_the_models_answer(turns: dict[str, Turn]) -> None:
    turn = turns["plain"]
    result = turn.result

    assert result.status == "success", result.error
    assert result.final_message == "hello from the scripted model"
    [started] = turn.of_type(SessionStarted)
    assert result.session is not None and result.session.session_id == started.session_id
    assert [m.text for m in turn.of_type(MessageCompleted)] == ["hello from the scripted model"]
    assert isinstance(turn.events[0][-1], Completed)
    assert result.metrics.input_tokens and result.exit_code == 0
    # Atrium's model settings reached OpenClaw through its custom-provider config.
    assert turn.server is not None
    [generation] = turn.server.generation_requests
    assert generation.body["model"] == "scripted"
    assert generation.headers["authorization"] == f"Bearer {KEY}"
    # The workspace stays clean: no bootstrap files, no .git.
    assert turn.work is not None and sorted(os.listdir(turn.work)) == []


def test_a_tool_turn_writes_the_file_in_its_given_folder_and_reports_its_steps(
    turns: dict[str, Turn],
) -> None:
    turn = turns["tool"]
    result = turn.result
    assert turn.work is not None

    assert result.status == "success", result.error
    assert (turn.work / "notes.md").read_text() == "# Notes\n"
    [call] = turn.of_type(ToolCall)
    assert (call.call_id, call.name) == ("call_w1", "write")
    assert call.input == {"path": "notes.md", "content": "# Notes\n"}
    [tool_result] = turn.of_type(ToolResult)
    assert tool_result.call_id == "call_w1" and not tool_result.is_error
    [artifact] = turn.of_type(ArtifactCreated)
    assert (artifact.path, artifact.change) == (str(turn.work / "notes.md"), "added")
    assert result.metrics.tool_calls == 1
    assert [a.path for a in result.artifacts] == [str(turn.work / "notes.md")]
    assert result.policy is not None and "tools.deny" in result.policy.native
    # The tool call and its result reached the stream while the turn was still running.
    assert turn.facts.get("live") is True


def test_a_resumed_session_sees_the_earlier_turn(turns: dict[str, Turn]) -> None:
    turn = turns["resume"]
    first, second = turn.results

    assert second.status == "success", second.error
    assert second.final_message == "it was kiwi"
    assert second.session == first.session
    assert [(a.mode, a.outcome) for a in second.attempts] == [("resume", "completed")]
    assert turn.server is not None
    history = json.dumps(turn.server.generation_requests[1].body["messages"])
    assert "remember the word kiwi" in history and "noted: kiwi" in history
    # Only this run's transcript rows become events: the first answer is not repeated.
    assert [m.text for m in turn.of_type(MessageCompleted)] == ["it was kiwi"]


def test_a_bad_key_fails_with_openclaws_message(turns: dict[str, Turn]) -> None:
    result = turns["bad_key"].result

    assert result.status == "failed"
    assert result.error is not None and result.error.code is ErrorCode.AUTH_FAILED
    assert "authentication failed, HTTP 401" in result.error.message
    assert result.exit_code == 1
    assert isinstance(turns["bad_key"].events[0][-1], Failed)


def test_an_interrupt_mid_turn_stops_the_cli_within_two_seconds(turns: dict[str, Turn]) -> None:
    turn = turns["interrupt"]
    result = turn.result

    print(
        f"\nopenclaw interrupt -> CLI and its {len(turn.facts['group'])} process(es) gone: "
        f"{turn.facts['gone_after_s']:.3f}s (exit {result.exit_code}), "
        f"run ended: {turn.facts['ended_after_s']:.3f}s"
    )
    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    assert isinstance(turn.events[0][-1], Failed)
    assert turn.facts["pid"] is not None and not turn.facts["pid_alive"]
    assert turn.facts["pid"] in turn.facts["group"]
    # With the shipped graces the stop is SIGINT (OpenClaw exits 130), SIGTERM after 1 s and
    # SIGKILL to the whole group after 1.5 s: the bound, not a speed target.
    assert turn.facts["gone_after_s"] < 2.0
    assert turn.server is not None
    assert turn.server.disconnects.get(timeout=10).client_disconnected.is_set()


def test_a_gateway_turn_streams_deltas_and_an_abort_really_stops_it(
    turns: dict[str, Turn],
) -> None:
    turn = turns["gateway"]
    first, aborted = turn.results

    print(
        f"\nopenclaw gateway start: {turn.facts['gateway_start_s']:.1f}s; "
        f"abort -> run ended: {turn.facts['ended_after_s']:.3f}s"
    )
    assert first.status == "success", first.error
    deltas = turn.of_type(MessageDelta, run=0)
    assert len(deltas) > 1
    text = "streamed from the gateway, in several chunks of text"
    assert "".join(d.text for d in deltas) == text
    assert first.final_message == text
    # Its tool call streamed live with its arguments (the `tool-events` capability) and result.
    [call] = turn.of_type(ToolCall, run=0)
    assert (call.call_id, call.name) == ("call_g1", "write")
    assert call.input == {"path": "gw.md", "content": "gateway\n"}
    [tool_result] = turn.of_type(ToolResult, run=0)
    assert tool_result.call_id == "call_g1" and not tool_result.is_error
    assert first.metrics.tool_calls == 1
    assert any(h.hint == "gateway_run" for h in turn.of_type(StateHint, run=0))
    assert first.policy is not None and "Gateway" in first.policy.note
    assert any("its own configured workspace" in note for note in first.notes)
    # The abort reached the Gateway: the run ended interrupted and OpenClaw hung up on the model.
    assert aborted.status == "interrupted"
    assert aborted.error is not None and aborted.error.code is ErrorCode.INTERRUPTED
    [abort] = [h for h in turn.of_type(StateHint, run=1) if h.hint == "gateway_abort"]
    assert "error" not in abort.detail
    assert turn.facts["disconnected"] is True
