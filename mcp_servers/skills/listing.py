"""What the model is offered: skill names and descriptions within a budget, and a report of what
did not fit and why (never a silent drop).

The budget is in characters (≈ 4 per token). Deterministic: skills in catalog order (precedence,
then name); first every description is offered whole; if that does not fit, descriptions are
shortened to `SHORT_DESCRIPTION` characters; skills that still do not fit are left out, each with
the reason. Skills with errors are never offered (their errors are in the report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcp_servers.skills.catalog import Skill

SHORT_DESCRIPTION = 160
ENTRY_OVERHEAD = 6
"""Characters each entry adds besides its name and description ("- name: description\\n")."""


@dataclass(frozen=True, slots=True)
class Offered:
    name: str
    description: str
    shortened: bool


@dataclass(frozen=True, slots=True)
class LeftOut:
    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class Listing:
    offered: tuple[Offered, ...]
    left_out: tuple[LeftOut, ...]
    chars: int
    budget_chars: int

    def text(self) -> str:
        """The listing as the model reads it."""
        return "\n".join(f"- {o.name}: {o.description}" for o in self.offered)


def _cost(name: str, description: str) -> int:
    return len(name) + len(description) + ENTRY_OVERHEAD


def _short(description: str) -> str:
    if len(description) <= SHORT_DESCRIPTION:
        return description
    return description[: SHORT_DESCRIPTION - 1].rstrip() + "…"


def build_listing(skills: Sequence[Skill], budget_chars: int) -> Listing:
    """Offer as many valid skills as fit in `budget_chars`, reporting every one left out."""
    valid = [s for s in skills if s.ok]
    left: list[LeftOut] = [
        LeftOut(s.name, "invalid: " + "; ".join(s.errors)) for s in skills if not s.ok
    ]
    whole = sum(_cost(s.name, s.description) for s in valid)
    shorten = whole > budget_chars
    offered: list[Offered] = []
    used = 0
    for skill in valid:
        description = _short(skill.description) if shorten else skill.description
        cost = _cost(skill.name, description)
        if used + cost > budget_chars:
            left.append(LeftOut(skill.name, f"over the listing budget ({budget_chars} chars)"))
            continue
        used += cost
        offered.append(Offered(skill.name, description, description != skill.description))
    return Listing(tuple(offered), tuple(left), used, budget_chars)
