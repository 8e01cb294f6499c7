"""OpenClaw's session transcript is read read-only, by session and sequence, at volume; the
state folder's config and environment."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import zstandard

from mcp_servers.agents.controllers.openclaw_state import (
    build_config,
    last_seq,
    read_transcript,
    state_env,
    transcript_db,
    write_state,
)
from mcp_servers.agents.events import ToolCall, ToolResult
from mcp_servers.agents.parsers.openclaw_transcript import transcript_events
from mcp_servers.agents.requests import ToolPolicy

# The table as OpenClaw 2026.9.6 creates it (its CHECK constraints left out).
SCHEMA = """
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
  event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
  PRIMARY KEY (session_id, seq)
) STRICT
"""


def tool_events(call: int) -> list[dict[str, object]]:
    call_id = f"call_{call}"
    return [
        {
            "type": "message",
            "id": f"m{call}",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"n": call}}
                ],
            },
        },
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "read",
                "content": [{"type": "text", "text": f"result {call}"}],
                "isError": False,
            },
        },
    ]


def make_db(state: Path, sessions: int, calls: int) -> Path:
    db = transcript_db(state, "main")
    db.parent.mkdir(parents=True)
    packer = zstandard.ZstdCompressor()
    with sqlite3.connect(db) as conn:
        conn.execute(SCHEMA)
        for s in range(sessions):
            rows = [e for call in range(calls) for e in tool_events(call)]
            for seq, event in enumerate(rows):
                text = json.dumps(event)
                if seq % 3 == 0:  # OpenClaw compresses some rows
                    values = (f"s{s}", seq, None, 0, packer.compress(text.encode()), len(text))
                else:
                    values = (f"s{s}", seq, text, 0, None, None)
                conn.execute(
                    "INSERT INTO transcript_events (session_id, seq, event_json, created_at, "
                    "event_zstd, event_utf8_bytes) VALUES (?, ?, ?, ?, ?, ?)",
                    values,
                )
    return db


def test_a_sessions_rows_after_a_sequence_are_read_plain_and_compressed_at_volume(
    tmp_path: Path,
) -> None:
    db = make_db(tmp_path, sessions=10, calls=1000)
    before = db.stat().st_mtime_ns

    rows = read_transcript(db, "s7", after_seq=1499)
    events = transcript_events(rows)

    assert [r.seq for r in rows] == list(range(1500, 2000))
    assert last_seq(db, "s7") == 1999 and last_seq(db, "nobody") == -1
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(calls) == len(results) == 250
    assert (calls[0].call_id, calls[0].input) == ("call_750", {"n": 750})
    assert results[-1].output == "result 999"
    assert db.stat().st_mtime_ns == before  # read-only


def test_a_missing_or_foreign_database_gives_no_rows(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE other (x)")

    assert read_transcript(missing, "s") == [] and last_seq(missing, "s") == -1
    assert read_transcript(foreign, "s") == [] and last_seq(foreign, "s") == -1


def test_the_state_folder_holds_a_private_config_and_is_the_clis_home(tmp_path: Path) -> None:
    config = build_config(tmp_path / "work", None, ToolPolicy(mode="full_access"))

    path = write_state(tmp_path / "state", config)
    env = state_env(tmp_path / "state")

    assert json.loads(path.read_text()) == config
    assert path.stat().st_mode & 0o077 == 0  # it may hold the model key
    assert "tools" not in config and "models" in config and "providers" not in config["models"]
    assert env["HOME"] == str(tmp_path / "state")
    assert env["OPENCLAW_CONFIG_PATH"] == str(path)
