"""The roster as evidence for who gets a task: each profile's reach, availability and load; the
planner's line per profile; the deterministic ranking of who else can take a task; a writing
task moved off a read-only profile; and a strong profile's reach as its CLI's controls."""

from __future__ import annotations

import pytest

from sidecar.plans.coordinator import Coordinator
from sidecar.plans.dag import PlanError, TaskSpec
from sidecar.plans.profiles import DEFAULT_PROFILES, Profile
from sidecar.plans.roster import RosterEntry, fit_reach, ranked, reach, roster
from sidecar.plans.strong import tool_policy

PROFILES = {p.id: p for p in DEFAULT_PROFILES} | {
    "claude-reader": Profile(
        id="claude-reader",
        name="Claude Code, read-only",
        kind="claude_code",
        read_only=True,
        native_tools_allowed=("Read", "Grep"),
    ),
    "coder": Profile(id="coder", name="Coder", kind="internal", concurrency=2),
}


def _roster(missing: dict[str, str] | None = None) -> list[RosterEntry]:
    coordinator = Coordinator()
    coordinator.missing_providers = missing or {}
    return roster(PROFILES, coordinator)


def test_each_profile_has_its_reach() -> None:
    reaches = {p.id: reach(p) for p in PROFILES.values()}
    assert reaches["researcher"] == "read_only"  # only reading tools allowed
    assert reaches["general"] == "writes"  # every tool but the sandbox
    assert reaches["claude"] == "writes" and reaches["claude-reader"] == "read_only"
    reader = PROFILES["general"].model_copy(update={"read_only": True})
    assert reach(reader) == "read_only"
    assert not reader.allows_tool("workspace__write") and reader.allows_tool("workspace__read")


def test_the_planner_sees_reach_tools_and_availability_but_never_the_load() -> None:
    lines = {e.profile.id: e.line() for e in _roster({"codex": "npm i -g @openai/codex"})}
    assert lines["researcher"] == (
        "researcher: Read-only researcher (Atrium subagent; read-only; tools workspace__list, "
        "workspace__read, workspace__search)"
    )
    assert lines["claude-reader"] == (
        "claude-reader: Claude Code, read-only (Claude Code; read-only; its tools Read, Grep)"
    )
    assert lines["codex"] == "codex: Codex (Codex; may write; NOT AVAILABLE: not installed here)"
    assert "running" not in "".join(lines.values())


def test_ranking_prefers_available_same_family_fitting_and_light_profiles() -> None:
    entries = _roster({"codex": "install it"})
    # Codex is missing: a strong agent's task goes to another strong agent that writes first.
    order = [e.profile.id for e in ranked(entries, "codex", needs="writes")]
    assert order[0] == "claude"
    assert "codex" not in order and "claude-reader" not in order and "researcher" not in order
    # The model's choice wins a tie; the load breaks ties before it.
    coordinator = Coordinator()
    busy = roster(PROFILES, coordinator)
    assert [e.profile.id for e in ranked(busy, "openclaw", needs="writes")][:2] == [
        "openclaw",
        "claude",
    ]


def test_a_writing_task_moves_off_a_read_only_profile_and_says_why() -> None:
    tasks = [
        TaskSpec("read", "Read", "Read it.", "researcher"),
        TaskSpec("fix", "Fix", "Fix the typo.", "researcher", writes=True),
        TaskSpec("code", "Code", "Change the code.", "claude-reader", writes=True),
    ]
    fitted, moved = fit_reach(tasks, _roster())
    assert [t.profile for t in fitted] == ["researcher", "coder", "claude"]
    assert moved == {
        "fix": "given to coder: Read-only researcher is read-only and this task changes files",
        "code": "given to claude: Claude Code, read-only is read-only and this task changes files",
    }


def test_a_writing_task_with_nobody_to_write_is_refused() -> None:
    readers = {"researcher": PROFILES["researcher"]}
    task = TaskSpec("fix", "Fix", "Fix it.", "researcher", writes=True)
    with pytest.raises(PlanError, match="no available profile may write"):
        fit_reach([task], roster(readers, Coordinator()))


def test_a_read_only_strong_profile_runs_its_cli_read_only_with_its_own_tool_rules() -> None:
    assert tool_policy(PROFILES["claude"]) == {"mode": "workspace_write"}
    assert tool_policy(PROFILES["claude-reader"]) == {
        "mode": "read_only",
        "allowed_tools": ["Read", "Grep"],
    }
