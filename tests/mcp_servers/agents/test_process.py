"""The process layer: unbounded line framing, spawn errors, staged stops of a process group."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcp_servers.agents.process import AgentProcess, LineFramer, SpawnError, StopStep
from mcp_servers.agents.results import ErrorCode
from tests.mcp_servers.agents.helpers import wait_pid_gone


def test_framer_splits_lines_across_chunks_and_keeps_the_tail() -> None:
    framer = LineFramer()

    assert framer.feed(b'{"a":') == []
    assert framer.feed(b'1}\n{"b"') == [b'{"a":1}']
    assert framer.feed(b":2}\n\n") == [b'{"b":2}', b""]
    assert framer.feed(b"tail") == []
    assert framer.flush() == b"tail"
    assert framer.flush() is None


def test_framer_handles_a_line_far_larger_than_any_chunk() -> None:
    framer = LineFramer()
    big = b"x" * (3 * 1024 * 1024)
    lines: list[bytes] = []

    for start in range(0, len(big), 65536):
        lines += framer.feed(big[start : start + 65536])
    lines += framer.feed(b"\nnext\n")

    assert lines == [big, b"next"]


@pytest.mark.anyio
async def test_missing_executable_is_cli_not_found(tmp_path: Path) -> None:
    with pytest.raises(SpawnError) as caught:
        await AgentProcess.spawn(
            [str(tmp_path / "no-such-cli")], cwd=tmp_path, env={}, stdin_pipe=False
        )

    assert caught.value.error.code is ErrorCode.CLI_NOT_FOUND
    assert "Errno" not in caught.value.error.message


@pytest.mark.anyio
async def test_a_missing_cli_names_itself_and_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(SpawnError) as caught:
        await AgentProcess.spawn(["claude"], cwd=tmp_path, env={"PATH": ""}, stdin_pipe=False)

    error = caught.value.error
    assert error.code is ErrorCode.CLI_NOT_FOUND
    assert error.message.startswith("Claude Code is not installed here")
    assert "npm install -g @anthropic-ai/claude-code" in error.message
    assert "Errno" not in error.message and "Errno 2" in str(error.detail["os_error"])


@pytest.mark.anyio
async def test_missing_working_dir_is_a_spawn_failure(tmp_path: Path) -> None:
    with pytest.raises(SpawnError) as caught:
        await AgentProcess.spawn(
            [sys.executable, "-c", "pass"], cwd=tmp_path / "absent", env={}, stdin_pipe=False
        )

    assert caught.value.error.code is ErrorCode.SPAWN_FAILED


@pytest.mark.anyio
async def test_stop_escalates_to_sigkill_of_the_whole_group(tmp_path: Path) -> None:
    stubborn = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = await AgentProcess.spawn(
        [sys.executable, "-c", stubborn], cwd=tmp_path, env={}, stdin_pipe=False
    )
    with anyio.fail_after(20):
        lines = proc.stdout_lines()
        child_pid = int(await anext(lines))
        code = await proc.stop(
            [StopStep("sigint", 0.2), StopStep("sigterm", 0.2), StopStep("sigkill", 5)]
        )
        # The child holds stdout too: end of stdout means every holder has exited.
        assert [line async for line in lines] == []
        await proc.aclose()

    assert code == -9
    assert await wait_pid_gone(proc.pid)
    assert await wait_pid_gone(child_pid)
