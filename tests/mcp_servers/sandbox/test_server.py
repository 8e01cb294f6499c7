"""run_python over the SDK's in-memory transport: results, limits and confinement."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from mcp_servers.sandbox import RunResult, build_server
from mcp_servers.sandbox._bootstrap import landlock_abi
from tests.mcp_servers.sandbox.liveness import HOLD_LOCK, all_gone, lock_held, poll, run_with

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ClientFactory = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path / "sandbox"


@pytest.fixture
def sandbox(workdir: Path) -> ClientFactory:
    """Open an in-memory client to a sandbox server built with the given options."""

    @asynccontextmanager
    async def connect(**options: Any) -> AsyncIterator[Client]:
        options.setdefault("timeout_s", 20.0)
        # These tests are about behaviour, not the boundary (tests/.../test_escape.py): where no
        # OS sandbox works they still run, with the guard alone.
        options.setdefault("allow_guard_only", True)
        async with Client(build_server(workdir, **options), raise_exceptions=True) as client:
            yield client

    return connect


async def run(client: Client, code: str, **arguments: Any) -> RunResult:
    with anyio.fail_after(60):
        result = await client.call_tool("run_python", {"code": code, **arguments})
    assert not result.is_error, result
    return RunResult.model_validate(result.structured_content)


async def test_run_python_is_annotated_destructive_and_closed_world(
    sandbox: ClientFactory,
) -> None:
    async with sandbox() as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "run_python"
    assert tool.annotations is not None
    assert tool.annotations.destructive_hint is True
    assert tool.annotations.read_only_hint is False
    assert tool.annotations.open_world_hint is False
    assert tool.output_schema is not None
    assert set(tool.input_schema["properties"]) == {"code", "timeout_s", "stdin"}


async def test_code_runs_in_a_fresh_directory_with_its_output_captured(
    sandbox: ClientFactory, workdir: Path
) -> None:
    code = "import os\nprint('hello')\nopen('made.txt', 'w').write('x')\nprint(os.getcwd())"
    async with sandbox() as client:
        first = await run(client, code)
        second = await run(client, "import os\nprint(sorted(os.listdir('.')))")
    assert first.exit_code == 0
    assert first.killed_reason is None
    assert first.timed_out is False
    run_dir = workdir.resolve() / first.run_dir
    assert first.stdout == f"hello\n{run_dir}\n"
    assert (run_dir / "made.txt").read_text() == "x"
    assert second.run_dir != first.run_dir
    assert "made.txt" not in second.stdout
    assert "guard" in first.isolation.network
    assert "guard" in first.isolation.filesystem


async def test_the_result_text_is_readable(sandbox: ClientFactory) -> None:
    async with sandbox() as client:
        result = await client.call_tool("run_python", {"code": "print(6 * 7)"})
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert block.text.startswith("Exit code 0")
    assert "42" in block.text


async def test_stdin_is_fed_to_the_program(sandbox: ClientFactory) -> None:
    async with sandbox() as client:
        result = await run(client, "import sys\nprint(sys.stdin.read().upper())", stdin="abc")
    assert result.stdout == "ABC\n"


async def test_failures_report_the_exit_code_and_a_clean_traceback(
    sandbox: ClientFactory,
) -> None:
    async with sandbox() as client:
        raised = await run(client, "def f():\n    raise ValueError('boom')\nf()")
        exited = await run(client, "import sys\nsys.exit(3)")
    assert raised.exit_code == 1
    assert raised.stderr.startswith('Traceback (most recent call last):\n  File "main.py"')
    assert raised.stderr.rstrip().endswith("ValueError: boom")
    assert exited.exit_code == 3
    assert exited.killed_reason is None


async def test_an_infinite_loop_times_out_and_its_processes_are_gone(
    sandbox: ClientFactory, workdir: Path
) -> None:
    code = HOLD_LOCK + "while True:\n    pass"
    async with sandbox() as client:
        result = await run(client, code, timeout_s=1)
    assert result.timed_out is True
    assert result.killed_reason == "timeout"
    assert 1.0 <= result.duration_s < 10
    await all_gone(workdir.resolve() / result.run_dir)


async def test_a_program_ignoring_sigterm_is_killed_after_the_grace(
    sandbox: ClientFactory, workdir: Path
) -> None:
    code = HOLD_LOCK + (
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass"
    )
    async with sandbox(kill_grace_s=0.2) as client:
        result = await run(client, code, timeout_s=0.5)
    assert result.timed_out is True
    assert result.exit_code == -9
    await all_gone(workdir.resolve() / result.run_dir)


async def test_the_requested_timeout_is_capped_by_the_server(sandbox: ClientFactory) -> None:
    async with sandbox(timeout_s=2) as client:
        capped = await run(client, "pass", timeout_s=100)
        shorter = await run(client, "pass", timeout_s=0.5)
    assert capped.timeout_s == 2
    assert shorter.timeout_s == 0.5


async def test_cpu_time_is_limited(sandbox: ClientFactory) -> None:
    async with sandbox(cpu_s=1, timeout_s=30) as client:
        result = await run(client, "while True:\n    pass")
    assert result.timed_out is False
    assert result.killed_reason == "cpu_time"


async def test_allocating_two_gigabytes_fails_under_a_256_mb_limit(
    sandbox: ClientFactory,
) -> None:
    async with sandbox(memory_mb=256) as client:
        result = await run(client, "block = bytearray(2 * 1024 ** 3)")
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith("MemoryError")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        yield server


async def test_the_network_is_unreachable_even_on_loopback(
    sandbox: ClientFactory, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    code = f"""
