"""The skills a strong agent finds in its working copy (DESIGN.md §14).

When a writing strong agent's isolated copy is made, the copy is given exactly the skills the
agent's profile allows, from the roots the skills catalog reads and with its precedence (the
workspace's `.agents/skills`, its `.claude/skills`, then the account's folder; the first skill
of a name wins), in the folder the agent's CLI reads: Claude Code `.claude/skills/<name>/`,
Codex and OpenClaw `.agents/skills/<name>/`.

- A workspace skill already in that place in the copy stays as it is: it is the workspace's own
  file, and the agent's edit of it is a change the author reviews like any other.
- Every other given skill is copied whole (`SKILL.md`, `scripts/`, `references/`, `assets/`,
  the rest). A link inside it is followed only to a file within the skill's own folder; links
  to elsewhere and linked folders are left out and named in the notes.
- A skill folder in the copy's skills folders that the profile denies, that is broken or that
  a skill of the same name shadows is taken out of the copy.

Placed and emptied folders are recorded with the isolation (`mark_placed`), so that neither the
copies nor the absences come back in the changeset. A skill the profile allows but which cannot
be given (bad frontmatter, too large) is left out, and `Placement.notes` says which and why.

Blocking file work under a deadline: callers run it off the event loop.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, cast

from mcp_servers.skills import Skill, default_roots, scan, skill_folders
from sidecar.plans.profiles import Profile
from sidecar.plans.review.isolation import Isolation, mark_placed
from sidecar.plans.review.limits import Deadline, ReviewError

WORKSPACE_SKILL_DIRS = (PurePosixPath(".agents/skills"), PurePosixPath(".claude/skills"))
SKILL_DIRS: dict[str, PurePosixPath] = {
    "claude_code": PurePosixPath(".claude/skills"),
    "codex": PurePosixPath(".agents/skills"),
    "openclaw": PurePosixPath(".agents/skills"),
}
"""Where each strong agent's CLI reads a project's skills, relative to its working folder."""
MAX_SKILL_FILES = 2_000
MAX_SKILL_BYTES = 100 << 20
"""One skill past this many files or bytes is not copied (and the notes say so)."""
NOTED_NAMES = 20
_RECORD = "skills.json"


@dataclass(frozen=True, slots=True)
class Placement:
    """What the copy was given: `given` names the skills in the agent's skills folder;
    `left_out` pairs each allowed skill that could not be given with why; `links_skipped` lists
    links inside given skills that were not followed (paths relative to the skills folder)."""

    folder: str
    given: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()
    links_skipped: tuple[str, ...] = ()

    def activity(self) -> str:
        """One line for the task's activity."""
        text = f"gave the agent {len(self.given)} skill(s) in {self.folder}"
        if self.left_out:
            text += f"; {len(self.left_out)} left out"
        return text

    def notes(self) -> str:
        """What the author should know (empty when every allowed skill was given whole)."""
        parts: list[str] = []
        if self.left_out:
            named = [f"{name} ({why})" for name, why in self.left_out]
            parts.append(_sentence("Skills not given to the agent", named, "; "))
        if self.links_skipped:
            parts.append(_sentence("Links in skills not followed", list(self.links_skipped), ", "))
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "given": list(self.given),
            "left_out": [list(pair) for pair in self.left_out],
            "links_skipped": list(self.links_skipped),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Placement:
        pairs = cast(list[list[str]], data.get("left_out") or [])
        return cls(
            folder=str(data["folder"]),
            given=tuple(cast(list[str], data.get("given") or [])),
            left_out=tuple((str(p[0]), str(p[1])) for p in pairs),
            links_skipped=tuple(cast(list[str], data.get("links_skipped") or [])),
        )


def _sentence(head: str, items: list[str], sep: str) -> str:
    more = len(items) - NOTED_NAMES
    return f"{head}: {sep.join(items[:NOTED_NAMES])}" + (f" and {more} more." if more > 0 else ".")


