"""The boundary holds when the program switches the in-process guard off (issue 25, defect 2).

Each program here first disables the guard through ``gc`` (as the measured escape did), so what
stops it is the kernel: the PID namespace ends every process of the run with it, RLIMIT_NPROC
caps forks, the mount and network namespaces hide the host. A confinement that does not work on
this machine is a missing peer (skipped loudly, or failed under ``ATRIUM_REQUIRE_PEERS=1``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_servers.sandbox import RunResult, SandboxUnavailableError, build_server
from mcp_servers.sandbox.confinement import ConfinementChoice, choose
from tests.mcp_servers.sandbox.liveness import (
    HOLD_LOCK,
    all_gone,
    lock_held,
    poll,
    processes_in,
    run_with,
)
from tests.peers import peer_unavailable

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
MAX_PROCESSES = 8
NAMESPACES: list[ConfinementChoice] = ["bubblewrap", "unshare"]

DISABLE_GUARD = """\
import gc
for _f in gc.get_objects():
    if getattr(_f, "__name__", None) == "decide" and hasattr(_f, "__code__"):
        _f.__code__ = (lambda event, args, run_dir: None).__code__
"""
# A grandchild in a new session (fork is refused by the guard, so it existing proves the guard
# was off) that records its PID namespace and sleeps.
START_ESCAPEE = """\
import os, time
_ready_r, _ready_w = os.pipe()
_first = os.fork()
if _first == 0:
    os.setsid()
    if os.fork() == 0:
        open("escaped.tmp", "w").write(os.readlink("/proc/self/ns/pid"))
        os.rename("escaped.tmp", "escaped")
        os.write(_ready_w, b"x")
        time.sleep(600)
    os._exit(0)
os.waitpid(_first, 0)
os.read(_ready_r, 1)
"""
FORK_MANY = """\
import json
forks = 0
for _ in range(64):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    forks += 1
print(json.dumps({"forks": forks}), flush=True)
"""
ESCAPE = HOLD_LOCK + DISABLE_GUARD + START_ESCAPEE + FORK_MANY + "time.sleep(600)\n"
ClientFactory = Callable[..., AbstractAsyncContextManager[Client]]


async def require(confinement: ConfinementChoice) -> None:
    try:
        await choose(confinement, allow_guard_only=False)
    except SandboxUnavailableError as exc:
        peer_unavailable(exc.detail)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path / "sandbox"


@pytest.fixture
def sandbox(workdir: Path) -> ClientFactory:
    @asynccontextmanager
    async def connect(**options: Any) -> AsyncIterator[Client]:
        server = build_server(workdir, max_processes=MAX_PROCESSES, **options)
        async with Client(server, raise_exceptions=True) as client:
            yield client

    return connect


async def call(client: Client, code: str, results: list[RunResult]) -> None:
    with anyio.fail_after(60):
        result = await client.call_tool("run_python", {"code": code})
    assert not result.is_error, result
    results.append(RunResult.model_validate(result.structured_content))


async def escapee_of(workdir: Path) -> tuple[Path, str]:
    """The run folder and PID namespace of the escapee, once it is up."""
    run_dir = await poll(lambda: run_with(workdir, "escaped"))
    return run_dir, (run_dir / "escaped").read_text()


@pytest.mark.parametrize("confinement", NAMESPACES)
async def test_a_program_that_switches_the_guard_off_leaves_nothing_alive_past_its_time_limit(
    sandbox: ClientFactory, workdir: Path, confinement: ConfinementChoice
) -> None:
    await require(confinement)
    results: list[RunResult] = []
    escapees: list[tuple[Path, str]] = []
    async with (
        sandbox(confinement=confinement, timeout_s=3) as client,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(call, client, ESCAPE, results)
        escapees.append(await escapee_of(workdir))
        assert lock_held(escapees[0][0])
        assert processes_in(escapees[0][1])  # the check below can see the run's processes
    [result] = results
    [(run_dir, pid_namespace)] = escapees
    assert (result.timed_out, result.killed_reason) == (True, "timeout")
    assert result.isolation.confinement == confinement
    assert "pidns" in result.isolation.processes
    await all_gone(run_dir, pid_namespace, within=5)


async def test_the_kernel_caps_forks_and_ends_what_a_finished_program_left_running(
    sandbox: ClientFactory, workdir: Path
) -> None:
    await require("bubblewrap")
    code = HOLD_LOCK + DISABLE_GUARD + START_ESCAPEE + FORK_MANY
    results: list[RunResult] = []
    async with sandbox(confinement="bubblewrap", timeout_s=60) as client:
        await call(client, code, results)
    [result] = results
    run_dir = workdir.resolve() / result.run_dir
    pid_namespace = (run_dir / "escaped").read_text()
    assert (result.exit_code, result.timed_out) == (0, False)
    assert "nproc" in result.isolation.processes
    assert 0 < json.loads(result.stdout)["forks"] <= MAX_PROCESSES
    await all_gone(run_dir, pid_namespace, within=5)


def _server_pid() -> int | None:
    """The sandbox server this test process started over stdio."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"mcp_servers.sandbox" in command:
            return int(entry.name)
    return None


@pytest.mark.parametrize("confinement", NAMESPACES)
async def test_a_killed_server_leaves_no_program_alive(
    workdir: Path, confinement: ConfinementChoice
) -> None:
    await require(confinement)
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "mcp_servers.sandbox", "--workdir", str(workdir), "--timeout", "60"),
            *("--confinement", confinement, "--max-processes", str(MAX_PROCESSES)),
        ],
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
        cwd=str(REPO),
    )

    async def call_until_killed() -> None:
        with suppress(Exception):
            async with Client(params) as client:
                await client.call_tool("run_python", {"code": ESCAPE})

    async with anyio.create_task_group() as tg:
        tg.start_soon(call_until_killed)
        run_dir, pid_namespace = await escapee_of(workdir)
        assert processes_in(pid_namespace)
        os.kill(await poll(_server_pid), signal.SIGKILL)
        await all_gone(run_dir, pid_namespace, within=5)
        tg.cancel_scope.cancel()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        yield server


async def test_with_the_guard_off_the_kernel_still_hides_the_network_and_the_host_files(
    sandbox: ClientFactory, workdir: Path, tmp_path: Path, listener: socket.socket
) -> None:
    await require("bubblewrap")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    port = listener.getsockname()[1]
    code = (
        DISABLE_GUARD
        + f"""
import json, os, socket
outcome = {{}}
for name, attempt in [
    ("connect", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=5)),
    ("read_host_file", lambda: open({str(secret)!r}).read()),
    ("write_beside_the_run", lambda: open("../escape.txt", "w")),
    ("write_tmp", lambda: open("/tmp/atrium-escape.txt", "w")),
    ("write_root", lambda: open("/escape.txt", "w")),
    ("write_interpreter", lambda: open(os.path.join(os.path.dirname(os.__file__), "x.py"), "w")),
    ("inside", lambda: open("ok.txt", "w").close()),
]:
    try:
        attempt()
        outcome[name] = "ok"
    except OSError as exc:
        outcome[name] = type(exc).__name__
print(json.dumps(outcome))
"""
    )
    results: list[RunResult] = []
    async with sandbox(confinement="bubblewrap") as client:
        await call(client, code, results)
    [result] = results
    outcome = json.loads(result.stdout)
    assert outcome.pop("inside") == "ok"
    assert "ok" not in outcome.values(), outcome
    assert not (workdir / "escape.txt").exists()
    with pytest.raises(BlockingIOError):
        listener.accept()
