"""mcp.json: Claude Desktop's shape plus Atrium's keys; bad entries are named, others load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidecar.host.config import (
    ConfigFile,
    ConfigInvalidError,
    parse_config,
    validate_entry,
)


def test_a_stdio_entry_in_claude_desktop_shape_gets_atriums_defaults() -> None:
    config = validate_entry("time", {"command": "uvx", "args": ["mcp-server-time"], "env": {}})
    assert config.transport == "stdio"
    assert config.args == ("mcp-server-time",)
    assert (config.enabled, config.trust, config.required) == (True, "untrusted", False)
    assert config.timeout > 0 and config.idle_timeout is not None


def test_an_http_entry_keeps_its_url_and_headers() -> None:
    config = validate_entry(
        "remote", {"url": "http://127.0.0.1:3901/mcp", "headers": {"X-Key": "${secret:K}"}}
    )
    assert config.transport == "http"
    assert config.headers == {"X-Key": "${secret:K}"}


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"comand": "npx"}, "command"),
        ({"command": "npx", "comand": "x"}, "comand"),
        ({"command": "npx", "timeout": "soon"}, "timeout"),
        ({"command": "npx", "trust": "maybe"}, "trust"),
        ({"command": "npx", "args": "one string"}, "args"),
        ({"url": "ftp://host/mcp"}, "url"),
        ({"command": "npx", "env": {"A": 1}}, "env.A"),
    ],
)
def test_a_bad_entry_names_its_server_and_field(entry: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigInvalidError) as info:
        validate_entry("broken", entry)
    assert [(i.server, i.field) for i in info.value.issues][:1] == [("broken", field)]


def test_names_that_clash_with_the_tool_separator_or_a_builtin_are_refused() -> None:
    for name, reserved in (("a__b", frozenset[str]()), ("workspace", frozenset({"workspace"}))):
        with pytest.raises(ConfigInvalidError) as info:
            validate_entry(name, {"command": "x"}, reserved=reserved)
        assert info.value.issues[0].field == "name"


def test_one_bad_entry_does_not_keep_the_others_from_loading() -> None:
    loaded = parse_config(
        {"mcpServers": {"good": {"command": "a"}, "bad": {"command": "b", "timeout": -1}}}
    )
    assert list(loaded.servers) == ["good"]
    assert [(i.server, i.field) for i in loaded.issues] == [("bad", "timeout")]


def test_allow_and_deny_lists_filter_tools_with_deny_winning() -> None:
    config = validate_entry(
        "git", {"command": "g", "allowed_tools": ["status", "log"], "denied_tools": ["log"]}
    )
    assert [t for t in ("status", "log", "commit") if config.tool_allowed(t)] == ["status"]


def test_editing_one_entry_keeps_a_broken_entry_and_unknown_top_level_keys(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps({"globalShortcut": "x", "mcpServers": {"broken": {"comand": "oops"}}}),
        encoding="utf-8",
    )
    file = ConfigFile(path)
    file.put(validate_entry("time", {"command": "mcp-server-time", "trust": "trusted"}))
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["globalShortcut"] == "x"
    assert raw["mcpServers"]["broken"] == {"comand": "oops"}
    assert raw["mcpServers"]["time"] == {"command": "mcp-server-time", "trust": "trusted"}
    loaded = file.load()
    assert list(loaded.servers) == ["time"]
    assert loaded.issues[0].server == "broken"
    file.remove("time")
    assert "time" not in json.loads(path.read_text(encoding="utf-8"))["mcpServers"]


def test_an_unreadable_file_is_an_issue_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{not json", encoding="utf-8")
    loaded = ConfigFile(path).load()
    assert loaded.servers == {} and loaded.issues[0].server is None
