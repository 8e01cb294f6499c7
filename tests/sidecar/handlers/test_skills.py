"""`skills/list` gives every skill folder the skills server sees, each with its problems (bad
frontmatter, duplicate name, oversized body, not UTF-8, link outside, folders past the limit);
`skills/read` gives a listed skill's body. Real services over real folders."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_servers.skills import catalog
from mcp_servers.skills.catalog import MAX_BODY_BYTES
from sidecar.handlers.services import Services
from sidecar.protocol import (
    RpcError,
    SkillErrorCode,
    SkillListResult,
    SkillReadParams,
    SkillReadResult,
    SkillsEmpty,
)
from tests.mcp_servers.skills.conftest import write_skill
from tests.sidecar.handlers.conftest import call
from tests.sidecar.rpc.peer import build_services

pytestmark = pytest.mark.anyio


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def svc(tmp_path: Path, workspace: Path) -> Iterator[Services]:
    data = tmp_path / "data"
    data.mkdir()
    services = build_services(data)
    services.settings.update(workspace=str(workspace))
    yield services
    services.store.db.close()


async def _list(svc: Services) -> SkillListResult:
    return await call(svc, "skills/list", SkillsEmpty(), SkillListResult)


def _kinds(result: SkillListResult) -> dict[str, list[str]]:
    return {Path(s.path).name: [p.kind for p in s.problems] for s in result.skills}


async def test_skills_from_both_workspace_layouts_and_the_account_are_listed_with_their_roots(
    svc: Services, workspace: Path
) -> None:
    write_skill(workspace / ".agents" / "skills", "harbour-report")
    write_skill(workspace / ".claude" / "skills", "tide-table", "Use for tide tables.")
    write_skill(svc.data_dir / "skills", "house-style", "Use to check house style.")

    result = await _list(svc)

    assert [(s.name, s.source, s.ok, s.problems) for s in result.skills] == [
        ("harbour-report", "workspace:.agents", True, ()),
        ("tide-table", "workspace:.claude", True, ()),
        ("house-style", "account", True, ()),
    ]
    assert [(r.source, r.path) for r in result.roots] == [
        ("workspace:.agents", str(workspace / ".agents" / "skills")),
        ("workspace:.claude", str(workspace / ".claude" / "skills")),
        ("account", str(svc.data_dir / "skills")),
    ]
    first = result.skills[0]
    assert first.description == "Use when the author asks for a harbour report."
    assert (first.root, first.path) == (
        str(workspace / ".agents" / "skills"),
        str(workspace / ".agents" / "skills" / "harbour-report"),
    )


async def test_every_broken_skill_is_listed_with_the_kind_of_its_problem(
    svc: Services, workspace: Path, tmp_path: Path
) -> None:
    root = workspace / ".agents" / "skills"
    write_skill(root, "good")
    write_skill(root, "bad-yaml", frontmatter="name: [unclosed\n")
    write_skill(root, "no-front", frontmatter="")
    (root / "no-front" / "SKILL.md").write_text("just text\n", encoding="utf-8")
    write_skill(root, "huge-body", body="x" * (5 * 1024 * 1024))
    (root / "latin1").mkdir()
    (root / "latin1" / "SKILL.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9\n---\n")
    os.symlink(write_skill(tmp_path / "elsewhere", "linked"), root / "linked")

    result = await _list(svc)

    assert _kinds(result) == {
        "bad-yaml": ["bad_frontmatter"],
        "good": [],
        "huge-body": ["too_large"],
        "latin1": ["not_utf8"],
        "linked": ["outside"],
        "no-front": ["bad_frontmatter"],
    }
    assert all(not s.ok for s in result.skills if s.name != "good")
    huge = next(s for s in result.skills if s.name == "huge-body")
    assert huge.body_bytes > MAX_BODY_BYTES


async def test_a_duplicate_name_is_listed_with_the_folder_that_shadows_it(
    svc: Services, workspace: Path
) -> None:
    winner = write_skill(workspace / ".agents" / "skills", "harbour-report", "first")
    write_skill(workspace / ".claude" / "skills", "harbour-report", "second")
    write_skill(svc.data_dir / "skills", "harbour-report", "third")

    result = await _list(svc)

    assert [(s.source, s.ok, s.shadowed_by) for s in result.skills] == [
        ("workspace:.agents", True, None),
        ("workspace:.claude", False, str(winner)),
        ("account", False, str(winner)),
    ]
    assert [[p.kind for p in s.problems] for s in result.skills] == [
        [],
        ["duplicate"],
        ["duplicate"],
    ]


async def test_a_thousand_skills_are_all_listed(svc: Services, workspace: Path) -> None:
    root = workspace / ".agents" / "skills"
    for i in range(1000):
        write_skill(root, f"skill-{i:04d}", f"Use for task number {i}.")

    result = await _list(svc)

    assert [s.name for s in result.skills] == [f"skill-{i:04d}" for i in range(1000)]
    assert all(s.ok for s in result.skills)


async def test_folders_past_the_limit_are_one_listed_entry_saying_they_were_not_read(
    svc: Services, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog, "MAX_SKILLS_PER_ROOT", 2)
    root = workspace / ".agents" / "skills"
    for i in range(4):
        write_skill(root, f"skill-{i}")

    result = await _list(svc)

    assert [(s.name, s.ok) for s in result.skills] == [
        ("skill-0", True),
        ("skill-1", True),
        ("2 more folders", False),
    ]
    assert [p.kind for p in result.skills[-1].problems] == ["not_read"]
    assert result.skills[-1].path == str(root)


async def test_a_listed_skill_reads_its_body_and_a_broken_one_says_why_not(
    svc: Services, workspace: Path
) -> None:
    root = workspace / ".agents" / "skills"
    good = write_skill(root, "harbour-report", body="Read the tides.\n")
    misnamed = write_skill(
        root, "misnamed", body="Other.\n", frontmatter="name: harbour-report\ndescription: x\n"
    )
    huge = write_skill(root, "huge-body", body="x" * (MAX_BODY_BYTES + 1))
    latin = root / "latin1"
    latin.mkdir()
    (latin / "SKILL.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9\n---\n")

    read = await call(svc, "skills/read", SkillReadParams(path=str(good)), SkillReadResult)
    assert (read.path, read.body) == (str(good), "Read the tides.")
    read = await call(svc, "skills/read", SkillReadParams(path=str(misnamed)), SkillReadResult)
    assert read.body == "Other."  # a name problem leaves the body worth showing
    for folder in (huge, latin):
        with pytest.raises(RpcError) as refused:
            await call(svc, "skills/read", SkillReadParams(path=str(folder)), SkillReadResult)
        assert refused.value.code == SkillErrorCode.SKILL_UNREADABLE


async def test_reading_a_folder_that_is_no_listed_skill_is_refused(
    svc: Services, workspace: Path, tmp_path: Path
) -> None:
    write_skill(workspace / ".agents" / "skills", "harbour-report")
    elsewhere = write_skill(tmp_path / "elsewhere", "harbour-report")

    for path in (elsewhere, workspace / ".agents" / "skills", workspace / "notes.md"):
        with pytest.raises(RpcError) as refused:
            await call(svc, "skills/read", SkillReadParams(path=str(path)), SkillReadResult)
        assert refused.value.code == SkillErrorCode.NO_SUCH_SKILL


def test_the_wire_names_every_problem_kind_the_catalog_reports() -> None:
    """The protocol cannot import the MCP server (the desktop reads it), so the kinds are
    written twice; this keeps the copies equal."""
    from typing import get_args

    from mcp_servers.skills.catalog import ProblemKind
    from sidecar.protocol import SkillProblemKind

    assert get_args(SkillProblemKind) == get_args(ProblemKind)
