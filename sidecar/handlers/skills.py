"""skills/list, skills/read: the skill folders the skills server sees, for the Skills panel.

The roots are the skills server's (`sidecar.builtin_servers.skills_spec`): the workspace's
`.agents/skills` and `.claude/skills`, then `<data dir>/skills`. Scanning reads every SKILL.md,
so it runs off the event loop with a deadline; the catalog is imported on first use.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from sidecar import settings as settings_mod
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    SKILLS_LIST,
    SKILLS_READ,
    RpcError,
    SkillErrorCode,
    SkillInfo,
    SkillListResult,
    SkillProblemInfo,
    SkillReadParams,
    SkillReadResult,
    SkillRootInfo,
    SkillsEmpty,
    SkillSource,
)

if TYPE_CHECKING:
    from mcp_servers.skills import Skill, SkillRoot

SCAN_DEADLINE_S = 20.0
UNREADABLE_BODY = frozenset(
    {"no_skill_file", "unreadable", "not_utf8", "bad_frontmatter", "outside", "too_large"}
)
"""Problems that leave no body to show (a link outside is never followed)."""

T = TypeVar("T")


def _roots(svc: Services) -> list[SkillRoot]:
    from mcp_servers.skills import default_roots

    workspace = settings_mod.resolve_workspace(svc.settings.load(), os.environ, svc.data_dir)
    return default_roots(workspace, svc.data_dir / "skills")


async def _off_loop(work: Callable[[], T]) -> T:
    """Raises:
    RpcError: SKILLS_TIMED_OUT, the folders took longer than the deadline to read."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(work), SCAN_DEADLINE_S)
    except TimeoutError as exc:
        message = f"reading the skill folders took longer than {SCAN_DEADLINE_S:.0f} s"
        raise RpcError(SkillErrorCode.SKILLS_TIMED_OUT, message) from exc


@registry.method(SKILLS_LIST)
async def skills_list(svc: Services, params: SkillsEmpty) -> SkillListResult:
    del params
    roots = _roots(svc)
    return await _off_loop(lambda: _list(roots))


def _list(roots: Sequence[SkillRoot]) -> SkillListResult:
    from mcp_servers.skills import scan

    folders = {root.source: str(root.path) for root in roots}
    winners: dict[str, Skill] = {}
    infos: list[SkillInfo] = []
    for skill in scan(roots):
        duplicate = any(p.kind == "duplicate" for p in skill.problems)
        winner = winners.get(skill.name) if duplicate else None
        if not duplicate and skill.name:
            winners.setdefault(skill.name, skill)
        infos.append(_info(skill, folders[skill.source], winner))
    return SkillListResult(
        skills=tuple(infos),
        roots=tuple(
            SkillRootInfo(source=_source(root.source), path=str(root.path)) for root in roots
        ),
    )


def _info(skill: Skill, root: str, winner: Skill | None) -> SkillInfo:
    return SkillInfo(
        name=skill.name,
        description=skill.description,
        source=_source(skill.source),
        root=root,
        path=str(skill.path),
        ok=skill.ok,
        problems=tuple(SkillProblemInfo(kind=p.kind, message=p.message) for p in skill.problems),
        shadowed_by=str(winner.path) if winner is not None else None,
        body_bytes=skill.body_bytes,
        resources=skill.resources,
    )


def _source(source: str) -> SkillSource:
    return cast(SkillSource, source)


@registry.method(SKILLS_READ)
async def skills_read(svc: Services, params: SkillReadParams) -> SkillReadResult:
    roots = _roots(svc)
    return await _off_loop(lambda: _read(roots, Path(params.path)))


def _read(roots: Sequence[SkillRoot], folder: Path) -> SkillReadResult:
    """Raises:
    RpcError: NO_SUCH_SKILL, the folder is not one of a skills folder's own;
        SKILL_UNREADABLE, it has no body to show."""
    import yaml

    from mcp_servers.skills import body, read_skill, skill_folders

    root = next((r for r in roots if folder in skill_folders(r.path)), None)
    if root is None:
        raise RpcError(SkillErrorCode.NO_SUCH_SKILL, f"{folder} is not a listed skill folder")
    skill = read_skill(folder, root)
    blocking = [p.message for p in skill.problems if p.kind in UNREADABLE_BODY]
    if blocking:
        raise RpcError(SkillErrorCode.SKILL_UNREADABLE, "; ".join(blocking))
    try:
        return SkillReadResult(path=str(folder), body=body(skill))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise RpcError(SkillErrorCode.SKILL_UNREADABLE, f"{folder.name}: {exc}") from exc
