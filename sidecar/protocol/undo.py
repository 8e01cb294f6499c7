"""Wire models of undo: a thread's checkpoints, rewinding (and redoing) to one, forking from one.

The methods are `thread/*` and declared in `threads.py`; their models live here, one concept.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.models_base import WireModel

FileStatus: TypeAlias = Literal["restored", "unchanged", "conflict", "forced"]


class CheckpointInfo(WireModel):
    """The end of one turn: `text` is the first words of the author's message that started it;
    `files` the workspace files the turn's agents changed; `undone` after a rewind past it
    (rewinding to it again is redo)."""

    checkpoint_id: str
    text: str
    created_at: float
    files: tuple[str, ...]
    undone: bool


class ThreadCheckpointsParams(WireModel):
    thread_id: str


class ThreadCheckpointsResult(WireModel):
    checkpoints: tuple[CheckpointInfo, ...]


class ThreadRewindParams(WireModel):
    thread_id: str
    checkpoint_id: str
    force: bool = Field(default=False, description="Replace files edited by hand (kept first).")
    dry_run: bool = Field(default=False, description="Only say what the rewind would change.")


class RewoundFile(WireModel):
    """One file of a rewind. `conflict`: edited by hand after the agent's write, left alone;
    `forced`: replaced anyway, the author's version kept as the blob `kept_blob`."""

    path: str
    status: FileStatus
    kept_blob: str | None = None


class LastingEffect(WireModel):
    """A call in a rewound turn whose effect a rewind cannot reverse."""

    server: str
    tool: str
    created_at: float


class ThreadRewindResult(WireModel):
    """`direction`: `undo` (later turns undone), `redo` (undone turns back) or `none`;
    `applied` is false for a dry run."""

    direction: Literal["undo", "redo", "none"]
    applied: bool
    turns: tuple[str, ...]
    files: tuple[RewoundFile, ...]
    conflicts: tuple[str, ...]
    effects: tuple[LastingEffect, ...]


class ThreadForkParams(WireModel):
    thread_id: str
    checkpoint_id: str


class ThreadForkResult(WireModel):
    thread_id: str
