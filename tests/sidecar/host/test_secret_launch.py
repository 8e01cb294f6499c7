"""A `${secret:NAME}` reaches the server's process and nothing we keep or show."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sidecar.host.config import ConfigFile
from sidecar.host.host import ToolHost
from tests.sidecar.host.support import FAST, StatusLog, peer_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOKEN = "tok-7f3a9c1e-never-to-be-seen"


async def test_a_secret_reaches_the_server_but_not_the_config_or_the_logs(tmp_path: Path):
    statuses = StatusLog()
    config_path = tmp_path / "mcp.json"
    host = ToolHost(
        [],
        config_file=ConfigFile(config_path),
        policy=FAST,
        on_status=statuses,
        secret={"PEER_TOKEN": TOKEN}.get,
    )
    host.start()
    try:
        await host.add(peer_config(env={"PEER_TOKEN": "${secret:PEER_TOKEN}"}))
        await statuses.wait_state("peer", "ready")
        outcome = await host.call("peer__token_digest", {})
        assert outcome.text == hashlib.sha256(TOKEN.encode()).hexdigest()
        stderr, protocol = host.logs("peer")
        assert "my token is [redacted]" in stderr
        shown = "\n".join([*stderr, *(e.text for e in protocol)])
        assert TOKEN not in shown
        assert TOKEN not in config_path.read_text(encoding="utf-8")
        assert "${secret:PEER_TOKEN}" in config_path.read_text(encoding="utf-8")
        assert TOKEN not in repr(host.statuses()) and TOKEN not in repr(
            host.preview(host.config("peer"))
        )
    finally:
        await host.aclose()


async def test_a_missing_secret_is_a_clear_crash_naming_the_field(tmp_path: Path):
    statuses = StatusLog()
    host = ToolHost(
        [],
        config_file=ConfigFile(tmp_path / "mcp.json"),
        policy=FAST,
        on_status=statuses,
        secret={}.get,
    )
    host.start()
    try:
        await host.add(peer_config(env={"PEER_TOKEN": "${secret:PEER_TOKEN}"}))
        crashed = await statuses.wait_state("peer", "crashed")
        assert crashed.error is not None
        assert "env.PEER_TOKEN" in crashed.error and "PEER_TOKEN" in crashed.error
    finally:
        await host.aclose()
