"""StdioTransport against a real stdio MCP server (tests/sidecar/host/stdio_server.py)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, TextContent

from sidecar.host.stdio import StdioTransport

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

SERVER = Path(__file__).with_name("stdio_server.py")
REPO = Path(__file__).resolve().parents[3]
START = 60  # seconds for a whole session: the server imports the SDK, then the test runs


def params(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(SERVER), *args], env=env, cwd=str(REPO)
    )


@asynccontextmanager
async def connected(
    transport: StdioTransport, on_message: Callable[[IncomingMessage], None] | None = None
) -> AsyncIterator[Client]:
    async def handler(message: IncomingMessage) -> None:
        if on_message is not None:
            on_message(message)

    with anyio.fail_after(START):
        async with Client(transport, raise_exceptions=True, message_handler=handler) as client:
            yield client


async def text_of(client: Client, tool: str, arguments: dict[str, object] | None = None) -> str:
    result = await client.call_tool(tool, arguments or {})
    assert not result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie waiting for its reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_results_of_1_4_and_8_mb_arrive_intact() -> None:
    async with connected(StdioTransport(params())) as client:
        for megabytes in (1, 4, 8):
            size = megabytes << 20
            text = await text_of(client, "blob", {"size": size})
            assert len(text) == size
            assert text == "x" * size


async def test_multibyte_text_split_across_read_chunks_arrives_intact() -> None:
    unit = "é€😀"  # 2-, 3- and 4-byte characters: 1 MB of them straddles many chunk edges
    size = (1 << 20) // len(unit.encode()) * len(unit.encode())
    async with connected(StdioTransport(params())) as client:
        text = await text_of(client, "blob", {"size": size, "unit": unit})
    assert text == unit * (size // len(unit.encode()))


async def test_a_server_speaking_utf_16_is_understood() -> None:
    transport = StdioTransport(
        params("--encoding", "utf-16-le").model_copy(update={"encoding": "utf-16-le"})
    )
    async with connected(transport) as client:
        assert await text_of(client, "echo", {"text": "ünïcode\nline"}) == "ünïcode\nline"
        text = await text_of(client, "blob", {"size": 300_000, "unit": "€"})
    assert text == "€" * 100_000


async def test_many_small_calls_in_sequence_and_at_once_all_get_their_own_answer() -> None:
    async with connected(StdioTransport(params())) as client:
        for i in range(200):
            assert await text_of(client, "echo", {"text": f"n{i}"}) == f"n{i}"
        answers: dict[int, str] = {}

        async def one(i: int) -> None:
            answers[i] = await text_of(client, "echo", {"text": f"c{i}"})

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for i in range(100):
                    tg.start_soon(one, i)
    assert answers == {i: f"c{i}" for i in range(100)}


async def test_server_stderr_is_kept_in_a_tail_and_passed_to_the_callback() -> None:
    seen: list[str] = []
    arrived = anyio.Event()

    def on_stderr(line: str) -> None:
        seen.append(line)
        if line == "to the tail":
            arrived.set()

    transport = StdioTransport(params(), on_stderr=on_stderr, stderr_tail_lines=3)
    async with connected(transport) as client:
        assert await text_of(client, "say_stderr", {"text": "to the tail"}) == "said"
        with anyio.fail_after(5):
            await arrived.wait()
        assert transport.stderr_tail[-1] == "to the tail"
        assert len(transport.stderr_tail) <= 3
    assert "to the tail" in seen


async def test_killing_the_process_fails_an_in_flight_call_within_a_second() -> None:
    hanging = anyio.Event()
    transport = StdioTransport(
        params(), on_stderr=lambda line: hanging.set() if line == "hanging" else None
    )
    async with connected(transport) as client:
        pid = transport.pid
        assert isinstance(pid, int)
        failure: list[MCPError] = []

        async def call() -> None:
            try:
                await client.call_tool("hang", {})
            except MCPError as exc:
                failure.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(10):
                await hanging.wait()
            os.kill(pid, signal.SIGKILL)
            with anyio.fail_after(1):
                assert await transport.wait_exit() == -signal.SIGKILL
                await _until(lambda: bool(failure))
        assert failure[0].error.code == CONNECTION_CLOSED


async def test_a_dead_server_whose_child_holds_stdout_still_fails_calls_within_a_second() -> None:
    hanging = anyio.Event()
    transport = StdioTransport(
        params(), on_stderr=lambda line: hanging.set() if line == "hanging" else None
    )
    async with connected(transport) as client:
        child = int(await text_of(client, "spawn_sleeper"))
        failure: list[MCPError] = []

        async def call() -> None:
            try:
                await client.call_tool("hang", {})
            except MCPError as exc:
                failure.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(10):
                await hanging.wait()
            assert transport.pid is not None
            os.kill(transport.pid, signal.SIGKILL)  # the leader only: the child keeps the pipe
            with anyio.fail_after(1):
                await _until(lambda: bool(failure))
        assert failure[0].error.code == CONNECTION_CLOSED
        assert alive(child)
    # Leaving the transport stops what is left of the server's process group.
    assert not alive(child)


async def test_malformed_lines_are_logged_and_skipped_and_the_session_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    faults: list[Exception] = []

    def on_message(message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            faults.append(message)

    with caplog.at_level(logging.WARNING, logger="sidecar.host.stdio"):
        async with connected(StdioTransport(params()), on_message) as client:
            assert await text_of(client, "garbage") == "after garbage"
            assert await text_of(client, "echo", {"text": "still here"}) == "still here"
    warnings = [r for r in caplog.records if r.name == "sidecar.host.stdio"]
    assert len(warnings) == 2  # the blank line is not a fault
    assert len(faults) == 2  # surfaced to the session's message handler, as the SDK does


async def test_the_environment_is_only_the_sdk_defaults_plus_params_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ATRIUM_TEST_NOT_FOR_SERVERS", "secret")
    transport = StdioTransport(params(env={"ATRIUM_TEST_GIVEN": "1"}))
    async with connected(transport) as client:
        names = set((await text_of(client, "environment")).split("\n"))
    assert "ATRIUM_TEST_GIVEN" in names
    assert "ATRIUM_TEST_NOT_FOR_SERVERS" not in names
    # Python itself may add LC_CTYPE (PEP 538 locale coercion).
    assert names <= {*DEFAULT_INHERITED_ENV_VARS, "ATRIUM_TEST_GIVEN", "LC_CTYPE"}


async def test_leaving_the_transport_stops_the_server_and_reports_its_exit() -> None:
    transport = StdioTransport(params())
    async with connected(transport) as client:
        assert await text_of(client, "echo", {"text": "hi"}) == "hi"
        pid = transport.pid
        assert transport.returncode is None
    assert pid is not None
    assert transport.returncode is not None
    assert not alive(pid)
    with pytest.raises(RuntimeError):
        await transport.__aenter__()


async def test_cancelling_the_start_still_stops_the_server_in_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    transport = StdioTransport(params())

    async def start() -> None:
        async with Client(transport):
            await anyio.sleep_forever()

    with caplog.at_level(logging.WARNING, logger="sidecar.host.stdio"), anyio.fail_after(15):
        async with anyio.create_task_group() as tg:
            tg.start_soon(start)
            await _until(lambda: transport.pid is not None)
            tg.cancel_scope.cancel()  # mid-handshake: the server is still importing the SDK
    assert transport.returncode is not None
    assert transport.pid is not None and not alive(transport.pid)
    assert not [r for r in caplog.records if r.name == "sidecar.host.stdio"]


async def test_a_command_that_cannot_start_raises_os_error_and_leaves_no_pid() -> None:
    transport = StdioTransport(StdioServerParameters(command="/nonexistent/atrium-mcp-server"))
    with anyio.fail_after(10), pytest.raises(OSError):
        async with Client(transport):
            pass
    assert transport.pid is None


async def _until(condition: Callable[[], bool]) -> None:
    """Yield to the event loop until `condition` holds (callers bound it with fail_after)."""
    while not condition():
        await anyio.lowlevel.checkpoint()
