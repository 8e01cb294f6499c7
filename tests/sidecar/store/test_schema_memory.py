"""The memory part of the schema registry at version 2: memories written by a release before
provenance are migrated in place when the memory is first opened, losing nothing."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from mcp_servers.memory import Scope
from sidecar.store import Store, open_database
from sidecar.store.schema import MEMORY


def test_memories_of_a_version_1_file_get_their_provenance_when_first_opened(
    tmp_path: Path,
) -> None:
    path = tmp_path / "atrium.db"
    store = Store(open_database(path))
    thread = store.create_thread("t").id
    said = store.add_message(thread, "user", "my editor is Zofia").id
    memory = store.open_memory()
    scope = Scope(thread=thread, workspace="/w")
    rule = memory.write(scope, "workspace", "Always ask first.", by="author", pinned=True)
    fact = memory.write(scope, "account", "The editor is Zofia.", source_message=said)
    store.db.close()
    with closing(sqlite3.connect(path)) as conn:  # as release 0.x left it
        conn.execute(
            "UPDATE store SET value = json_remove(value, '$.provenance', '$.reviewed')"
            " WHERE prefix GLOB 'memory.*'"
        )
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version.memory'")
        conn.commit()

    store = Store(open_database(path))
    memory = store.open_memory()
    assert (memory.read(rule.key).provenance, memory.read(fact.key).provenance) == (
        "author",
        "agent_after_untrusted",
    )
    assert [m.key for m in memory.recent(scope, unreviewed=True)] == [fact.key]
    assert memory.read(rule.key).pinned and memory.read(fact.key).source_message == said
    store.db.close()
    with closing(sqlite3.connect(path)) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        values = [json.loads(r[0]) for r in conn.execute("SELECT value FROM store")]
    assert meta[MEMORY.key] == str(MEMORY.version) == "2"
    assert sorted(v["provenance"] for v in values) == ["agent_after_untrusted", "author"]
