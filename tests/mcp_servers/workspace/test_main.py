"""Where the standalone workspace server finds its root."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.workspace.__main__ import main, parse_root


def test_the_root_flag_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATRIUM_WORKSPACE", "/elsewhere")
    assert parse_root(["--root", str(tmp_path)]) == tmp_path


def test_the_environment_names_the_root_when_no_flag_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATRIUM_WORKSPACE", str(tmp_path))
    assert parse_root([]) == tmp_path


def test_the_current_directory_is_the_fallback_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATRIUM_WORKSPACE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert parse_root([]) == tmp_path


def test_a_missing_root_exits_with_a_usage_error(tmp_path: Path) -> None:
    assert main(["--root", str(tmp_path / "nope")]) == 2
