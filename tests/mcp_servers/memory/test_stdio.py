"""The memory server standalone: real stdio subprocesses, two of them writing to one file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_servers.memory import MemoryStore, Scope

REPO = Path(__file__).resolve().parents[3]
WRITES = 200


def _params(db: Path, thread: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.memory", "--db", str(db), "--thread", thread, "--workspace", "/w"],
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
        cwd=str(REPO),
    )


async def _write_many(db: Path, name: str) -> None:
    async with Client(_params(db, name)) as client:
        for i in range(WRITES):
            result = await client.call_tool(
                "write", {"text": f"{name} fact number {i}", "tier": "account"}
            )
            assert not result.is_error, result


@pytest.mark.slow
@pytest.mark.anyio
async def test_two_standalone_servers_on_one_file_lose_no_write(tmp_path: Path) -> None:
    db = tmp_path / "shared" / "memory.db"
    with anyio.fail_after(240):
        async with anyio.create_task_group() as group:
            group.start_soon(_write_many, db, "alpha")
            group.start_soon(_write_many, db, "beta")
    store = MemoryStore.open(db)
    try:
        texts = {m.text for m in store.recent(Scope(), ["account"], limit=1000)}
        assert len(texts) == 2 * WRITES
        assert texts == {f"{n} fact number {i}" for n in ("alpha", "beta") for i in range(WRITES)}
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store.conn.execute("SELECT COUNT(*) FROM memory_fts").fetchone()[0] == 2 * WRITES
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_file_that_is_not_a_database_ends_the_server_with_a_clear_error(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "memory.db"
    bad.write_bytes(b"not sqlite at all" * 100)
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [sys.executable, "-m", "mcp_servers.memory", "--db", str(bad)],
            cwd=str(REPO),
            check=False,
        )
    assert done.returncode == 2
    assert b"cannot open" in done.stderr
