"""Where the standalone sandbox server puts its runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.sandbox.__main__ import parse_args


def test_the_workdir_flag_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATRIUM_SANDBOX_WORKDIR", "/elsewhere")
    args = parse_args(["--workdir", str(tmp_path), "--timeout", "5", "--memory-mb", "128"])
    assert (args.workdir, args.timeout, args.memory_mb) == (tmp_path, 5.0, 128)


def test_the_environment_names_the_workdir_when_no_flag_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATRIUM_SANDBOX_WORKDIR", str(tmp_path))
    assert parse_args([]).workdir == tmp_path


def test_without_flag_or_environment_a_fresh_temporary_workdir_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ATRIUM_SANDBOX_WORKDIR", raising=False)
    workdir = parse_args([]).workdir
    try:
        assert workdir.is_dir()
        assert workdir.name.startswith("atrium-sandbox-")
        assert list(workdir.iterdir()) == []
    finally:
        workdir.rmdir()
