"""Importing servers from Claude Desktop, Cursor and VS Code config files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidecar.host.config import ConfigInvalidError
from sidecar.host.importing import import_name, plan_import, read_foreign_config

CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"},
        },
    },
    "globalShortcut": "Ctrl+Space",
}
CURSOR = {
    "mcpServers": {
        "remote api": {"url": "http://127.0.0.1:3901/mcp", "headers": {"Authorization": "x"}},
        "old": {"command": "node", "args": ["s.js"], "disabled": True, "autoApprove": ["x"]},
        "legacy-sse": {"url": "http://127.0.0.1:3902/sse", "type": "sse"},
    }
}


def test_a_claude_desktop_config_imports_every_server_untrusted() -> None:
    plan = plan_import(CLAUDE_DESKTOP)
    assert [c.name for c in plan.servers] == ["filesystem", "github"]
    assert all(c.trust == "untrusted" and c.enabled for c in plan.servers)
    assert plan.servers[1].env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"}
    assert plan.skipped == ()


def test_a_cursor_config_keeps_urls_maps_disabled_and_skips_sse() -> None:
    plan = plan_import(CURSOR)
    by_name = {c.name: c for c in plan.servers}
    assert by_name["remote-api"].url == "http://127.0.0.1:3901/mcp"
    assert by_name["remote-api"].headers == {"Authorization": "x"}
    assert by_name["old"].enabled is False
    assert [(i.server, i.field) for i in plan.skipped] == [("legacy-sse", "type")]


def test_taken_names_are_skipped_never_overwritten() -> None:
    plan = plan_import(CLAUDE_DESKTOP, taken=frozenset({"github", "workspace"}))
    assert [c.name for c in plan.servers] == ["filesystem"]
    assert [(i.server, i.field) for i in plan.skipped] == [("github", "name")]


def test_vs_code_servers_key_is_understood() -> None:
    plan = plan_import({"servers": {"time": {"type": "stdio", "command": "uvx"}}})
    assert [c.name for c in plan.servers] == ["time"]


def test_foreign_names_are_made_valid() -> None:
    assert import_name("My Server.v2") == "My-Server-v2"
    assert "__" not in import_name("a__b")


def test_a_file_without_servers_says_so(tmp_path: Path) -> None:
    assert plan_import({"theme": "dark"}).skipped[0].field == "mcpServers"
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigInvalidError):
        read_foreign_config(missing)
    good = tmp_path / "claude_desktop_config.json"
    good.write_text(json.dumps(CLAUDE_DESKTOP), encoding="utf-8")
    assert read_foreign_config(good) == CLAUDE_DESKTOP
