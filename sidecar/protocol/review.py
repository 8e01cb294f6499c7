"""The review gate on the wire: a strong agent's changeset put to the author (DESIGN.md §15).

A writing strong agent works in an isolated copy of the workspace; when it is done, the files
it added, changed or deleted come to the author as a `changeset` interrupt. The author accepts
files one by one (`ChangesetValue.accepted`); only those reach the workspace. A file marked
`conflict` was changed by the author meanwhile: it is shown, and never applied.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.interrupt_base import InterruptBase
from sidecar.protocol.models_base import WireModel

ChangeStatus: TypeAlias = Literal["added", "changed", "deleted"]
IsolationKind: TypeAlias = Literal["worktree", "snapshot"]


class ChangesetFileInfo(WireModel):
    """One file of a changeset; `diff` is a unified diff (empty for binary files)."""

    path: str = Field(description="Relative to the workspace, '/'-separated.")
    status: ChangeStatus
    binary: bool = False
    diff: str = ""
    conflict: bool = Field(
        default=False,
        description="The workspace's file changed since the copy was made: it cannot be applied.",
    )
    size: int = Field(default=0, description="Bytes of the agent's version (0 when deleted).")
    note: str | None = Field(default=None, description="E.g. 'diff truncated', a symlink.")


class ChangesetInterrupt(InterruptBase):
    """A strong agent's changes, waiting for the author's per-file decision."""

    kind: Literal["changeset"] = "changeset"
    agent: str = Field(description="The profile that made the changes.")
    workspace: str = Field(description="The folder the accepted files are written to.")
    folder: str = Field(description="The isolated copy the agent worked in.")
    isolation: IsolationKind
    files: tuple[ChangesetFileInfo, ...]
    accepted_by_grant: tuple[str, ...] = Field(
        default=(),
        description="Files inside paths the plan's grant accepts: already applied, listed here.",
    )
    summary: str = Field(default="", description="What the agent said it did.")


class ChangesetValue(WireModel):
    """Resume value for a `changeset` interrupt: the paths to bring into the workspace. An
    empty list rejects every file (the workspace stays as it is)."""

    accepted: tuple[str, ...] = ()
    reason: str | None = None
