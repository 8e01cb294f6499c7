"""The agents panel's data through the real sidecar and its built-in agents server: which
strong-agent CLIs were found, their versions, and what is missing."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from sidecar.protocol import AgentProvidersResult
from tests.e2e.harness import Sidecar

pytestmark = pytest.mark.anyio


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


async def test_the_panel_learns_each_cli_found_its_version_and_what_is_missing(
    sidecar_data: Path, workspace: Path, tmp_path: Path
) -> None:
    openclaw = script(tmp_path / "openclaw", "echo 'OpenClaw 2026.9.6 (eb377ac)'")
    old_node = "openclaw: Node 20.20.2: node:sqlite is unavailable; use 24.16+/26.1+"
    codex = script(tmp_path / "codex", f"echo '{old_node}' >&2; exit 1")
    process = await Sidecar.start(
        sidecar_data,
        workspace,
        ATRIUM_OPENCLAW_BIN=str(openclaw),
        ATRIUM_CODEX_BIN=str(codex),
        ATRIUM_CLAUDE_BIN=str(tmp_path / "no-such-claude"),
    )
    try:
        raw = await process.call("agents/providers", {})
    finally:
        assert await process.shutdown() == 0

    report = AgentProvidersResult.model_validate(raw)
    found = {p.provider: p for p in report.providers}
    assert report.error is None and set(found) == {"claude", "codex", "openclaw"}
    assert (found["openclaw"].installed, found["openclaw"].version) == (True, "2026.9.6")
    assert found["openclaw"].source == "env" and found["openclaw"].error is None
    assert found["codex"].installed and found["codex"].version is None
    assert found["codex"].error is not None and old_node in found["codex"].error
    assert found["claude"].installed is False and found["claude"].hint
