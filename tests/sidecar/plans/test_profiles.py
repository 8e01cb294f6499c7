"""Subagent profiles: the profiles file, its validation, and tool reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidecar.plans.profiles import (
    DEFAULT_PROFILES,
    Profile,
    ProfileError,
    ProfilesFile,
    parse_profiles,
)


@pytest.fixture
def profiles_file(tmp_path: Path) -> ProfilesFile:
    return ProfilesFile(tmp_path / "profiles.json")


def _write(file: ProfilesFile, data: object) -> bytes:
    raw = json.dumps(data).encode()
    file.path.write_bytes(raw)
    return raw


def _corrupt_copies(file: ProfilesFile) -> list[Path]:
    return sorted(file.path.parent.glob("profiles.corrupt-*.json"))


def test_a_missing_file_means_the_defaults_without_a_problem(profiles_file: ProfilesFile) -> None:
    assert profiles_file.load() == (DEFAULT_PROFILES, None)
    assert profiles_file.profiles() == {p.id: p for p in DEFAULT_PROFILES}
    assert not profiles_file.path.exists()


def test_the_defaults_have_unique_ids_and_pass_validation() -> None:
    assert parse_profiles([p.model_dump() for p in DEFAULT_PROFILES]) == DEFAULT_PROFILES


def test_saved_profiles_load_back_equal(profiles_file: ProfilesFile) -> None:
    profiles = (
        Profile(
            id="writer",
            name="Writer",
            model="anthropic/claude",
            tools_allowed=("workspace__*",),
            tools_denied=("workspace__delete",),
            may_spawn=True,
            max_depth=2,
            concurrency=7,
            timeout=60.5,
            stall_seconds=12.0,
            max_attempts=2,
            budget_tokens=1000,
            budget_cost=0.5,
            workdir="worktree",
        ),
        Profile(id="cc", name="Claude Code", kind="claude_code"),
    )
    profiles_file.save(profiles)
    assert profiles_file.load() == (profiles, None)
    assert list(profiles_file.profiles()) == ["writer", "cc"]
    assert not profiles_file.path.with_suffix(".tmp").exists()


def test_saving_replaces_the_previous_file(profiles_file: ProfilesFile) -> None:
    profiles_file.save(DEFAULT_PROFILES)
    only = (Profile(id="solo", name="Solo"),)
    profiles_file.save(only)
    assert profiles_file.load() == (only, None)


def test_the_file_may_be_a_bare_list(profiles_file: ProfilesFile) -> None:
    _write(profiles_file, [{"id": "a", "name": "A"}])
    profiles, problem = profiles_file.load()
    assert problem is None
    assert [p.id for p in profiles] == ["a"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("concurrency", 0),
        ("max_depth", 9),
        ("kind", "wizard"),
        ("workdir", "elsewhere"),
        ("timeout", -1),
        ("colour", "blue"),
    ],
)
def test_a_bad_field_is_reported_naming_profile_and_field_and_the_defaults_apply(
    profiles_file: ProfilesFile, field: str, value: object
) -> None:
    good: dict[str, Any] = {"id": "fine", "name": "Fine"}
    bad: dict[str, Any] = {"id": "broken", "name": "Broken", field: value}
    raw = _write(profiles_file, {"profiles": [good, bad]})
    profiles, problem = profiles_file.load()
    assert profiles == DEFAULT_PROFILES
    assert problem is not None
    assert "broken" in problem
    assert field in problem
    assert profiles_file.path.read_bytes() == raw
    assert _corrupt_copies(profiles_file) == []


def test_a_bad_profile_without_an_id_is_named_by_position(profiles_file: ProfilesFile) -> None:
    _write(profiles_file, {"profiles": [{"id": "a", "name": "A"}, {"name": "No id"}]})
    _, problem = profiles_file.load()
    assert problem is not None
    assert "#2" in problem
    assert "id" in problem


@pytest.mark.parametrize("data", [{}, {"profiles": []}, {"profiles": "x"}, [], 3])
def test_a_file_without_profiles_is_reported_and_the_defaults_apply(
    profiles_file: ProfilesFile, data: object
) -> None:
    raw = _write(profiles_file, data)
    profiles, problem = profiles_file.load()
    assert profiles == DEFAULT_PROFILES
    assert problem is not None
    assert profiles_file.path.read_bytes() == raw


def test_a_file_that_is_not_json_is_moved_aside_and_reported(profiles_file: ProfilesFile) -> None:
    profiles_file.path.write_text('{"profiles": [', encoding="utf-8")
    profiles, problem = profiles_file.load()
    assert profiles == DEFAULT_PROFILES
    [backup] = _corrupt_copies(profiles_file)
    assert backup.read_text(encoding="utf-8") == '{"profiles": ['
    assert not profiles_file.path.exists()
    assert problem is not None
    assert backup.name in problem
    assert profiles_file.load() == (DEFAULT_PROFILES, None)


def test_a_file_that_is_not_utf8_is_moved_aside_and_reported(profiles_file: ProfilesFile) -> None:
    raw = json.dumps({"profiles": [{"id": "a", "name": "A"}]}).encode("utf-16")
    profiles_file.path.write_bytes(raw)
    profiles, problem = profiles_file.load()
    assert profiles == DEFAULT_PROFILES
    assert problem is not None
    [backup] = _corrupt_copies(profiles_file)
    assert backup.read_bytes() == raw


def test_an_unreadable_path_is_reported_and_the_defaults_apply(
    profiles_file: ProfilesFile,
) -> None:
    profiles_file.path.mkdir()
    profiles, problem = profiles_file.load()
    assert profiles == DEFAULT_PROFILES
    assert problem is not None
    assert profiles_file.path.is_dir()


def test_saving_duplicate_ids_is_refused_and_leaves_the_file_alone(
    profiles_file: ProfilesFile,
) -> None:
    profiles_file.save(DEFAULT_PROFILES)
    before = profiles_file.path.read_bytes()
    with pytest.raises(ProfileError) as info:
        profiles_file.save((Profile(id="twin", name="A"), Profile(id="twin", name="B")))
    assert "twin" in str(info.value)
    assert profiles_file.path.read_bytes() == before


def test_saving_no_profiles_is_refused(profiles_file: ProfilesFile) -> None:
    with pytest.raises(ProfileError):
        profiles_file.save(())
    assert not profiles_file.path.exists()


def test_parsing_duplicate_ids_is_refused_naming_them() -> None:
    raw = {
        "profiles": [
            {"id": "twin", "name": "A"},
            {"id": "solo", "name": "B"},
            {"id": "twin", "name": "C"},
        ]
    }
    with pytest.raises(ProfileError) as info:
        parse_profiles(raw)
    assert "twin" in str(info.value)
    assert "solo" not in str(info.value)


def test_a_file_with_duplicate_ids_is_reported_and_the_defaults_apply(
    profiles_file: ProfilesFile,
) -> None:
    _write(profiles_file, [{"id": "dup", "name": "A"}, {"id": "dup", "name": "B"}])
    profiles, problem = profiles_file.load()
    assert profiles == DEFAULT_PROFILES
    assert problem is not None
    assert "dup" in problem


def test_strong_profiles_are_the_agent_cli_kinds() -> None:
    assert not Profile(id="a", name="A", kind="internal").strong
    for kind in ("claude_code", "codex", "openclaw"):
        assert Profile.model_validate({"id": "a", "name": "A", "kind": kind}).strong


def test_an_empty_allow_list_allows_every_tool() -> None:
    profile = Profile(id="a", name="A")
    assert profile.allows_tool("workspace__read")
    assert profile.allows_tool("sandbox__run")


def test_an_allow_list_allows_only_matching_tools() -> None:
    profile = Profile(id="a", name="A", tools_allowed=("workspace__read", "web__*"))
    assert profile.allows_tool("workspace__read")
    assert profile.allows_tool("web__fetch")
    assert not profile.allows_tool("workspace__write")
    assert not profile.allows_tool("sandbox__run")


def test_a_deny_list_blocks_matching_tools_and_allows_the_rest() -> None:
    profile = Profile(id="a", name="A", tools_denied=("sandbox__*",))
    assert not profile.allows_tool("sandbox__run")
    assert profile.allows_tool("workspace__write")


def test_deny_wins_over_allow() -> None:
    profile = Profile(
        id="a", name="A", tools_allowed=("workspace__*",), tools_denied=("workspace__delete",)
    )
    assert profile.allows_tool("workspace__read")
    assert not profile.allows_tool("workspace__delete")


def test_tool_globs_are_case_sensitive_and_match_whole_names() -> None:
    profile = Profile(id="a", name="A", tools_allowed=("workspace__read",))
    assert not profile.allows_tool("Workspace__read")
    assert not profile.allows_tool("workspace__read_all")
