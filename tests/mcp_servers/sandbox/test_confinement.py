"""Choosing the OS-level boundary: the strongest that works, a typed refusal when none does, and
the guard-only mode only when a setting allows it."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_servers.sandbox import RunResult, SandboxSettings, build_server
from mcp_servers.sandbox import confinement as confinement_module
from mcp_servers.sandbox.confinement import ALLOW_GUARD_ONLY_ENV, bubblewrap_prefix

pytestmark = pytest.mark.anyio


def error_code(result: CallToolResult) -> str | None:
    if not result.is_error:
        return None
    block = result.content[0]
    assert isinstance(block, TextContent)
    found = re.search(r"\[([a-z_]+)\]", block.text)
    return found.group(1) if found else None


async def call(server_workdir: Path, code: str = "print(1)", **options: Any) -> CallToolResult:
    server = build_server(server_workdir, **options)
    async with Client(server, raise_exceptions=True) as client:
        with anyio.fail_after(60):
            return await client.call_tool("run_python", {"code": code})


@pytest.fixture
def nothing_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with neither bubblewrap nor unshare (nor sandbox-exec)."""
    monkeypatch.setattr(confinement_module, "tool", lambda name: None)
    monkeypatch.setattr(confinement_module, "_probed", {})


async def test_a_confinement_this_platform_lacks_is_refused_with_a_typed_error(
    tmp_path: Path,
) -> None:
    missing = "sandbox_exec" if sys.platform.startswith("linux") else "bubblewrap"
    result = await call(tmp_path, confinement=missing)
    assert error_code(result) == "sandbox_unavailable"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.usefixtures("nothing_installed")
async def test_without_any_os_sandbox_a_run_is_refused_unless_guard_only_is_allowed(
    tmp_path: Path,
) -> None:
    refused = await call(tmp_path, allow_guard_only=False)
    assert error_code(refused) == "sandbox_unavailable"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.usefixtures("nothing_installed")
async def test_guard_only_runs_when_allowed_and_says_so(tmp_path: Path) -> None:
    result = await call(tmp_path, allow_guard_only=True)
    run = RunResult.model_validate(result.structured_content)
    assert run.exit_code == 0
    assert run.isolation.confinement == "guard_only"
    assert run.isolation.processes == ["guard"]


def test_the_environment_allows_guard_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_GUARD_ONLY_ENV, "1")
    assert SandboxSettings().allow_guard_only is True
    monkeypatch.delenv(ALLOW_GUARD_ONLY_ENV)
    assert SandboxSettings().allow_guard_only is False


def _binds(args: list[str]) -> dict[str, str]:
    """Mount point -> option, for the bind options of a bubblewrap command line."""
    found: dict[str, str] = {}
    for index, arg in enumerate(args):
        if arg in ("--bind", "--ro-bind"):
            found[args[index + 2]] = arg
    return found


def test_bubblewrap_shows_the_run_folder_writable_and_everything_else_read_only(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "work" / "run-0123456789ab"
    interpreter = tmp_path / "python"
    args = bubblewrap_prefix(
        read_only=[str(interpreter), str(interpreter / "bin")], run_dir=str(run_dir), as_root=False
    )
    binds = _binds(args)
    assert [path for path, option in binds.items() if option == "--bind"] == [str(run_dir)]
    assert binds[str(interpreter)] == "--ro-bind"
    assert str(interpreter / "bin") not in binds  # already visible through its parent
    assert args[-7:] == ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/", "--"]
    assert {"--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-net"} <= set(args)
    assert "--die-with-parent" in args
    made = [args[i + 3] for i, arg in enumerate(args) if arg == "--perms"]
    assert str(tmp_path / "work") in made  # parents exist, traversable (0755), for the program


def test_as_root_bubblewrap_keeps_only_what_dropping_to_the_run_uid_needs() -> None:
    args = bubblewrap_prefix(read_only=[], run_dir=None, as_root=True)
    added = [args[i + 1] for i, arg in enumerate(args) if arg == "--cap-add"]
    assert added == ["CAP_SETUID", "CAP_SETGID"]
    assert args[args.index("--cap-drop") + 1] == "ALL"
    assert "--unshare-user" not in args
