"""What the agents panel learns about OpenClaw: found or not, its version, what is missing."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from mcp_servers.agents.providers import probe_provider

pytestmark = pytest.mark.anyio


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


async def test_a_missing_openclaw_says_how_to_install_it(tmp_path: Path) -> None:
    info = await probe_provider("openclaw", {"PATH": str(tmp_path)})

    assert info.installed is False
    assert info.error == "openclaw not found on PATH"
    assert info.hint is not None and "npm install -g openclaw@" in info.hint
    assert "24.16" in info.hint and "make peers" not in info.hint


async def test_an_openclaw_on_too_old_a_node_reports_its_own_complaint(tmp_path: Path) -> None:
    # What OpenClaw 2026.9.6 prints on Node 20 (stderr, exit 1).
    complaint = "openclaw: Node 20.20.2: node:sqlite is unavailable; use 24.16+/26.1+"
    found = script(tmp_path / "openclaw", f"echo '{complaint}' >&2; exit 1")

    info = await probe_provider("openclaw", {"PATH": "/bin", "ATRIUM_OPENCLAW_BIN": str(found)})

    assert (info.installed, info.version) == (True, None)
    assert info.error == f"`{found} --version` exited with 1: {complaint}"
    assert info.hint is not None and "Node.js 24.16" in info.hint


async def test_a_working_openclaw_reports_its_version(tmp_path: Path) -> None:
    found = script(tmp_path / "openclaw", "echo 'OpenClaw 2026.9.6 (eb377ac)'")

    info = await probe_provider("openclaw", {"PATH": f"{tmp_path}:/bin"})

    assert (info.installed, info.version, info.error) == (True, "2026.9.6", None)
    assert info.source == "path" and info.executable == str(found)
