"""The data dir, the settings file and where the workspace is."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import platformdirs
import pytest

import sidecar.settings as settings_mod
from sidecar.settings import Settings, SettingsFile, data_dir, resolve_workspace


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home with no XDG overrides, so platformdirs' defaults land inside the test."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_DOCUMENTS_DIR", "ATRIUM_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def settings_file(tmp_path: Path) -> SettingsFile:
    return SettingsFile(tmp_path / "settings.json")


def test_data_dir_honours_atrium_data_dir_and_creates_it(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert data_dir({"ATRIUM_DATA_DIR": str(target)}) == target
    assert target.is_dir()


def test_data_dir_reads_the_process_environment_by_default(data_dir: Path) -> None:
    # `data_dir` the fixture (tests/conftest.py) sets ATRIUM_DATA_DIR for this test.
    assert settings_mod.data_dir() == data_dir


@pytest.mark.parametrize("env", [{}, {"ATRIUM_DATA_DIR": ""}], ids=["unset", "empty"])
def test_without_an_override_the_data_dir_is_the_platform_default(
    home: Path, env: dict[str, str]
) -> None:
    expected = Path(platformdirs.user_data_dir("atrium", "atrium"))
    assert expected.is_relative_to(home)
    assert data_dir(env) == expected
    assert expected.is_dir()


def test_a_missing_settings_file_means_defaults(settings_file: SettingsFile) -> None:
    assert settings_file.load() == Settings()
    assert not settings_file.path.exists()


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"model": "a",', b"\xff\xfe\x00garbage", b""],
    ids=["broken", "truncated", "not-utf8", "empty"],
)
def test_a_corrupt_settings_file_is_moved_aside_and_defaults_apply(
    settings_file: SettingsFile, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    settings_file.path.write_bytes(content)
    with caplog.at_level(logging.ERROR, logger="sidecar.settings"):
        assert settings_file.load() == Settings()
    assert not settings_file.path.exists()
    aside = [p for p in settings_file.path.parent.iterdir() if p.name != "settings.json"]
    assert len(aside) == 1
    assert aside[0].read_bytes() == content
    assert [r.levelno for r in caplog.records if r.name == "sidecar.settings"] == [logging.ERROR]
    assert settings_file.load() == Settings()


def test_after_a_corrupt_file_new_settings_can_be_saved(settings_file: SettingsFile) -> None:
    settings_file.path.write_text("{oops", encoding="utf-8")
    assert settings_file.update(model="openai/gpt-4o-mini") == Settings(model="openai/gpt-4o-mini")
    assert SettingsFile(settings_file.path).load() == Settings(model="openai/gpt-4o-mini")


@pytest.mark.parametrize("content", ["[1, 2]", '"text"', "null", "3"])
def test_valid_json_that_is_not_an_object_means_defaults(
    settings_file: SettingsFile, content: str
) -> None:
    settings_file.path.write_text(content, encoding="utf-8")
    assert settings_file.load() == Settings()


def test_fields_that_are_not_non_blank_strings_are_ignored(settings_file: SettingsFile) -> None:
    settings_file.path.write_text(
        json.dumps({"model": 5, "api_base": "   ", "workspace": "/w", "extra": "kept out"}),
        encoding="utf-8",
    )
    assert settings_file.load() == Settings(model=None, api_base=None, workspace="/w")


def test_settings_round_trip_through_the_file(settings_file: SettingsFile) -> None:
    wanted = Settings(model="ollama/llama3", api_base="http://127.0.0.1:11434", workspace="/w")
    settings_file.save(wanted)
    assert SettingsFile(settings_file.path).load() == wanted
    assert [p.name for p in settings_file.path.parent.iterdir()] == ["settings.json"]


def test_update_changes_only_the_given_fields_and_blank_clears(
    settings_file: SettingsFile,
) -> None:
    settings_file.save(Settings(model="m", api_base="b", workspace="/w"))
    assert settings_file.update(api_base="") == Settings(model="m", api_base=None, workspace="/w")
    assert settings_file.update(model="n") == Settings(model="n", api_base=None, workspace="/w")
    assert settings_file.load() == Settings(model="n", api_base=None, workspace="/w")


def test_the_workspace_in_settings_wins_over_the_environment(tmp_path: Path) -> None:
    chosen, env_dir = tmp_path / "chosen", tmp_path / "from-env"
    got = resolve_workspace(
        Settings(workspace=str(chosen)), {"ATRIUM_WORKSPACE": str(env_dir)}, tmp_path
    )
    assert got == chosen.resolve()
    assert chosen.is_dir()
    assert not env_dir.exists()


def test_without_a_workspace_setting_atrium_workspace_is_used(tmp_path: Path) -> None:
    env_dir = tmp_path / "from-env"
    assert resolve_workspace(Settings(), {"ATRIUM_WORKSPACE": str(env_dir)}, tmp_path) == (
        env_dir.resolve()
    )
    assert env_dir.is_dir()


def test_with_neither_the_workspace_is_atrium_in_the_documents_folder(
    home: Path, tmp_path: Path
) -> None:
    got = resolve_workspace(Settings(), {}, tmp_path)
    assert got == (Path(platformdirs.user_documents_dir()) / "Atrium").resolve()
    assert got.is_relative_to(home)
    assert got.is_dir()


def test_a_workspace_under_home_is_expanded(home: Path, tmp_path: Path) -> None:
    got = resolve_workspace(Settings(workspace="~/novel"), {}, tmp_path)
    assert got == (home / "novel").resolve()


@pytest.mark.parametrize(
    ("stored", "read"),
    [(0, 0), (30, 30), (-1, 7), (10_000, 7), ("3", 7), (True, 7), (None, 7)],
)
def test_a_stored_backup_retention_out_of_range_reads_as_the_default(
    settings_file: SettingsFile, stored: object, read: int
) -> None:
    settings_file.path.write_text(json.dumps({"backup_days": stored}), encoding="utf-8")
    assert settings_file.load().backup_days == read
