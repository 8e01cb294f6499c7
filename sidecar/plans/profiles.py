"""Subagent profiles: configured in `profiles.json` in the data dir, never coded.

A missing file means the defaults. A file that cannot be used (bad JSON, a bad field) is
reported with the profile and field named, set aside as `profiles.corrupt-<time>.json` only
when it is not JSON at all, and the defaults apply meanwhile; a bad profile never stops the app.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import time
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger(__name__)

Kind: TypeAlias = Literal["internal", "claude_code", "codex", "openclaw"]
Workdir: TypeAlias = Literal["workspace", "fresh", "worktree"]
STRONG_KINDS: frozenset[str] = frozenset({"claude_code", "codex", "openclaw"})
READ_ONLY_WITHHELD: frozenset[str] = frozenset(
    {
        "workspace__write",
        "workspace__edit",
        "workspace__delete",
        "workspace__move",
        "sandbox__run_python",
    }
)
"""The built-in tools that change what the author has (or run code that may): a read-only
profile's agents are not given them."""
AGENTS_SERVER = "agents"


class ProfileError(ValueError):
    """The profiles cannot be used; the message names the profile and the field."""


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    name: str = Field(min_length=1, max_length=100)
    kind: Kind = "internal"
    model: str | None = None
    tools_allowed: tuple[str, ...] = ()
    tools_denied: tuple[str, ...] = ()
    may_spawn: bool = False
    max_depth: int = Field(default=1, ge=1, le=5)
    concurrency: int = Field(default=4, ge=1, le=64)
    timeout: float = Field(default=1800.0, gt=0)
    stall_seconds: float = Field(default=300.0, gt=0)
    max_attempts: int = Field(default=3, ge=1, le=10)
    budget_tokens: int | None = Field(default=None, ge=1)
    budget_cost: float | None = Field(default=None, gt=0)
    workdir: Workdir = "workspace"
    skills_allowed: tuple[str, ...] = ()
    skills_denied: tuple[str, ...] = ()
    read_only: bool = False
    """Its agent changes nothing: a strong agent's CLI runs with its own read-only controls
    (Claude Code's permission mode, Codex's sandbox); an internal one's writing tools are
    withheld."""
    native_tools_allowed: tuple[str, ...] = ()
    """A strong agent's own tool rules, passed to its CLI where it takes them (Claude Code's
    allowed tools, e.g. `Read`, `Bash(git log:*)`)."""
    native_tools_denied: tuple[str, ...] = ()

    @property
    def strong(self) -> bool:
        return self.kind in STRONG_KINDS

    def allows_tool(self, name: str) -> bool:
        """Whether a tool (`<server>__<tool>`) is in this profile's reach. A strong agent does
        its own work; its tools are the CLI's, not Atrium's."""
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.tools_denied):
            return False
        if self.read_only and name in READ_ONLY_WITHHELD:
            return False
        if not self.tools_allowed:
            return True
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.tools_allowed)

    def allows_skill(self, name: str) -> bool:
        """Whether a skill (by name; shell-style globs) is offered to this profile's agents."""
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.skills_denied):
            return False
        if not self.skills_allowed:
            return True
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.skills_allowed)


DEFAULT_PROFILES: tuple[Profile, ...] = (
    Profile(id="general", name="General helper", kind="internal", tools_denied=("sandbox__*",)),
    Profile(
        id="researcher",
        name="Read-only researcher",
        kind="internal",
        tools_allowed=("workspace__list", "workspace__read", "workspace__search"),
    ),
    Profile(
        id="skill-composer",
        name="Skill Composer",
        kind="internal",
        tools_allowed=(
            "workspace__list",
            "workspace__read",
            "workspace__search",
            "skills__list",
            "skills__load",
        ),
        concurrency=2,
    ),
    # Write → review → revise (the `write-review-revise` routine): the writer drafts and revises
    # in one session, round after round, until the reviewer approves or its attempts run out.
    Profile(
        id="writer",
        name="Writer",
        kind="internal",
        tools_allowed=("workspace__list", "workspace__read", "workspace__search"),
        max_attempts=4,
    ),
    Profile(
        id="reviewer",
        name="Reviewer",
        kind="internal",
        tools_allowed=("workspace__list", "workspace__read", "workspace__search"),
        max_attempts=1,
    ),
    Profile(id="claude", name="Claude Code", kind="claude_code", concurrency=2),
    Profile(id="codex", name="Codex", kind="codex", concurrency=2),
    Profile(id="openclaw", name="OpenClaw", kind="openclaw", concurrency=2),
)


def parse_profiles(raw: object) -> tuple[Profile, ...]:
    """Profiles from the file's JSON (`{"profiles": [...]}` or a bare list).

    Raises:
        ProfileError: not a list of valid, uniquely named profiles.
    """
    items: object = cast(dict[str, Any], raw).get("profiles") if isinstance(raw, dict) else raw
    if not isinstance(items, list) or not items:
        raise ProfileError('profiles: expected {"profiles": [ ... ]} with at least one profile')
    profiles: list[Profile] = []
    for index, item in enumerate(cast(list[object], items)):
        label = _label(item, index)
        try:
            profiles.append(Profile.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "profile"
            raise ProfileError(f"profile {label}: {field}: {first['msg']}") from exc
    ids = [p.id for p in profiles]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ProfileError(f"profile ids must be unique: {', '.join(duplicates)}")
    return tuple(profiles)


def _label(item: object, index: int) -> str:
    if isinstance(item, dict):
        ident = cast(dict[str, Any], item).get("id")
        if isinstance(ident, str) and ident:
            return repr(ident)
    return f"#{index + 1}"


class ProfilesFile:
    """`profiles.json`: read on every use (cheap, and edits apply without a restart)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> tuple[tuple[Profile, ...], str | None]:
        """The profiles and, when the file could not be used, why (the defaults apply)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return DEFAULT_PROFILES, None
        except OSError as exc:
            return DEFAULT_PROFILES, f"{self.path.name}: {exc.strerror or exc}"
        try:
            # utf-8-sig: a file saved with a byte-order mark (some editors do) reads too.
            raw = json.loads(data.decode("utf-8-sig"))
        except ValueError as exc:  # not UTF-8 (UnicodeDecodeError) or not JSON
            backup = self.path.with_name(f"profiles.corrupt-{time.time_ns()}.json")
            self.path.replace(backup)
            log.error("profiles file is not JSON (%s); moved to %s", exc, backup)
            return DEFAULT_PROFILES, f"{self.path.name} was not JSON; moved to {backup.name}"
        try:
            return parse_profiles(raw), None
        except ProfileError as exc:
            log.error("profiles file %s: %s", self.path, exc)
            return DEFAULT_PROFILES, str(exc)

    def profiles(self) -> dict[str, Profile]:
        return {p.id: p for p in self.load()[0]}

    def save(self, profiles: tuple[Profile, ...]) -> None:
        """Raises:
        ProfileError: the set is not valid (duplicate ids, none at all)."""
        parse_profiles([p.model_dump() for p in profiles])
        data = {"profiles": [p.model_dump(mode="json") for p in profiles]}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        tmp.replace(self.path)
