"""Run folders: the total disk quota per run and the retention of old run folders (issue 25,
defect 4: one run wrote 600 MB in files under the per-file limit, and folders were never
removed)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_servers.sandbox import RunResult, build_server
from mcp_servers.sandbox.folders import disk_usage, prune_runs

HOUR = 3600.0


def error_code(result: CallToolResult) -> str | None:
    """The ``[code]`` a sandbox refusal starts its text with."""
    if not result.is_error:
        return None
    block = result.content[0]
    assert isinstance(block, TextContent)
    found = re.search(r"\[([a-z_]+)\]", block.text)
    return found.group(1) if found else None


def old_run(workdir: Path, name: str, age_s: float) -> str:
    """A run folder last changed ``age_s`` ago."""
    path = workdir / name
    (path / ".tmp").mkdir(parents=True)
    (path / "main.py").write_text("pass")
    then = time.time() - age_s
    os.utime(path, (then, then))
    return name


def names(workdir: Path) -> set[str]:
    return {p.name for p in workdir.iterdir()}


def test_usage_counts_bytes_on_disk_and_entries_even_in_a_folder_made_unreadable(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.bin").write_bytes(b"x" * 100_000)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "b.bin").write_bytes(b"y" * 200_000)
    hidden.chmod(0)
    usage = disk_usage(tmp_path, max_entries=100)
    assert usage.entries == 3
    assert usage.bytes >= 300_000


def test_a_sparse_file_counts_what_it_uses_not_its_length(tmp_path: Path) -> None:
    with open(tmp_path / "sparse.bin", "wb") as handle:
        handle.truncate(1 << 30)
    assert disk_usage(tmp_path, max_entries=10).bytes < 1 << 20


def test_retention_keeps_the_most_recent_and_removes_the_rest(tmp_path: Path) -> None:
    runs = [old_run(tmp_path, f"run-{i:012x}", age_s=(i + 1) * HOUR) for i in range(5)]
    (tmp_path / "skills").mkdir()
    (tmp_path / "notes.txt").write_text("not a run")
    removed = prune_runs(tmp_path, keep=2, max_age_s=30 * 24 * HOUR, grace_s=600)
    assert removed == [runs[4], runs[3], runs[2]]
    assert names(tmp_path) == {runs[0], runs[1], "skills", "notes.txt"}


def test_retention_removes_folders_past_the_maximum_age_even_among_the_most_recent(
    tmp_path: Path,
) -> None:
    young, old = (
        old_run(tmp_path, "run-00000000000a", HOUR),
        old_run(tmp_path, "run-00000000000b", 3 * HOUR),
    )
    assert prune_runs(tmp_path, keep=10, max_age_s=2 * HOUR, grace_s=600) == [old]
    assert names(tmp_path) == {young}


def test_retention_never_removes_a_folder_younger_than_the_grace(tmp_path: Path) -> None:
    fresh = old_run(tmp_path, "run-00000000000c", 10)
    assert prune_runs(tmp_path, keep=0, max_age_s=0, grace_s=600) == []
    assert names(tmp_path) == {fresh}


def test_retention_removes_a_folder_the_run_made_read_only(tmp_path: Path) -> None:
    name = old_run(tmp_path, "run-00000000000d", 2 * HOUR)
    locked = tmp_path / name / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0o500)
    then = time.time() - 2 * HOUR
    os.utime(tmp_path / name, (then, then))
    assert prune_runs(tmp_path, keep=0, max_age_s=HOUR, grace_s=600) == [name]
    assert names(tmp_path) == set()


@pytest.mark.anyio
@pytest.mark.slow
async def test_retention_runs_when_the_server_starts_and_after_each_run(tmp_path: Path) -> None:
    workdir = tmp_path / "sandbox"
    workdir.mkdir()
    runs = [old_run(workdir, f"run-{i:012x}", age_s=(i + 1) * HOUR) for i in range(4)]
    server = build_server(workdir, keep_runs=2, allow_guard_only=True)
    assert names(workdir) == {runs[0], runs[1]}
    async with Client(server, raise_exceptions=True) as client:
        with anyio.fail_after(60):
            result = await client.call_tool("run_python", {"code": "print(1)"})
    run = RunResult.model_validate(result.structured_content)
    assert names(workdir) == {run.run_dir, runs[0]}


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "limits"),
    [
        # 40 files of 512 KiB, each under the 1 MiB per-file limit, 20 MiB in all; then it waits:
        # its time limit (600 s) is past the test's deadline, so only the quota can end it.
        (
            "for i in range(40):\n    open(f'f{i}.bin', 'wb').write(b'x' * 512 * 1024)\n"
            "import time\ntime.sleep(600)",
            {"disk_quota_mb": 2, "file_size_mb": 1},
        ),
        ("for i in range(500):\n    open(f'e{i}', 'w').close()", {"max_files": 100}),
    ],
    ids=["bytes", "files"],
)
async def test_a_run_over_its_disk_quota_is_stopped_with_a_typed_error_and_nothing_else_is_lost(
    tmp_path: Path, code: str, limits: dict[str, Any]
) -> None:
    workdir = tmp_path / "sandbox"
    outside = tmp_path / "outside.txt"
    outside.write_text("kept")
    server = build_server(workdir, timeout_s=600, allow_guard_only=True, **limits)
    async with Client(server, raise_exceptions=True) as client:
        with anyio.fail_after(60):
            earlier = await client.call_tool(
                "run_python", {"code": "open('small.txt', 'w').write('x')"}
            )
            over = await client.call_tool("run_python", {"code": code})
    assert error_code(over) == "disk_quota_exceeded"
    kept = RunResult.model_validate(earlier.structured_content).run_dir
    assert names(workdir) == {kept}
    assert (workdir / kept / "small.txt").read_text() == "x"
    assert outside.read_text() == "kept"
