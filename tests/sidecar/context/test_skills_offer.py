"""The context's skills listing: a profile's allow/deny lists choose what its agents see."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.context.assemble import Assembly
from sidecar.context.budget import budget_for
from sidecar.context.skills import offer_skills
from sidecar.context.tokens import TokenCounter
from sidecar.plans.profiles import Profile
from tests.mcp_servers.skills.conftest import write_skill

pytestmark = pytest.mark.anyio


def test_profiles_allow_and_deny_skills_by_name_glob() -> None:
    profile = Profile(
        id="writer",
        name="Writer",
        skills_allowed=("harbour-*", "style"),
        skills_denied=("*-draft",),
    )
    assert profile.allows_skill("harbour-report")
    assert profile.allows_skill("style")
    assert not profile.allows_skill("harbour-draft")
    assert not profile.allows_skill("tide-table")
    assert Profile(id="any", name="Any").allows_skill("tide-table")


async def test_an_agent_is_offered_only_the_skills_its_profile_allows(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    for name in ("harbour-report", "harbour-draft", "tide-table"):
        write_skill(workspace / ".agents" / "skills", name, f"Use for {name}.")
    profile = Profile(id="w", name="W", skills_allowed=("harbour-*",), skills_denied=("*-draft",))
    assembly = Assembly()

    listing = await offer_skills(
        assembly,
        workspace=workspace,
        data_dir=tmp_path / "data",
        budget=budget_for(32_000),
        counter=TokenCounter("estimate"),
        allows=profile.allows_skill,
    )

    assert listing is not None
    assert [o.name for o in listing.offered] == ["harbour-report"]
    assert "harbour-report: Use for harbour-report." in assembly.turns[0]["content"]
    assert "tide-table" not in assembly.turns[0]["content"]


async def test_without_skills_nothing_is_added(tmp_path: Path) -> None:
    assembly = Assembly()
    listing = await offer_skills(
        assembly,
        workspace=tmp_path,
        data_dir=tmp_path / "data",
        budget=budget_for(None),
        counter=TokenCounter("estimate"),
    )
    assert listing is None and assembly.turns == [] and assembly.items == []
