"""The skills the context offers: names and descriptions within their share of the token
budget (`ContextBudget.skills`, 2% of the input budget; Codex gives its skill listing about 2%
of the window).

Progressive disclosure: the context lists each usable skill's name and description (shortened,
then left out with a reason when the listing would pass its share); a skill's instructions enter
the context only when the model calls `skills__load`, and as that call's result they stay in view
for the rest of the turn. A subagent sees only the skills its profile allows.

The catalog is read from the skill folders directly (off the event loop, with a deadline) and
kept per workspace; it rescans only when a SKILL.md changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from mcp_servers.skills import Catalog, Listing, build_listing, default_roots
from sidecar.context.assemble import Assembly, Item
from sidecar.context.budget import ContextBudget
from sidecar.context.render import mark_data
from sidecar.context.tokens import TokenCounter

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
SCAN_DEADLINE_S = 10.0
LEFT_OUT_NAMED = 40
"""Left-out skills named in the report; past this many the report counts the rest."""

_CATALOGS: dict[tuple[Path, Path], Catalog] = {}


def _catalog(workspace: Path, data_dir: Path) -> Catalog:
    key = (workspace, data_dir)
    if key not in _CATALOGS:
        _CATALOGS[key] = Catalog(default_roots(workspace, data_dir / "skills"))
    return _CATALOGS[key]


async def offer_skills(
    assembly: Assembly,
    *,
    workspace: Path,
    data_dir: Path,
    budget: ContextBudget,
    counter: TokenCounter,
    allows: Callable[[str], bool] | None = None,
) -> Listing | None:
    """Add the skills listing (and what was left out, and why) to `assembly`."""
    catalog = _catalog(workspace, data_dir)
    try:
        skills = await asyncio.wait_for(asyncio.to_thread(catalog.skills), SCAN_DEADLINE_S)
    except TimeoutError:
        assembly.warnings.append(
            f"skills were not listed: the scan took over {SCAN_DEADLINE_S:g} s"
        )
        return None
    if allows is not None:
        skills = [s for s in skills if allows(s.name)]
    if not skills:
        return None
    share = budget.skills
    listing = build_listing(skills, share * CHARS_PER_TOKEN)
    if listing.offered:
        text = (
            "Skills you can use: load one with skills__load(name) before following it; its "
            "files are reachable with skills__read_file and its scripts with skills__run_script.\n"
            + mark_data("skills", listing.text())
        )
        tokens = counter.count(text)
        shortened = sum(1 for o in listing.offered if o.shortened)
        reason = f"{len(listing.offered)} skills" + (
            f", {shortened} descriptions shortened to fit" if shortened else ""
        )
        assembly.add(
            Item("skills", "skills listing", tokens, True, reason),
            {"role": "system", "content": text},
        )
    _report_left_out(assembly, listing)
    return listing


def _report_left_out(assembly: Assembly, listing: Listing) -> None:
    by_reason: dict[str, list[str]] = {}
    for left in listing.left_out:
        by_reason.setdefault(left.reason, []).append(left.name)
    for reason, names in by_reason.items():
        shown = ", ".join(names[:LEFT_OUT_NAMED])
        more = f" and {len(names) - LEFT_OUT_NAMED} more" if len(names) > LEFT_OUT_NAMED else ""
        assembly.add(
            Item("skills", f"{len(names)} skills left out: {shown}{more}", 0, False, reason)
        )
