"""`python -m bench undo`: rewinding 100 changed 1 MB files, and the undo log's storage for 1,000
turns of small edits to a 10 MB workspace (issue 26's targets), through the store API on a real
SQLite file and real files."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from bench._report import Figure, Line, Target
from sidecar.runtime import rewind as rewinding
from sidecar.store import Store, open_database
from sidecar.store.undo_watch import undo_log, watch_files

NAME = "undo"
MB = 1 << 20


async def _turn(store: Store, thread_id: str, root: Path, text: str, writes: dict[str, bytes]):
    store.add_message(thread_id, "user", text)
    for name, content in writes.items():
        watch = await watch_files(store.db, thread_id, root, [name], source="workspace")
        (root / name).write_bytes(content)
        if watch is not None:
            await watch.done()


async def _rewind_of_large_files(folder: Path) -> list[Line]:
    root = folder / "ws"
    root.mkdir()
    db = open_database(folder / "data" / "atrium.db")
    try:
        store = Store(db)
        thread_id = store.create_thread("bench").id
        files = {f"f{n:03d}.bin": bytes([n]) * MB for n in range(100)}
        await _turn(store, thread_id, root, "one", files)
        await _turn(store, thread_id, root, "two", {n: b"x" + c[1:] for n, c in files.items()})
        first = rewinding.checkpoints(store, thread_id)[0].checkpoint_id
        started = time.perf_counter()
        await rewinding.rewind(store, thread_id, first, force=False, dry_run=False)
        took = time.perf_counter() - started
        copy_started = time.perf_counter()
        shutil.copytree(root, folder / "copy")
        copy = time.perf_counter() - copy_started
    finally:
        db.close()
    return [
        Target(NAME, "rewind of 100 changed files (1 MB each)", took, 1.0, "s"),
        Figure(NAME, "baseline: copying the same 100 MB", f"{copy * 1000:.0f} ms"),
    ]


async def _storage_of_small_edits(folder: Path) -> list[Line]:
    root = folder / "ws"
    root.mkdir()
    db = open_database(folder / "data" / "atrium.db")
    try:
        store = Store(db)
        thread_id = store.create_thread("bench").id
        size = 100 * 1024
        for n in range(100):
            (root / f"f{n:03d}.md").write_bytes(b"." * size)
        changed = 0
        started = time.perf_counter()
        for turn in range(1000):
            name = f"f{turn % 100:03d}.md"
            old = (root / name).read_bytes()
            edit = f"{turn:06d}".encode() * 16  # a 96-byte edit
            changed += len(edit)
            await _turn(store, thread_id, root, f"t{turn}", {name: edit + old[len(edit) :]})
        per_write = (time.perf_counter() - started) / 1000
        _repo, blobs = undo_log(db)
        stored = blobs.total_bytes()
    finally:
        db.close()
    return [
        Target(
            NAME, "storage for 1,000 turns of small edits (x bytes changed)", stored / changed, 2.0
        ),
        Figure(NAME, "blob bytes stored / workspace size", f"{stored / (100 * size):.1f}"),
        Figure(NAME, "before+after images per write (100 KB file)", f"{per_write * 1000:.2f} ms"),
    ]


async def run() -> list[Line]:
    lines: list[Line] = []
    with tempfile.TemporaryDirectory(prefix="atrium-bench-undo-") as tmp:
        (Path(tmp) / "a").mkdir()
        lines += await _rewind_of_large_files(Path(tmp) / "a")
        (Path(tmp) / "b").mkdir()
        lines += await _storage_of_small_edits(Path(tmp) / "b")
    for line in lines:
        print(f"  {line.what}: {line.shown() if isinstance(line, Target) else line.text}")
    return lines
