"""Samples of the undo wire models (merged into `samples.METHOD_SAMPLES`): checkpoints, rewind,
fork."""

from __future__ import annotations

from sidecar.protocol import (
    CheckpointInfo,
    LastingEffect,
    RewoundFile,
    ThreadCheckpointsParams,
    ThreadCheckpointsResult,
    ThreadForkParams,
    ThreadForkResult,
    ThreadRewindParams,
    ThreadRewindResult,
    WireModel,
)

UNDO_SAMPLES: dict[type[WireModel], WireModel] = {
    ThreadCheckpointsParams: ThreadCheckpointsParams(thread_id="t-1"),
    ThreadCheckpointsResult: ThreadCheckpointsResult(
        checkpoints=(
            CheckpointInfo(
                checkpoint_id="m-1", text="write a", created_at=1.0, files=("a.md",), undone=False
            ),
        )
    ),
    ThreadRewindParams: ThreadRewindParams(thread_id="t-1", checkpoint_id="m-1", force=True),
    ThreadRewindResult: ThreadRewindResult(
        direction="undo",
        applied=True,
        turns=("m-2",),
        files=(RewoundFile(path="a.md", status="forced", kept_blob="ab" * 32),),
        conflicts=("a.md",),
        effects=(LastingEffect(server="mail", tool="send", created_at=2.0),),
    ),
    ThreadForkParams: ThreadForkParams(thread_id="t-1", checkpoint_id="m-1"),
    ThreadForkResult: ThreadForkResult(thread_id="t-2"),
}
