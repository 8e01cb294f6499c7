"""Real database files, damaged the ways disks and people damage them."""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

from sidecar.store import Store, open_database

WAL_FRAMES_ROWS = 400


def database_with_threads(path: Path, threads: int = 3, messages: int = 40) -> list[str]:
    """A closed database at `path` with `threads` threads of `messages` messages each; their
    ids."""
    store = Store(open_database(path))
    try:
        ids = [_thread_with_messages(store, n, messages) for n in range(threads)]
    finally:
        store.db.close()
    return ids


def _thread_with_messages(store: Store, n: int, messages: int) -> str:
    thread = store.create_thread(f"thread {n}")
    for i in range(messages):
        store.add_message(thread.id, "user", f"message {i} of thread {n} " + "words " * 40)
    return thread.id


def database_left_with_a_wal(path: Path, threads: int = 3) -> list[str]:
    """The database at `path` and its `-wal` as a process killed mid-run leaves them: the last
    threads' rows are only in the log. Returns the thread ids."""
    with tempfile.TemporaryDirectory() as scratch:
        live = Path(scratch) / path.name
        store = Store(open_database(live))
        try:
            store.db.conn.execute("PRAGMA wal_autocheckpoint = 0")
            ids = [
                _thread_with_messages(store, n, WAL_FRAMES_ROWS // threads) for n in range(threads)
            ]
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(live, path)
            shutil.copyfile(live.with_name(live.name + "-wal"), path.with_name(path.name + "-wal"))
        finally:
            store.db.close()
    return ids


def garbage_page(path: Path) -> int:
    """Overwrite the page in the middle of the file with random bytes; its number (0-based)."""
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    page = len(data) // page_size // 2
    data[page * page_size : (page + 1) * page_size] = random.Random(7).randbytes(page_size)
    path.write_bytes(bytes(data))
    return page


def garbage_header(path: Path) -> None:
    """Overwrite the first 100 bytes (the header) with random bytes."""
    data = bytearray(path.read_bytes())
    data[:100] = random.Random(11).randbytes(100)
    path.write_bytes(bytes(data))


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in `folder` (not below it) and its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
