"""The schedule server standalone (`python -m mcp_servers.schedule`) as the MCP Inspector CLI
sees it: its tools listed, a schedule created, a bad cron refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.peers import peer_unavailable
from tests.setup.mcp_inspector import InspectorUnavailable, install_inspector

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def inspector() -> Path:
    try:
        return install_inspector()
    except InspectorUnavailable as exc:
        peer_unavailable(str(exc))


def _run(inspector: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    server = [sys.executable, "-m", "mcp_servers.schedule", "--db", str(db), "--timezone", "UTC"]
    done = subprocess.run(
        [str(inspector), "--cli", *server, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    return done


def _cli(inspector: Path, db: Path, *args: str) -> dict[str, Any]:
    done = _run(inspector, db, *args)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_inspector_lists_every_schedule_tool_with_write_tools_marked(
    inspector: Path, tmp_path: Path
):
    listed = _cli(inspector, tmp_path / "a.db", "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert set(tools) == {
        "create",
        "list",
        "update",
        "pause",
        "resume",
        "delete",
        "run_now",
        "history",
    }
    assert tools["list"]["annotations"]["readOnlyHint"] is True
    assert tools["create"]["annotations"]["readOnlyHint"] is False
    assert tools["delete"]["annotations"]["destructiveHint"] is True


def test_the_inspector_creates_a_cron_schedule_and_gets_a_bad_one_refused(
    inspector: Path, tmp_path: Path
):
    db = tmp_path / "a.db"
    call = ("--method", "tools/call", "--tool-name", "create")
    made = _cli(
        inspector,
        db,
        *call,
        "--tool-arg",
        "kind=cron",
        "--tool-arg",
        "spec=0 9 * * 1-5",
        "--tool-arg",
        "prompt=standup notes",
        "--tool-arg",
        "timezone=Europe/Berlin",
    )
    assert made["isError"] is False
    schedule = made["structuredContent"]
    assert schedule["timezone"] == "Europe/Berlin" and len(schedule["next_fires_local"]) == 3
    assert all(t.endswith("T09:00+01:00") for t in schedule["next_fires_local"])
    bad = _run(
        inspector,
        db,
        *call,
        "--tool-arg",
        "kind=cron",
        "--tool-arg",
        "spec=61 * * * *",
        "--tool-arg",
        "prompt=x",
    )
    # The Inspector exits non-zero on an isError result; the refusal names its code.
    refusal = json.loads(bad.stdout)
    assert bad.returncode != 0 and refusal["isError"] is True
    assert "[bad_cron] bad cron expression '61 * * * *'" in refusal["content"][0]["text"]
    listed = _cli(inspector, db, "--method", "tools/call", "--tool-name", "list")
    assert [s["id"] for s in listed["structuredContent"]["schedules"]] == [schedule["id"]]
