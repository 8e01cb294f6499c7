"""The listing fits its budget and names every skill it shortened or left out."""

from __future__ import annotations

from pathlib import Path

from mcp_servers.skills.catalog import Problem, Skill
from mcp_servers.skills.listing import SHORT_DESCRIPTION, build_listing


def _skill(name: str, description: str, *errors: str) -> Skill:
    problems = tuple(Problem("bad_description", e) for e in errors)
    return Skill(name, description, Path(name), "test", problems=problems)


def test_everything_fits_whole_when_the_budget_allows() -> None:
    listing = build_listing([_skill("a", "Use for a."), _skill("b", "Use for b.")], 1000)

    assert [(o.name, o.description, o.shortened) for o in listing.offered] == [
        ("a", "Use for a.", False),
        ("b", "Use for b.", False),
    ]
    assert listing.left_out == ()
    assert listing.text() == "- a: Use for a.\n- b: Use for b."


def test_over_budget_descriptions_are_shortened_then_skills_left_out_with_reasons() -> None:
    skills = [_skill(f"skill-{i:04d}", "Use when " + "x" * 400) for i in range(1000)]

    listing = build_listing(skills, 8000)

    assert listing.chars <= 8000
    assert all(o.shortened and len(o.description) <= SHORT_DESCRIPTION for o in listing.offered)
    assert len(listing.offered) + len(listing.left_out) == 1000
    assert all("over the listing budget" in left.reason for left in listing.left_out)
    assert [o.name for o in listing.offered] == [
        f"skill-{i:04d}" for i in range(len(listing.offered))
    ]


def test_an_invalid_skill_is_never_offered_and_its_errors_are_the_reason() -> None:
    listing = build_listing([_skill("bad", "", "frontmatter has no description")], 1000)

    assert listing.offered == ()
    assert listing.left_out[0].reason == "invalid: frontmatter has no description"
