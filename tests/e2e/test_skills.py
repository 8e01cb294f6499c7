"""Skills through the real sidecar: the built-in skills server sees the workspace's skill
folders (both layouts) and the account's, and a skill's body loads on request; `skills/list`
gives the Skills panel every folder, a broken one with its problem."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from sidecar.protocol import SkillErrorCode
from tests.e2e.harness import RpcFailure, Sidecar
from tests.mcp_servers.skills.conftest import write_skill

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def _call(sidecar: Sidecar, thread_id: str, tool: str, args: dict[str, object]) -> str:
    run = await sidecar.call(
        "run/start", {"thread_id": thread_id, "text": f"/call {tool} {json.dumps(args)}"}
    )
    events = await sidecar.run_to_end(run["run_id"])
    results = [e.event for e in events if e.event.type == "tool_result"]
    assert results, [e.event.type for e in events]
    return results[0].content  # pyright: ignore[reportAttributeAccessIssue]


async def test_the_sidecar_lists_and_loads_workspace_and_account_skills(
    sidecar_data: Path, workspace: Path
) -> None:
    write_skill(workspace / ".agents" / "skills", "harbour-report", body="Read the tides.\n")
    write_skill(workspace / ".claude" / "skills", "tide-table", "Use for tide tables.")
    write_skill(sidecar_data / "skills", "house-style", "Use to check house style.")
    write_skill(workspace / ".agents" / "skills", "broken", frontmatter="name: broken\n")
    sidecar = await Sidecar.start(sidecar_data, workspace)
    try:
        with anyio.fail_after(60):
            tools = {t["name"] for t in (await sidecar.call("tool/list"))["tools"]}
        assert {"skills__list", "skills__load", "skills__read_file", "skills__run_script"} <= tools
        thread = await sidecar.call("thread/create", {"title": "skills"})

        listing = await _call(sidecar, thread["id"], "skills__list", {})
        loaded = await _call(sidecar, thread["id"], "skills__load", {"name": "harbour-report"})
    finally:
        await sidecar.kill()

    assert "harbour-report: Use when the author asks for a harbour report." in listing
    assert "tide-table: Use for tide tables." in listing
    assert "house-style: Use to check house style." in listing
    assert "broken (unusable: frontmatter has no description)" in listing
    assert "Read the tides." in loaded


async def test_skills_list_through_the_sidecar_gives_a_good_and_a_broken_skill_with_its_problem(
    sidecar_data: Path, workspace: Path
) -> None:
    good = write_skill(workspace / ".agents" / "skills", "harbour-report")
    broken = write_skill(workspace / ".claude" / "skills", "broken", frontmatter="name: [oops\n")
    sidecar = await Sidecar.start(sidecar_data, workspace)
    try:
        with anyio.fail_after(60):
            listed = await sidecar.call("skills/list")
            read = await sidecar.call("skills/read", {"path": str(good.resolve())})
            with pytest.raises(RpcFailure) as refused:
                await sidecar.call("skills/read", {"path": str(broken.resolve())})
    finally:
        await sidecar.kill()

    assert [
        (s["name"], s["source"], s["ok"], [p["kind"] for p in s["problems"]])
        for s in listed["skills"]
    ] == [
        ("harbour-report", "workspace:.agents", True, []),
        ("broken", "workspace:.claude", False, ["bad_frontmatter"]),
    ]
    assert listed["skills"][1]["path"] == str(broken.resolve())
    assert read["body"].startswith("# Steps")
    assert refused.value.code == SkillErrorCode.SKILL_UNREADABLE
