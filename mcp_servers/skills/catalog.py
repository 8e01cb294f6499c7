"""Finding and checking skills: folders in the Agent Skills layout (`<name>/SKILL.md`).

A skill is a folder holding `SKILL.md`: YAML frontmatter with `name` and `description`, then a
Markdown body, and optionally `scripts/`, `references/` and `assets/`. Roots are searched in
precedence order (highest first); a name already taken by an earlier skill is listed as a
duplicate with its error, never silently dropped. The published rules are checked:

- `name`: 1 to 64 characters of `a-z`, `0-9` and `-`, no leading, trailing or double hyphen, equal
  to the folder's name;
- `description`: 1 to 1,024 characters;
- the file is UTF-8, the body at most `MAX_BODY_BYTES`, and the folder lies inside its root
  (a symlinked skill folder pointing elsewhere is refused).

A skill with any error is still listed (with `errors`, each a `Problem` with its `kind`), so the
author sees it in the Skills panel; only a skill without errors is offered to the model. A root
with more than `MAX_SKILLS_PER_ROOT` folders is read up to that many, and one more entry says how
many were not read (kind `not_read`), so the cut is listed like any other problem.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import frontmatter  # pyright: ignore[reportMissingTypeStubs]
import yaml

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_BODY_BYTES = 256 * 1024
"""A body past this is refused: it could never fit a context (the spec asks for < 5,000 tokens)."""
MAX_SKILLS_PER_ROOT = 5000
"""Folders past this many in one root are not read (and the listing says so)."""
RESOURCE_DIRS = ("scripts", "references", "assets")

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

ProblemKind = Literal[
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


@dataclass(frozen=True, slots=True)
class Problem:
    """What keeps a skill from being offered: its kind (for a program) and a sentence."""

    kind: ProblemKind
    message: str


@dataclass(frozen=True, slots=True)
class SkillRoot:
    """A folder of skill folders, and the name it goes by (`workspace:.agents`, `account`)."""

    path: Path
    source: str


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill folder as found. `errors` empty: the skill may be offered to the model."""

    name: str
    description: str
    path: Path
    source: str
    body_bytes: int = 0
    problems: tuple[Problem, ...] = ()
    resources: tuple[str, ...] = field(default=())

    @property
    def errors(self) -> tuple[str, ...]:
        """The problems' sentences."""
        return tuple(p.message for p in self.problems)

    @property
    def ok(self) -> bool:
        return not self.problems


def default_roots(workspace: Path | None, account_dir: Path | None) -> list[SkillRoot]:
    """The roots in precedence order: the workspace's `.agents/skills` (the layout Codex and
    Goose read), its `.claude/skills` (Claude Code's), then the account's skills folder."""
    roots: list[SkillRoot] = []
    if workspace is not None:
        roots.append(SkillRoot(workspace / ".agents" / "skills", "workspace:.agents"))
        roots.append(SkillRoot(workspace / ".claude" / "skills", "workspace:.claude"))
    if account_dir is not None:
        roots.append(SkillRoot(account_dir, "account"))
    return roots


def scan(roots: Sequence[SkillRoot]) -> list[Skill]:
    """Every skill folder under `roots`, in precedence order then by folder name; after a root's
    `MAX_SKILLS_PER_ROOT` folders, one entry saying how many more were not read."""
    found: list[Skill] = []
    taken: dict[str, Skill] = {}
    for root in roots:
        real_root = _real(root.path)
        folders = skill_folders(root.path)
        for folder in folders[:MAX_SKILLS_PER_ROOT]:
            skill = read_skill(folder, root, real_root=real_root)
            first = taken.get(skill.name) if skill.name else None
            if first is not None:
                message = f"duplicate name: {first.source} {first.path.name} wins"
                skill = _with_error(skill, Problem("duplicate", message))
            elif skill.name:
                taken[skill.name] = skill
            found.append(skill)
        if len(folders) > MAX_SKILLS_PER_ROOT:
            found.append(_not_read(root, folders[MAX_SKILLS_PER_ROOT:]))
    return found


def _not_read(root: SkillRoot, skipped: Sequence[Path]) -> Skill:
    """The entry standing for the folders of a root past `MAX_SKILLS_PER_ROOT`."""
    count = len(skipped)
    folders = "folder" if count == 1 else "folders"
    message = (
        f"{count:,} more skill {folders} not read: at most {MAX_SKILLS_PER_ROOT:,} per skills "
        f"folder ({skipped[0].name} … {skipped[-1].name})"
    )
    name = f"{count:,} more {folders}"
    return Skill(name, "", root.path, root.source, problems=(Problem("not_read", message),))