def load_placement(isolation: Isolation) -> Placement | None:
    """The placement made in this copy, if one was completed."""
    try:
        data: object = json.loads((isolation.root / _RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        return Placement.from_json(cast(dict[str, Any], data))
    except (KeyError, TypeError, IndexError):
        return None


def give_skills(
    isolation: Isolation, profile: Profile, account_dir: Path | None, deadline: Deadline
) -> Placement | None:
    """Give the copy the skills `profile` allows (done once per copy: a copy given its skills
    before is left as it is). None for a profile whose agent reads no skills folder.

    Raises:
        ReviewError: the copy's skills folders could not be changed or recorded.
        ReviewTimeoutError: past the deadline.
    """
    target = SKILL_DIRS.get(profile.kind)
    if target is None:
        return None
    done = load_placement(isolation)
    if done is not None:
        return done
    found = scan(default_roots(isolation.workspace, account_dir))
    winners = _winners(found, profile)
    try:
        placement = _place(isolation, target, winners, deadline)
        placement = Placement(
            folder=placement.folder,
            given=placement.given,
            left_out=(*_not_given(found, profile, winners), *placement.left_out),
            links_skipped=placement.links_skipped,
        )
        record = isolation.root / _RECORD
        record.write_text(json.dumps(placement.to_json()), encoding="utf-8")
    except OSError as exc:
        raise ReviewError(f"could not give the agent its skills: {exc.strerror or exc}") from exc
    return placement


def _winners(found: list[Skill], profile: Profile) -> dict[str, Skill]:
    """Usable skills the profile allows, by name (the catalog marks every later skill of a
    taken name as a duplicate, so a usable one is its name's first)."""
    return {s.name: s for s in found if s.ok and profile.allows_skill(s.name)}


def _not_given(
    found: list[Skill], profile: Profile, winners: dict[str, Skill]
) -> list[tuple[str, str]]:
    """Allowed names with no usable skill, each with the first skill's first error."""
    out: dict[str, str] = {}
    for skill in found:
        if skill.name in winners or skill.name in out or not profile.allows_skill(skill.name):
            continue
        out[skill.name] = skill.errors[0] if skill.errors else "not usable"
    return list(out.items())


def _place(
    isolation: Isolation, target: PurePosixPath, winners: dict[str, Skill], deadline: Deadline
) -> Placement:
    kept = _clear(isolation, winners, deadline)
    given: list[str] = []
    left_out: list[tuple[str, str]] = []
    skipped: list[str] = []
    to_copy = [s for s in winners.values() if (target / s.name) not in kept]
    mark_placed(isolation, (str(target / s.name) for s in to_copy))
    for skill in to_copy:
        deadline.check()
        dest = isolation.folder / target / skill.name
        try:
            skipped.extend(f"{skill.name}/{p}" for p in _copy_skill(skill.path, dest, deadline))
        except _TooLargeError as exc:
            shutil.rmtree(dest, ignore_errors=True)
            left_out.append((skill.name, str(exc)))
            continue
        except OSError as exc:  # one unreadable file costs its skill, not the task
            shutil.rmtree(dest, ignore_errors=True)
            left_out.append((skill.name, f"could not be copied: {exc.strerror or exc}"))
            continue
        given.append(skill.name)
    given.extend(s.name for s in winners.values() if (target / s.name) in kept)
    return Placement(str(target), tuple(sorted(given)), tuple(left_out), tuple(skipped))


def _clear(
    isolation: Isolation, winners: dict[str, Skill], deadline: Deadline
) -> set[PurePosixPath]:
    """Take every skill folder out of the copy's skills folders except the workspace's own
    copies of the winners; the folders kept."""
    kept: set[PurePosixPath] = set()
    removed: list[tuple[PurePosixPath, Path]] = []
    for skills_dir in WORKSPACE_SKILL_DIRS:
        for entry in skill_folders(isolation.folder / skills_dir):
            rel = skills_dir / entry.name
            winner = winners.get(entry.name)
            if winner is not None and winner.path == isolation.workspace / rel:
                kept.add(rel)
            else:
                removed.append((rel, entry))
    mark_placed(isolation, (str(rel) for rel, _ in removed))
    for _rel, entry in removed:
        deadline.check()
        if entry.is_symlink() or not entry.is_dir():
            entry.unlink()
        else:
            shutil.rmtree(entry)
    return kept


class _TooLargeError(Exception):
    pass


def _copy_skill(source: Path, dest: Path, deadline: Deadline) -> list[str]:
    """Copy the skill folder `source` to `dest`; the links left out (relative paths).

    Raises:
        _TooLargeError: past `MAX_SKILL_FILES` or `MAX_SKILL_BYTES`.
    """
    real = source.resolve()
    skipped: list[str] = []
    files = size = 0
    for folder, dirs, names in os.walk(real):
        deadline.check()
        here = Path(folder)
        rel_dir = here.relative_to(real)
        (dest / rel_dir).mkdir(parents=True, exist_ok=True)
        for name in list(dirs):
            if (here / name).is_symlink():  # a linked folder is never followed
                dirs.remove(name)
                skipped.append((rel_dir / name).as_posix())
        for name in sorted(names):
            origin = _followable(here / name, real)
            if origin is None:
                skipped.append((rel_dir / name).as_posix())
                continue
            files += 1
            size += origin.stat().st_size
            if files > MAX_SKILL_FILES:
                raise _TooLargeError(f"more than {MAX_SKILL_FILES} files")
            if size > MAX_SKILL_BYTES:
                raise _TooLargeError(f"more than {MAX_SKILL_BYTES >> 20} MiB")
            shutil.copy2(origin, dest / rel_dir / name)
    return skipped


def _followable(path: Path, real_root: Path) -> Path | None:
    """The regular file to copy for `path`: itself, or for a link the file it points to when
    that lies within the skill's folder; None otherwise."""
    if not path.is_symlink():
        return path if path.is_file() else None
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return target if target.is_relative_to(real_root) and target.is_file() else None