import json, socket
outcome = {{}}
for name, attempt in [
    ("connect", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=5)),
    ("raw_connect", lambda: socket.socket().connect(("127.0.0.1", {port}))),
    ("lookup", lambda: socket.getaddrinfo("localhost", 80)),
]:
    try:
        attempt()
        outcome[name] = "ok"
    except OSError as exc:
        outcome[name] = type(exc).__name__
print(json.dumps(outcome))
"""
    async with sandbox() as client:
        result = await run(client, code)
    assert json.loads(result.stdout) == {
        "connect": "PermissionError",
        "raw_connect": "PermissionError",
        "lookup": "PermissionError",
    }
    with pytest.raises(BlockingIOError):
        listener.accept()


async def test_writes_outside_the_run_directory_are_refused(
    sandbox: ClientFactory, workdir: Path, tmp_path: Path
) -> None:
    target = tmp_path / "absolute-escape.txt"
    code = f"""
import json, os
outcome = {{}}
for name, attempt in [
    ("parent", lambda: open("../escape.txt", "w")),
    ("absolute", lambda: open({str(target)!r}, "w")),
    ("os_open", lambda: os.open("../escape2.txt", os.O_WRONLY | os.O_CREAT)),
    ("via_link", lambda: (os.symlink("..", "up"), open("up/escape3.txt", "w"))),
    ("subprocess", lambda: __import__("subprocess").run(["sh", "-c", "echo > ../escape4.txt"])),
    ("ctypes", lambda: __import__("ctypes").CDLL(None)),
    ("inside", lambda: open("ok.txt", "w").close()),
]:
    try:
        attempt()
        outcome[name] = "ok"
    except OSError as exc:
        outcome[name] = type(exc).__name__
print(json.dumps(outcome))
"""
    async with sandbox() as client:
        result = await run(client, code)
    outcome = json.loads(result.stdout)
    assert outcome.pop("inside") == "ok"
    assert set(outcome.values()) == {"PermissionError"}, outcome
    assert sorted(p.name for p in workdir.iterdir()) == [result.run_dir]
    assert not target.exists()


async def test_code_makes_renames_and_removes_files_and_folders_in_its_run_directory(
    sandbox: ClientFactory,
) -> None:
    code = """
import os, pathlib
os.mkdir("d")
os.makedirs("d/e/f")
pathlib.Path("d/e/f/x.txt").write_text("x")
os.rename("d/e/f/x.txt", "d/y.txt")
os.remove("d/y.txt")
os.rmdir("d/e/f")
os.replace("d/e", "moved")
print(os.path.isdir("moved"), os.listdir("d"))
"""
    async with sandbox() as client:
        result = await run(client, code)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "True []"


async def test_no_secret_from_the_server_environment_reaches_the_code(
    sandbox: ClientFactory, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-value")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
    async with sandbox() as client:
        result = await run(client, "import json, os\nprint(json.dumps(dict(os.environ)))")
    env = json.loads(result.stdout)
    assert set(env) == {"HOME", "TMPDIR", "TMP", "TEMP", "PATH", "LANG", "LC_ALL"}
    assert env["HOME"] == str(workdir.resolve() / result.run_dir)
    assert env["TMPDIR"].startswith(env["HOME"] + os.sep)
    assert "-secret-value" not in result.stdout


async def test_huge_output_is_truncated_with_a_marker(sandbox: ClientFactory) -> None:
    code = "import sys\nprint('x' * 1_000_000)\nsys.stderr.write('e' * 50_000)"
    async with sandbox(max_output_bytes=1000) as client:
        result = await run(client, code)
    assert result.exit_code == 0
    assert result.stdout_truncated is True
    assert result.stderr_truncated is True
    assert result.stdout.startswith("x" * 1000 + "\n[... truncated ")
    assert re.search(r"\[\.\.\. truncated \d+ bytes \.\.\.\]\n$", result.stdout)
    assert len(result.stdout) < 1100


async def test_the_reported_layers_match_what_this_kernel_offers(sandbox: ClientFactory) -> None:
    async with sandbox() as client:
        result = await run(client, "pass")
    assert ("landlock" in result.isolation.filesystem) == (landlock_abi() > 0)
    assert result.isolation.network[-1] == "guard"


async def test_cancelling_the_request_kills_the_child(
    sandbox: ClientFactory, workdir: Path
) -> None:
    code = HOLD_LOCK + "while True:\n    pass"
    found: list[Path] = []
    async with sandbox(timeout_s=60) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "run_python", {"code": code})
        found.append(await poll(lambda: run_with(workdir, "locked")))
        assert lock_held(found[0])
        tg.cancel_scope.cancel()
    await all_gone(found[0])


async def test_a_broken_workdir_is_a_tool_error_not_a_crash(
    sandbox: ClientFactory, workdir: Path
) -> None:
    async with sandbox() as client:
        shutil.rmtree(workdir)
        result = await client.call_tool("run_python", {"code": "pass"})
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert "[spawn_failed]" in block.text
