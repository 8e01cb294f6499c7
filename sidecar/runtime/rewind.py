"""Rewind, redo and fork a thread at a turn: its conversation and the workspace files its agents
changed (the undo log, `sidecar.store.undo`).

A checkpoint is the end of a turn, named by the author's message that started it. Rewinding to a
live checkpoint undoes every later turn: their messages move to the undo stash and each file
they changed goes back to its before-image. Rewinding to an undone checkpoint is redo: the
undone turns up to it come back, files at their after-images. Between turns LangGraph keeps no
checkpoint for the thread (`runtime/drive.py` drops it when a turn completes), so the
conversation of record is the graph's state; the caller drops any checkpoint a paused turn left.

A file whose bytes are neither what the agent left nor what the rewind wants is the author's
hand edit: a conflict, left alone unless `force`, and then kept as a blob first. Every rewind
records its plan before touching a file and writes each file through a temporary file and a
rename, so a crash leaves each file old or new and `complete_pending` finishes the rewind.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, cast

from sidecar.store import Store
from sidecar.store.blobs import BlobStore, file_hash, replace_atomically
from sidecar.store.undo import FileChange, JournaledEffect, RewindIntent, TurnMark, UndoRepo
from sidecar.store.undo_watch import WORKSPACE_SERVER, off_loop, undo_log

UNDOABLE_SERVERS = frozenset({WORKSPACE_SERVER, "atrium"})
"""Journaled calls whose effects a rewind reverses (workspace writes; Atrium's own steps, such
as the review gate's apply); every other server's calls are reported as staying."""

REWIND_SECONDS = 120.0

StepStatus = Literal["restored", "unchanged", "conflict", "forced"]


class CheckpointNotFoundError(LookupError):
    """No turn of the thread has this checkpoint id."""


class RedoUnavailableError(RuntimeError):
    """The undone turn cannot come back: the thread has moved on with newer turns since."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    checkpoint_id: str
    text: str
    created_at: float
    files: tuple[str, ...]
    undone: bool


@dataclass(frozen=True, slots=True)
class FileStep:
    """One file of a rewind: from `expected` (what the agents left) to `target` (None: absent)."""

    root: str
    path: str
    expected: str | None
    target: str | None


@dataclass(frozen=True, slots=True)
class StepResult:
    path: str
    status: StepStatus
    current: str | None
    kept: str | None = None


@dataclass(frozen=True, slots=True)
class RewindPlan:
    thread_id: str
    checkpoint_id: str
    direction: Literal["undo", "redo", "none"]
    turns: tuple[str, ...]
    stash_from: int | None
    steps: tuple[FileStep, ...]
    force: bool

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> RewindPlan:
        raw = cast(dict[str, object], json.loads(text))
        raw_steps = cast(list[dict[str, str | None]], raw["steps"])
        steps = tuple(_step(step) for step in raw_steps)
        return RewindPlan(
            thread_id=str(raw["thread_id"]),
            checkpoint_id=str(raw["checkpoint_id"]),
            direction=cast(Literal["undo", "redo", "none"], raw["direction"]),
            turns=tuple(cast(list[str], raw["turns"])),
            stash_from=cast(int | None, raw["stash_from"]),
            steps=steps,
            force=bool(raw["force"]),
        )


def _step(raw: dict[str, str | None]) -> FileStep:
    return FileStep(str(raw["root"]), str(raw["path"]), raw["expected"], raw["target"])


@dataclass(frozen=True, slots=True)
class RewindOutcome:
    plan: RewindPlan
    results: tuple[StepResult, ...]
    effects: tuple[JournaledEffect, ...]
    applied: bool


def checkpoints(store: Store, thread_id: str) -> list[Checkpoint]:
    """The thread's checkpoints, oldest first, each with the files its turn changed.

    Raises:
        ThreadNotFoundError: no such thread.
    """
    store.get_thread(thread_id)
    repo, _blobs = undo_log(store.db)
    files: dict[str, list[str]] = {}
    for change in repo.changes(thread_id):
        paths = files.setdefault(change.turn_id, [])
        if change.path not in paths:
            paths.append(change.path)
    return [
        Checkpoint(t.turn_id, t.text, t.created_at, tuple(files.get(t.turn_id, ())), t.undone)
        for t in repo.turns(thread_id)
    ]


def plan_rewind(store: Store, thread_id: str, checkpoint_id: str, *, force: bool) -> RewindPlan:
    """What rewinding `thread_id` to `checkpoint_id` would do.

    Raises:
        ThreadNotFoundError, CheckpointNotFoundError, RedoUnavailableError.
    """
    store.get_thread(thread_id)
    repo, _blobs = undo_log(store.db)
    turns = repo.turns(thread_id)
    chosen = next((t for t in turns if t.turn_id == checkpoint_id), None)
    if chosen is None:
        raise CheckpointNotFoundError(checkpoint_id)
    changes = repo.changes(thread_id)
    if not chosen.undone:
        later = [t for t in turns if t.seq > chosen.seq and not t.undone]
        ids = {t.turn_id for t in later}
        picked = [c for c in changes if c.turn_id in ids and not c.undone]
        return RewindPlan(
            thread_id,
            checkpoint_id,
            "undo" if later else "none",
            tuple(t.turn_id for t in later),
            later[0].seq if later else None,
            _steps(picked, undo=True),
            force,
        )
    live_last = max((t.seq for t in turns if not t.undone), default=0)
    back = [t for t in turns if t.undone and t.seq <= chosen.seq]
    if any(t.seq < live_last for t in back):
        raise RedoUnavailableError(checkpoint_id)
    ids = {t.turn_id for t in back}
    picked = [c for c in changes if c.turn_id in ids and c.undone]
    return RewindPlan(
        thread_id,
        checkpoint_id,
        "redo",
        tuple(t.turn_id for t in back),
        None,
        _steps(picked, undo=False),
        force,
    )


def _steps(changes: list[FileChange], *, undo: bool) -> tuple[FileStep, ...]:
    """Per file: undo goes from its last after-image to its first before-image; redo back."""
    by_path: dict[tuple[str, str], list[FileChange]] = {}
    for change in changes:
        by_path.setdefault((change.root, change.path), []).append(change)
    steps: list[FileStep] = []
    for (root, path), rows in by_path.items():
        first, last = rows[0], rows[-1]
        if undo:
            steps.append(FileStep(root, path, last.after_hash, first.before_hash))
        else:
            steps.append(FileStep(root, path, first.before_hash, last.after_hash))
    return tuple(steps)


def preview(store: Store, plan: RewindPlan) -> list[StepResult]:
    """Each file's step as it would go now, nothing written (blocking: run off the loop)."""
    return [_look(step, plan.force) for step in plan.steps]


def _look(step: FileStep, force: bool) -> StepResult:
    current = file_hash(Path(step.root) / step.path)
    if current == step.target:
        return StepResult(step.path, "unchanged", current)
    if current != step.expected:
        return StepResult(step.path, "forced" if force else "conflict", current)
    return StepResult(step.path, "restored", current)


def apply_steps(blobs: BlobStore, plan: RewindPlan) -> list[StepResult]:
    """Bring each file to its target (blocking: run off the loop). Each write is atomic."""
    results: list[StepResult] = []
    for step in plan.steps:
        seen = _look(step, plan.force)
        if seen.status in ("unchanged", "conflict"):
            results.append(seen)
            continue
        target = Path(step.root) / step.path
        kept = blobs.keep(target) if seen.status == "forced" else None
        if step.target is None:
            target.unlink(missing_ok=True)
        else:
            replace_atomically(target, blobs.read(step.target))
        results.append(StepResult(step.path, seen.status, seen.current, kept))
    return results


def effects_after(store: Store, plan: RewindPlan) -> list[JournaledEffect]:
    """The calls of the rewound turns that a rewind cannot reverse (an undo only)."""
    if plan.direction != "undo":
        return []
    repo, _blobs = undo_log(store.db)
    first = next(t for t in repo.turns(plan.thread_id) if t.turn_id == plan.turns[0])
    return repo.effects_since(plan.thread_id, first.created_at, set(UNDOABLE_SERVERS))


async def rewind(
    store: Store, thread_id: str, checkpoint_id: str, *, force: bool, dry_run: bool
) -> RewindOutcome:
    """Rewind (or redo) the thread to the checkpoint; with `dry_run`, only say what would change.

    Raises:
        ThreadNotFoundError, CheckpointNotFoundError, RedoUnavailableError,
        TimeoutError: the files took longer than `REWIND_SECONDS` (the intent stays pending and
        `complete_pending` finishes it).
    """
    plan = plan_rewind(store, thread_id, checkpoint_id, force=force)
    effects = tuple(effects_after(store, plan))
    repo, blobs = undo_log(store.db)
    if dry_run or plan.direction == "none":
        seen = await off_loop(lambda: preview(store, plan), REWIND_SECONDS)
        return RewindOutcome(plan, tuple(seen), effects, applied=False)
    intent = RewindIntent(uuid.uuid4().hex, thread_id, checkpoint_id, plan.to_json())
    with store.transaction():
        repo.begin_rewind(intent)
    results = await _finish(store, repo, blobs, intent.id, plan)
    return RewindOutcome(plan, tuple(results), effects, applied=True)


async def _finish(
    store: Store, repo: UndoRepo, blobs: BlobStore, intent_id: str, plan: RewindPlan
) -> list[StepResult]:
    results = await off_loop(lambda: apply_steps(blobs, plan), REWIND_SECONDS)
    with store.transaction():
        if plan.direction == "undo" and plan.stash_from is not None:
            turn_of = {t.seq: t.turn_id for t in repo.turns(plan.thread_id) if not t.undone}
            repo.stash_messages_from(plan.thread_id, plan.stash_from, turn_of)
            repo.set_undone(plan.thread_id, list(plan.turns), True)
        elif plan.direction == "redo":
            repo.unstash_messages(plan.thread_id, list(plan.turns))
            repo.set_undone(plan.thread_id, list(plan.turns), False)
        repo.end_rewind(intent_id)
    return results


async def complete_pending(store: Store) -> int:
    """Finish every rewind a crash interrupted (files first, then the log); how many.

    Raises:
        TimeoutError: the files took longer than `REWIND_SECONDS`.
    """
    repo, blobs = undo_log(store.db)
    pending = repo.pending_rewinds()
    for intent in pending:
        await _finish(store, repo, blobs, intent.id, RewindPlan.from_json(intent.plan))
    return len(pending)


def fork(store: Store, thread_id: str, checkpoint_id: str, title: str) -> str:
    """A new thread holding the conversation up to the end of the checkpoint's turn; the
    original and the workspace stay as they are.

    Raises:
        ThreadNotFoundError, CheckpointNotFoundError (an undone checkpoint cannot be forked).
    """
    store.get_thread(thread_id)
    repo, _blobs = undo_log(store.db)
    turns = [t for t in repo.turns(thread_id) if not t.undone]
    chosen: TurnMark | None = next((t for t in turns if t.turn_id == checkpoint_id), None)
    if chosen is None:
        raise CheckpointNotFoundError(checkpoint_id)
    following = next((t.seq for t in turns if t.seq > chosen.seq), None)
    through = repo.last_seq_before(thread_id, following)
    new_id = uuid.uuid4().hex
    with store.transaction():
        store.create_thread(title, thread_id=new_id)
        repo.copy_messages(thread_id, new_id, through, f"{new_id}:")
    return new_id
