"""Rewind through the store API on a real SQLite file and real files: a rewind a crash cut short
is completed after restart, and the undo log's storage grows with what changed, not with turns
times the workspace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.runtime import rewind as rewinding
from sidecar.store import Store, open_database
from sidecar.store.blobs import replace_atomically
from sidecar.store.undo import RewindIntent
from sidecar.store.undo_watch import undo_log, watch_files

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = open_database(tmp_path / "data" / "atrium.db")
    yield Store(db)
    db.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


async def agent_turn(store: Store, thread_id: str, root: Path, text: str, writes: dict[str, str]):
    """The author's message, then the agent's writes, watched as the tool node watches them."""
    store.add_message(thread_id, "user", text)
    for name, content in writes.items():
        watch = await watch_files(store.db, thread_id, root, [name], source="workspace")
        assert watch is not None
        (root / name).write_text(content)
        await watch.done()
    store.add_message(thread_id, "assistant", f"done: {text}")


async def test_a_rewind_cut_short_by_a_crash_is_completed_from_its_recorded_intent(
    store: Store, root: Path
):
    thread_id = store.create_thread("t").id
    await agent_turn(store, thread_id, root, "one", {"a.md": "a1", "b.md": "b1"})
    await agent_turn(store, thread_id, root, "two", {"a.md": "a2", "b.md": "b2", "c.md": "c2"})
    first = rewinding.checkpoints(store, thread_id)[0].checkpoint_id

    # The crash: the intent is recorded and one file of three is rewound, nothing else.
    plan = rewinding.plan_rewind(store, thread_id, first, force=False)
    repo, blobs = undo_log(store.db)
    with store.transaction():
        repo.begin_rewind(RewindIntent("i-1", thread_id, first, plan.to_json()))
    a_step = next(s for s in plan.steps if s.path == "a.md")
    assert a_step.target is not None
    replace_atomically(root / "a.md", blobs.read(a_step.target))

    assert await rewinding.complete_pending(store) == 1
    assert [(root / n).read_text() for n in ("a.md", "b.md")] == ["a1", "b1"]
    assert not (root / "c.md").exists()
    assert [m.content for m in store.recent_messages(thread_id, 10)] == ["one", "done: one"]
    assert [c.undone for c in rewinding.checkpoints(store, thread_id)] == [False, True]
    assert await rewinding.complete_pending(store) == 0


FILES = 100
TURNS = 1_000
FILE_BYTES = 4_096


async def test_storage_grows_with_the_bytes_changed_not_turns_times_the_workspace(
    store: Store, root: Path
):
    thread_id = store.create_thread("t").id
    for n in range(FILES):
        (root / f"f{n}.md").write_text(f"{n:04d}".ljust(FILE_BYTES, "."))
    written = 0
    for turn in range(TURNS):
        name = f"f{turn % FILES}.md"
        content = f"{turn:04d}".ljust(FILE_BYTES, ".")  # a small edit of one file
        written += len(content)
        await agent_turn(store, thread_id, root, f"turn {turn}", {name: content})
    _repo, blobs = undo_log(store.db)
    stored = blobs.total_bytes()
    # Each distinct version is stored once: the first images plus one per changed version.
    assert stored <= written + FILES * FILE_BYTES
    assert stored * 50 < TURNS * FILES * FILE_BYTES
    # Writing a file's existing content again stores nothing new.
    await agent_turn(store, thread_id, root, "again", {"f0.md": (root / "f0.md").read_text()})
    assert blobs.total_bytes() == stored
