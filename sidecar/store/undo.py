"""The undo log: what each turn's agents did to workspace files, which turns are undone, and the
rewinds in progress.

A turn is named by the author's message that started it (its `turn_id`), so the log needs
nothing from the run that carried it. Each change of a file is one row with the hash of the
file's bytes before and after the agent's write (None: the file was absent); the bytes are blobs
(`sidecar.store.blobs`). An undone turn's messages are moved out of `messages` into
`undo_stash` with their seq, so the conversation of record is exactly the live turns and a redo
puts them back where they were. A rewind records its plan first (`undo_intents`) so a restart
can complete it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import cast

from sidecar.store.repository import Repository

UNDO_SCHEMA = """
CREATE TABLE IF NOT EXISTS undo_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    turn_id TEXT NOT NULL,
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    before_hash TEXT,
    after_hash TEXT,
    source TEXT NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS undo_changes_by_turn ON undo_changes(thread_id, turn_id, seq);
CREATE TABLE IF NOT EXISTS undo_stash (
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    turn_id TEXT NOT NULL,
    row TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
CREATE TABLE IF NOT EXISTS undo_intents (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    checkpoint_id TEXT NOT NULL,
    plan TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""

_MESSAGE_COLUMNS = (
    "seq",
    "id",
    "thread_id",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "is_error",
    "created_at",
)


@dataclass(frozen=True, slots=True)
class TurnMark:
    """A turn of a thread: the author's message that started it, live or undone."""

    turn_id: str
    seq: int
    text: str
    created_at: float
    undone: bool


@dataclass(frozen=True, slots=True)
class FileChange:
    """One agent write of one file: the hashes before and after (None: absent)."""

    seq: int
    turn_id: str
    root: str
    path: str
    before_hash: str | None
    after_hash: str | None
    undone: bool


@dataclass(frozen=True, slots=True)
class JournaledEffect:
    """A call journaled on the thread (not a workspace write): it cannot be undone."""

    server: str
    tool: str
    created_at: float


@dataclass(frozen=True, slots=True)
class RewindIntent:
    id: str
    thread_id: str
    checkpoint_id: str
    plan: str


class UndoRepo(Repository):
    """SQL of the undo log (see the module docstring)."""

    def record_change(
        self,
        thread_id: str,
        turn_id: str,
        *,
        root: str,
        path: str,
        before_hash: str | None,
        after_hash: str | None,
        source: str,
    ) -> None:
        self.conn.execute(
            "INSERT INTO undo_changes(thread_id, turn_id, root, path, before_hash, after_hash,"
            " source, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (thread_id, turn_id, root, path, before_hash, after_hash, source, time.time()),
        )

    def current_turn(self, thread_id: str) -> str | None:
        """The id of the author's newest live message on the thread: the turn a write is in."""
        row = self.conn.execute(
            "SELECT id FROM messages WHERE thread_id = ? AND role = 'user'"
            " ORDER BY seq DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
        return None if row is None else str(row[0])

    def turns(self, thread_id: str) -> list[TurnMark]:
        """Every turn of the thread, live and undone, oldest first."""
        live = [
            TurnMark(row["id"], row["seq"], row["content"], row["created_at"], False)
            for row in self.conn.execute(
                "SELECT id, seq, content, created_at FROM messages"
                " WHERE thread_id = ? AND role = 'user' ORDER BY seq",
                (thread_id,),
            )
        ]
        undone: list[TurnMark] = []
        for row in self.conn.execute(
            "SELECT seq, row FROM undo_stash WHERE thread_id = ? ORDER BY seq", (thread_id,)
        ):
            message = cast(dict[str, object], json.loads(row["row"]))
            if message["role"] == "user":
                undone.append(
                    TurnMark(
                        str(message["id"]),
                        int(row["seq"]),
                        str(message["content"]),
                        float(cast(float, message["created_at"])),
                        True,
                    )
                )
        return sorted([*live, *undone], key=lambda mark: mark.seq)

    def changes(self, thread_id: str) -> list[FileChange]:
        """Every recorded file change of the thread, oldest first."""
        return [
            FileChange(
                row["seq"],
                row["turn_id"],
                row["root"],
                row["path"],
                row["before_hash"],
                row["after_hash"],
                bool(row["undone"]),
            )
            for row in self.conn.execute(
                "SELECT * FROM undo_changes WHERE thread_id = ? ORDER BY seq", (thread_id,)
            )
        ]

    def set_undone(self, thread_id: str, turn_ids: list[str], undone: bool) -> None:
        for turn_id in turn_ids:
            self.conn.execute(
                "UPDATE undo_changes SET undone = ? WHERE thread_id = ? AND turn_id = ?",
                (int(undone), thread_id, turn_id),
            )

    def stash_messages_from(self, thread_id: str, seq: int, turn_of: dict[int, str]) -> None:
        """Move the thread's messages from `seq` on into the stash (`turn_of`: a user message's
        seq -> its turn id; every other message belongs to the turn before it)."""
        rows = self.conn.execute(
            f"SELECT {', '.join(_MESSAGE_COLUMNS)} FROM messages"
            " WHERE thread_id = ? AND seq >= ? ORDER BY seq",
            (thread_id, seq),
        ).fetchall()
        turn = ""
        for row in rows:
            turn = turn_of.get(int(row["seq"]), turn)
            body = json.dumps({name: row[name] for name in _MESSAGE_COLUMNS})
            self.conn.execute(
                "INSERT INTO undo_stash(thread_id, seq, turn_id, row) VALUES (?,?,?,?)",
                (thread_id, row["seq"], turn, body),
            )
        self.conn.execute("DELETE FROM messages WHERE thread_id = ? AND seq >= ?", (thread_id, seq))

    def unstash_messages(self, thread_id: str, turn_ids: list[str]) -> None:
        """Put the stashed messages of `turn_ids` back into the conversation, at their seq."""
        marks = ",".join("?" for _ in turn_ids)
        rows = self.conn.execute(
            f"SELECT seq, row FROM undo_stash WHERE thread_id = ? AND turn_id IN ({marks})"
            " ORDER BY seq",
            (thread_id, *turn_ids),
        ).fetchall()
        for row in rows:
            message = cast(dict[str, object], json.loads(row["row"]))
            self.conn.execute(
                f"INSERT INTO messages({', '.join(_MESSAGE_COLUMNS)})"
                f" VALUES ({','.join('?' for _ in _MESSAGE_COLUMNS)})",
                tuple(message[name] for name in _MESSAGE_COLUMNS),
            )
            self.conn.execute(
                "DELETE FROM undo_stash WHERE thread_id = ? AND seq = ?", (thread_id, row["seq"])
            )

    def copy_messages(self, source: str, target: str, through_seq: int, prefix: str) -> int:
        """Copy `source`'s live messages up to `through_seq` onto `target` (new ids, same
        order); returns how many."""
        rows = self.conn.execute(
            "SELECT * FROM messages WHERE thread_id = ? AND seq <= ? ORDER BY seq",
            (source, through_seq),
        ).fetchall()
        for row in rows:
            self.conn.execute(
                "INSERT INTO messages(id, thread_id, role, content, tool_calls, tool_call_id,"
                " is_error, created_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    f"{prefix}{row['id']}",
                    target,
                    row["role"],
                    row["content"],
                    row["tool_calls"],
                    row["tool_call_id"],
                    row["is_error"],
                    row["created_at"],
                ),
            )
        return len(rows)

    def last_seq_before(self, thread_id: str, seq: int | None) -> int:
        """The seq of the thread's last live message before `seq` (all of them: None)."""
        row = self.conn.execute(
            "SELECT MAX(seq) FROM messages WHERE thread_id = ? AND (? IS NULL OR seq < ?)",
            (thread_id, seq, seq),
        ).fetchone()
        return int(row[0] or 0)

    def effects_since(
        self, thread_id: str, since: float, undoable: set[str]
    ) -> list[JournaledEffect]:
        """Calls journaled on the thread since `since` by servers whose effects undo cannot
        reverse (every server not in `undoable`)."""
        return [
            JournaledEffect(row["server"], row["tool"], row["created_at"])
            for row in self.conn.execute(
                "SELECT server, tool, created_at FROM tool_journal"
                " WHERE thread_id = ? AND created_at >= ? ORDER BY created_at",
                (thread_id, since),
            )
            if row["server"] not in undoable
        ]

    def begin_rewind(self, intent: RewindIntent) -> None:
        self.conn.execute(
            "INSERT INTO undo_intents(id, thread_id, checkpoint_id, plan, status, created_at)"
            " VALUES (?,?,?,?,'pending',?)",
            (intent.id, intent.thread_id, intent.checkpoint_id, intent.plan, time.time()),
        )

    def end_rewind(self, intent_id: str) -> None:
        self.conn.execute("UPDATE undo_intents SET status = 'done' WHERE id = ?", (intent_id,))

    def pending_rewinds(self) -> list[RewindIntent]:
        return [
            RewindIntent(row["id"], row["thread_id"], row["checkpoint_id"], row["plan"])
            for row in self.conn.execute(
                "SELECT * FROM undo_intents WHERE status = 'pending' ORDER BY created_at"
            )
        ]
