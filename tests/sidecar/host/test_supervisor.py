"""The supervisor against real servers over stdio: mcp-server-time, mcp-server-git (PyPI) and
a tiny MCPServer script. Waits on status events, never sleeps."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sidecar.host.config import ConfigFile, validate_entry
from sidecar.host.host import ServerExistsError, ServerNotFoundError, ToolHost
from sidecar.host.spec import ServerUnavailableError
from sidecar.host.types import UnknownToolError
from tests.sidecar.host.support import StatusLog, peer_config, time_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_time_server_lists_and_answers_a_call(host: ToolHost, statuses: StatusLog):
    await host.add(time_config())
    await statuses.wait_state("time", "ready")
    names = {t.name for t in host.tools()}
    assert names == {"time__get_current_time", "time__convert_time"}
    assert all(not t.trusted for t in host.tools())
    outcome = await host.call("time__get_current_time", {"timezone": "UTC"})
    assert not outcome.is_error
    assert outcome.structured is not None and outcome.structured["timezone"] == "UTC"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "draft.md").write_text("chapter one\n", encoding="utf-8")
    return path


async def test_git_server_reports_the_status_of_a_repository(
    host: ToolHost, statuses: StatusLog, repo: Path
):
    await host.add(validate_entry("git", {"command": "mcp-server-git", "args": ["-r", str(repo)]}))
    await statuses.wait_state("git", "ready")
    assert "git__git_status" in {t.name for t in host.tools()}
    outcome = await host.call("git__git_status", {"repo_path": str(repo)})
    assert not outcome.is_error
    assert "draft.md" in outcome.text


async def test_a_server_killed_mid_call_fails_the_call_within_a_second_and_comes_back(
    host: ToolHost, statuses: StatusLog
):
    await host.add(peer_config())
    first = await statuses.wait_state("peer", "ready")
    assert first.pid is not None
    call = asyncio.ensure_future(host.call("peer__wait", {}))
    await asyncio.wait_for(host.stderr_tail("peer").wait_for("waiting"), 10)
    killed_at = time.monotonic()
    mark = statuses.mark()
    os.kill(first.pid, signal.SIGKILL)
    with pytest.raises(ServerUnavailableError):
        await call
    assert time.monotonic() - killed_at < 1.0
    crashed = await statuses.wait_state("peer", "crashed", since=mark)
    assert crashed.error is not None and "signal 9" in crashed.error
    back = await statuses.wait_state("peer", "ready", since=mark)
    assert back.pid not in (None, first.pid)
    assert "backoff" in statuses.states("peer")
    outcome = await host.call("peer__whoami", {})
    assert outcome.text == str(back.pid)


async def test_a_server_that_never_starts_gets_a_clear_status_and_the_rest_run(
    host: ToolHost, statuses: StatusLog
):
    await host.add(validate_entry("ghost", {"command": "no-such-mcp-server-anywhere"}))
    await host.add(time_config())
    ghost = await statuses.wait_state("ghost", "crashed")
    assert ghost.error is not None and "no-such-mcp-server-anywhere" in ghost.error
    await statuses.wait_state("time", "ready")
    assert not (await host.call("time__get_current_time", {"timezone": "UTC"})).is_error
    with pytest.raises(UnknownToolError):
        await host.call("ghost__anything", {})
    assert statuses.states("ghost").count("starting") == 1  # not retried: retrying cannot help


async def test_a_server_that_keeps_exiting_backs_off_then_gives_up(
    host: ToolHost, statuses: StatusLog
):
    exits = validate_entry(
        "flaky", {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    )
    await host.add(exits)
    final = await statuses.wait_for(
        "flaky", lambda s: s.state == "crashed" and "gave up" in (s.error or "")
    )
    assert final.restarts == 3
    states = statuses.states("flaky")
    assert states.count("backoff") == 3 and states.count("starting") == 4
    mark = statuses.mark()
    host.restart("flaky")
    await statuses.wait_state("flaky", "starting", since=mark)


async def test_restarting_one_server_leaves_the_other_untouched(
    host: ToolHost, statuses: StatusLog
):
    await host.add(peer_config("a"))
    await host.add(peer_config("b"))
    a = await statuses.wait_state("a", "ready")
    b = await statuses.wait_state("b", "ready")
    mark = statuses.mark()
    host.restart("a")
    await statuses.wait_state("a", "ready", since=mark)
    assert host.status("a").pid != a.pid
    assert host.status("b").pid == b.pid and host.status("b").state == "ready"
    assert statuses.states("b") == ["starting", "ready"]
    assert (await host.call("b__whoami", {})).text == str(b.pid)


async def test_a_disabled_server_does_not_run_until_enabled(host: ToolHost, statuses: StatusLog):
    await host.add(time_config(enabled=False))
    off = await statuses.wait_state("time", "disabled")
    assert off.pid is None and host.tools() == []
    await host.set_enabled("time", True)
    await statuses.wait_state("time", "ready")
    assert host.config("time").enabled


async def test_denied_tools_are_neither_listed_nor_callable(host: ToolHost, statuses: StatusLog):
    await host.add(time_config(denied_tools=["convert_time"]))
    await statuses.wait_state("time", "ready")
    assert [t.name for t in host.tools()] == ["time__get_current_time"]
    with pytest.raises(UnknownToolError):
        host.find("time__convert_time")


async def test_a_call_that_goes_quiet_past_its_idle_timeout_fails_and_marks_degraded(
    host: ToolHost, statuses: StatusLog
):
    await host.add(peer_config(idle_timeout=0.3))
    await statuses.wait_state("peer", "ready")
    outcome = await host.call("peer__wait", {})
    assert outcome.is_error
    assert host.status("peer").state == "degraded"
    mark = statuses.mark()
    assert not (await host.call("peer__whoami", {})).is_error
    await statuses.wait_state("peer", "ready", since=mark)


async def test_names_are_unique_and_unknown_servers_are_reported(
    host: ToolHost, statuses: StatusLog
):
    await host.add(time_config())
    with pytest.raises(ServerExistsError):
        await host.add(time_config())
    with pytest.raises(ServerNotFoundError):
        host.restart("nope")
    await host.remove("time")
    assert "time" not in host
    assert statuses.seen[-1].name == "time" and statuses.seen[-1].state == "stopped"


async def test_test_connection_reports_tools_without_adding_the_server(host: ToolHost):
    report = await host.test(time_config())
    assert report.ok and report.tools == ("convert_time", "get_current_time")
    assert "time" not in host
    bad = await host.test(validate_entry("ghost", {"command": "no-such-mcp-server-anywhere"}))
    assert not bad.ok and bad.state == "crashed" and bad.error


async def test_logs_keep_the_stderr_tail_and_the_protocol_exchange(
    host: ToolHost, statuses: StatusLog
):
    await host.add(peer_config())
    await statuses.wait_state("peer", "ready")
    await host.call("peer__whoami", {})
    stderr, protocol = host.logs("peer")
    assert any(line.startswith("peer server pid") for line in stderr)
    texts = [e.text for e in protocol]
    assert "request 3 tools/call whoami" in texts or any("tools/call whoami" in t for t in texts)
    assert any(e.direction == "host" and e.text == "ready" for e in protocol)


async def test_adding_a_valid_entry_over_a_broken_one_clears_its_issue(
    tmp_path: Path, statuses: StatusLog
):
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"time": {"comand": "mcp-server-time"}}}', encoding="utf-8")
    host = ToolHost([], config_file=ConfigFile(path), on_status=statuses)
    try:
        assert [(i.server, i.field) for i in host.config_issues] == [("time", "command")]
        assert "time" not in host
        await host.add(time_config())
        assert host.config_issues == ()
        await statuses.wait_state("time", "ready")
    finally:
        await host.aclose()


async def test_stopping_a_server_still_starting_does_not_wait_for_it_to_exit_by_itself(
    host: ToolHost, statuses: StatusLog, monkeypatch: pytest.MonkeyPatch
):
    """A Python server still importing never reads its closed stdin: stopping it must not wait
    the grace a live server gets (made a minute here, past this test's patience)."""
    from sidecar.host import stdio

    monkeypatch.setattr(stdio, "PROCESS_TERMINATION_TIMEOUT", 60.0)
    importing = "import sys, time; print('importing', file=sys.stderr, flush=True); time.sleep(120)"
    await host.add(validate_entry("slow", {"command": sys.executable, "args": ["-c", importing]}))
    await asyncio.wait_for(host.stderr_tail("slow").wait_for("importing"), 30)
    pid = host.status("slow").pid
    assert host.status("slow").state == "starting" and pid is not None
    async with asyncio.timeout(30):
        await host.aclose()
    assert host.status("slow").state == "stopped"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
