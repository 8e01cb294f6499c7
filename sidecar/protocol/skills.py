"""Wire methods for the Skills panel: every skill folder found, with what is wrong with each.

`skills/list` gives every entry the catalog finds in the workspace's `.agents/skills` and
`.claude/skills` and the account's skills folder, usable or not: a skill with bad frontmatter, a
duplicate name, an oversized body, a file that is not UTF-8 or a link outside its folder is listed
with its problems, never dropped. `skills/read` gives one listed skill's body, for the panel.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Literal

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel


class SkillErrorCode(IntEnum):
    """Application error codes of the skills methods (-32080..-32089)."""

    NO_SUCH_SKILL = -32080
    SKILL_UNREADABLE = -32081
    SKILLS_TIMED_OUT = -32082


SkillSource = Literal["workspace:.agents", "workspace:.claude", "account"]
SkillProblemKind = Literal[
    "no_skill_file",
    "unreadable",
    "not_utf8",
    "bad_frontmatter",
    "bad_name",
    "bad_description",
    "too_large",
    "duplicate",
    "outside",
    "not_read",
]
"""`not_read`: the entry stands for folders past the per-folder limit, which were not read."""


class SkillProblemInfo(WireModel):
    kind: SkillProblemKind
    message: str


class SkillInfo(WireModel):
    """One entry of the catalog. `ok`: it may be offered to the model (no problems)."""

    name: str
    description: str
    source: SkillSource
    root: str = Field(description="The skills folder it was found in.")
    path: str = Field(description="The skill's folder.")
    ok: bool
    problems: tuple[SkillProblemInfo, ...] = ()
    shadowed_by: str | None = Field(
        default=None, description="A duplicate: the folder of the skill whose name wins."
    )
    body_bytes: int = 0
    resources: tuple[str, ...] = ()


class SkillRootInfo(WireModel):
    source: SkillSource
    path: str


class SkillsEmpty(WireModel):
    """No fields."""


class SkillListResult(WireModel):
    skills: tuple[SkillInfo, ...]
    roots: tuple[SkillRootInfo, ...] = Field(
        default=(), description="The folders searched, in precedence order."
    )


class SkillReadParams(WireModel):
    path: str = Field(min_length=1, description="A skill's folder, as `skills/list` gives it.")


class SkillReadResult(WireModel):
    path: str
    body: str


SKILLS_LIST = "skills/list"
SKILLS_READ = "skills/read"

SKILL_METHODS: dict[str, MethodSpec] = {
    SKILLS_LIST: MethodSpec(
        SkillsEmpty, SkillListResult, "Every skill folder found, each with its problems."
    ),
    SKILLS_READ: MethodSpec(SkillReadParams, SkillReadResult, "A listed skill's body."),
}
