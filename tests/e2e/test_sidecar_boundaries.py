"""The real sidecar at its edges: nothing before `initialize`, a listing that waits for starting
servers, and built-in servers (and the programs they run) that die with a killed sidecar."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from sidecar.protocol import ErrorCode
from tests.e2e.harness import RpcFailure, Sidecar

pytestmark = pytest.mark.anyio


async def test_requests_before_initialize_get_not_initialized(
    sidecar_data: Path, workspace: Path
) -> None:
    process = await Sidecar.spawn(sidecar_data, workspace)
    try:
        with pytest.raises(RpcFailure) as early:
            await process.call("thread/list")
        assert early.value.code == ErrorCode.NOT_INITIALIZED
        assert await process.call("ping") == {}
        await process.call("initialize", {"client_name": "tests"})
        assert (await process.call("thread/list"))["threads"] == []
    finally:
        await process.kill()


async def test_tool_list_right_after_initialize_has_the_external_servers_tools(
    sidecar_data: Path, workspace: Path
) -> None:
    config = {"mcpServers": {"time": {"command": "mcp-server-time"}}}
    (sidecar_data / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    process = await Sidecar.start(sidecar_data, workspace)
    try:
        listed = await process.call("tool/list")
        servers = {t["server"] for t in listed["tools"]}
        assert {"workspace", "sandbox", "time"} <= servers
    finally:
        await process.kill()


def _descendants(pid: int) -> set[int]:
    """Every live process under `pid` (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                children = {int(c) for c in task.read_text().split()}
            except OSError:
                continue
            todo += sorted(children - found)
            found |= children
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


async def _sleeping_program(process: Sidecar) -> int:
    """Approve a sandbox program that sleeps; return its pid once it runs."""
    thread = await process.call("thread/create", {})
    code = json.dumps({"code": "import time\nprint('up', flush=True)\ntime.sleep(120)"})
    run = await process.call(
        "run/start", {"thread_id": thread["id"], "text": f"/call sandbox__run_python {code}"}
    )
    events = await process.run_to_end(run["run_id"], within=90)
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    value = {"decision": "allow_once"}
    await process.call(
        "run/resume", {"thread_id": thread["id"], "interrupt_id": interrupt.id, "value": value}
    )
    async with asyncio.timeout(60):
        while True:
            found = [
                p
                for p in _descendants(process.proc.pid)
                if _alive(p) and "_bootstrap.py" in _cmdline(p)
            ]
            if found and await _settled_asleep(found[0]):
                return found[0]
            await asyncio.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


async def _settled_asleep(pid: int) -> bool:
    """The program is past its start (it printed) and sleeping: asleep for half a second."""
    for _ in range(10):
        if _state(pid) != "S":
            return False
        await asyncio.sleep(0.05)
    return True


async def _gone(pids: set[int]) -> set[int]:
    async with asyncio.timeout(20):
        while alive := {p for p in pids if _alive(p)}:  # noqa: ASYNC110 - nothing signals it
            await asyncio.sleep(0.05)
    return alive


LINUX_PROC = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")


@LINUX_PROC
async def test_built_in_servers_and_a_sleeping_sandbox_program_die_with_a_killed_sidecar(
    sidecar_data: Path, workspace: Path
) -> None:
    process = await Sidecar.start(sidecar_data, workspace)
    program = await _sleeping_program(process)
    family = _descendants(process.proc.pid)
    assert program in family
    assert any("mcp_servers.sandbox" in _cmdline(p) for p in family)
    assert any("mcp_servers.agents" in _cmdline(p) for p in family)
    await process.kill()
    assert await _gone(family) == set()
    assert os.getpid() not in family


@LINUX_PROC
async def test_a_sandbox_program_dies_with_a_killed_sandbox_server(
    sidecar_data: Path, workspace: Path
) -> None:
    """The server gets no chance to stop its program (its own session): the kernel does."""
    process = await Sidecar.start(sidecar_data, workspace)
    try:
        program = await _sleeping_program(process)
        [server] = [
            p for p in _descendants(process.proc.pid) if "mcp_servers.sandbox" in _cmdline(p)
        ]
        os.kill(server, signal.SIGKILL)
        assert await _gone({program}) == set()
    finally:
        await process.kill()


async def test_a_secret_in_tool_output_is_redacted_before_it_is_stored(
    sidecar_data: Path, workspace: Path
) -> None:
    key = "sk-ant-api03-" + "Q1w2E3r4" * 4
    token = "tok-" + "9f8e7d6c5b4a"
    process = await Sidecar.start(sidecar_data, workspace, DEPLOY_TOKEN=token)
    try:
        thread = await process.call("thread/create", {})
        code = json.dumps({"code": f"print({key!r}, {token!r})"})
        run = await process.call(
            "run/start", {"thread_id": thread["id"], "text": f"/call sandbox__run_python {code}"}
        )
        events = await process.run_to_end(run["run_id"], within=90)
        interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
        value = {"decision": "allow_once"}
        resumed = await process.call(
            "run/resume", {"thread_id": thread["id"], "interrupt_id": interrupt.id, "value": value}
        )
        events = await process.run_to_end(resumed["run_id"], within=90)
        result = next(e.event for e in events if e.event.type == "tool_result")
        assert "[redacted] [redacted]" in result.content  # type: ignore[union-attr]
        got = await process.call("thread/get", {"thread_id": thread["id"]})
        stored = [m["content"] for m in got["messages"] if m["role"] == "tool"]
        assert len(stored) == 1 and "[redacted] [redacted]" in stored[0]
    finally:
        await process.shutdown()
    database = b"".join(p.read_bytes() for p in sidecar_data.glob("atrium.db*"))
    # The call's arguments (the code) hold the strings too; the output must not add any.
    assert database.count(key.encode()) == database.count(b"print(")
    assert b"[redacted] [redacted]" in database


async def test_a_keyring_value_in_tool_output_is_masked_in_messages_run_events_and_journal(
    sidecar_data: Path, workspace: Path, tmp_path: Path
) -> None:
    """Neither value has a credential's shape, and the program builds them at run time: only the
    keyring can tell the host they are secrets. The model's key is read at start; the server's
    secret when the server that names it (`${secret:NAME}`) is launched."""
    model_key = "moss-harbor-7731-lantern"
    server_secret = "quiet-river-0429-beacon"
    keyring_file = tmp_path / "keyring.json"
    stored = {"atrium/model_api_key": model_key, "atrium-mcp/CLOCK_PASS": server_secret}
    keyring_file.write_text(json.dumps(stored), encoding="utf-8")
    clock = {"command": "mcp-server-time", "env": {"CLOCK_PASS": "${secret:CLOCK_PASS}"}}
    (sidecar_data / "mcp.json").write_text(json.dumps({"mcpServers": {"clock": clock}}))
    process = await Sidecar.start(
        sidecar_data,
        workspace,
        ATRIUM_MODEL="openai/gpt-4o-mini",
        PYTHON_KEYRING_BACKEND="tests.fakes.keyring_file.FileKeyring",
        ATRIUM_TEST_KEYRING=str(keyring_file),
    )
    secrets = (model_key.encode(), server_secret.encode())
    try:
        assert (await process.call("settings/get"))["api_key_source"] == "keyring"
        assert "clock" in {t["server"] for t in (await process.call("tool/list"))["tools"]}
        thread = await process.call("thread/create", {})
        hexes = [model_key.encode().hex(), server_secret.encode().hex()]
        program = f"print(*(bytes.fromhex(h).decode() for h in {hexes!r}))"
        code = json.dumps({"code": program})
        run = await process.call(
            "run/start", {"thread_id": thread["id"], "text": f"/call sandbox__run_python {code}"}
        )
        events = await process.run_to_end(run["run_id"], within=90)
        interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
        value = {"decision": "allow_once"}
        resumed = await process.call(
            "run/resume", {"thread_id": thread["id"], "interrupt_id": interrupt.id, "value": value}
        )
        events = await process.run_to_end(resumed["run_id"], within=90)
        result = next(e.event for e in events if e.event.type == "tool_result")
        assert not result.is_error  # type: ignore[union-attr]
        assert "[redacted] [redacted]" in result.content  # type: ignore[union-attr]
        sent = json.dumps(process.raw).encode()
        assert not any(secret in sent for secret in secrets)
    finally:
        await process.shutdown()
    database = sqlite3.connect(sidecar_data / "atrium.db")
    try:
        [message] = database.execute("SELECT content FROM messages WHERE role = 'tool'").fetchall()
        [event] = database.execute(
            "SELECT body FROM run_events WHERE type = 'tool_result'"
        ).fetchall()
        [journal] = database.execute(
            "SELECT result FROM tool_journal WHERE tool = 'run_python'"
        ).fetchall()
    finally:
        database.close()
    for [stored_text] in (message, event, journal):
        assert "[redacted] [redacted]" in stored_text
    # Nothing the sidecar keeps (database, logs, sandbox run folders, traces) holds either value.
    leaks = [
        p.relative_to(sidecar_data)
        for p in sidecar_data.rglob("*")
        if p.is_file() and any(secret in p.read_bytes() for secret in secrets)
    ]
    assert leaks == []
