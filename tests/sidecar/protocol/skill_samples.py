"""Samples of the skills wire models (merged into `samples`)."""

from __future__ import annotations

from sidecar.protocol import (
    SkillInfo,
    SkillListResult,
    SkillProblemInfo,
    SkillReadParams,
    SkillReadResult,
    SkillRootInfo,
    SkillsEmpty,
    WireModel,
)

_DUPLICATE = SkillInfo(
    name="harbour-report",
    description="Use for harbour reports.",
    source="workspace:.claude",
    root="/ws/.claude/skills",
    path="/ws/.claude/skills/harbour-report",
    ok=False,
    problems=(
        SkillProblemInfo(kind="duplicate", message="duplicate name: workspace:.agents wins"),
    ),
    shadowed_by="/ws/.agents/skills/harbour-report",
    body_bytes=120,
    resources=("scripts/tides.py",),
)

SKILL_SAMPLES: dict[type[WireModel], WireModel] = {
    SkillsEmpty: SkillsEmpty(),
    SkillListResult: SkillListResult(
        skills=(_DUPLICATE,),
        roots=(SkillRootInfo(source="workspace:.agents", path="/ws/.agents/skills"),),
    ),
    SkillReadParams: SkillReadParams(path="/ws/.agents/skills/harbour-report"),
    SkillReadResult: SkillReadResult(
        path="/ws/.agents/skills/harbour-report", body="# Steps\n1. Read the tides.\n"
    ),
}
