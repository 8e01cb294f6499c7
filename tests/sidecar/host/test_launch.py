"""Resolving the command against a sane PATH, and the launch preview."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from sidecar.host.config import ConfigInvalidError, validate_entry
from sidecar.host.launch import LaunchError, build_launch, preview, server_path

VENV_BIN = str(Path(sys.executable).parent)


def test_the_sane_path_adds_this_pythons_scripts_and_common_dirs_without_duplicates() -> None:
    path = server_path()
    assert VENV_BIN in path
    assert "/usr/bin" in path
    assert len(path) == len(set(path))


def test_a_path_set_in_the_config_is_used_as_given() -> None:
    assert server_path("/a:/b") == ("/a", "/b")


def test_a_console_script_resolves_to_its_file_and_the_server_gets_that_path() -> None:
    launch = build_launch(validate_entry("time", {"command": "mcp-server-time"}), {}, {}.get)
    params = launch.target
    assert params.command == os.path.join(VENV_BIN, "mcp-server-time")  # type: ignore[union-attr]
    assert VENV_BIN in params.env["PATH"].split(os.pathsep)  # type: ignore[union-attr]


def test_a_missing_command_is_a_launch_error() -> None:
    with pytest.raises(LaunchError):
        build_launch(validate_entry("x", {"command": "no-such-command-here"}), {}, {}.get)


def test_a_missing_secret_is_a_config_error() -> None:
    config = validate_entry("x", {"command": "mcp-server-time", "env": {"T": "${secret:T}"}})
    with pytest.raises(ConfigInvalidError):
        build_launch(config, {}, {}.get)


def test_the_preview_shows_keys_and_the_resolved_command_but_never_values() -> None:
    config = validate_entry(
        "time",
        {
            "command": "mcp-server-time",
            "env": {"API_TOKEN": "${secret:TOKEN}", "MODE": "fast", "MISSING": "${env:NOPE}"},
        },
    )
    shown = preview(config, {"HOME": "/home/a"}, {"TOKEN": "very-secret-value"}.get)
    assert shown.resolved == os.path.join(VENV_BIN, "mcp-server-time")
    assert {"API_TOKEN", "MODE", "PATH", "HOME"} <= set(shown.env_keys)
    assert shown.placeholders == ("env:NOPE (missing)", "secret:TOKEN (set)")
    assert len(shown.problems) == 1 and "NOPE" in shown.problems[0]
    assert "very-secret-value" not in repr(shown) and "fast" not in repr(shown)
    assert VENV_BIN in shown.path
