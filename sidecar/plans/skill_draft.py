"""The Skill Composer's draft: what it is asked, what its answer holds, and the staging folder
the author reviews it from (DESIGN.md §14, §15).

The composer is one task of the `skill-composer` profile. Its objective starts with a line
naming the skill and where it lands (`composer_objective` writes it, `parse_job` reads it back),
then the material: a conversation or a finished plan's tasks and results. Its answer is the
SKILL.md itself, optionally followed by fenced ```file <path>``` blocks for scripts, references
or assets (`split_draft`).

The draft is staged as a snapshot isolation of the target skills folder (`stage_draft`): the
staging folder holds the skill's current folder (if it exists) as the base and the draft laid
over it, so the review gate's `compute_changeset` / `apply_changes` show and land exactly the
files the author accepts. `check_staged` runs the skills catalog's own rules on the staged
folder, so a draft is offered only if the catalog would list it without errors.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from mcp_servers.skills import MAX_NAME, RESOURCE_DIRS, SKILL_FILE, SkillRoot, read_skill
from sidecar.plans.review import manifest
from sidecar.plans.review.isolation import Isolation
from sidecar.plans.review.limits import Deadline

COMPOSER_PROFILE = "skill-composer"
Target = Literal["workspace", "account"]
TARGETS: tuple[Target, ...] = ("workspace", "account")
MAX_MATERIAL_CHARS = 24_000
"""The conversation or plan handed to the composer: the newest part past this is kept."""
MAX_DRAFT_FILES = 20
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # the catalog's naming rule
_HEADER = re.compile(r"^Compose the skill '([^']+)' for the (workspace|account)\b")
_FILE_BLOCK = re.compile(r"^```file[ \t]+(\S+)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_WRAPPED = re.compile(r"\A```(?:markdown|md)?[ \t]*\n(.*)\n```\s*\Z", re.S)
_BASE_FILE = "base.json"  # what the review gate's base_manifest reads
_WORK = "work"


class DraftError(ValueError):
    """The composer's answer or the command cannot make a skill; the message says why."""


@dataclass(frozen=True, slots=True)
class Job:
    """What a composer task is to make: the skill's name and where it lands."""

    name: str
    target: Target


def check_name(name: str) -> None:
    """Raises:
    DraftError: not a name the catalog accepts."""
    if not name or len(name) > MAX_NAME or not _NAME.match(name):
        raise DraftError(
            f"{name!r} is not a skill name: 1 to {MAX_NAME} lower-case letters, digits and "
            "single hyphens inside"
        )


def target_root(target: Target, workspace: Path, data_dir: Path) -> Path:
    """The skills folder a skill lands in: the workspace's `.agents/skills` or the account's
    `<data dir>/skills` (both are roots the catalog scans)."""
    return workspace / ".agents" / "skills" if target == "workspace" else data_dir / "skills"


def composer_objective(job: Job, material: str) -> str:
    where = "workspace (.agents/skills)" if job.target == "workspace" else "account (<data>/skills)"
    return "\n".join(
        [
            f"Compose the skill '{job.name}' for the {where}, from the material below.",
            "",
            "Answer with the complete SKILL.md and nothing around it:",
            "- YAML frontmatter between '---' lines with exactly `name: " + job.name + "` and a",
            "  `description:` (one or two sentences: what the skill does and when to use it,",
            "  at most 1,024 characters);",
            "- then a Markdown body with the steps, in order, general enough to reuse.",
            "Add a script only when a step is mechanical (the same commands every time): put",
            "each after the SKILL.md as a block opened by ```file scripts/<file name> and",
            "closed by ```, and name it in the steps. The author reviews the files before",
            "they are saved.",
            "",
            "Material:",
            material,
        ]
    )


def parse_job(objective: str) -> Job:
    """The job `composer_objective` wrote into a task's objective.

    Raises:
        DraftError: the objective does not start with a composer's header.
    """
    found = _HEADER.match(objective)
    if found is None:
        raise DraftError("this task does not name a skill to compose (use /skill new <name>)")
    name, target = found.group(1), found.group(2)
    check_name(name)
    return Job(name, "account" if target == "account" else "workspace")


def newest(text: str) -> str:
    """The material cut to its newest `MAX_MATERIAL_CHARS`."""
    if len(text) <= MAX_MATERIAL_CHARS:
        return text
    return "(earlier part left out)\n" + text[-MAX_MATERIAL_CHARS:]


def split_draft(answer: str) -> dict[str, str]:
    """The draft's files (relative to the skill's folder) from the composer's answer.

    Raises:
        DraftError: no SKILL.md text, a file outside scripts/, references/ or assets/, a path
            leaving the folder, or too many files.
    """
    files: dict[str, str] = {}
    for match in _FILE_BLOCK.finditer(answer):
        path = match.group(1).strip()
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or len(pure.parts) < 2:
            raise DraftError(f"file {path!r}: give a path inside the skill's folder")
        if pure.parts[0] not in RESOURCE_DIRS:
            raise DraftError(f"file {path!r}: extra files go in {', '.join(RESOURCE_DIRS)}")
        files[pure.as_posix()] = match.group(2)
    skill = _FILE_BLOCK.sub("", answer).strip()
    wrapped = _WRAPPED.match(skill)
    if wrapped is not None:
        skill = wrapped.group(1).strip()
    if not skill:
        raise DraftError(f"the answer holds no {SKILL_FILE} text")
    if len(files) >= MAX_DRAFT_FILES:
        raise DraftError(f"the draft has {len(files) + 1} files (at most {MAX_DRAFT_FILES})")
    return {SKILL_FILE: skill + "\n", **files}


def stage_draft(
    root: Path, staging: Path, job: Job, files: dict[str, str], deadline: Deadline
) -> Isolation:
    """Stage the draft under `staging` as a snapshot isolation of the skills folder `root`:
    the skill's folder as it is now is the base; the draft is laid over it.

    Raises:
        OSError: the staging folder cannot be written.
        ReviewTimeoutError: past the deadline.
    """
    if staging.exists():
        shutil.rmtree(staging)
    work = staging / _WORK
    work.mkdir(parents=True)
    existing = root / job.name
    if existing.is_dir() and not existing.is_symlink():
        shutil.copytree(existing, work / job.name, symlinks=True)
    isolation = Isolation("snapshot", root, staging, work)
    base = manifest.scan_tree(work, deadline)
    (staging / _BASE_FILE).write_text(manifest.dump(base), encoding="utf-8")
    for relative, text in files.items():
        deadline.check()
        path = work / job.name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if relative.startswith("scripts/"):
            path.chmod(0o755)
    return isolation


def check_staged(isolation: Isolation, job: Job) -> tuple[str, ...]:
    """The skills catalog's errors for the staged skill (none: it may be offered)."""
    folder = isolation.folder / job.name
    return read_skill(folder, SkillRoot(isolation.folder, "draft")).errors