def skill_folders(root: Path) -> list[Path]:
    """The folders (and links to folders) in a skills folder that can hold a skill, by name:
    hidden ones are not; an unreadable or missing folder has none."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.is_dir() and not e.name.startswith(".")]


def _folders(root: Path) -> list[Path]:
    return skill_folders(root)[:MAX_SKILLS_PER_ROOT]


def read_skill(folder: Path, root: SkillRoot, *, real_root: Path | None = None) -> Skill:
    """Read and check one skill folder; problems become `errors`, never exceptions."""
    base = Skill(name=folder.name, description="", path=folder, source=root.source)
    if not _inside(folder, real_root or _real(root.path)):
        message = "the folder is a link to a place outside its skills folder"
        return _with_error(base, Problem("outside", message))
    skill_file = folder / SKILL_FILE
    try:
        raw = skill_file.read_bytes()
    except FileNotFoundError:
        return _with_error(base, Problem("no_skill_file", f"no {SKILL_FILE} in the folder"))
    except OSError as exc:
        message = f"{SKILL_FILE} cannot be read: {exc.strerror}"
        return _with_error(base, Problem("unreadable", message))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        message = f"{SKILL_FILE} is not UTF-8 (byte {exc.start})"
        return _with_error(base, Problem("not_utf8", message))
    try:
        post = frontmatter.loads(text)
    except (yaml.YAMLError, ValueError) as exc:
        message = f"the frontmatter is not valid YAML: {_first_line(exc)}"
        return _with_error(base, Problem("bad_frontmatter", message))
    meta: dict[str, object] = dict(post.metadata)
    name = meta.get("name")
    description = meta.get("description")
    body_bytes = len(post.content.encode("utf-8"))
    skill = Skill(
        name=name if isinstance(name, str) else folder.name,
        description=description.strip() if isinstance(description, str) else "",
        path=folder,
        source=root.source,
        body_bytes=body_bytes,
        resources=_resources(folder),
    )
    errors = list(_check(meta, folder.name, body_bytes))
    return _with_error(skill, *errors) if errors else skill


def _check(meta: dict[str, object], folder_name: str, body_bytes: int) -> Iterable[Problem]:
    name, description = meta.get("name"), meta.get("description")
    if not meta:
        message = "no frontmatter: SKILL.md must start with '---', a name and a description"
        yield Problem("bad_frontmatter", message)
        return
    if not isinstance(name, str) or not name:
        yield Problem("bad_name", "frontmatter has no name")
    elif len(name) > MAX_NAME:
        yield Problem("bad_name", f"name is {len(name)} characters (at most {MAX_NAME})")
    elif not _NAME.match(name):
        message = "name must be lower-case letters, digits and single hyphens inside"
        yield Problem("bad_name", message)
    elif name != folder_name:
        yield Problem("bad_name", f"name {name!r} differs from its folder {folder_name!r}")
    if not isinstance(description, str) or not description.strip():
        yield Problem("bad_description", "frontmatter has no description")
    elif len(description) > MAX_DESCRIPTION:
        message = f"description is {len(description)} characters (at most {MAX_DESCRIPTION})"
        yield Problem("bad_description", message)
    if body_bytes > MAX_BODY_BYTES:
        message = f"body is {body_bytes:,} bytes (at most {MAX_BODY_BYTES:,})"
        yield Problem("too_large", message)


def _resources(folder: Path) -> tuple[str, ...]:
    out: list[str] = []
    try:
        present = {e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)}
    except OSError:
        return ()
    for sub in RESOURCE_DIRS:
        if sub not in present:
            continue
        base = folder / sub
        for dirpath, _dirs, files in os.walk(base):
            for file in sorted(files):
                out.append(str((Path(dirpath) / file).relative_to(folder)))
            if len(out) > 500:
                return tuple(out[:500])
    return tuple(out)


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _inside(folder: Path, real_root: Path) -> bool:
    """Whether the folder really lies in its root (a plain folder always does; only a link is
    followed and checked)."""
    if not folder.is_symlink():
        return True
    try:
        return folder.resolve().is_relative_to(real_root)
    except OSError:
        return False


def _with_error(skill: Skill, *problems: Problem) -> Skill:
    return Skill(
        name=skill.name,
        description=skill.description,
        path=skill.path,
        source=skill.source,
        body_bytes=skill.body_bytes,
        problems=(*skill.problems, *problems),
        resources=skill.resources,
    )


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def body(skill: Skill) -> str:
    """The skill's instructions (the Markdown after the frontmatter).

    Raises:
        OSError: the file went away or cannot be read.
        ValueError: it is no longer valid (re-checked: it may have changed since the scan).
    """
    text = (skill.path / SKILL_FILE).read_bytes().decode("utf-8-sig")
    post = frontmatter.loads(text)
    content = str(post.content)
    if len(content.encode("utf-8")) > MAX_BODY_BYTES:
        raise ValueError(f"body is larger than {MAX_BODY_BYTES:,} bytes")
    return content


def signature(roots: Sequence[SkillRoot]) -> tuple[tuple[str, int, int], ...]:
    """What changes when a skill is added, removed or edited: each root's and each SKILL.md's
    modification time and size (cheap: one stat per skill)."""
    parts: list[tuple[str, int, int]] = []
    for root in roots:
        for path in (root.path, *(f / SKILL_FILE for f in _folders(root.path))):
            try:
                st = path.stat()
            except OSError:
                parts.append((str(path), -1, -1))
                continue
            parts.append((str(path), st.st_mtime_ns, st.st_size))
    return tuple(parts)
