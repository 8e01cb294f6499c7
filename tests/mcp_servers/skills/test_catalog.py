"""Finding skills in both layouts, and every broken skill listed with its error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_servers.skills import catalog
from mcp_servers.skills.catalog import MAX_BODY_BYTES, default_roots, scan, signature
from mcp_servers.skills.listing import build_listing
from tests.mcp_servers.skills.conftest import write_skill


def test_skills_in_the_agents_and_claude_layouts_and_the_account_folder_are_found(
    workspace: Path, tmp_path: Path
) -> None:
    write_skill(workspace / ".agents" / "skills", "harbour-report")
    write_skill(workspace / ".claude" / "skills", "tide-table", "Use for tide tables.")
    write_skill(tmp_path / "account", "house-style", "Use to check house style.")

    skills = scan(default_roots(workspace, tmp_path / "account"))

    assert [(s.name, s.source, s.ok) for s in skills] == [
        ("harbour-report", "workspace:.agents", True),
        ("tide-table", "workspace:.claude", True),
        ("house-style", "account", True),
    ]
    assert skills[0].description == "Use when the author asks for a harbour report."


def test_each_broken_skill_is_listed_with_what_is_wrong(workspace: Path, tmp_path: Path) -> None:
    root = workspace / ".agents" / "skills"
    write_skill(root, "no-front", frontmatter="")
    (root / "no-front" / "SKILL.md").write_text("just text\n", encoding="utf-8")
    write_skill(root, "bad-yaml", frontmatter="name: [unclosed\n")
    write_skill(root, "Bad_Name", frontmatter="name: Bad_Name\ndescription: x\n")
    write_skill(root, "other-folder", frontmatter="name: mismatch\ndescription: x\n")
    write_skill(root, "no-desc", frontmatter="name: no-desc\n")
    write_skill(root, "long-desc", "d" * 1025)
    write_skill(root, "huge-body", body="x" * (MAX_BODY_BYTES + 1))
    (root / "latin1").mkdir()
    (root / "latin1" / "SKILL.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9\n---\n")
    (root / "empty").mkdir()
    outside = write_skill(tmp_path / "elsewhere", "linked")
    os.symlink(outside, root / "linked")

    errors = {s.path.name: " ".join(s.errors) for s in scan(default_roots(workspace, None))}

    assert "no frontmatter" in errors["no-front"]
    assert "not valid YAML" in errors["bad-yaml"]
    assert "lower-case" in errors["Bad_Name"]
    assert "differs from its folder" in errors["other-folder"]
    assert "no description" in errors["no-desc"]
    assert "1025 characters" in errors["long-desc"]
    assert "body is" in errors["huge-body"]
    assert "not UTF-8" in errors["latin1"]
    assert "no SKILL.md" in errors["empty"]
    assert "outside" in errors["linked"]
    kinds = {
        s.path.name: [p.kind for p in s.problems] for s in scan(default_roots(workspace, None))
    }
    assert kinds == {
        "Bad_Name": ["bad_name"],
        "bad-yaml": ["bad_frontmatter"],
        "empty": ["no_skill_file"],
        "huge-body": ["too_large"],
        "latin1": ["not_utf8"],
        "linked": ["outside"],
        "long-desc": ["bad_description"],
        "no-desc": ["bad_description"],
        "no-front": ["bad_frontmatter"],
        "other-folder": ["bad_name"],
    }


def test_a_duplicate_name_is_listed_as_a_duplicate_and_the_higher_precedence_one_wins(
    workspace: Path,
) -> None:
    write_skill(workspace / ".agents" / "skills", "harbour-report", "first")
    write_skill(workspace / ".claude" / "skills", "harbour-report", "second")

    first, second = scan(default_roots(workspace, None))

    assert first.ok and first.description == "first"
    assert not second.ok and "duplicate name" in second.errors[0]
    assert [p.kind for p in second.problems] == ["duplicate"]


def test_a_thousand_skills_are_all_found_and_a_change_alters_the_signature(
    workspace: Path,
) -> None:
    root = workspace / ".agents" / "skills"
    for i in range(1000):
        write_skill(root, f"skill-{i:04d}", f"Use for task number {i}.")
    roots = default_roots(workspace, None)
    before = signature(roots)

    skills = scan(roots)
    assert len(skills) == 1000 and all(s.ok for s in skills)
    write_skill(root, "skill-0500", "Use for something else now.")
    assert signature(roots) != before


def test_resource_files_are_listed_relative_to_the_skill(workspace: Path) -> None:
    folder = write_skill(workspace / ".agents" / "skills", "harbour-report")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "tides.py").write_text("print('high tide')\n")
    (folder / "references").mkdir()
    (folder / "references" / "ports.md").write_text("# Ports\n")

    (skill,) = scan(default_roots(workspace, None))

    assert skill.resources == ("scripts/tides.py", "references/ports.md")


def test_folders_past_the_per_root_limit_are_listed_as_one_entry_not_dropped_silently(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog, "MAX_SKILLS_PER_ROOT", 3)
    root = workspace / ".agents" / "skills"
    for i in range(5):
        write_skill(root, f"skill-{i}", f"Use for task {i}.")
    write_skill(workspace / ".claude" / "skills", "tide-table", "Use for tide tables.")

    skills = scan(default_roots(workspace, None))

    assert [(s.name, s.ok) for s in skills] == [
        ("skill-0", True),
        ("skill-1", True),
        ("skill-2", True),
        ("2 more folders", False),
        ("tide-table", True),
    ]
    cut = skills[3]
    assert (cut.path, cut.source) == (root, "workspace:.agents")
    assert [p.kind for p in cut.problems] == ["not_read"]
    assert "skill-3" in cut.errors[0] and "skill-4" in cut.errors[0]
    listing = build_listing(skills, 10_000)
    assert [left.name for left in listing.left_out] == ["2 more folders"]
